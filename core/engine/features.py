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

Features are read at the level of meaning. Predicates go through sqlglot's ``normalize``
(conjunctive normal form) and ``simplify`` before the canonical spelling; a query whose joins
are all inner is read as a set of tables (``FROM`` per table, so join order and the starting
table do not matter) with its column equalities — from ON or WHERE alike — as equivalence
classes (``ON a.x = b.y = c.z``) and the remaining conjuncts as WHERE; ``x IN (SELECT k FROM
t WHERE p)`` on a unique ``k`` (or under DISTINCT) is the join it means; ``COUNT(column)`` on a
column that cannot be NULL is ``COUNT(*)``; ``*`` is expanded through the schema; output
aliases are resolved in GROUP BY, HAVING and ORDER BY; ``SELECT ONLY`` keeps a column selected
twice twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.normalize import normalize
from sqlglot.optimizer.simplify import simplify

Columns = dict[str, list[str]]

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
                 parent: _Scope | None = None, constraints: tuple[Columns, Columns] = ({}, {}),
                 nullable: frozenset[str] = frozenset()):
        self.aliases = aliases
        self.schema = schema
        self.parent = parent
        self.not_null, self.unique = constraints
        self.nullable = nullable  # labels on the NULL-filled side of an outer join

    def never_null(self, table: str, column: str) -> bool:
        """True if ``table.column`` can never be NULL here (declared so, not outer-joined)."""
        return column in self.not_null.get(table, []) and table not in self.nullable

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
              parent: _Scope | None = None,
              constraints: tuple[Columns, Columns] | None = None) -> _Scope:
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
        constraints = (parent.not_null, parent.unique) if parent is not None else ({}, {})
    return _Scope(aliases, schema, parent, constraints, frozenset(nullable))


def _normalise_tree(node: exp.Expression, scope: _Scope) -> exp.Expression:
    """A canonical copy of ``node``: aliases resolved, identifiers lower-cased, literals kept.

    A nested SELECT (a subquery in WHERE, SELECT or HAVING) is normalised in its own scope,
    whose parent is ``scope``, so its unqualified columns resolve to its own tables.
    """
    tree = node.copy()

    def fix(n: exp.Expression) -> exp.Expression:
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


_RENDER = {"normalize_functions": "upper"}


def _plain(tree: exp.Expression) -> bool:
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


def _meaning(tree: exp.Expression, dialect: str) -> exp.Expression:
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


def _pred_tree(node: exp.Expression, scope: _Scope, dialect: str) -> exp.Expression:
    return _meaning(_normalise_tree(node, scope), dialect)


def _and_all(parts: list[exp.Expression], dialect: str) -> exp.Expression:
    """The canonical conjunction of ``parts`` (sorted, each OR in parentheses)."""
    parts = sorted({p.sql(dialect=dialect, **_RENDER): p for p in parts}.items())
    wrapped = [exp.Paren(this=p) if isinstance(p, exp.Connector) else p for _, p in parts]
    out = wrapped[0]
    for p in wrapped[1:]:
        out = exp.And(this=out, expression=p)
    return out


def _predicate(node: exp.Expression, scope: _Scope, dialect: str) -> tuple[str, list[str]]:
    """A predicate's canonical text and its canonical top-level conjuncts."""
    tree = _pred_tree(node, scope, dialect)
    parts = _conjuncts(tree)
    return tree.sql(dialect=dialect, **_RENDER), [p.sql(dialect=dialect, **_RENDER) for p in parts]


def _normalise(node: exp.Expression, scope: _Scope, dialect: str) -> str:
    """Render an expression canonically (see :func:`_normalise_tree`)."""
    return _normalise_tree(node, scope).sql(dialect=dialect, **_RENDER)


