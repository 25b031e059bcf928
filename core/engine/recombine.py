"""Recombination search: the edits and combinations repair builds from the pool's atoms.

The :class:`_Recomposer` holds one pool's inventory (:mod:`core.engine.atoms`): each clause
group's real features as the pool shows them (to screen edits against the user's answers before
running anything), the pool's join graph (to compose join paths), one-edit variants, and — in
:func:`guided_proposals` — combinations of clause values across candidates that agree with every
answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import replace

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
    _violations,
    decompose_query,
    nested_parts,
)
from core.engine.predicates import _unparen
from core.engine.session import RepairSession

MAX_TRIED = 200  # queries executed per repair round at most

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
                p = decompose_query(sql, pool.dialect, pool.schema)
                if isinstance(p, Parts):
                    self.parts[i] = p
                elif isinstance(p, Compound):
                    self.compounds[i] = p
        self._tables: dict[str, frozenset[str]] = {}
        self._disjuncts: dict[str, list[str]] = {}
        weight = pool.counts
        order = sorted(self.parts, key=lambda i: (-weight[i], i))
        self.donors = [self.parts[i] for i in order]
        # the branches of set operations are donors too (after the plain queries)
        for i in sorted(self.compounds, key=lambda i: (-weight[i], i)):
            self.donors.extend(b for b in self.compounds[i].branches if b not in self.donors)
        self.ops = list(dict.fromkeys(self.compounds[i].op for i in sorted(self.compounds)))
        # then the plain SELECTs nested in candidates (IN-subqueries, derived tables)
        self.nested: list[tuple[int, Parts]] = []
        for i in sorted(np.flatnonzero(valid), key=lambda i: (-weight[i], i)):
            for p in nested_parts(pool.sqls[int(i)], pool.dialect, pool.schema):
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

    def compose_path(self, need: frozenset[str], start: str) -> tuple[str, tuple[Join, ...]] | None:
        """The fewest pool join edges that connect ``need`` (grown from ``start``), or None."""
        graph = self.edges()
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
            while prev[t] is not None:
                chain.append((t, prev[t][1]))
                t = prev[t][0]
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
        paths = {(d.source, d.joins) for d in self.donors if need <= d.tables}
        ranked = sorted(paths, key=lambda sj: (len(sj[1]), sj[0], str(sj[1])))
        out += [replace(p, source=s, joins=j) for s, j in ranked[:2]]
        return out

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



# ----- guided recomposition: every clause group chosen to agree with the answers ---------------
EDIT_PENALTY = 0.2  # prior factor of a clause value the pool does not contain as a whole
TOP_K = {"select": 10, "from": 14, "group": 3, "order": 3, "distinct": 2}


def _group_of(key: str) -> str:
    word = key.split(" ", 1)[0]
    if word == "DISTINCT":
        return "distinct"
    return next((g for g, words in _GROUPS.items() if word in words), "other")


def _group_values(rec: _Recomposer, weights: np.ndarray) -> dict[str, dict[tuple, list]]:
    """Per clause group: value -> [prior score, features, fragment] from the pool, plus the
    one-atom edits of its most likely values (at a lower prior)."""
    values: dict[str, dict[tuple, list]] = {g: {} for g in TOP_K}
    total = float(sum(weights[i] for i in rec.parts)) or 1.0
    # nested SELECTs count as clause values at an edit's prior (they are not whole queries)
    weighted = [(float(weights[i]) / total, p) for i, p in rec.parts.items()]
    weighted += [(float(weights[i]) / total * EDIT_PENALTY, p) for i, p in rec.nested]
    for w, p in weighted:
        frags = {"select": {"select": p.select}, "from": {"source": p.source, "joins": p.joins,
                                                          "where": p.where},
                 "group": {"group": p.group, "having": p.having},
                 "order": {"order": p.order, "limit": p.limit}}
        for g, key in _group_keys(p).items():
            known = rec.known.get((g, key))
            entry = values[g].setdefault(key, [0.0, known if known is not None
                                               else _spelled(g, p), frags[g]])
            entry[0] += w
        values["distinct"].setdefault((p.distinct,), [0.0, frozenset(
            ["DISTINCT"] if p.distinct else []), {"distinct": p.distinct}])[0] += w
    values["distinct"].setdefault((False,), [0.0, frozenset(), {"distinct": False}])
    values["distinct"].setdefault((True,), [0.0, frozenset(["DISTINCT"]), {"distinct": True}])
    atoms_select = list(dict.fromkeys(a for d in rec.donors for a in d.select))
    atoms_where = list(dict.fromkeys(a for d in rec.donors for a in d.where))
    paths = list(dict.fromkeys((d.source, d.joins) for d in rec.donors))
    # A value's one-atom edits share EDIT_PENALTY of its prior between them (an edit is one
    # of many alternatives, not each as likely as the value's whole penalty): a clause value
    # found once in the pool (a nested GROUP BY / HAVING) then outranks one of thirty column
    # additions. An edit reached from several values sums their shares.
    pool_select = set(values["select"])
    tables = sorted({t for d in rec.donors for t in d.tables})
    schema = rec.session.pool.schema
    schema_columns = [f"{t}.{c}" for t in tables for c in schema.get(t, [])
                      if f"{t}.{c}" not in atoms_select]
    edited: dict[tuple, list] = {}
    for _key, (score, _, frag) in sorted(values["select"].items(), key=lambda kv: -kv[1][0])[:8]:
        sel = frag["select"]
        variants = [sel + (a,) for a in atoms_select if a not in sel]
        variants += [sel[:k] + (a,) + sel[k + 1:] for a in atoms_select if a not in sel
                     for k in range(len(sel))]
        variants += [sel[:k] + sel[k + 1:] for k in range(len(sel))] if len(sel) > 1 else []
        # columns of the pool's tables that no candidate selects (a vague question's other
        # reading often names another column of a table the pool uses), at a further penalty
        fresh = [a for a in schema_columns if a not in sel]
        fresh_variants = [sel[:k] + (a,) + sel[k + 1:] for a in fresh for k in range(len(sel))]
        fresh_variants += [sel + (a,) for a in fresh]
        for group, mass in ((variants, EDIT_PENALTY), (fresh_variants, EDIT_PENALTY ** 2)):
            share = score * mass / max(1, len(group))
            for v in group:
                vkey = tuple(sorted(v))
                if vkey in pool_select:
                    continue
                if vkey not in edited:
                    probe = replace(rec.donors[0], select=v)
                    edited[vkey] = [0.0, _spelled("select", probe), {"select": v}]
                edited[vkey][0] += share
    values["select"].update(edited)
    pool_from = set(values["from"])
    edited = {}
    for _key, (score, _, frag) in sorted(values["from"].items(), key=lambda kv: -kv[1][0])[:8]:
        where = frag["where"]
        wheres = [tuple(sorted(where + (a,))) for a in atoms_where if a not in where]
        wheres += [tuple(sorted(where[:k] + (a,) + where[k + 1:])) for a in atoms_where
                   if a not in where for k in range(len(where))]
        wheres += [where[:k] + where[k + 1:] for k in range(len(where))]
        options = [(frag["source"], frag["joins"], w) for w in wheres]
        options += [(s, j, where) for s, j in paths if (s, j) != (frag["source"], frag["joins"])]
        share = score * EDIT_PENALTY / max(1, len(options))
        for s, j, w in options:
            vkey = (s, j, w)
            if vkey in pool_from:
                continue
            if vkey not in edited:
                probe = replace(rec.donors[0], source=s, joins=j, where=w)
                known = rec.known.get(("from", vkey))
                edited[vkey] = [0.0, known if known is not None else _spelled("from", probe),
                                {"source": s, "joins": j, "where": w}]
            edited[vkey][0] += share
    values["from"].update(edited)
    values["from"].update(_disjunctions(rec, values["from"], pool_from))
    return values


def _wrapped(atom: str) -> str:
    """A conjunct as Parts keeps it: an OR in parentheses."""
    return f"({atom})" if " OR " in atom and not atom.startswith("(") else atom


MAX_OPERANDS = 16  # WHERE values and atoms combined into disjunctions per round


def _disjunctions(rec: _Recomposer, froms: dict[tuple, list], pool_from: set[tuple]
                  ) -> dict[tuple, list]:
    """Attachment readings: WHERE ``(X) OR (Y)`` for two of the pool's conditions X, Y (a whole
    WHERE or one conjunct), on each likely join frame whose tables they use. Each frame's
    disjunctions share EDIT_PENALTY of its prior in proportion to their operands' weights."""
    weight: dict[tuple[str, ...], float] = {}

    def add(key: tuple[str, ...], w: float) -> None:
        weight[key] = weight.get(key, 0.0) + w

    for (_s, _j, where), (score, _, _frag) in froms.items():
        if (_s, _j, where) not in pool_from or not where:
            continue
        add(where, score)
        for k, atom in enumerate(where):
            add((atom,), score)
            # a conjunct that is itself a choice (x IN (a, b), p OR q) splits into its
            # alternatives: "a and b that c" regroups as a OR (b AND c)
            for d in rec.disjuncts(atom):
                add((d,), score)
                add(tuple(sorted(where[:k] + (d,) + where[k + 1:])), score)
    operands = sorted(weight.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_OPERANDS]
    def redundant(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
        """One operand implies the other, or restates one of the other's alternatives."""
        if set(x) <= set(y) or set(y) <= set(x):
            return True
        return any(a in rec.disjuncts(b) or b in rec.disjuncts(a) for a in x for b in y)

    pairs = [(x, y, wx * wy) for (x, wx), (y, wy) in itertools.combinations(operands, 2)
             if not redundant(x, y)]
    out: dict[tuple, list] = {}
    frames = sorted(((k, v) for k, v in froms.items() if k in pool_from),
                    key=lambda kv: (-kv[1][0], str(kv[0])))[:8]
    for (source, joins, _where), (score, _, _frag) in frames:
        tables = frozenset([source, *(j.table for j in joins)])
        fitting = [(x, y, w) for x, y, w in pairs if all(
            rec.tables(a) <= tables for a in (*x, *y))]
        total = sum(w for _, _, w in fitting) or 1.0
        for x, y, w in fitting:
            both = tuple(sorted([x, y]))
            disj = "((" + " AND ".join(both[0]) + ") OR (" + " AND ".join(both[1]) + "))"
            vkey = (source, joins, (disj,))
            if vkey in pool_from:
                continue
            if vkey not in out:
                probe = replace(rec.donors[0], source=source, joins=joins, where=(disj,))
                out[vkey] = [0.0, _spelled("from", probe),
                             {"source": source, "joins": joins, "where": (disj,)}]
            out[vkey][0] += score * EDIT_PENALTY * w / total
    return out


def guided_proposals(rec: _Recomposer, weights: np.ndarray, yes: list[tuple[str, ...]],
                     no: list[tuple[str, ...]], limit: int = MAX_TRIED) -> list[tuple[Parts, float]]:
    """Queries whose every clause group agrees with the answers, most probable first: the
    pool's clause values (and their one-atom edits) combined across candidates."""
    values = _group_values(rec, weights)
    local = {g: ([s for s in yes if {_group_of(k) for k in s} == {g}],
                 [s for s in no if {_group_of(k) for k in s} == {g}]) for g in TOP_K}
    cross_yes = [s for s in yes if len({_group_of(k) for k in s}) > 1]
    cross_no = [s for s in no if len({_group_of(k) for k in s}) > 1]
    chosen: dict[str, list[list]] = {}
    for g, vals in values.items():
        ok = [v for v in vals.values() if not _violations(set(v[1]), *local[g])]
        ok.sort(key=lambda v: (-v[0], str(v[2])))
        chosen[g] = ok[:TOP_K[g]]
    out: list[tuple[Parts, float]] = []
    base = rec.donors[0] if rec.donors else None
    if base is None:
        return out
    groups = list(TOP_K)
    for combo in itertools.product(*(chosen[g] for g in groups)):
        feats: set[str] = set().union(*(c[1] for c in combo))
        if _violations(feats, cross_yes, cross_no):
            continue
        fields: dict = {}
        for c in combo:
            fields.update(c[2])
        p = replace(base, **fields)
        if not p.select:
            continue
        score = float(np.prod([max(c[0], 1e-6) for c in combo]))
        variants = [(p, score)] if rec.needed(p) <= p.tables else []
        variants += [(v, score * EDIT_PENALTY) for v in
                     ([rec.pruned(p)] if variants else rec.fit_joins(p)[:1]) if v is not None]
        for v, sc in variants:
            if v is not p and _violations(rec.approx_features(v), yes, no):
                continue
            out.append((v, sc))
    out.sort(key=lambda t: (-t[1], t[0].sql(rec.dialect)))
    return out[:limit]


def spread_by_deviation(proposals: list[tuple[Parts, float]], reference: Parts
                        ) -> list[tuple[Parts, float]]:
    """``proposals`` reordered so that each way of differing from ``reference`` (the query
    whose output was just rejected) takes turns: by which clause groups differ from it.

    A rejection says some clause group of the reference is wrong, not which: one group's many
    variants (thirty added columns) must not take every slot of a round from another group's
    single likely value (a GROUP BY / HAVING). Within a group of deviations the order stays.
    """
    ref = _group_keys(reference)
    buckets: dict[tuple[str, ...], list[tuple[Parts, float]]] = {}
    for p, score in proposals:
        key = tuple(g for g, v in _group_keys(p).items() if v != ref[g])
        key += ("distinct",) if p.distinct != reference.distinct else ()
        buckets.setdefault(key, []).append((p, score))
    lists = list(buckets.values())
    return [p for row in itertools.zip_longest(*lists) for p in row if p is not None]


MAX_BRANCHES = 40  # branch candidates paired into set operations per round


def compound_proposals(rec: _Recomposer, weights: np.ndarray, yes: list[tuple[str, ...]],
                       no: list[tuple[str, ...]], limit: int = MAX_TRIED
                       ) -> list[tuple[Compound, float]]:
    """Set operations (of the kinds the pool uses) of two plain queries, most probable first.

    Branches are the pool's plain queries and set-operation branches and the guided
    combinations that avoid every single feature ruled out (a "No" holds for both branches; a
    "Yes" may be met by either, so combinations holding each one alone are branches too, and
    every answer is checked on the pair). Both branches select as many
    columns; a pair's prior is the product of its branches'.
    """
    if not rec.ops:
        return []
    single_no = [s for s in no if len(s) == 1]
    total = float(sum(weights[i] for i in [*rec.parts, *rec.compounds])) or 1.0
    branches: dict[Parts, float] = {}
    for i in [*rec.parts, *rec.compounds]:
        shape = rec.parts.get(i) or rec.compounds[i]
        for b in (shape.branches if isinstance(shape, Compound) else (shape,)):
            if not _violations(rec.approx_features(b), [], single_no):
                branches[b] = branches.get(b, 0.0) + float(weights[i]) / total
    # a branch need not hold every "Yes" (the other may hold the rest): combinations are
    # sought without them, and holding each one on its own
    for needed in [[], *([s] for s in dict.fromkeys(yes))]:
        for p, score in guided_proposals(rec, weights, needed, single_no, limit=MAX_BRANCHES):
            branches.setdefault(p, score * EDIT_PENALTY)
    ranked = sorted(branches.items(), key=lambda kv: (-kv[1], kv[0].sql(rec.dialect)))
    ranked = ranked[:MAX_BRANCHES]
    feats = {b: rec.approx_features(b) for b, _ in ranked}
    out: list[tuple[Compound, float]] = []
    for (a, sa), (b, sb) in itertools.permutations(ranked, 2):
        if len(a.select) != len(b.select) or a == b:
            continue
        for op in rec.ops:
            if op != "EXCEPT" and a.sql(rec.dialect) > b.sql(rec.dialect):
                continue  # UNION and INTERSECT are symmetric: one order is enough
            if _violations(feats[a] | feats[b] | {op}, yes, no):
                continue
            out.append((Compound(op, (a, b)), sa * sb))
    out.sort(key=lambda t: (-t[1], t[0].sql(rec.dialect)))
    return out[:limit]


__all__ = ["EDIT_PENALTY", "MAX_BRANCHES", "MAX_OPERANDS", "MAX_TRIED", "TOP_K", "compound_proposals",
           "guided_proposals", "spread_by_deviation"]
