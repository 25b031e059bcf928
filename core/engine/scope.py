"""Alias resolution for feature extraction: which base table each name in one SELECT means.

A :class:`_Scope` maps a SELECT's aliases to base tables (a self-join's second use of a table is
``people_2``), finds a bare column's table through the schema and knows which columns can never
be NULL; :func:`_normalise_tree` rewrites an expression with every alias resolved, identifiers
lower-cased and the rewrites that depend on the schema (``COUNT(not-null column)``, SQLite's
double-quoted strings, LIKE's case, a literal compared with a numeric column) applied.
"""

from __future__ import annotations

import re
from decimal import Decimal

from sqlglot import exp

Columns = dict[str, list[str]]
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_DECIMAL = re.compile(r"-?\d+(\.\d+)?")
_EXACT = 2 ** 53  # beyond this a double no longer holds every integer: left as written


def _as_number(node: exp.Expr) -> exp.Expr | None:
    """The canonical numeric literal a literal stands for beside a numeric column, or None:
    ``'10000'``, ``10000.0`` and ``10000`` are all ``10000`` (the column's numeric affinity
    converts a well-formed number text before comparing, in SQLite as in PostgreSQL), and
    ``TRUE`` / ``FALSE`` are ``1`` / ``0`` (SQLite; PostgreSQL booleans are not numeric)."""
    if isinstance(node, exp.Boolean):
        return exp.Literal.number(int(bool(node.this)))
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) \
            and not node.this.is_string:
        text = "-" + node.this.this
    elif isinstance(node, exp.Literal):
        text = node.this
    else:
        return None
    if not _DECIMAL.fullmatch(text):
        return None
    value = Decimal(text)
    if abs(value) >= _EXACT:
        return None
    canon = str(int(value)) if value == value.to_integral_value() else format(
        value.normalize(), "f")
    return exp.Literal.number(canon)


class _Scope:
    """Tables visible in one SELECT: alias -> base table name (lower-case).

    ``parent`` is the enclosing query's scope for subqueries (in WHERE, SELECT, HAVING), so a
    subquery's own tables win and correlated references still resolve outwards, as in SQL.
    """

    def __init__(self, aliases: dict[str, str], schema: dict[str, list[str]],
                 parent: _Scope | None = None, constraints: tuple[Columns, ...] = ({}, {}),
                 nullable: frozenset[str] = frozenset()):
        self.aliases = aliases
        self.schema = schema
        self.parent = parent
        # (never-NULL columns, unique columns[, numeric columns]) per table
        self.not_null, self.unique = constraints[0], constraints[1]
        self.numeric: Columns = constraints[2] if len(constraints) > 2 else {}
        self.nullable = nullable  # labels on the NULL-filled side of an outer join

    def never_null(self, table: str, column: str) -> bool:
        """True if ``table.column`` can never be NULL here (declared so, not outer-joined)."""
        return column in self.not_null.get(table, []) and table not in self.nullable

    def is_numeric(self, node: exp.Expr) -> bool:
        """Whether ``node`` is a column declared with a numeric type (as written, unresolved)."""
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return False
        name = node.name.lower()
        table = self.resolve(node.table.lower()) if node.table else self.owner(name)
        return bool(table) and name in self.numeric.get(table or "", [])

    def tables(self) -> list[str]:
        return sorted(set(self.aliases.values()))

    def resolve(self, alias: str) -> str:
        """Base table of ``alias`` (innermost scope first); unknown names stay as they are."""
        if alias in self.aliases:
            return self.aliases[alias]
        return self.parent.resolve(alias) if self.parent is not None else alias

    def owner(self, column: str) -> str | None:
        tables = self.tables()
        owners = [t for t in tables if column in self.schema.get(t, [])]
        if len(owners) == 1:
            return owners[0]
        if not owners and self.parent is not None:
            outer = self.parent.owner(column)
            if outer is not None:
                return outer
        if len(tables) == 1:
            return tables[0]
        return None

    def is_column(self, column: str) -> bool:
        if not self.schema:
            return True
        here = any(column in self.schema.get(t, []) for t in self.tables()) or not any(
            t in self.schema for t in self.tables())
        return here or (self.parent is not None and self.parent.is_column(column))