def _comparison_key(node: exp.Expression, scope: _Scope, dialect: str) -> str:
    """Equalities are symmetric: ``a = b`` and ``b = a`` render the same (join conditions)."""
    if isinstance(node, exp.EQ):
        sides = sorted(_normalise(s, scope, dialect) for s in (node.this, node.expression))
        return f"{sides[0]} = {sides[1]}"
    if isinstance(node, exp.And):
        parts = sorted(_comparison_key(p, scope, dialect) for p in node.flatten())
        return " AND ".join(parts)
    return _normalise(node, scope, dialect)


def _projection(select: exp.Select, scope: _Scope, dialect: str) -> list[str]:
    """Output columns, canonical, in order; ``*`` and ``t.*`` expanded through the schema."""
    labels = list(dict.fromkeys(scope.aliases.values()))
    known = all(lb in scope.schema for lb in labels) and labels
    columns: list[str] = []
    for item in select.expressions:
        target = item.this if isinstance(item, exp.Alias) else item
        if isinstance(target, exp.Star):
            columns.extend([f"{t}.{c}" for t in labels for c in scope.schema[t]] if known
                           else ["*"])
        elif isinstance(target, exp.Column) and isinstance(target.this, exp.Star):
            table = scope.aliases.get(target.table.lower(), target.table.lower())
            columns.extend([f"{table}.{c}" for c in scope.schema[table]]
                           if table in scope.schema else [f"{table}.*"])
        else:
            columns.append(_normalise(target, scope, dialect))
    return columns


def _output_aliases(select: exp.Select) -> dict[str, exp.Expression]:
    return {item.alias.lower(): item.this for item in select.expressions
            if isinstance(item, exp.Alias)}


