"""Scope readings through a link table: relational division and its distributive reading.

"What tool do all traffic engineers use?" has a *collective* reading (the tools every engineer
uses: a relational division) and a *distributive* one (each engineer's tools). Over a
many-to-many link table ``L`` whose two foreign keys reference entity tables ``A`` and ``B``
the collective reading groups by ``L``'s key of ``B`` and keeps the groups that reach every
``A``::

    SELECT <B's columns> FROM L JOIN A ON … JOIN B ON … GROUP BY L.b
    HAVING COUNT(DISTINCT L.a) = (SELECT COUNT(*) FROM A)

A pool sampled from an LLM often holds only one of the two. :func:`division_proposals` reads
the link tables from the schema's keys and the pool's own joins (a table joined on two of its
columns to the unique keys of two other tables) and turns each candidate that joins through
one into its other reading: a distributive query (no such grouping) into its division in both
directions, keeping the candidate's join frame and the columns of the grouped side; a
division into its distributive reading (the frame with ``A`` joined, ``A``'s columns added).
Each proposal is spelled as the engine reads it (decomposed again, so its HAVING is the
canonical feature) and ranked with an edit's prior; :mod:`core.engine.guided` mixes them into
its proposals, so they are screened against the answers and executed like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import sqlglot
from sqlglot import exp

from core.engine.atoms import Join, Parts, decompose

if TYPE_CHECKING:
    from core.engine.recombine import _Recomposer

DIVISION_PENALTY = 0.2  # prior factor of a division (or its undoing) built from a candidate
SPELLING_PENALTY = 0.2  # further factor of each spelling after a reading's first


@dataclass(frozen=True)
class LinkEdge:
    """One foreign key of a link table: ``link.column`` joins ``table.key`` (a unique key)."""

    link: str
    column: str
    table: str
    key: str
    on: str  # the pool's ON condition, as the pool's candidates spell it


def link_edges(rec: _Recomposer) -> dict[str, list[LinkEdge]]:
    """Link tables of the pool: table -> the edges by which the pool's candidates join it on
    one of its columns (not unique in it) to a unique key of another table; a table with edges
    to at least two other tables links them many-to-many."""
    if hasattr(rec, "_link_edges"):
        return rec._link_edges
    pool = rec.session.pool
    unique = {t.lower(): set(cols) for t, cols in pool.unique.items()}
    out: dict[str, list[LinkEdge]] = {}
    for table, edges in rec.edges().items():
        found: dict[str, LinkEdge] = {}
        for other, on in edges:
            pair = _equated(on, rec.dialect)
            if pair is None:
                continue
            sides = {t: c for t, c in pair}
            if set(sides) != {table, other}:
                continue
            column, key = sides[table], sides[other]
            # the other side must be a key of its table, this side must not be one of this one
            if key not in unique.get(other, set()) or column in unique.get(table, set()):
                continue
            found.setdefault(other, LinkEdge(table, column, other, key, on))
        if len(found) >= 2:
            out[table] = sorted(found.values(), key=lambda e: (e.table, e.column))
    rec._link_edges = out
    return out


def _equated(on: str, dialect: str) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The two (table, column) an ON condition ``a.x = b.y`` equates, or None."""
    try:
        node = sqlglot.parse_one(on, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    if not isinstance(node, exp.EQ):
        return None
    cols = [node.this, node.expression]
    if not all(isinstance(c, exp.Column) and c.table for c in cols):
        return None
    return ((cols[0].table.lower(), cols[0].name.lower()),
            (cols[1].table.lower(), cols[1].name.lower()))


def _side(p: Parts, link: str, start: str) -> set[str]:
    """The tables of ``p``'s join frame reached from ``start`` without passing ``link``."""
    graph: dict[str, set[str]] = {}
    for j in p.joins:
        tables = {t for t in (j.table, *(_tables_in(j.on))) if t != link}
        for t in tables:
            graph.setdefault(t, set()).update(tables - {t})
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), set()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _tables_in(on: str) -> set[str]:
    """Tables an ON condition names (its ``table.column`` references)."""
    return {word.split(".", 1)[0] for word in on.replace("(", " ").replace(")", " ").split()
            if "." in word and not word.startswith("'")}


def _has_aggregate(atom: str, dialect: str) -> bool:
    try:
        return sqlglot.parse_one(atom, read=dialect).find(exp.AggFunc) is not None
    except sqlglot.errors.SqlglotError:
        return True


def _canonical(rec: _Recomposer, p: Parts) -> Parts | None:
    """``p`` decomposed again from its SQL: every atom spelled as the engine reads it (the
    HAVING as its canonical feature), or None when it does not parse back."""
    cache = rec.__dict__.setdefault("_division_canon", {})
    sql = p.sql(rec.dialect)
    if sql not in cache:
        cache[sql] = decompose(sql, rec.dialect, rec.session.pool.schema)
    return cache[sql]


