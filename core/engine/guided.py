"""Guided recombination: queries whose every clause group agrees with the user's answers.

:func:`guided_proposals` combines clause values across candidates — the pool's values, their
one-atom edits (sharing a penalty), SELECT columns of the pool's tables, and WHERE disjunctions
``(X) OR (Y)`` of its conditions and their alternatives (attachment readings), most probable
first; :func:`compound_proposals` pairs two branches into a set operation;
:func:`spread_by_deviation` lets each way of differing from a rejected query take turns.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np

from core.engine.atoms import _GROUPS, Compound, Parts, _group_keys, _spelled, _violations
from core.engine.division import division_readings
from core.engine.recombine import MAX_TRIED, _Recomposer

EDIT_PENALTY = 0.2  # prior factor of a clause value the pool does not contain as a whole
TOP_K = {"select": 10, "from": 14, "group": 3, "order": 3, "distinct": 2}


def _group_of(key: str) -> str:
    word = key.split(" ", 1)[0]
    if word == "DISTINCT":
        return "distinct"
    return next((g for g, words in _GROUPS.items() if word in words), "other")


def _group_values(rec: _Recomposer, weights: np.ndarray,
                  answered: tuple[list[str], set[str]] = ([], set())
                  ) -> dict[str, dict[tuple, list]]:
    """Per clause group: value -> [prior score, features, fragment] from the pool, plus the
    one-atom edits of its most likely values and of those values composed with the
    ``answered`` (required, ruled-out) columns (at a lower prior)."""
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
    # columns of the tables a foreign key joins to the pool's (a question's other reading may
    # name the entity behind a key: the branch of a product), lower still; joined on fitting
    neighbour_columns = [f"{t}.{c}" for t in rec.neighbours() for c in schema.get(t, [])]
    edited: dict[tuple, list] = {}
    tops = sorted(values["select"].items(), key=lambda kv: -kv[1][0])[:8]
    # each likely value made to agree with the columns answered so far, as one value (a
    # "No" to latitude and a "Yes" to city are one composed edit, not two rounds of edits)
    composed = [(score * EDIT_PENALTY, rec.composed_select(frag["select"], *answered))
                for _k, (score, _, frag) in tops] if any(answered) else []
    for score, sel in [*composed, *((sc, fr["select"]) for _k, (sc, _, fr) in tops)]:
        variants = [sel + (a,) for a in atoms_select if a not in sel]
        variants += [sel[:k] + (a,) + sel[k + 1:] for a in atoms_select if a not in sel
                     for k in range(len(sel))]
        variants += [sel[:k] + sel[k + 1:] for k in range(len(sel))] if len(sel) > 1 else []
        # columns of the pool's tables that no candidate selects (a vague question's other
        # reading often names another column of a table the pool uses), at a further penalty,
        # those the question names or that are a table's key first; and the whole row
        fresh = [a for a in schema_columns if a not in sel and a not in answered[1]]
        prior = {a: rec.column_prior(a) for a in fresh}
        fresh_variants = [(sel[:k] + (a,) + sel[k + 1:], prior[a]) for a in fresh
                          for k in range(len(sel))]
        fresh_variants += [(sel + (a,), prior[a]) for a in fresh]
        far = [a for a in neighbour_columns if a not in sel and a not in answered[1]]
        far_prior = {a: rec.column_prior(a) for a in far}
        far_variants = [(sel[:k] + (a,) + sel[k + 1:], far_prior[a]) for a in far
                        for k in range(len(sel))]
        far_variants += [(sel + (a,), far_prior[a]) for a in far]
        used = {c.split(".", 1)[0] for c in sel}
        row = tuple(f"{t}.{c}" for t in tables if t in used for c in schema.get(t, [])
                    if f"{t}.{c}" not in sel and f"{t}.{c}" not in answered[1])
        for group, mass in (([(v, 1.0) for v in variants], EDIT_PENALTY),
                            (fresh_variants, EDIT_PENALTY ** 2), ([(sel, 1.0)], 1.0),
                            (far_variants, EDIT_PENALTY ** 3),
                            ([(sel + row, 1.0)] if row else [], EDIT_PENALTY ** 2 / 2),
                            ([((a,), 1.0) for a in sel] if len(sel) > 2 else [],
                             EDIT_PENALTY ** 2)):
            total = sum(w for _, w in group) or 1.0
            for v, w in group:
                vkey = tuple(sorted(v))
                if vkey in pool_select or not v:
                    continue
                if vkey not in edited:
                    probe = replace(rec.donors[0], select=v)
                    edited[vkey] = [0.0, _spelled("select", probe), {"select": v}]
                edited[vkey][0] += score * mass * w / total
    values["select"].update(edited)
    pool_from = set(values["from"])
    edited = {}
    for _key, (score, _, frag) in sorted(values["from"].items(), key=lambda kv: -kv[1][0])[:8]:
        where = frag["where"]
        wheres = [tuple(sorted(where + (a,))) for a in atoms_where if a not in where]
        wheres += [tuple(sorted(where[:k] + (a,) + where[k + 1:])) for a in atoms_where
                   if a not in where for k in range(len(where))]
        wheres += [where[:k] + where[k + 1:] for k in range(len(where))]
        options = [(frag["source"], frag["joins"], wh) for wh in wheres]
        options += [(s, j, where) for s, j in paths if (s, j) != (frag["source"], frag["joins"])]
        share = score * EDIT_PENALTY / max(1, len(options))
        for s, j, wh in options:
            vkey = (s, j, wh)
            if vkey in pool_from:
                continue
            if vkey not in edited:
                probe = replace(rec.donors[0], source=s, joins=j, where=wh)
                known = rec.known.get(("from", vkey))
                edited[vkey] = [0.0, known if known is not None else _spelled("from", probe),
                                {"source": s, "joins": j, "where": wh}]
            edited[vkey][0] += share
    values["from"].update(edited)
    values["from"].update(_disjunctions(rec, values["from"], pool_from))
    # an ORDER BY read the other way round ("oldest" by age or by birth date), at an edit's prior
    for (order, limit), (score, _, _frag) in list(values["order"].items()):
        flipped = tuple(o[:-5] if o.endswith(" DESC") else o + " DESC" for o in order)
        if order and (flipped, limit) not in values["order"]:
            probe = replace(rec.donors[0], order=flipped, limit=limit)
            values["order"][(flipped, limit)] = [score * EDIT_PENALTY, _spelled("order", probe),
                                                 {"order": flipped, "limit": limit}]
    return values


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
    pool's clause values (and their one-atom edits) combined across candidates.

    Computed once per round and answers (a round without answers asks twice: for plain
    proposals and for set operations' branches); ``limit`` only cuts the list.
    """
    key = ("guided", id(weights), tuple(map(tuple, yes)), tuple(map(tuple, no)))
    ranked = rec.memo.get(key)
    if ranked is None:
        ranked = rec.memo[key] = _guided(rec, weights, yes, no)
    return ranked[:limit]


