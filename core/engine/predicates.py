"""Canonical predicates: one spelling per meaning of a WHERE, ON or HAVING condition.

:func:`_meaning` applies sqlglot's meaning-preserving rewrites (``normalize`` to conjunctive
normal form, ``simplify``) and then :func:`_canonical`: AND/OR operands sorted, ORs of equalities
on one column as one IN list, literals on the right of comparisons.
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.normalize import normalize
from sqlglot.optimizer.simplify import simplify

_FLIP: dict[type[exp.Expr], type[exp.Binary]] = {exp.GT: exp.LT, exp.LT: exp.GT,
                                               exp.GTE: exp.LTE, exp.LTE: exp.GTE}


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _canonical(node: exp.Expr) -> exp.Expr:
    """One spelling per predicate: AND/OR operands sorted, parentheses implied by structure,
    ``x = 'a' OR x = 'b'`` and ``x IN ('b', 'a')`` both ``x IN ('a', 'b')``, literals on the
    right of comparisons. Only rewrites that keep the meaning."""
    node = _unparen(node)
    if isinstance(node, (exp.And, exp.Or)):
        kind = type(node)
        parts = [_canonical(p) for p in node.flatten()]
        flat: list[exp.Expr] = []
        for p in parts:  # re-flatten: canonical children may be of the same connective
            flat.extend(_operands(p, kind))
        if kind is exp.Or:
            flat = _merge_in_lists(flat)
        flat.sort(key=lambda e: e.sql())
        wrapped = [exp.Paren(this=p) if isinstance(p, exp.Connector) else p for p in flat]
        out = wrapped[0]
        for p in wrapped[1:]:
            out = kind(this=out, expression=p)
        return out
    if isinstance(node, exp.Not):
        return exp.not_(_canonical(node.this), copy=False)
    if isinstance(node, exp.In) and node.expressions and all(
            isinstance(v, exp.Literal) for v in node.expressions):
        values = sorted({v.sql(): v for v in node.expressions}.items())
        if len(values) == 1:
            return exp.EQ(this=node.this, expression=values[0][1])
        return exp.In(this=node.this, expressions=[v for _, v in values])
    if isinstance(node, (exp.EQ, exp.NEQ)) and isinstance(node.this, exp.Literal) \
            and not isinstance(node.expression, exp.Literal):
        return type(node)(this=node.expression, expression=node.this)
    if type(node) in _FLIP and isinstance(node.this, exp.Literal) \
            and not isinstance(node.expression, exp.Literal):
        return _FLIP[type(node)](this=node.expression, expression=node.this)
    return node


def _operands(node: exp.Expr, kind: type) -> list[exp.Expr]:
    """Operands of a chain of ``kind`` (And/Or), looking through parentheses."""
    node = _unparen(node)
    if isinstance(node, kind):
        return _operands(node.this, kind) + _operands(node.expression, kind)
    return [node]


def _merge_in_lists(parts: list[exp.Expr]) -> list[exp.Expr]:
    """Inside an OR, equalities and IN lists on one column become one IN list."""
    by_column: dict[str, list[exp.Expr]] = {}
    others: list[exp.Expr] = []
    columns: dict[str, exp.Expr] = {}
    for p in parts:
        if isinstance(p, exp.EQ) and isinstance(p.expression, exp.Literal):
            key = p.this.sql()
            by_column.setdefault(key, []).append(p.expression)
            columns[key] = p.this
        elif isinstance(p, exp.In) and p.expressions and all(
                isinstance(v, exp.Literal) for v in p.expressions):
            key = p.this.sql()
            by_column.setdefault(key, []).extend(p.expressions)
            columns[key] = p.this
        else:
            others.append(p)
    for key, values in by_column.items():
        merged = _canonical(exp.In(this=columns[key], expressions=values))
        others.append(merged)
    return others


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    """Top-level AND operands (through the parentheses the builders add)."""
    node = _unparen(node)
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


_RENDER: dict[str, Any] = {"normalize_functions": "upper"}


def _plain(tree: exp.Expr) -> bool:
    """A conjunction of comparisons on distinct columns with no constants to fold: sqlglot's
    rewrites would leave it as it is, so they are skipped (they cost ~3 ms a predicate)."""
    if any(isinstance(n, (exp.Or, exp.Not, exp.Boolean, exp.Null)) for n in tree.walk()):
        return False
    seen: set[str] = set()
    for part in _conjuncts(tree):
        if not isinstance(part, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In,
                                 exp.Like, exp.ILike, exp.Is)):
            return False
        if not isinstance(part.this, exp.Column) or isinstance(
                part.args.get("expression"), exp.Binary):
            return False
        name = part.this.sql()
        if name in seen:
            return False
        seen.add(name)
    return True


def _meaning(tree: exp.Expr, dialect: str) -> exp.Expr:
    """sqlglot's meaning-preserving rewrites of a predicate: CNF, then simplification."""
    if _plain(tree):
        return _canonical(tree)
    try:
        if any(isinstance(n, exp.Or) for n in tree.walk()):
            tree = normalize(tree, dnf=False, max_distance=64)
        tree = simplify(tree, dialect=dialect)
    except (sqlglot.errors.SqlglotError, RecursionError, TypeError, ValueError):
        pass  # a predicate sqlglot cannot rewrite is read as written
    return _canonical(tree)


def _and_all(parts: list[exp.Expr], dialect: str) -> exp.Expr:
    """The canonical conjunction of ``parts`` (sorted, each OR in parentheses)."""
    ordered = sorted({p.sql(dialect=dialect, **_RENDER): p for p in parts}.items())
    wrapped = [exp.Paren(this=p) if isinstance(p, exp.Connector) else p for _, p in ordered]
    out = wrapped[0]
    for p in wrapped[1:]:
        out = exp.And(this=out, expression=p)
    return out
