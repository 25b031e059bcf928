"""Repair: reach readings the pool lacks by recombining the atoms of its candidates.

When the user rejects the predicted output (or says "none of these"), :func:`recompose` builds
new SQL on the sqlglot AST from clause-level atoms found in the pool — the SELECT columns of one
candidate, the WHERE conjuncts of another, the join path that connects their tables, their
GROUP BY / HAVING / ORDER BY / LIMIT — starting from the candidates that agree best with the
user's answers and making one edit each. Every new query must hold every feature set the user
said Yes to and none they said No to, must pass the read-only allow-list and execute, and must
produce an output that is neither rejected nor already surviving; one query per new output is
added with a small prior. It is deterministic: the same session always gets the same queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp

from core.engine.errors import SessionError
from core.engine.execute import ExecutionResult
from core.engine.features import Feature, _canonical, _conjuncts, _normalise_tree, _scope_of
from core.engine.session import Decision, RepairSession
from core.engine.similarity import output_key

REPAIR_PRIOR = 0.5  # weight of a recomposed candidate (pool candidates weigh >= 1)
MAX_BASES = 8  # candidates edited per repair round
MAX_TRIED = 200  # queries executed per round at most


@dataclass(frozen=True)
class RepairOutcome:
    """What one repair round did (a trace event and the evaluation read it)."""

    method: str  # "recompose" | "resample"
    added: tuple[str, ...]  # SQL of candidates added to the session
    new_outputs: int  # functional classes that are new to the session


@dataclass(frozen=True)
class Join:
    side: str  # "" | "LEFT"
    table: str
    on: str  # rendered condition, "" for a cross join


@dataclass(frozen=True)
class Parts:
    """A single-SELECT query as clause atoms, every column qualified by its base table."""

    source: str
    joins: tuple[Join, ...]
    select: tuple[str, ...]
    distinct: bool
    where: tuple[str, ...]  # conjuncts, an OR in parentheses
    group: tuple[str, ...]
    having: str
    order: tuple[str, ...]
    limit: str

    @property
    def tables(self) -> frozenset[str]:
        return frozenset([self.source, *(j.table for j in self.joins)])

    def sql(self, dialect: str) -> str:
        out = ["SELECT", "DISTINCT" if self.distinct else "", ", ".join(self.select),
               "FROM", self.source]
        for j in self.joins:
            out += [f"{j.side} JOIN".strip(), j.table] + (["ON", j.on] if j.on else [])
        if self.where:
            out += ["WHERE", " AND ".join(self.where)]
        if self.group:
            out += ["GROUP BY", ", ".join(self.group)]
        if self.having:
            out += ["HAVING", self.having]
        if self.order:
            out += ["ORDER BY", ", ".join(self.order)]
        if self.limit:
            out += ["LIMIT", self.limit]
        return " ".join(t for t in out if t)


def _render(node: exp.Expression, dialect: str) -> str:
    return node.sql(dialect=dialect, normalize_functions="upper")


def decompose(sql: str, dialect: str, schema: dict[str, list[str]]) -> Parts | None:
    """Clause atoms of ``sql``, or None when it is not one plain SELECT over base tables
    (set operations, CTEs, FROM-subqueries and self-joins are left alone)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    if not isinstance(tree, exp.Select) or tree.args.get("with") or tree.args.get("with_"):
        return None
    from_ = tree.args.get("from_") or tree.args.get("from")
    if from_ is None or not isinstance(from_.this, exp.Table):
        return None
    joins = tree.args.get("joins") or []
    if any(not isinstance(j.this, exp.Table) for j in joins):
        return None
    names = [from_.this.name.lower(), *(j.this.name.lower() for j in joins)]
    if len(set(names)) != len(names):
        return None  # a self-join: its atoms cannot be told apart by table name
    scope = _scope_of(tree, {k.lower(): v for k, v in schema.items()}, set())

    def norm(node: exp.Expression) -> str:
        return _render(_normalise_tree(node, scope), dialect)

    outputs = {e.alias.lower(): e.this for e in tree.expressions if isinstance(e, exp.Alias)}

    def deref(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in outputs:
            return outputs[node.name.lower()]
        return node

    out_joins = []
    for j in joins:
        side = (j.args.get("side") or "").upper()
        if side not in ("", "LEFT") or j.args.get("using"):
            return None
        on = j.args.get("on")
        out_joins.append(Join(side, j.this.name.lower(), norm(on) if on is not None else ""))
    where = tree.args.get("where")
    conj: tuple[str, ...] = ()
    if where is not None:
        canon = _canonical(_normalise_tree(where.this, scope))
        conj = tuple(sorted(_render(exp.Paren(this=c) if isinstance(c, exp.Connector) else c,
                                    dialect) for c in _conjuncts(canon)))
    group = tree.args.get("group")
    having = tree.args.get("having")
    order = tree.args.get("order")
    limit = tree.args.get("limit")
    return Parts(
        from_.this.name.lower(), tuple(out_joins),
        tuple(norm(e.this if isinstance(e, exp.Alias) else e) for e in tree.expressions),
        bool(tree.args.get("distinct")), conj,
        tuple(norm(deref(g)) for g in group.expressions) if group is not None else (),
        norm(having.this) if having is not None else "",
        tuple(norm(deref(o.this)) + (" DESC" if o.args.get("desc") else "")
              for o in order.expressions) if order is not None else (),
        norm(limit.expression) if limit is not None else "")


def _tables_of(atom: str, dialect: str) -> frozenset[str]:
    """Tables an atom's own columns name (columns inside a nested SELECT are its own)."""
    node = sqlglot.parse_one(atom, read=dialect)
    found: set[str] = set()

    def walk(n: exp.Expression) -> None:
        for child in n.iter_expressions():
            if isinstance(child, exp.Select):
                continue
            if isinstance(child, exp.Column) and child.table:
                found.add(child.table.lower())
            walk(child)

    if isinstance(node, exp.Column) and node.table:
        found.add(node.table.lower())
    walk(node)
    return frozenset(found)


class _Recomposer:
    """One repair round's inventory of atoms and the edits built from it."""

    def __init__(self, session: RepairSession):
        self.session = session
        pool = session.pool
        self.dialect = pool.dialect
        self.parts: dict[int, Parts] = {}
        valid = pool.valid
        for i, sql in enumerate(pool.sqls):
            if valid[i]:
                p = decompose(sql, pool.dialect, pool.schema)
                if p is not None:
                    self.parts[i] = p
        self._tables: dict[str, frozenset[str]] = {}
        weight = pool.counts
        order = sorted(self.parts, key=lambda i: (-weight[i], i))
        self.donors = [self.parts[i] for i in order]
        # each clause group's real features, as the pool's candidates show them
        self.known: dict[tuple, frozenset[str]] = {}
        for i, p in self.parts.items():
            keys = pool.feature_keys(i)
            for group, key in _group_keys(p).items():
                self.known.setdefault((group, key), frozenset(
                    k for k in keys if k.split(" ", 1)[0] in _GROUPS[group]
                    and not (group == "select" and k == "DISTINCT")))

    def approx_features(self, p: Parts) -> set[str]:
        """The features ``p`` will have: each clause group's as seen in the pool when some
        candidate has that clause, else spelled from the atoms (checked exactly later)."""
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

    def needed(self, p: Parts) -> frozenset[str]:
        atoms = [*p.select, *p.where, *p.group, p.having, *p.order]
        out: set[str] = set()
        for a in atoms:
            if a:
                out |= self.tables(a)
        return frozenset(out)

    def fit_joins(self, p: Parts) -> list[Parts]:
        """``p`` itself if its tables cover its atoms, else ``p`` on each pool join path that
        covers them (fewest tables first)."""
        need = self.needed(p)
        if need <= p.tables:
            return [p]
        paths = {(d.source, d.joins) for d in self.donors if need <= d.tables}
        ranked = sorted(paths, key=lambda sj: (len(sj[1]), sj[0], str(sj[1])))
        return [replace(p, source=s, joins=j) for s, j in ranked[:2]]

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


_GROUPS = {"select": ("SELECT",), "from": ("FROM", "JOIN", "LEFT", "ON", "WHERE"),
           "group": ("GROUP", "HAVING"), "order": ("ORDER", "LIMIT")}


def _group_keys(p: Parts) -> dict[str, tuple]:
    return {"select": tuple(sorted(p.select)), "from": (p.source, p.joins, p.where),
            "group": (p.group, p.having), "order": (p.order, p.limit)}


def _spelled(group: str, p: Parts) -> frozenset[str]:
    """A clause group's features written from its atoms (exact for plain clauses)."""
    if group == "select":
        return frozenset([*(f"SELECT {a}" for a in p.select),
                          "SELECT ONLY " + ", ".join(sorted(p.select))])
    if group == "from":
        inner = all(not j.side for j in p.joins)
        out = [f"FROM {t}" for t in p.tables] if inner else [f"FROM {p.source}"] + [
            f"{j.side} JOIN {j.table}".strip() for j in p.joins]
        if p.where:
            out.append("WHERE " + " AND ".join(p.where))
        return frozenset(out)
    if group == "group":
        return frozenset([*(f"GROUP BY {g}" for g in p.group)]
                         + ([f"HAVING {p.having}"] if p.having else []))
    return frozenset([*(o if o.endswith(" DESC") else f"{o} ASC" for o in
                        (f"ORDER BY {o}" for o in p.order))]
                     + ([f"LIMIT {p.limit}"] if p.limit else []))


def _violations(keys: set[str], yes: list[tuple[str, ...]], no: list[tuple[str, ...]]) -> int:
    return (sum(1 for s in yes if not all(k in keys for k in s))
            + sum(1 for s in no if all(k in keys for k in s)))


def _answer_sets(session: RepairSession) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    yes = [d.features for d in session.history
           if d.kind in ("variable", "feature") and d.answer]
    return yes, session.no_sets()


def recompose(session: RepairSession, *, rejected_outputs: Iterable[str] = (),
              max_new: int = 24) -> RepairOutcome:
    """Add up to ``max_new`` recomposed candidates with new outputs to ``session`` (in place).

    ``rejected_outputs`` are rejected first (one ``reject`` decision) where they survive; every
    output rejected in the session's history is avoided. Earlier answers stay applied: a new
    query must agree with each of them. Needs the session's database to execute the queries.
    """
    _ = session.database  # fails early, naming what to do, when there is none
    alive_keys = {session.output_key_of(int(i)) for i in session.survivors}
    still = [k for k in dict.fromkeys(rejected_outputs) if k in alive_keys]
    if still:
        session.reject_outputs(still)
    pool = session.pool
    known_sql = set(pool.sqls)
    yes, no = _answer_sets(session)
    rec = _Recomposer(session)
    keys_of = {i: set(pool.feature_keys(i)) for i in rec.parts}
    # bases: the candidates that agree best with the answers, the last survivors first
    last_alive = session._alive[-1] if session.alive.any() else _last_nonempty(session)
    bases = sorted(rec.parts, key=lambda i: (_violations(keys_of[i], yes, no),
                                              not last_alive[i], -pool.counts[i], i))
    proposals: dict[str, tuple[int, int]] = {}
    for b_rank, i in enumerate(bases[:MAX_BASES]):
        for rank, edited in rec.edits(rec.parts[i]):
            for fitted in rec.fit_joins(edited):
                if not fitted.select:
                    continue
                sql = fitted.sql(pool.dialect)
                if sql in proposals or sql in known_sql:
                    continue
                # most edits contradict an answer: skip those before running anything
                if _violations(rec.approx_features(fitted), yes, no):
                    continue
                proposals[sql] = (rank, b_rank)
    ordered = sorted(proposals, key=lambda s: (proposals[s], s))
    weighted = [(sql, round(REPAIR_PRIOR / (proposals[sql][0] + proposals[sql][1] / MAX_BASES),
                            6)) for sql in ordered]
    return _admit(session, weighted, "recompose", max_new)


def _admit(session: RepairSession, proposals: list[tuple[str, float]], method: str,
           max_new: int) -> RepairOutcome:
    """Execute proposals in order; add those that run, agree with every answer and give an
    output neither rejected nor surviving nor already added (one per output)."""
    pool = session.pool
    db = session.database
    rejected = session.rejected_outputs()
    alive_outputs = {session.output_key_of(int(i)) for i in session.survivors}
    known_sql = set(pool.sqls)
    yes, no = _answer_sets(session)
    added: list[str] = []
    results: list[ExecutionResult] = []
    weights: list[float] = []
    features: list[list[Feature]] = []
    outputs_added: set[str] = set()
    cache = pool.repair_cache
    for tried, (sql, weight) in enumerate(proposals):
        if len(added) >= max_new or tried >= MAX_TRIED:
            break
        if sql in known_sql:
            continue
        if sql not in cache:
            result = db.execute(sql)  # the read-only allow-list (check_query) runs first
            cache[sql] = [result, output_key(result), None]
        result, key, feature_list = cache[sql]
        if not result.ok or key in rejected or key in alive_outputs or key in outputs_added:
            continue
        if feature_list is None:
            try:
                feature_list = cache[sql][2] = pool.features_of(sql)
            except sqlglot.errors.SqlglotError:
                feature_list = cache[sql][2] = []
        if not feature_list or _violations({f.key for f in feature_list}, yes, no):
            continue
        outputs_added.add(key)
        added.append(sql)
        results.append(result)
        weights.append(weight)
        features.append(feature_list)
    new_outputs = sum(1 for k in outputs_added if k not in set(pool.class_keys))
    if added:
        session.decide(Decision("repair", gesture=method, sqls=tuple(added),
                                weights=tuple(weights)), results, features)
    return RepairOutcome(method, tuple(added), new_outputs)


def decisions_text(session: RepairSession, max_rows: int = 3) -> str:
    """The user's decisions so far in words, for the resampling prompt: clauses required,
    clauses (or combinations) ruled out, and a preview of each rejected output."""
    yes, no = _answer_sets(session)
    lines = ["Decisions so far:"]
    required = sorted({k for s in yes for k in s})
    if required:
        lines.append("- The query must contain: " + "; ".join(required) + ".")
    for s in no:
        lines.append(("- The query must not contain: " if len(s) == 1 else
                      "- The query must not contain all of: ") + " AND ".join(s) + ".")
    pool = session.pool
    for key in sorted(session.rejected_outputs()):
        if key not in pool.class_keys:
            continue
        rep = int(np.flatnonzero(pool.class_index == pool.class_keys.index(key))[0])
        res = pool.results[rep]
        rows = "; ".join(repr(tuple(r)) for r in res.rows[:max_rows]) or "no rows"
        more = f" … ({len(res.rows)} rows)" if len(res.rows) > max_rows else ""
        lines.append(f"- This output is NOT what the user wants: columns "
                     f"({', '.join(res.columns)}), rows {rows}{more}.")
    if len(lines) == 1:
        lines.append("- None of the queries proposed so far is what the user means.")
    return "\n".join(lines)


def resample(session: RepairSession, sampler: Any, *, cache: Any = None, n: int = 8,
             max_new: int = 24) -> RepairOutcome:
    """Ask the LLM for new candidates with a prompt stating the decisions so far.

    ``sampler`` is a :class:`core.generation.sampler.AnthropicSampler`; its pool is cached
    under the question plus the decisions (``cache``: a pool cache), so replaying or retrying
    the same state costs no request. New candidates are admitted as in :func:`recompose`,
    weighted by how often they were sampled.
    """
    from core.generation.sampler import REPAIR_PROMPT_VERSION, generate_pool, repair_question

    repair_sampler = sampler.with_config(prompt_version=REPAIR_PROMPT_VERSION, n=n)
    question = repair_question(session.pool.question, decisions_text(session))
    generated = generate_pool(repair_sampler, question, session.database, cache)
    total = max(1, sum(c.count for c in generated.candidates))
    proposals = [(c.sql, round(REPAIR_PRIOR * c.count / total + 1e-6, 6))
                 for c in generated.candidates]
    return _admit(session, proposals, "resample", max_new)


def _last_nonempty(session: RepairSession) -> np.ndarray:
    for mask in reversed(session._alive):
        if mask.any():
            return mask
    raise SessionError("the session has no candidates")


__all__ = ["REPAIR_PRIOR", "Parts", "RepairOutcome", "decisions_text", "decompose", "recompose",
           "resample"]