def _guided(rec: _Recomposer, weights: np.ndarray, yes: list[tuple[str, ...]],
            no: list[tuple[str, ...]]) -> list[tuple[Parts, float]]:
    """Every guided proposal for these answers, ranked (see :func:`guided_proposals`)."""
    values = _group_values(rec, weights, rec.answered_columns(yes, no))
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
    # scope readings through a link table (division <-> distributive), screened alike
    out += division_readings(rec, weights, yes, no)
    out.sort(key=lambda t: (-t[1], t[0].sql(rec.dialect)))
    return out


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
    single_no: list[tuple[str, ...]] = [s for s in no if len(s) == 1]
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
    # the pool's set operations with fewer output columns (one column, or those not ruled out)
    excluded = rec.answered_columns(yes, no)[1]
    for i, shape in rec.compounds.items():
        for narrow, w in rec.narrowed(shape, excluded):
            if not _violations(rec.approx_features(narrow), yes, no):
                out.append((narrow, float(weights[i]) / total * EDIT_PENALTY * w))
    out.sort(key=lambda t: (-t[1], t[0].sql(rec.dialect)))
    return out[:limit]


__all__ = ["EDIT_PENALTY", "MAX_BRANCHES", "MAX_OPERANDS", "TOP_K", "compound_proposals",
           "guided_proposals", "spread_by_deviation"]
