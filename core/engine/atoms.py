"""Clause atoms of candidate queries: the inventory repair recombines.

:func:`decompose` splits a plain SELECT into atoms qualified by base table (so atoms of
different candidates combine); a two-branch set operation is a :class:`Compound`. The helpers
below spell a clause group's features from its atoms and count how many of the user's answers a
feature set contradicts. The search over combinations lives in :mod:`core.engine.recombine`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sqlglot
from sqlglot import exp

from core.engine.errors import UnsafeQueryError
from core.engine.features import _deref
from core.engine.joins import equality_classes
from core.engine.predicates import _canonical, _conjuncts, _meaning
from core.engine.scope import _normalise_tree, _scope_of
from core.engine.sqlguard import parse_one_bounded


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

    @cached_property
    def tables(self) -> frozenset[str]:
        """The base tables the query reads (computed once: repair asks it of every donor for
        every edit it fits)."""
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


def _render(node: exp.Expr, dialect: str) -> str:
    return node.sql(dialect=dialect, normalize_functions="upper")


@dataclass(frozen=True)
class Compound:
    """Two plain SELECTs joined by a set operation (attachment readings often are)."""

    op: str  # UNION | UNION ALL | INTERSECT | EXCEPT
    branches: tuple[Parts, Parts]

    def sql(self, dialect: str) -> str:
        return f" {self.op} ".join(b.sql(dialect) for b in self.branches)


_SETOPS = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}


def _parse(sql: str, dialect: str) -> exp.Expression | None:
    """A pool candidate's tree within the check's bounds, or None (a donor is only skipped)."""
    try:
        return parse_one_bounded(sql, dialect)
    except (UnsafeQueryError, sqlglot.errors.SqlglotError):
        return None


def decompose_query(sql: str, dialect: str, schema: dict[str, list[str]]
                    ) -> Parts | Compound | None:
    """:func:`decompose`, and a set operation of two plain SELECTs as a :class:`Compound`."""
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    if isinstance(tree, exp.SetOperation) and type(tree) in _SETOPS and not any(
            tree.args.get(k) for k in ("order", "limit", "with", "with_")):
        branches = (_decompose_tree(tree.this, dialect, schema),
                    _decompose_tree(tree.expression, dialect, schema))
        if branches[0] is None or branches[1] is None:
            return None
        op = _SETOPS[type(tree)]
        if op == "UNION" and not tree.args.get("distinct"):
            op = "UNION ALL"
        return Compound(op, (branches[0], branches[1]))
    return _decompose_tree(tree, dialect, schema)


def decompose(sql: str, dialect: str, schema: dict[str, list[str]]) -> Parts | None:
    """Clause atoms of ``sql``, or None when it is not one plain SELECT over base tables
    (set operations, CTEs, FROM-subqueries and self-joins are left alone)."""
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    return _decompose_tree(tree, dialect, schema)


def _decompose_tree(tree: exp.Expr, dialect: str,
                    schema: dict[str, list[str]]) -> Parts | None:
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

    def norm(node: exp.Expr) -> str:
        return _render(_normalise_tree(node, scope), dialect)

    outputs = {e.alias.lower(): e.this for e in tree.expressions if isinstance(e, exp.Alias)}

    def deref(node: exp.Expr) -> exp.Expr:
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
        # HAVING spelled as its feature is (dereferenced, canonical), so screening matches it
        _render(_meaning(_normalise_tree(_deref(having.this, outputs), scope), dialect), dialect)
        if having is not None else "",
        tuple(norm(deref(o.this)) + (" DESC" if o.args.get("desc") else "")
              for o in order.expressions) if order is not None else (),
        norm(limit.expression) if limit is not None else "")


def nested_parts(sql: str, dialect: str, schema: dict[str, list[str]]) -> list[Parts]:
    """Clause atoms of the plain SELECTs nested in ``sql`` as ``x IN (SELECT …)`` or as a
    derived table: their GROUP BY / HAVING, WHERE and join atoms are donors too (a relational
    division is often spelled as an IN-subquery that groups, and meant as a grouped join)."""
    tree = _parse(sql, dialect)
    if tree is None:
        return []
    out: list[Parts] = []
    for node in tree.find_all(exp.Select):
        sub = node.parent
        if node is tree or not isinstance(sub, exp.Subquery) or not isinstance(
                sub.parent, (exp.In, exp.From, exp.Join)):
            continue
        parts = _decompose_tree(node, dialect, schema)
        if parts is not None and parts not in out:
            out.append(parts)
    return out


def _tables_of(atom: str, dialect: str) -> frozenset[str]:
    """Tables an atom's own columns name (columns inside a nested SELECT are its own)."""
    node = sqlglot.parse_one(atom, read=dialect)
    found: set[str] = set()

    def walk(n: exp.Expr) -> None:
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
        if inner:
            out += [f"ON {c}" for c in _on_classes([j.on for j in p.joins])]
        if p.where:
            out.append("WHERE " + " AND ".join(p.where))
        return frozenset(out)
    if group == "group":
        return frozenset([*(f"GROUP BY {g}" for g in p.group)]
                         + ([f"HAVING {p.having}"] if p.having else []))
    return frozenset([*(o if o.endswith(" DESC") else f"{o} ASC" for o in
                        (f"ORDER BY {o}" for o in p.order))]
                     + ([f"LIMIT {p.limit}"] if p.limit else []))


def _on_classes(conditions: list[str]) -> list[str]:
    """Equality classes of the columns that inner-join conditions equate (as features)."""
    pairs = [(sides[0], sides[1]) for cond in conditions for part in cond.split(" AND ")
             if len(sides := [x.strip() for x in part.split(" = ")]) == 2
             and all("." in x and " " not in x for x in sides)]
    return [" = ".join(sorted(m)) for m in equality_classes(pairs)]


def _violations(keys: set[str], yes: list[tuple[str, ...]], no: list[tuple[str, ...]]) -> int:
    return (sum(1 for s in yes if not all(k in keys for k in s))
            + sum(1 for s in no if all(k in keys for k in s)))


__all__ = ["Compound", "Join", "Parts", "decompose", "decompose_query", "nested_parts"]
