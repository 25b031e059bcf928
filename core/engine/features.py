"""Atomic features of a SQL query, read from its sqlglot AST.

A feature is a (keyword, value) pair such as ``("SELECT", "film.title")`` or
``("WHERE", "film.year > 2000")``: the smallest unit a user can say Yes or No to. Aliases are
resolved to base tables, unqualified columns are attached to their table through the schema,
identifiers are lower-cased and string literals normalised (one quoting style; case folded only
inside LIKE patterns, where SQLite ignores it — ``= 'Pulp Fiction'`` and ``= 'pulp fiction'``
return different rows, so they stay different features), so equivalent
spellings yield the same feature. Set operations contribute their operator and recurse into
*both* branches (the public replication's first-branch-only walk made attachment and scope
readings identical).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

# Feature keywords in display order (the Predicted Query lists features in this order).
KEYWORD_ORDER = (
    "SELECT", "SELECT ONLY", "DISTINCT", "FROM", "JOIN", "LEFT JOIN", "ON", "WHERE", "WHERE …", "GROUP BY",
    "HAVING", "ORDER BY", "LIMIT", "UNION", "UNION ALL", "INTERSECT", "EXCEPT", "WITH",
)


@dataclass(frozen=True, order=True)
class Feature:
    """One atomic feature: a keyword (rendered black) and a value (rendered grey)."""

    keyword: str
    value: str = ""

    @property
    def key(self) -> str:
        return f"{self.keyword} {self.value}".strip()

    def sort_key(self) -> tuple[int, str]:
        rank = KEYWORD_ORDER.index(self.keyword) if self.keyword in KEYWORD_ORDER else 99
        return rank, self.value


class _Scope:
    """Tables visible in one SELECT: alias -> base table name (lower-case).

    ``parent`` is the enclosing query's scope for subqueries (in WHERE, SELECT, HAVING), so a
    subquery's own tables win and correlated references still resolve outwards, as in SQL.
    """

    def __init__(self, aliases: dict[str, str], schema: dict[str, list[str]],
                 parent: _Scope | None = None):
        self.aliases = aliases
        self.schema = schema
        self.parent = parent

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


def _table_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Table):
        return node.name.lower()
    return None


def _scope_of(select: exp.Select, schema: dict[str, list[str]], ctes: set[str],
              parent: _Scope | None = None) -> _Scope:
    aliases: dict[str, str] = {}
    sources: list[exp.Expression] = []
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None:
        sources.append(from_.this)
    sources.extend(j.this for j in select.args.get("joins") or [])
    seen: dict[str, int] = {}
    for src in sources:
        if isinstance(src, exp.Table):
            name = src.name.lower()
            seen[name] = seen.get(name, 0) + 1
            # a self-join's second use of a table is a different role: people, people_2, …
            label = name if seen[name] == 1 else f"{name}_{seen[name]}"
            aliases[(src.alias or src.name).lower()] = label
        elif isinstance(src, exp.Subquery) and src.alias:
            aliases[src.alias.lower()] = f"({src.alias.lower()})"
    return _Scope(aliases, schema, parent)


def _normalise_tree(node: exp.Expression, scope: _Scope) -> exp.Expression:
    """A canonical copy of ``node``: aliases resolved, identifiers lower-cased, literals kept.

    A nested SELECT (a subquery in WHERE, SELECT or HAVING) is normalised in its own scope,
    whose parent is ``scope``, so its unqualified columns resolve to its own tables.
    """
    tree = node.copy()

    def fix(n: exp.Expression) -> exp.Expression:
        if n is not tree and isinstance(n, exp.Select):
            return _normalise_tree(n, _scope_of(n, scope.schema, set(), scope))
        if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
            name = n.name.lower()
            quoted_literal = (n.this.args.get("quoted") and not n.table
                              and not scope.is_column(name))
            if quoted_literal:  # SQLite reads "Lobby" as a string when no such column exists
                return exp.Literal.string(n.name)
            table = scope.resolve(n.table.lower()) if n.table else scope.owner(name)
            return exp.column(name, table) if table else exp.column(name)
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


_FLIP = {exp.GT: exp.LT, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.LTE: exp.GTE}


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _canonical(node: exp.Expression) -> exp.Expression:
    """One spelling per predicate: AND/OR operands sorted, parentheses implied by structure,
    ``x = 'a' OR x = 'b'`` and ``x IN ('b', 'a')`` both ``x IN ('a', 'b')``, literals on the
    right of comparisons. Only rewrites that keep the meaning."""
    node = _unparen(node)
    if isinstance(node, (exp.And, exp.Or)):
        kind = type(node)
        parts = [_canonical(p) for p in node.flatten()]
        flat: list[exp.Expression] = []
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


def _operands(node: exp.Expression, kind: type) -> list[exp.Expression]:
    """Operands of a chain of ``kind`` (And/Or), looking through parentheses."""
    node = _unparen(node)
    if isinstance(node, kind):
        return _operands(node.this, kind) + _operands(node.expression, kind)
    return [node]


def _merge_in_lists(parts: list[exp.Expression]) -> list[exp.Expression]:
    """Inside an OR, equalities and IN lists on one column become one IN list."""
    by_column: dict[str, list[exp.Expression]] = {}
    others: list[exp.Expression] = []
    columns: dict[str, exp.Expression] = {}
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


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    """Top-level AND operands (through the parentheses the builders add)."""
    node = _unparen(node)
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


def _predicate(node: exp.Expression, scope: _Scope, dialect: str) -> tuple[str, list[str]]:
    """A predicate's canonical text and its canonical top-level conjuncts."""
    tree = _canonical(_normalise_tree(node, scope))
    parts = _conjuncts(tree)
    render = {"dialect": dialect, "normalize_functions": "upper"}
    return tree.sql(**render), [p.sql(**render) for p in parts]


