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
twice twice. The pieces live in :mod:`core.engine.scope` (aliases), :mod:`core.engine.predicates`
(canonical predicates) and :mod:`core.engine.joins` (inner joins).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from core.engine.errors import UnsafeQueryError
from core.engine.joins import _inner_join_features, _pred_tree
from core.engine.predicates import _RENDER, _and_all, _conjuncts, _meaning
from core.engine.scope import Columns, _normalise_tree, _Scope, _scope_of, _table_name
from core.engine.sqlguard import parse_one_bounded

# Feature keywords in display order (the Predicted Query lists features in this order).
KEYWORD_ORDER = (
    "SELECT", "SELECT ONLY", "DISTINCT", "FROM", "JOIN", "LEFT JOIN", "ON", "WHERE", "WHERE …", "GROUP BY",
    "HAVING", "ORDER BY", "LIMIT", "UNION", "UNION ALL", "INTERSECT", "EXCEPT", "WITH",
    # questions about the answer (core.engine.answers), after the clauses
    "ANSWER COLUMN", "ANSWER COLUMNS", "ANSWER SHAPE", "ANSWER ONE ROW PER", "ANSWER REPEATS",
    "ANSWER HAS", "ANSWER ROWS",
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


def _predicate(node: exp.Expr, scope: _Scope, dialect: str) -> tuple[str, list[str]]:
    """A predicate's canonical text and its canonical top-level conjuncts."""
    tree = _pred_tree(node, scope, dialect)
    parts = _conjuncts(tree)
    return tree.sql(dialect=dialect, **_RENDER), [p.sql(dialect=dialect, **_RENDER) for p in parts]


def _normalise(node: exp.Expr, scope: _Scope, dialect: str) -> str:
    """Render an expression canonically (see :func:`_normalise_tree`)."""
    return _normalise_tree(node, scope).sql(dialect=dialect, **_RENDER)


def _comparison_key(node: exp.Expr, scope: _Scope, dialect: str) -> str:
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


def _output_aliases(select: exp.Select) -> dict[str, exp.Expr]:
    return {item.alias.lower(): item.this for item in select.expressions
            if isinstance(item, exp.Alias)}


def _deref(node: exp.Expr, outputs: dict[str, exp.Expr]) -> exp.Expr:
    """Replace references to output aliases (``ORDER BY n``, ``HAVING n > 1``) by their
    expressions, where no column of that name exists."""
    def fix(n: exp.Expr) -> exp.Expr:
        if isinstance(n, exp.Column) and not n.table and n.name.lower() in outputs:
            return outputs[n.name.lower()].copy()
        return n
    return node.copy().transform(fix, copy=False)


def _select_features(select: exp.Select, schema: dict[str, list[str]], dialect: str,
                     conjuncts: bool, ctes: set[str],
                     constraints: tuple[Columns, ...]) -> Iterable[Feature]:
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
        pairs, rest = _inner_join_features(select, scope, dialect, distinct)
        yield from (Feature(k, v) for k, v in pairs)
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


def _query_features(query: exp.Expr, schema: dict[str, list[str]], dialect: str,
                    conjuncts: bool, ctes: set[str],
                    constraints: tuple[Columns, ...]) -> Iterable[Feature]:
    with_ = query.args.get("with") or query.args.get("with_")
    if with_ is not None:
        for cte in with_.expressions:
            ctes = ctes | {cte.alias.lower()}
            yield Feature("WITH", cte.alias.lower())
            yield from _query_features(cte.this, schema, dialect, conjuncts, ctes, constraints)
    merged = _union_as_or(query, schema, dialect, ctes, constraints) \
        if isinstance(query, exp.Union) else None
    if merged is not None:
        yield from _merged_features(*merged, dialect, conjuncts)
    elif isinstance(query, exp.SetOperation):
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


_SIMPLE_BRANCH_BLOCKERS = ("group", "having", "order", "limit", "with", "with_")


def _union_as_or(query: exp.Union, schema: dict[str, list[str]], dialect: str, ctes: set[str],
                 constraints: tuple[Columns, ...]
                 ) -> tuple[list[str], list[tuple[str, str]], list[list[exp.Expr]]] | None:
    """``SELECT c FROM F WHERE p UNION SELECT c FROM F WHERE q`` is ``SELECT DISTINCT c FROM F
    WHERE p OR q``: (columns, FROM/ON pairs, each branch's conjuncts) when both branches are
    plain inner-join SELECTs with the same column list (in order) over the same join frame."""
    if not query.args.get("distinct") or any(query.args.get(k) for k in ("order", "limit")):
        return None
    frames = []
    for branch in (query.this, query.expression):
        if not isinstance(branch, exp.Select) or any(
                branch.args.get(k) for k in _SIMPLE_BRANCH_BLOCKERS):
            return None
        from_ = branch.args.get("from_") or branch.args.get("from")
        joins = branch.args.get("joins") or []
        if from_ is None or not all(isinstance(src, exp.Table) for src in
                                    [from_.this, *(j.this for j in joins)]) or any(
                j.args.get("side") or j.args.get("using") for j in joins):
            return None
        scope = _scope_of(branch, schema, ctes, constraints=constraints)
        # UNION removes duplicate rows, so the branch reads as if DISTINCT (semi-joins unnest)
        pairs, rest = _inner_join_features(branch, scope, dialect, True)
        frames.append((_projection(branch, scope, dialect), sorted(pairs), rest))
    (cols_a, pairs_a, rest_a), (cols_b, pairs_b, rest_b) = frames
    if cols_a != cols_b or pairs_a != pairs_b or "*" in cols_a:
        return None
    return cols_a, pairs_a, [rest_a, rest_b]


def _merged_features(columns: list[str], pairs: list[tuple[str, str]],
                     branches: list[list[exp.Expr]], dialect: str,
                     conjuncts: bool) -> Iterable[Feature]:
    """Features of a UNION read as one DISTINCT query whose WHERE is the OR of its branches'."""
    yield from (Feature("SELECT", c) for c in columns)
    yield Feature("SELECT ONLY", ", ".join(sorted(columns)))
    yield Feature("DISTINCT")
    yield from (Feature(k, v) for k, v in pairs)
    if any(not rest for rest in branches):
        return  # a branch without a condition keeps every row: the OR is true
    either = exp.Or(this=exp.Paren(this=_and_all(branches[0], dialect)),
                    expression=exp.Paren(this=_and_all(branches[1], dialect)))
    tree = _meaning(either, dialect)
    yield Feature("WHERE", tree.sql(dialect=dialect, **_RENDER))
    parts = _conjuncts(tree)
    if conjuncts and len(parts) > 1:
        yield from (Feature("WHERE …", p.sql(dialect=dialect, **_RENDER)) for p in parts)


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


def numeric_columns(ddl: str, dialect: str = "sqlite") -> Columns:
    """Table -> columns declared with a numeric type in CREATE TABLE statements (and BOOLEAN
    in SQLite, whose affinity is numeric): beside them a literal's spelling as text or number
    does not change a comparison's rows. Unparsable DDL yields none."""
    try:
        statements = sqlglot.parse(ddl, read=dialect)
    except sqlglot.errors.SqlglotError:
        return {}
    kinds = set(exp.DataType.NUMERIC_TYPES) | (
        {exp.DataType.Type.BOOLEAN} if dialect == "sqlite" else set())
    out: Columns = {}
    for stmt in statements:
        if isinstance(stmt, exp.Create) and isinstance(stmt.this, exp.Schema):
            out[stmt.this.this.name.lower()] = sorted(
                item.name.lower() for item in stmt.this.expressions
                if isinstance(item, exp.ColumnDef) and isinstance(item.args.get("kind"),
                                                                   exp.DataType)
                and item.args["kind"].this in kinds)
    return out


def extract_features(sql: str, dialect: str = "sqlite", schema: dict[str, list[str]] | None = None,
                     *, conjuncts: bool = False, not_null: Columns | None = None,
                     unique: Columns | None = None, numeric: Columns | None = None,
                     tree: exp.Expression | None = None
                     ) -> list[Feature]:
    """The sorted, de-duplicated atomic features of ``sql``.

    ``schema`` (table -> columns, lower-case) lets unqualified columns resolve to their table and
    double-quoted SQLite strings be read as literals; ``not_null`` and ``unique`` (from
    :func:`schema_constraints`) allow the rewrites that depend on them (COUNT, IN-subqueries);
    ``numeric`` (from :func:`numeric_columns`) reads a number compared with a numeric column
    as one literal however it is spelled (``'10000'``, ``10000.0``, ``TRUE``).
    ``conjuncts`` adds each top-level AND part of WHERE as its own ``WHERE …`` feature besides
    the whole predicate. Raises ``sqlglot.errors.ParseError`` for text that does not parse,
    is over the check's size, token or nesting bounds, or nests too deeply for a rewrite (one
    hostile candidate of a bank or an LLM sample then has no features; the pool goes on).
    ``tree`` is ``sql`` already parsed by :func:`parse_one_bounded` or the allow-list in
    ``dialect`` (it is read, not changed).
    """
    try:
        tree = parse_one_bounded(sql, dialect) if tree is None else tree
        feats = set(_query_features(tree, {k.lower(): v for k, v in (schema or {}).items()},
                                    dialect, conjuncts, set(),
                                    (not_null or {}, unique or {}, numeric or {})))
    except UnsafeQueryError as exc:
        raise sqlglot.errors.ParseError(str(exc)) from None
    except RecursionError:
        raise sqlglot.errors.ParseError(
            "the query nests too deeply to read its features") from None
    return sorted(feats, key=Feature.sort_key)