def _deref(node: exp.Expression, outputs: dict[str, exp.Expression]) -> exp.Expression:
    """Replace references to output aliases (``ORDER BY n``, ``HAVING n > 1``) by their
    expressions, where no column of that name exists."""
    def fix(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and not n.table and n.name.lower() in outputs:
            return outputs[n.name.lower()].copy()
        return n
    return node.copy().transform(fix, copy=False)


def _semi_join(conj: exp.Expression, scope: _Scope, tables: list[str], distinct: bool
               ) -> tuple[str, exp.Expression, list[exp.Expression]] | None:
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


def _inner_join_features(select: exp.Select, scope: _Scope, dialect: str,
                         distinct: bool) -> tuple[list[Feature], list[exp.Expression]]:
    """FROM per table and ON per class of equal columns; the other conjuncts are returned."""
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args.get("joins") or []
    tables = [lb for lb in dict.fromkeys(scope.aliases.values()) if not lb.startswith("(")]
    conj: list[exp.Expression] = []
    for j in joins:
        if j.args.get("on") is not None:
            conj.extend(_conjuncts(_pred_tree(j.args["on"], scope, dialect)))
    where = select.args.get("where")
    if where is not None:
        conj.extend(_conjuncts(_pred_tree(where.this, scope, dialect)))
    rest: list[exp.Expression] = []
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
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        while parent.setdefault(a, a) != a:
            a = parent[a]
        return a

    others: list[exp.Expression] = []
    for c in rest:
        if isinstance(c, exp.EQ) and all(isinstance(side, exp.Column) for side in c.args.values()
                                         if isinstance(side, exp.Expression)) \
                and c.this.table in tables and c.expression.table in tables \
                and c.this.table != c.expression.table:
            a, b = (side.sql(dialect=dialect) for side in (c.this, c.expression))
            parent[find(a)] = find(b)
        else:
            others.append(c)
    classes: dict[str, list[str]] = {}
    for col in parent:
        classes.setdefault(find(col), []).append(col)
    feats = [Feature("FROM", t) for t in tables]
    if from_ is not None and not tables and not isinstance(from_.this, exp.Subquery):
        feats.append(Feature("FROM", (_table_name(from_.this) or "")))
    feats += [Feature("ON", " = ".join(sorted(members))) for members in classes.values()]
    return feats, others


def _select_features(select: exp.Select, schema: dict[str, list[str]], dialect: str,
                     conjuncts: bool, ctes: set[str],
                     constraints: tuple[Columns, Columns]) -> Iterable[Feature]:
    scope = _scope_of(select, schema, ctes, constraints=constraints)
    columns = _projection(select, scope, dialect)
    for column in columns:
        yield Feature("SELECT", column)
    # The whole column list as one atom ("exactly these columns"), like WHERE's whole predicate:
    # one question can then rule out every reading that adds or drops a column. A column
    # selected twice is listed twice: the output has one more column.
    yield Feature("SELECT ONLY", ", ".join(sorted(columns)))
    distinct = bool(select.args.get("distinct"))
    if distinct:
        yield Feature("DISTINCT")
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args.get("joins") or []
    where = select.args.get("where")
    outer = any((j.args.get("side") or "") for j in joins) or any(
        j.args.get("using") for j in joins)
    if not outer:
        feats, rest = _inner_join_features(select, scope, dialect, distinct)
        yield from feats
        where_tree = _meaning(_and_all(rest, dialect), dialect) if rest else None
    else:
        if from_ is not None:
            name = _table_name(from_.this)
            if name:
                yield Feature("FROM", name)
        for join in joins:
            name = _table_name(join.this) or (join.this.alias or "subquery").lower()
            side = (join.args.get("side") or "").upper()
            yield Feature("LEFT JOIN" if side == "LEFT" else "JOIN", name)
            if join.args.get("on") is not None:
                yield Feature("ON", _comparison_key(join.args["on"], scope, dialect))
        where_tree = _pred_tree(where.this, scope, dialect) if where is not None else None
    if where_tree is not None:
        yield Feature("WHERE", where_tree.sql(dialect=dialect, **_RENDER))
        parts = _conjuncts(where_tree)
        if conjuncts and len(parts) > 1:
            for part in parts:
                yield Feature("WHERE …", part.sql(dialect=dialect, **_RENDER))
    outputs = _output_aliases(select)
    group = select.args.get("group")
    if group is not None:
        for g in group.expressions:
            yield Feature("GROUP BY", _normalise(_deref(g, outputs), scope, dialect))
    having = select.args.get("having")
    if having is not None:
        yield Feature("HAVING", _predicate(_deref(having.this, outputs), scope, dialect)[0])
    order = select.args.get("order")
    if order is not None:
        for o in order.expressions:
            direction = "DESC" if o.args.get("desc") else "ASC"
            yield Feature("ORDER BY",
                          f"{_normalise(_deref(o.this, outputs), scope, dialect)} {direction}")
    limit = select.args.get("limit")
    if limit is not None:
        value = _normalise(limit.expression, scope, dialect)
        offset = limit.args.get("offset") or select.args.get("offset")
        if offset is not None:
            off = offset.expression if isinstance(offset, exp.Offset) else offset
            value += f" OFFSET {_normalise(off, scope, dialect)}"
        yield Feature("LIMIT", value)
    # FROM-clause subqueries and joined subqueries contribute their own features.
    for src in [from_.this if from_ is not None else None, *(j.this for j in joins)]:
        if isinstance(src, exp.Subquery) and isinstance(src.this, exp.Query):
            yield from _query_features(src.this, schema, dialect, conjuncts, ctes, constraints)


_SETOP_NAMES = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}