def _division_of(rec: _Recomposer, d: Parts, every: LinkEdge, by: LinkEdge
                 ) -> list[Parts]:
    """The collective reading of ``d`` (which joins ``every.link``): its rows of ``by.table``
    that link to every row of ``every.table``, in the spellings a person might write (grouped
    by the link's column, then by the key; the frame as ``d`` has it, then with ``every.table``
    joined or dropped). Empty when ``d`` selects nothing of ``by.table``'s side."""
    link = every.link
    side = _side(d, link, by.table) if by.table in d.tables else {by.table}
    own = f"{link}.{by.column}"
    keep = tuple(a for a in d.select if not _has_aggregate(a, rec.dialect)
                 and (a == own or (rec.tables(a) and rec.tables(a) <= side - {every.table})))
    if not keep:
        return []
    having = f"COUNT(DISTINCT {link}.{every.column}) = (SELECT COUNT(*) FROM {every.table})"
    frames = [(d.source, d.joins)]
    if every.table in d.tables:
        if d.source != every.table and not any(j.side for j in d.joins):
            frames.append((d.source, tuple(j for j in d.joins if j.table != every.table)))
    else:
        frames.append((d.source, (*d.joins, Join("", every.table, every.on))))
    if by.table not in d.tables:
        frames = [(s, (*j, Join("", by.table, by.on))) for s, j in frames]
    out = []
    for group in (own, f"{by.table}.{by.key}"):
        for source, joins in frames:
            p = replace(d, select=keep, source=source, joins=joins, where=d.where,
                        group=(group,), having=having, order=(), limit="", distinct=False)
            if rec.needed(p) <= p.tables:
                out.append(p)
    return out


def _undivided(rec: _Recomposer, d: Parts, every: LinkEdge, by: LinkEdge) -> Parts | None:
    """The distributive reading of a division ``d``: each row of ``every.table`` with its
    rows of ``by.table`` (``every.table`` joined, its columns the pool selects added)."""
    schema = rec.session.pool.schema
    named = [a for a in dict.fromkeys(a for x in rec.donors for a in x.select)
             if rec.tables(a) == {every.table} and not _has_aggregate(a, rec.dialect)]
    if not named:
        columns = [c for c in schema.get(every.table, []) if c != every.key]
        named = [f"{every.table}.{columns[0]}"] if columns else []
    if not named:
        return None
    joins = d.joins if every.table in d.tables else (*d.joins, Join("", every.table, every.on))
    return replace(d, select=(*named[:1], *d.select), joins=joins, group=(), having="",
                   distinct=False)


def _is_division(rec: _Recomposer, d: Parts, every: LinkEdge, by: LinkEdge) -> bool:
    """True if ``d`` groups by ``by``'s side and keeps the groups reaching every ``every``."""
    if not d.having or every.table not in d.having.lower() or "COUNT" not in d.having.upper():
        return False
    return d.group in ((f"{by.link}.{by.column}",), (f"{by.table}.{by.key}",))


def division_proposals(rec: _Recomposer, weights: np.ndarray) -> list[tuple[Parts, float]]:
    """The other scope reading of each candidate that joins through a link table, with a prior:
    the candidate's share of the pool's weight times :data:`DIVISION_PENALTY` (and
    :data:`SPELLING_PENALTY` per spelling after the first), summed over candidates."""
    links = link_edges(rec)
    if not links:
        return []
    total = float(sum(weights[i] for i in rec.parts)) or 1.0
    donors = [(float(weights[i]) / total, p) for i, p in rec.parts.items()]
    donors += [(float(weights[i]) / total * DIVISION_PENALTY, p) for i, p in rec.nested]
    # how much of the pool selects something of a table: the side whose columns every reading
    # shows is the one the question asks about (the other was added to show "each" of it)
    shown: dict[str, float] = {}
    for w, d in donors:
        for t in {t for a in d.select for t in rec.tables(a)}:
            shown[t] = shown.get(t, 0.0) + w
    scores: dict[frozenset[str], list] = {}  # one entry per spelling as the engine reads it
    for w, d in donors:
        for link, edges in links.items():
            if link not in d.tables:
                continue
            for every in edges:
                for by in edges:
                    if by.table == every.table:
                        continue
                    if _is_division(rec, d, every, by):
                        undone = _undivided(rec, d, every, by)
                        readings = [undone] if undone is not None else []
                    else:
                        readings = _division_of(rec, d, every, by)
                    for k, p in enumerate(readings):
                        canon = _canonical(rec, p)
                        if canon is None or canon == d:
                            continue
                        entry = scores.setdefault(frozenset(rec.approx_features(canon)),
                                                  [canon, 0.0])
                        entry[1] += (w * DIVISION_PENALTY * SPELLING_PENALTY ** k
                                     * min(1.0, shown.get(by.table, 0.0)))
    return sorted(((p, sc) for p, sc in scores.values() if sc > 0),
                  key=lambda t: (-t[1], t[0].sql(rec.dialect)))


__all__ = ["DIVISION_PENALTY", "SPELLING_PENALTY", "LinkEdge", "division_proposals",
           "link_edges"]
