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
Each proposal keeps the candidate's atoms (already canonical) and spells its HAVING as the
engine reads it (the canonical feature), ranked with an edit's prior;
:func:`division_readings` screens them against the answers for :mod:`core.engine.guided`,
which mixes them into its proposals, executed like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import sqlglot
from sqlglot import exp

from core.engine.atoms import Join, Parts, _violations, decompose

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


FOREIGN_KEYS = "-- foreign keys"  # the pool's atom-cache entry for them (never a query)


def foreign_keys(rec: _Recomposer) -> list[tuple[str, str, str, str]]:
    """(table, column, referenced table, referenced column) of every single-column foreign key
    the task database's DDL declares (``FOREIGN KEY … REFERENCES`` or a column's own
    ``REFERENCES``); read once per pool (kept in its atom cache, which its
    repaired copies share). A database without DDL or foreign keys gives none."""
    cache = rec.session.pool.atom_cache
    if FOREIGN_KEYS not in cache:
        found: list[tuple[str, str, str, str]] = []
        try:
            ddl = rec.session.database.ddl()
            statements = sqlglot.parse(ddl, read=rec.dialect)
        except Exception:  # without DDL the pool's own joins still name link tables
            statements = []
        for stmt in statements:
            if not isinstance(stmt, exp.Create) or not isinstance(stmt.this, exp.Schema):
                continue
            table = stmt.this.this.name.lower()
            # FOREIGN KEY (c) REFERENCES t(k), or a column's own REFERENCES t(k)
            for ref in stmt.find_all(exp.Reference):
                holder = ref.parent
                target = ref.this
                if isinstance(holder, exp.ForeignKey):
                    cols = holder.expressions
                elif isinstance(holder, exp.ColumnConstraint) and isinstance(
                        holder.parent, exp.ColumnDef):
                    cols = [holder.parent]
                else:
                    continue
                if not isinstance(target, exp.Schema) or not isinstance(target.this, exp.Table):
                    continue
                keys = target.expressions
                if len(cols) == 1 and len(keys) == 1:
                    found.append((table, cols[0].name.lower(), target.this.name.lower(),
                                  keys[0].name.lower()))
        cache[FOREIGN_KEYS] = found
    return cache[FOREIGN_KEYS]


def link_edges(rec: _Recomposer) -> dict[str, list[LinkEdge]]:
    """Link tables of the pool: table -> the edges by which it joins, on one of its columns
    (not unique in it), a unique key of another table, as the pool's candidates join them or
    else as the schema's foreign keys declare; a table with edges to at least two other tables,
    which no table references by a key of its own, links them many-to-many."""
    if "link_edges" in rec.derived:
        return rec.derived["link_edges"]
    pool = rec.session.pool
    unique = {t.lower(): set(cols) for t, cols in pool.unique.items()}
    candidates: list[tuple[str, str, str, str, str]] = []  # link, column, table, key, on
    for table, edges in rec.edges().items():
        for other, on in edges:
            pair = _equated(on, rec.dialect)
            sides = dict(pair) if pair is not None else {}
            if set(sides) == {table, other}:
                candidates.append((table, sides[table], other, sides[other], on))
    candidates += [(t, c, r, k, f"{t}.{c} = {r}.{k}") for t, c, r, k in foreign_keys(rec)
                   if r != t]
    keyed = [c for c in candidates if c[3] in unique.get(c[2], set())]
    # a table others reference by its own key is an entity (assignments of photographers to
    # events, referenced by the photos published from them), not a pure association
    referenced = {other for _t, _c, other, _k, _on in keyed}
    found: dict[str, dict[str, LinkEdge]] = {}
    for table, column, other, key, on in keyed:
        # this side must not be a key of its table (many rows per key of the other)
        if column in unique.get(table, set()) or table in referenced:
            continue
        found.setdefault(table, {}).setdefault(other, LinkEdge(table, column, other, key, on))
    out = {t: sorted(e.values(), key=lambda e: (e.table, e.column))
           for t, e in found.items() if len(e) >= 2}
    rec.derived["link_edges"] = out
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


def _has_aggregate(rec: _Recomposer, atom: str) -> bool:
    """True if a SELECT atom aggregates (it cannot stay beside a new grouping); memoised."""
    cache = rec.__dict__.setdefault("_division_aggregate", {})
    if atom not in cache:
        try:
            cache[atom] = sqlglot.parse_one(atom, read=rec.dialect).find(exp.AggFunc) is not None
        except sqlglot.errors.SqlglotError:
            cache[atom] = True
    return cache[atom]


def _having(rec: _Recomposer, every: LinkEdge, by: LinkEdge, where: tuple[str, ...]
            ) -> str | None:
    """The division's HAVING spelled as the engine reads it (its canonical feature): the link
    reaches as many distinct rows of ``every.table`` as there are (those meeting ``where``)."""
    cache = rec.__dict__.setdefault("_division_having", {})
    key = (every, by, where)
    if key not in cache:
        count = f"SELECT COUNT(*) FROM {every.table}" + (
            f" WHERE {' AND '.join(where)}" if where else "")
        sql = (f"SELECT 1 FROM {every.link} JOIN {every.table} ON {every.on} "
               f"GROUP BY {by.link}.{by.column} "
               f"HAVING COUNT(DISTINCT {every.link}.{every.column}) = ({count})")
        parts = decompose(sql, rec.dialect, rec.session.pool.schema)
        cache[key] = parts.having if parts is not None else None
    return cache[key]