def _normalise(node: exp.Expression, scope: _Scope, dialect: str) -> str:
    """Render an expression canonically (see :func:`_normalise_tree`)."""
    return _normalise_tree(node, scope).sql(dialect=dialect, normalize_functions="upper")


def _comparison_key(node: exp.Expression, scope: _Scope, dialect: str) -> str:
    """Equalities are symmetric: ``a = b`` and ``b = a`` render the same (join conditions)."""
    if isinstance(node, exp.EQ):
        sides = sorted(_normalise(s, scope, dialect) for s in (node.this, node.expression))
        return f"{sides[0]} = {sides[1]}"
    if isinstance(node, exp.And):
        parts = sorted(_comparison_key(p, scope, dialect) for p in node.flatten())
        return " AND ".join(parts)
    return _normalise(node, scope, dialect)


def _select_features(select: exp.Select, schema: dict[str, list[str]], dialect: str,
                     conjuncts: bool, ctes: set[str]) -> Iterable[Feature]:
    scope = _scope_of(select, schema, ctes)
    columns: list[str] = []
    for item in select.expressions:
        target = item.this if isinstance(item, exp.Alias) else item
        if isinstance(target, exp.Star):
            columns.append("*")
        elif isinstance(target, exp.Column) and isinstance(target.this, exp.Star):
            table = scope.aliases.get(target.table.lower(), target.table.lower())
            columns.append(f"{table}.*")
        else:
            columns.append(_normalise(target, scope, dialect))
    for column in columns:
        yield Feature("SELECT", column)
    # The whole column list as one atom ("exactly these columns"), like WHERE's whole predicate:
    # one question can then rule out every reading that adds or drops a column.
    yield Feature("SELECT ONLY", ", ".join(sorted(set(columns))))
    if select.args.get("distinct"):
        yield Feature("DISTINCT")
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None:
        name = _table_name(from_.this)
        if name:
            yield Feature("FROM", name)
    for join in select.args.get("joins") or []:
        name = _table_name(join.this) or (join.this.alias or "subquery").lower()
        side = (join.args.get("side") or "").upper()
        yield Feature("LEFT JOIN" if side == "LEFT" else "JOIN", name)
        if join.args.get("on") is not None:
            yield Feature("ON", _comparison_key(join.args["on"], scope, dialect))
    where = select.args.get("where")
    if where is not None:
        whole, parts = _predicate(where.this, scope, dialect)
        yield Feature("WHERE", whole)
        if conjuncts and len(parts) > 1:
            for part in parts:
                yield Feature("WHERE …", part)
    group = select.args.get("group")
    if group is not None:
        for g in group.expressions:
            yield Feature("GROUP BY", _normalise(g, scope, dialect))
    having = select.args.get("having")
    if having is not None:
        yield Feature("HAVING", _predicate(having.this, scope, dialect)[0])
    order = select.args.get("order")
    if order is not None:
        outputs = {item.alias.lower(): item.this for item in select.expressions
                   if isinstance(item, exp.Alias)}
        for o in order.expressions:
            key = o.this
            if isinstance(key, exp.Column) and not key.table and key.name.lower() in outputs:
                key = outputs[key.name.lower()]  # ORDER BY an output alias
            direction = "DESC" if o.args.get("desc") else "ASC"
            yield Feature("ORDER BY", f"{_normalise(key, scope, dialect)} {direction}")
    limit = select.args.get("limit")
    if limit is not None:
        yield Feature("LIMIT", _normalise(limit.expression, scope, dialect))
    # FROM-clause subqueries and joined subqueries contribute their own features.
    for src in [from_.this if from_ is not None else None,
                *(j.this for j in select.args.get("joins") or [])]:
        if isinstance(src, exp.Subquery) and isinstance(src.this, exp.Query):
            yield from _query_features(src.this, schema, dialect, conjuncts, ctes)