def _table_name(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Table):
        return node.name.lower()
    return None


def _scope_of(select: exp.Select, schema: dict[str, list[str]], ctes: set[str],
              parent: _Scope | None = None,
              constraints: tuple[Columns, ...] | None = None) -> _Scope:
    aliases: dict[str, str] = {}
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args.get("joins") or []
    sources = ([from_.this] if from_ is not None else []) + [j.this for j in joins]
    sides = [""] * (from_ is not None) + [(j.args.get("side") or "").upper() for j in joins]
    labels: list[str | None] = []
    seen: dict[str, int] = {}
    for src in sources:
        label = None
        if isinstance(src, exp.Table):
            name = src.name.lower()
            seen[name] = seen.get(name, 0) + 1
            # a self-join's second use of a table is a different role: people, people_2, …
            label = name if seen[name] == 1 else f"{name}_{seen[name]}"
            aliases[(src.alias or src.name).lower()] = label
        elif isinstance(src, exp.Subquery) and src.alias:
            label = f"({src.alias.lower()})"
            aliases[src.alias.lower()] = label
        labels.append(label)
    nullable: set[str] = set()
    for k, side in enumerate(sides):
        if side in ("LEFT", "FULL"):
            nullable.add(labels[k] or "")
        if side in ("RIGHT", "FULL"):
            nullable.update(lb or "" for lb in labels[:k])
    if constraints is None:
        constraints = (parent.not_null, parent.unique, parent.numeric) if parent is not None \
            else ({}, {})
    return _Scope(aliases, schema, parent, constraints, frozenset(nullable))


def _normalise_tree(node: exp.Expr, scope: _Scope) -> exp.Expr:
    """A canonical copy of ``node``: aliases resolved, identifiers lower-cased, literals kept.

    A nested SELECT (a subquery in WHERE, SELECT or HAVING) is normalised in its own scope,
    whose parent is ``scope``, so its unqualified columns resolve to its own tables.
    """
    tree = node.copy()

    def fix(n: exp.Expr) -> exp.Expr:
        if n is not tree and isinstance(n, exp.Select):
            return _normalise_tree(n, _scope_of(n, scope.schema, set(), scope))
        if isinstance(n, exp.Count) and isinstance(n.this, exp.Column) \
                and not isinstance(n.this.this, exp.Star):
            # COUNT(c) counts the rows where c is not NULL: all rows if c can never be NULL
            col = n.this
            table = scope.resolve(col.table.lower()) if col.table else scope.owner(col.name.lower())
            if table and scope.never_null(table, col.name.lower()):
                return exp.Count(this=exp.Star())
        if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
            name = n.name.lower()
            quoted_literal = (n.this.args.get("quoted") and not n.table
                              and not scope.is_column(name))
            if quoted_literal:  # SQLite reads "Lobby" as a string when no such column exists
                return exp.Literal.string(n.name)
            table = scope.resolve(n.table.lower()) if n.table else scope.owner(name)
            return exp.column(name, table) if table else exp.column(name)
        if isinstance(n, _COMPARISONS) and scope.numeric:
            # a number spelled as text (or TRUE) beside a numeric column means the number
            for side, other in (("expression", n.this), ("this", n.expression)):
                number = _as_number(n.args[side]) if scope.is_numeric(other) else None
                if number is not None:
                    n.set(side, number)
        if isinstance(n, exp.In) and n.expressions and scope.numeric \
                and scope.is_numeric(n.this):
            n.set("expressions", [_as_number(v) or v for v in n.expressions])
        if isinstance(n, (exp.Like, exp.ILike)) and isinstance(n.expression, exp.Literal):
            # LIKE is case-insensitive (ASCII) in SQLite: its pattern's case carries no meaning
            n.set("expression", exp.Literal.string(n.expression.this.lower()))
        if isinstance(n, exp.Table):
            return exp.to_table(n.name.lower())
        if isinstance(n, exp.Alias):
            # a replaced node's children are not visited again: normalise the inside here
            return _normalise_tree(n.this, scope)
        return n

    return tree.transform(fix, copy=False)