def _division_of(rec: _Recomposer, d: Parts, every: LinkEdge, by: LinkEdge
                 ) -> list[Parts]:
    """The collective reading of ``d`` (which joins ``every.link``): its rows of ``by.table``
    that link to every row of ``every.table``, in the spellings a person might write (grouped
    by the link's column, then by the key; the frame as ``d`` has it, then with ``every.table``
    joined or dropped). Empty when ``d`` selects nothing of ``by.table``'s side."""
    link = every.link
    side = _side(d, link, by.table) if by.table in d.tables else {by.table}
    own = f"{link}.{by.column}"
    keep = tuple(a for a in d.select if not _has_aggregate(rec, a)
                 and (a == own or (rec.tables(a) and rec.tables(a) <= side - {every.table})))
    if not keep:
        return []
    # a condition on the quantified table restricts "every" too: count only the rows meeting
    # it; a condition on what is joined to it has no such reading here
    on_every = tuple(w for w in d.where if rec.tables(w) == {every.table})
    others = set(d.tables) - side - {link}
    if any(rec.tables(w) & others and w not in on_every for w in d.where):
        return []
    having = _having(rec, every, by, on_every)
    if having is None:
        return []
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
    """The distributive reading of ``d`` (a division, or a plain query showing only
    ``by.table``'s side): each row of ``every.table`` with its rows of ``by.table``
    (``every.table`` joined, a non-key column of it the pool selects, else its first non-key
    one, put first; the grouping and DISTINCT dropped)."""
    schema = rec.session.pool.schema
    selected = [a for a in dict.fromkeys(a for x in rec.donors for a in x.select)
                if rec.tables(a) == {every.table} and not _has_aggregate(rec, a)]
    key = f"{every.table}.{every.key}"
    columns = [f"{every.table}.{c}" for c in schema.get(every.table, []) if c != every.key]
    named = [a for a in selected if a != key] or columns[:1] or selected
    if not named:
        return None
    joins = d.joins if every.table in d.tables else (*d.joins, Join("", every.table, every.on))
    return replace(d, select=(*named[:1], *d.select), joins=joins, group=(), having="",
                   distinct=False)


def _shows_one_side(rec: _Recomposer, d: Parts, every: LinkEdge, by: LinkEdge) -> bool:
    """True if plain ``d`` (no grouping) shows only ``by.table``'s side of the link."""
    if d.group or d.having:
        return False
    side = _side(d, every.link, by.table) if by.table in d.tables else {by.table}
    own = f"{by.link}.{by.column}"
    return all(not _has_aggregate(rec, a) and (a == own or (
        rec.tables(a) and rec.tables(a) <= side - {every.table})) for a in d.select)


def _is_division(rec: _Recomposer, d: Parts, every: LinkEdge, by: LinkEdge) -> bool:
    """True if ``d`` groups by ``by``'s side and keeps the groups whose distinct link keys of
    ``every`` are counted against ``every.table`` (its HAVING as the engine spells it)."""
    counted = f"COUNT(DISTINCT {every.link}.{every.column})".lower()
    having = d.having.lower()
    return (counted in having and re.search(rf"\bfrom {re.escape(every.table)}\b", having)
            is not None and d.group in ((f"{by.link}.{by.column}",), (f"{by.table}.{by.key}",)))


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
    # how much of the pool shows a table (selects a column of it, or the link's key of it):
    # the side every reading shows is the one the question asks about (the other was added
    # to show "each" of it); a side nothing shows keeps a floor
    refers = {f"{e.link}.{e.column}": e.table for es in links.values() for e in es}
    shown: dict[str, float] = {}
    for w, d in donors:
        for t in {t for a in d.select for t in (*rec.tables(a), refers.get(a, ""))}:
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
                    division = _is_division(rec, d, every, by)
                    # each reading's spellings in order: the first at the reading's prior
                    readings = [] if division else [_division_of(rec, d, every, by)]
                    if division or _shows_one_side(rec, d, every, by):
                        undone = _undivided(rec, d, every, by)
                        readings += [[undone]] if undone is not None else []
                    side = min(1.0, max(shown.get(by.table, 0.0), DIVISION_PENALTY))
                    for spellings in readings:
                        for k, p in enumerate(spellings):
                            entry = scores.setdefault(frozenset(rec.approx_features(p)),
                                                      [p, 0.0])
                            entry[1] += w * DIVISION_PENALTY * SPELLING_PENALTY ** k * side
    return sorted(((p, sc) for p, sc in scores.values()),
                  key=lambda t: (-t[1], t[0].sql(rec.dialect)))


MAX_DIVISIONS = 8  # scope readings proposed per round at most (after screening)


def division_readings(rec: _Recomposer, weights: np.ndarray, yes: list[tuple[str, ...]],
                      no: list[tuple[str, ...]]) -> list[tuple[Parts, float]]:
    """:func:`division_proposals` that agree with the answers (the features they will have,
    :meth:`_Recomposer.approx_features`), the likeliest :data:`MAX_DIVISIONS`; built once per
    round (set operations ask for branches several times)."""
    if "divisions" not in rec.derived:
        rec.derived["divisions"] = division_proposals(rec, weights)
    out = [(p, sc) for p, sc in rec.derived["divisions"]
           if not _violations(rec.approx_features(p), yes, no)]
    return out[:MAX_DIVISIONS]


__all__ = ["DIVISION_PENALTY", "MAX_DIVISIONS", "SPELLING_PENALTY", "LinkEdge",
           "division_proposals", "division_readings", "link_edges"]