_SETOP_NAMES = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}


def _query_features(query: exp.Expression, schema: dict[str, list[str]], dialect: str,
                    conjuncts: bool, ctes: set[str]) -> Iterable[Feature]:
    with_ = query.args.get("with") or query.args.get("with_")
    if with_ is not None:
        for cte in with_.expressions:
            ctes = ctes | {cte.alias.lower()}
            yield Feature("WITH", cte.alias.lower())
            yield from _query_features(cte.this, schema, dialect, conjuncts, ctes)
    if isinstance(query, exp.SetOperation):
        name = _SETOP_NAMES.get(type(query), type(query).__name__.upper())
        if isinstance(query, exp.Union) and not query.args.get("distinct"):
            name = "UNION ALL"
        yield Feature(name)
        yield from _query_features(query.this, schema, dialect, conjuncts, ctes)
        yield from _query_features(query.expression, schema, dialect, conjuncts, ctes)
        order = query.args.get("order")
        if order is not None:
            empty = _Scope({}, schema)
            for o in order.expressions:
                direction = "DESC" if o.args.get("desc") else "ASC"
                yield Feature("ORDER BY", f"{_normalise(o.this, empty, dialect)} {direction}")
    elif isinstance(query, exp.Subquery):
        yield from _query_features(query.this, schema, dialect, conjuncts, ctes)
    elif isinstance(query, exp.Select):
        yield from _select_features(query, schema, dialect, conjuncts, ctes)


def schema_not_null(ddl: str, dialect: str = "sqlite") -> dict[str, list[str]]:
    """Table -> columns declared NOT NULL or PRIMARY KEY (lower-case), from CREATE TABLEs."""
    out: dict[str, list[str]] = {}
    try:
        statements = sqlglot.parse(ddl, read=dialect)
    except sqlglot.errors.SqlglotError:
        return out
    for stmt in statements:
        if not isinstance(stmt, exp.Create) or not isinstance(stmt.this, exp.Schema):
            continue
        table = stmt.this.this.name.lower()
        cols: set[str] = set()
        for item in stmt.this.expressions:
            if isinstance(item, exp.ColumnDef):
                kinds = [c.args.get("kind") for c in item.args.get("constraints") or []]
                if any(isinstance(k, exp.PrimaryKeyColumnConstraint) or (
                        isinstance(k, exp.NotNullColumnConstraint) and not k.args.get("allow_null"))
                       for k in kinds):
                    cols.add(item.name.lower())
            elif isinstance(item, exp.PrimaryKey):
                cols.update(e.name.lower() for e in item.expressions)
        out[table] = sorted(cols)
    return out


def extract_features(sql: str, dialect: str = "sqlite", schema: dict[str, list[str]] | None = None,
                     *, conjuncts: bool = False,
                     not_null: dict[str, list[str]] | None = None) -> list[Feature]:
    """The sorted, de-duplicated atomic features of ``sql``.

    ``schema`` (table -> columns, lower-case) lets unqualified columns resolve to their table and
    double-quoted SQLite strings be read as literals. ``conjuncts`` adds each top-level AND part
    of WHERE as its own ``WHERE …`` feature besides the whole predicate. Raises
    ``sqlglot.errors.ParseError`` for text that does not parse.
    """
    tree = sqlglot.parse_one(sql, read=dialect)
    feats = set(_query_features(tree, {k.lower(): v for k, v in (schema or {}).items()},
                                dialect, conjuncts, set()))
    return sorted(feats, key=Feature.sort_key)