def _query_features(query: exp.Expression, schema: dict[str, list[str]], dialect: str,
                    conjuncts: bool, ctes: set[str],
                    constraints: tuple[Columns, Columns]) -> Iterable[Feature]:
    with_ = query.args.get("with") or query.args.get("with_")
    if with_ is not None:
        for cte in with_.expressions:
            ctes = ctes | {cte.alias.lower()}
            yield Feature("WITH", cte.alias.lower())
            yield from _query_features(cte.this, schema, dialect, conjuncts, ctes, constraints)
    if isinstance(query, exp.SetOperation):
        name = _SETOP_NAMES.get(type(query), type(query).__name__.upper())
        if isinstance(query, exp.Union) and not query.args.get("distinct"):
            name = "UNION ALL"
        yield Feature(name)
        yield from _query_features(query.this, schema, dialect, conjuncts, ctes, constraints)
        yield from _query_features(query.expression, schema, dialect, conjuncts, ctes,
                                       constraints)
        order = query.args.get("order")
        if order is not None:
            empty = _Scope({}, schema)
            for o in order.expressions:
                direction = "DESC" if o.args.get("desc") else "ASC"
                yield Feature("ORDER BY", f"{_normalise(o.this, empty, dialect)} {direction}")
    elif isinstance(query, exp.Subquery):
        yield from _query_features(query.this, schema, dialect, conjuncts, ctes, constraints)
    elif isinstance(query, exp.Select):
        yield from _select_features(query, schema, dialect, conjuncts, ctes, constraints)


def schema_constraints(ddl: str, dialect: str = "sqlite") -> tuple[Columns, Columns]:
    """(table -> columns never NULL, table -> single columns whose values are unique), read
    from CREATE TABLE statements: NOT NULL and PRIMARY KEY columns; single-column PRIMARY KEY
    and UNIQUE. A DDL sqlglot cannot parse yields no constraints (features stay as written)."""
    not_null: Columns = {}
    unique: Columns = {}
    try:
        statements = sqlglot.parse(ddl, read=dialect)
    except sqlglot.errors.SqlglotError:
        return not_null, unique
    for stmt in statements:
        if not isinstance(stmt, exp.Create) or not isinstance(stmt.this, exp.Schema):
            continue
        table = stmt.this.this.name.lower()
        never: set[str] = set()
        single: set[str] = set()
        for item in stmt.this.expressions:
            if isinstance(item, exp.ColumnDef):
                kinds = [c.args.get("kind") for c in item.args.get("constraints") or []]
                key = any(isinstance(k, (exp.PrimaryKeyColumnConstraint,
                                         exp.UniqueColumnConstraint)) for k in kinds)
                if any(isinstance(k, exp.PrimaryKeyColumnConstraint) or (
                        isinstance(k, exp.NotNullColumnConstraint) and not k.args.get("allow_null"))
                       for k in kinds):
                    never.add(item.name.lower())
                if key:
                    single.add(item.name.lower())
            elif isinstance(item, exp.PrimaryKey):
                names = [e.name.lower() for e in item.expressions]
                never.update(names)
                if len(names) == 1:
                    single.update(names)
            elif isinstance(item, exp.UniqueColumnConstraint) and isinstance(item.this, exp.Schema):
                names = [e.name.lower() for e in item.this.expressions]
                if len(names) == 1:
                    single.update(names)
        not_null[table] = sorted(never)
        unique[table] = sorted(single)
    return not_null, unique


def extract_features(sql: str, dialect: str = "sqlite", schema: dict[str, list[str]] | None = None,
                     *, conjuncts: bool = False, not_null: Columns | None = None,
                     unique: Columns | None = None) -> list[Feature]:
    """The sorted, de-duplicated atomic features of ``sql``.

    ``schema`` (table -> columns, lower-case) lets unqualified columns resolve to their table and
    double-quoted SQLite strings be read as literals; ``not_null`` and ``unique`` (from
    :func:`schema_constraints`) allow the rewrites that depend on them (COUNT, IN-subqueries).
    ``conjuncts`` adds each top-level AND part of WHERE as its own ``WHERE …`` feature besides
    the whole predicate. Raises ``sqlglot.errors.ParseError`` for text that does not parse.
    """
    tree = sqlglot.parse_one(sql, read=dialect)
    feats = set(_query_features(tree, {k.lower(): v for k, v in (schema or {}).items()},
                                dialect, conjuncts, set(), (not_null or {}, unique or {})))
    return sorted(feats, key=Feature.sort_key)
