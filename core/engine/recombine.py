"""Recombination inventory: one pool's donors, their clause features, join paths and edits.

The :class:`_Recomposer` holds one pool's inventory (:mod:`core.engine.atoms`): the plain
queries, the branches of its set operations and the SELECTs nested in its candidates as donors;
each clause group's real features as the pool shows them (to screen edits against the user's
answers before running anything); the pool's join graph (to compose join paths); one-edit
variants of a query and the alternatives of a conjunct that is a choice. The searches over
combinations live in :mod:`core.engine.guided`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp

from core.engine.atoms import (
    _GROUPS,
    Compound,
    Join,
    Parts,
    _group_keys,
    _render,
    _spelled,
    _tables_of,
    decompose_query,
    nested_parts,
)
from core.engine.planner import build_planner
from core.engine.pool import PreparedPool
from core.engine.predicates import _unparen
from core.engine.session import RepairSession
from core.engine.strategy import WORKSPACE_DEFAULT

MAX_TRIED = 200  # queries executed per repair round at most
NAMED_BONUS = 2.0  # extra prior of a fresh column whose name shares a word with the question
KEY_BONUS = 1.0  # extra prior of a fresh column that is its table's key (rows' identity)

def pool_atoms(pool: PreparedPool, sql: str) -> tuple[Parts | Compound | None, list[Parts]]:
    """A candidate's clause atoms and its nested SELECTs' atoms, decomposed once per pool
    (its sessions and their repaired copies share ``atom_cache``: a query's atoms never
    change)."""
    cache = pool.atom_cache
    atoms = cache.get(sql)  # a bounded LRU: read once, never after a store another may evict
    if atoms is None:
        atoms = cache[sql] = (decompose_query(sql, pool.dialect, pool.schema),
                              nested_parts(sql, pool.dialect, pool.schema))
    return atoms


def decompose_pool(pool: PreparedPool) -> None:
    """Decompose every valid candidate ahead of the first repair, so a "No" or "None of these"
    does not wait for it."""
    for i, sql in enumerate(pool.sqls):
        if pool.valid[i]:
            pool_atoms(pool, sql)


def warm_pool(pool: PreparedPool, *, plan: bool | None = None) -> threading.Thread:
    """Build the question plan (when ``plan``; by default when the workspace default plans,
    with its vocabulary), then decompose the pool's candidates for repair, in one background
    thread, so a session's first question and first "None of these" wait for neither (the
    pages call it when they load a pool)."""
    default = WORKSPACE_DEFAULT
    planning = default["strategy"] == "planned" if plan is None else plan

    def warm() -> None:
        if planning:
            build_planner(pool, str(default["questions"]), bool(default["values"]))
        decompose_pool(pool)

    thread = threading.Thread(target=warm, daemon=True, name="pleasqlarify-planner")
    thread.start()
    return thread


class _Recomposer:
    """One repair round's inventory of atoms and the edits built from it."""

    def __init__(self, session: RepairSession):
        self.session = session
        pool = session.pool
        self.dialect = pool.dialect
        self.parts: dict[int, Parts] = {}
        self.compounds: dict[int, Compound] = {}
        valid = pool.valid
        for i, sql in enumerate(pool.sqls):
            if valid[i]:
                p = self._atoms(sql)[0]
                if isinstance(p, Parts):
                    self.parts[i] = p
                elif isinstance(p, Compound):
                    self.compounds[i] = p
        self._tables: dict[str, frozenset[str]] = {}
        self._disjuncts: dict[str, list[str]] = {}
        self._covering: dict[frozenset[str], list[tuple[str, tuple[Join, ...]]]] = {}
        self.memo: dict[tuple, list] = {}  # asked twice in a round (guided proposals)
        self.derived: dict[str, Any] = {}  # other modules' per-round values (link tables)
        weight = pool.counts
        order = sorted(self.parts, key=lambda i: (-weight[i], i))
        self.donors = [self.parts[i] for i in order]
        # the branches of set operations are donors too (after the plain queries)
        for i in sorted(self.compounds, key=lambda i: (-weight[i], i)):
            self.donors.extend(b for b in self.compounds[i].branches if b not in self.donors)
        self.ops = list(dict.fromkeys(self.compounds[i].op for i in sorted(self.compounds)))
        # then the plain SELECTs nested in candidates (IN-subqueries, derived tables)
        self.nested: list[tuple[int, Parts]] = []
        for i in sorted(map(int, np.flatnonzero(valid)), key=lambda i: (-weight[i], i)):
            for p in self._atoms(pool.sqls[int(i)])[1]:
                if p not in self.donors:
                    self.donors.append(p)
                    self.nested.append((int(i), p))
        # each clause group's real features, as the pool's candidates show them
        self.known: dict[tuple, frozenset[str]] = {}
        for i, p in self.parts.items():
            keys = pool.feature_keys(i)
            for group, key in _group_keys(p).items():
                self.known.setdefault((group, key), frozenset(
                    k for k in keys if k.split(" ", 1)[0] in _GROUPS[group]
                    and not (group == "select" and k == "DISTINCT")))

    def answered_columns(self, yes: list[tuple[str, ...]], no: list[tuple[str, ...]]
                         ) -> tuple[list[str], set[str]]:
        """(columns the answers require, in answer order; columns they rule out): a Yes to
        ``SELECT t.c`` or ``ANSWER COLUMN t.c`` (alone or in a conjunction) requires ``t.c``;
        a No to one of them alone rules it out."""
        schema = self.session.pool.schema

        def column(key: str) -> str | None:
            if key.startswith("SELECT ") and not key.startswith("SELECT ONLY "):
                return key[len("SELECT "):]
            if key.startswith("ANSWER COLUMN "):
                table, _, name = key[len("ANSWER COLUMN "):].partition(".")
                return f"{table}.{name}" if name in schema.get(table, ()) else None
            return None

        required = list(dict.fromkeys(c for s in yes for k in s if (c := column(k))))
        excluded = {c for s in no if len(s) == 1 and (c := column(s[0]))}
        return required, excluded - set(required)

    def composed_select(self, select: tuple[str, ...], required: list[str],
                        excluded: set[str]) -> tuple[str, ...]:
        """``select`` made to agree with the answered columns: the ruled-out ones dropped (a
        ``*`` expanded first, over the answered columns' tables), the required ones added."""
        schema = self.session.pool.schema
        if "*" in select:
            tables = sorted({c.split(".", 1)[0] for c in [*required, *excluded]} & set(schema))
            star = tuple(f"{t}.{c}" for t in tables for c in schema[t])
            k = select.index("*")
            select = select[:k] + (star or ("*",)) + select[k + 1:]
        kept = tuple(a for a in select if a not in excluded)
        return kept + tuple(c for c in required if c not in kept)

    def narrowed(self, base: Compound, excluded: set[str]) -> list[tuple[Compound, float]]:
        """Set operations ``base`` with fewer output columns, position by position in both
        branches, with a relative prior: without every position a branch's ruled-out column
        holds (1), and keeping one position alone (shared, ``1 / width``)."""
        a, b = base.branches
        width = len(a.select)
        if width != len(b.select) or width < 2:
            return []
        keep = [k for k in range(width) if a.select[k] not in excluded
                and b.select[k] not in excluded]
        choices = [(tuple(keep), 1.0)] if keep and len(keep) < width else []
        choices += [((k,), 1.0 / width) for k in range(width)]
        return [(Compound(base.op, (replace(a, select=tuple(a.select[k] for k in ks)),
                                    replace(b, select=tuple(b.select[k] for k in ks)))), w)
                for ks, w in choices]

    def column_prior(self, column: str) -> float:
        """Relative prior of adding ``column`` (``t.c``) that no candidate selects: higher when
        its name shares a word with the question (schema linking) or it is the table's key."""
        if not hasattr(self, "_stems"):
            words = re.findall(r"[a-z]+", self.session.pool.question.lower())
            stems = {(w[:-1] if w.endswith("s") else w)[:5] for w in words}
            self._stems = {w for w in stems if len(w) >= 4}
        table, _, name = column.partition(".")
        letters = re.sub(r"[^a-z]", "", name.lower())
        named = any(w in letters for w in self._stems)
        pool = self.session.pool
        key = name in pool.unique.get(table, ()) and name in pool.not_null.get(table, ())
        return 1.0 + NAMED_BONUS * named + KEY_BONUS * key

    def _atoms(self, sql: str) -> tuple[Parts | Compound | None, list[Parts]]:
        """A candidate's clause atoms and its nested SELECTs' atoms (:func:`pool_atoms`)."""
        return pool_atoms(self.session.pool, sql)

    def approx_features(self, p: Parts | Compound) -> set[str]:
        """The features ``p`` will have: each clause group's as seen in the pool when some
        candidate has that clause, else spelled from the atoms (checked exactly later)."""
        if isinstance(p, Compound):
            return {p.op}.union(*(self.approx_features(b) for b in p.branches))
        out: set[str] = set()
        for group, key in _group_keys(p).items():
            found = self.known.get((group, key))
            out |= found if found is not None else _spelled(group, p)
        if p.distinct:
            out.add("DISTINCT")
        return out

    def tables(self, atom: str) -> frozenset[str]:
        if atom not in self._tables:
            try:
                self._tables[atom] = _tables_of(atom, self.dialect)
            except sqlglot.errors.SqlglotError:
                self._tables[atom] = frozenset()
        return self._tables[atom]

    def disjuncts(self, atom: str) -> list[str]:
        """The alternatives of a conjunct that is a choice: ``x IN (a, b)`` gives ``x = a`` and
        ``x = b``, ``(p OR q)`` gives ``p`` and ``q``; anything else gives none."""
        if atom not in self._disjuncts:
            try:
                node = _unparen(sqlglot.parse_one(atom, read=self.dialect))
            except sqlglot.errors.SqlglotError:
                node = None
            out: list[str] = []
            if isinstance(node, exp.Or):
                out = [_render(_unparen(p), self.dialect) for p in node.flatten()]
            elif isinstance(node, exp.In) and not node.args.get("query") and len(
                    node.expressions) > 1:
                out = [_render(exp.EQ(this=node.this.copy(), expression=v.copy()), self.dialect)
                       for v in node.expressions]
            self._disjuncts[atom] = [_wrapped(d) for d in out]
        return self._disjuncts[atom]

    def needed(self, p: Parts) -> frozenset[str]:
        atoms = [*p.select, *p.where, *p.group, p.having, *p.order]
        out: set[str] = set()
        for a in atoms:
            if a:
                out |= self.tables(a)
        return frozenset(out)

    def edges(self) -> dict[str, list[tuple[str, str]]]:
        """The pool's inner-join graph: table -> [(other table, ON condition)]."""
        if not hasattr(self, "_edges"):
            graph: dict[str, list[tuple[str, str]]] = {}
            for d in self.donors:
                seen = {d.source}
                for j in d.joins:
                    if j.side or not j.on:
                        continue
                    tabs = self.tables(j.on)
                    for t in tabs - {j.table}:
                        if t in seen:
                            graph.setdefault(t, []).append((j.table, j.on))
                            graph.setdefault(j.table, []).append((t, j.on))
                    seen.add(j.table)
            self._edges = {t: sorted(set(v)) for t, v in graph.items()}
        return self._edges

    def schema_edges(self) -> dict[str, list[tuple[str, str]]]:
        """The pool's join graph widened by the DDL's declared foreign keys (both ways) that
        reach a table no candidate uses, so a query may pass through or end at such a
        neighbour; two tables the pool uses stay joined only as the pool joins them (a key
        the pool never joins them by is a reading it does not hold)."""
        if not hasattr(self, "_schema_edges"):
            from core.engine.division import foreign_keys  # division reads this module's class

            graph = {t: list(v) for t, v in self.edges().items()}
            schema = self.session.pool.schema
            used = {t for d in self.donors for t in d.tables}
            for table, column, ref, key in foreign_keys(self):
                if ref == table or table not in schema or ref not in schema:
                    continue
                if table in used and ref in used:
                    continue
                if any(o == ref for o, _on in graph.get(table, [])):
                    continue  # the pool already joins them (as its candidates spell it)
                on = f"{table}.{column} = {ref}.{key}"
                graph.setdefault(table, []).append((ref, on))
                graph.setdefault(ref, []).append((table, on))
            self._schema_edges = graph
        return self._schema_edges

    def neighbours(self) -> list[str]:
        """Tables no donor uses that a foreign key joins to a table some donor uses, by name."""
        used = {t for d in self.donors for t in d.tables}
        graph = self.schema_edges()
        return sorted({o for t in used for o, _on in graph.get(t, [])} - used)

    def compose_path(self, need: frozenset[str], start: str) -> tuple[str, tuple[Join, ...]] | None:
        """The fewest pool join edges that connect ``need`` (grown from ``start``), else the
        fewest once the schema's foreign keys are edges too (:meth:`schema_edges`), or None."""
        found = self._path(need, start, self.edges())
        return found if found is not None else self._path(need, start, self.schema_edges())

    def _path(self, need: frozenset[str], start: str, graph: dict[str, list[tuple[str, str]]]
              ) -> tuple[str, tuple[Join, ...]] | None:
        """Breadth-first join path over ``graph`` connecting ``need`` from ``start``."""
        have, joins = {start}, []
        for target in sorted(need - {start}):
            if target in have:
                continue
            prev: dict[str, tuple[str, str] | None] = {t: None for t in have}
            queue = sorted(have)
            while queue and target not in prev:
                nxt = []
                for t in queue:
                    for other, on in graph.get(t, []):
                        if other not in prev:
                            prev[other] = (t, on)
                            nxt.append(other)
                queue = nxt
            if target not in prev:
                return None
            chain, t = [], target
            while (step := prev[t]) is not None:
                chain.append((t, step[1]))
                t = step[0]
            for table, on in reversed(chain):
                have.add(table)
                joins.append(Join("", table, on))
        return start, tuple(joins)

    def fit_joins(self, p: Parts) -> list[Parts]:
        """``p`` itself if its tables cover its atoms, else ``p`` on the fewest pool join edges
        that connect them, and on each pool join path that covers them (fewest tables first)."""
        need = self.needed(p)
        if need <= p.tables:
            return [p]
        out = []
        composed = self.compose_path(need | {p.source}, p.source)
        if composed is not None:
            out.append(replace(p, source=composed[0], joins=composed[1]))
        out += [replace(p, source=s, joins=j) for s, j in self.covering_paths(need)]
        return out

    def covering_paths(self, need: frozenset[str]) -> list[tuple[str, tuple[Join, ...]]]:
        """The two shortest donor join paths whose tables cover ``need`` (once per need)."""
        if need not in self._covering:
            paths = {(d.source, d.joins) for d in self.donors if need <= d.tables}
            self._covering[need] = sorted(
                paths, key=lambda sj: (len(sj[1]), sj[0], str(sj[1])))[:2]
        return self._covering[need]

    def pruned(self, p: Parts) -> Parts | None:
        """``p`` without the joined tables none of its atoms needs (inner joins only)."""
        if any(j.side for j in p.joins):
            return None
        need = self.needed(p) | {p.source}
        if need >= p.tables:
            return None
        composed = self.compose_path(need, p.source)
        return None if composed is None else replace(p, source=composed[0], joins=composed[1])

    def compound_edits(self, base: Compound) -> Iterable[tuple[int, Parts | Compound]]:
        """One branch edited (and fitted to its tables), the operator swapped, or one branch
        kept alone."""
        for k, branch in enumerate(base.branches):
            yield 2, branch
            for rank, edited in self.edits(branch):
                for fitted in self.fit_joins(edited):
                    if fitted.select and len(fitted.select) == len(base.branches[1 - k].select):
                        both = list(base.branches)
                        both[k] = fitted
                        yield rank, Compound(base.op, (both[0], both[1]))
        for op in self.ops:
            if op != base.op:
                yield 2, Compound(op, base.branches)

    def edits(self, base: Parts) -> Iterable[tuple[int, Parts]]:
        """(rank, edited query): one clause replaced, added or dropped from the inventory."""
        seen_select, seen_where = set(), set()
        for d in self.donors:
            if d.select != base.select and d.select not in seen_select:
                seen_select.add(d.select)
                yield 1, replace(base, select=d.select)
            if d.where != base.where and d.where not in seen_where:
                seen_where.add(d.where)
                yield 1, replace(base, where=d.where)
        atoms_select = list(dict.fromkeys(a for d in self.donors for a in d.select))
        atoms_where = list(dict.fromkeys(a for d in self.donors for a in d.where))
        for a in atoms_select:
            if a not in base.select:
                yield 2, replace(base, select=base.select + (a,))
                for k in range(len(base.select)):
                    yield 2, replace(base, select=base.select[:k] + (a,) + base.select[k + 1:])
        if len(base.select) > 1:
            for k in range(len(base.select)):
                yield 2, replace(base, select=base.select[:k] + base.select[k + 1:])
        for a in atoms_where:
            if a not in base.where:
                yield 2, replace(base, where=tuple(sorted(base.where + (a,))))
                for k in range(len(base.where)):
                    yield 2, replace(base, where=tuple(sorted(
                        base.where[:k] + (a,) + base.where[k + 1:])))
        for k in range(len(base.where)):
            yield 2, replace(base, where=base.where[:k] + base.where[k + 1:])
        yield 2, replace(base, distinct=not base.distinct)
        tails = dict.fromkeys((d.group, d.having) for d in self.donors)
        for group, having in tails:
            if (group, having) != (base.group, base.having):
                yield 3, replace(base, group=group, having=having)
        if base.group:
            yield 3, replace(base, group=(), having="")
        orders = dict.fromkeys((d.order, d.limit) for d in self.donors)
        for order, limit in orders:
            if (order, limit) != (base.order, base.limit):
                yield 3, replace(base, order=order, limit=limit)
        if base.order or base.limit:
            yield 3, replace(base, order=(), limit="")
        joins = dict.fromkeys((d.source, d.joins) for d in self.donors)
        for source, js in joins:
            if (source, js) != (base.source, base.joins):
                yield 3, replace(base, source=source, joins=js)


def _wrapped(atom: str) -> str:
    """A conjunct as Parts keeps it: an OR in parentheses."""
    return f"({atom})" if " OR " in atom and not atom.startswith("(") else atom


__all__ = ["MAX_TRIED"]
