"""Inner joins read at the level of meaning: a set of tables and classes of equal columns.

A query whose joins are all inner is read as its tables (``FROM`` per table: join order and the
starting table do not matter) with its column equalities — from ON or WHERE alike — as
equivalence classes (``ON a.x = b.y = c.z``); ``x IN (SELECT k FROM t WHERE p)`` on a unique
``k`` (or under DISTINCT) is the join it means. The remaining conjuncts go back to WHERE.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from core.engine.predicates import _and_all, _conjuncts, _meaning
from core.engine.scope import _normalise_tree, _Scope, _table_name


def _pred_tree(node: exp.Expr, scope: _Scope, dialect: str) -> exp.Expr:
    return _meaning(_normalise_tree(node, scope), dialect)


def _semi_join(conj: exp.Expr, scope: _Scope, tables: list[str], distinct: bool
               ) -> tuple[str, exp.Expr, list[exp.Expr]] | None:
    """``x IN (SELECT t.k FROM t WHERE p)`` as (t, x = t.k, p's conjuncts) when it means
    that join: uncorrelated, one new table, and ``k`` unique in ``t`` (or the outer query
    DISTINCT, which removes the rows a join would repeat)."""
    if not isinstance(conj, exp.In) or not isinstance(conj.this, exp.Column):
        return None
    query = conj.args.get("query")
    inner = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
        return None
    if any(inner.args.get(k) for k in ("joins", "group", "having", "limit", "distinct",
                                       "order", "with", "with_")):
        return None
    from_ = inner.args.get("from_") or inner.args.get("from")
    if from_ is None or not isinstance(from_.this, exp.Table):
        return None
    table = from_.this.name.lower()
    key = inner.expressions[0]
    if table in tables or not isinstance(key, exp.Column) or key.table != table:
        return None
    if any(c.table and c.table != table for c in inner.find_all(exp.Column)):
        return None  # correlated
    if not distinct and key.name not in scope.unique.get(table, []):
        return None
    where = inner.args.get("where")
    return table, exp.EQ(this=conj.this, expression=key), (
        _conjuncts(where.this) if where is not None else [])


def equality_classes(pairs: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The classes of the columns that ``pairs`` equate, closed under transitivity (union-find),
    in the order their members were first seen; classes of one column are left out."""
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        while parent.setdefault(a, a) != a:
            a = parent[a]
        return a

    for a, b in pairs:
        parent[find(a)] = find(b)
    classes: dict[str, list[str]] = {}
    for col in parent:
        classes.setdefault(find(col), []).append(col)
    return [m for m in classes.values() if len(m) > 1]


def _inner_join_features(select: exp.Select, scope: _Scope, dialect: str,
                         distinct: bool) -> tuple[list[tuple[str, str]], list[exp.Expr]]:
    """(keyword, value) pairs — FROM per table, ON per class of equal columns — and the other
    conjuncts."""
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args.get("joins") or []
    tables = [lb for lb in dict.fromkeys(scope.aliases.values()) if not lb.startswith("(")]
    conj: list[exp.Expr] = []
    for j in joins:
        if j.args.get("on") is not None:
            conj.extend(_conjuncts(_pred_tree(j.args["on"], scope, dialect)))
    where = select.args.get("where")
    if where is not None:
        conj.extend(_conjuncts(_pred_tree(where.this, scope, dialect)))
    rest: list[exp.Expr] = []
    while conj:
        c = conj.pop(0)
        unnested = _semi_join(c, scope, tables, distinct)
        if unnested is None:
            rest.append(c)
            continue
        tables.append(unnested[0])
        conj.append(unnested[1])
        conj.extend(_conjuncts(_meaning(_and_all(unnested[2], dialect), dialect))
                    if unnested[2] else [])
    equal: list[tuple[str, str]] = []
    others: list[exp.Expr] = []
    for c in rest:
        if isinstance(c, exp.EQ) and all(isinstance(side, exp.Column) for side in c.args.values()
                                         if isinstance(side, exp.Expression)) \
                and c.this.table in tables and c.expression.table in tables \
                and c.this.table != c.expression.table:
            a, b = (side.sql(dialect=dialect) for side in (c.this, c.expression))
            equal.append((a, b))
        else:
            others.append(c)
    feats = [("FROM", t) for t in tables]
    if from_ is not None and not tables and not isinstance(from_.this, exp.Subquery):
        feats.append(("FROM", _table_name(from_.this) or ""))
    feats += [("ON", " = ".join(sorted(members))) for members in equality_classes(equal)]
    return feats, others
