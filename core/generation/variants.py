"""Offline candidate pools: sqlglot rewrites of seed (gold) queries, labelled by rule.

For researchers preparing tasks without an LLM, and for tests. Each rule in ``RULES`` maps a
seed's AST to rewritten ASTs the way a sampled pool differs from its gold: other select
columns, ``SELECT *``, DISTINCT, ORDER BY, join kind, an extra join along a foreign key,
comparison operators, predicate grouping (attachment), filters per UNION branch, and scope
(per group vs for all). Counts are drawn with one seeded RNG so the pool looks like ``n``
samples; the seeds carry the most weight. Every candidate is labelled ``seed`` or
``variant:<rule>`` (``variant:<rule>+<rule>`` for a second rewrite).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import sqlalchemy as sa
import sqlglot
from sqlglot import exp

from core.engine.errors import DatabaseError
from core.engine.execute import TaskDatabase
from core.engine.taskbank import Candidate
from core.generation.extract import normalise_sql

Schema = dict[str, list[str]]
ForeignKey = tuple[str, str, str, str]  # (table, column, referenced table, referenced column)


@dataclass(frozen=True)
class SchemaInfo:
    """Tables with their columns (lower-case) and foreign keys, read from DDL."""

    columns: Schema  # lower-case table -> column names as declared
    foreign_keys: tuple[ForeignKey, ...] = ()
    dialect: str = "sqlite"

    def has(self, table: str, column: str) -> bool:
        return column.lower() in (c.lower() for c in self.columns.get(table, []))


def schema_from_ddl(ddl: str, dialect: str = "sqlite") -> SchemaInfo:
    """Parse CREATE TABLE statements (e.g. ``TaskDatabase.ddl()``) into a SchemaInfo."""
    columns: Schema = {}
    fks: list[ForeignKey] = []
    for stmt in sqlglot.parse(ddl, read=dialect):
        if not isinstance(stmt, exp.Create) or not isinstance(stmt.this, exp.Schema):
            continue
        table = stmt.this.this.name.lower()
        columns[table] = [c.name for c in stmt.this.expressions
                          if isinstance(c, exp.ColumnDef)]
        for fk in stmt.this.find_all(exp.ForeignKey):
            ref = fk.args["reference"].this
            for local, remote in zip(fk.expressions, ref.expressions, strict=False):
                fks.append((table, local.name.lower(), ref.this.name.lower(),
                            remote.name.lower()))
    return SchemaInfo(columns, tuple(fks), dialect)


def read_ddl(db: TaskDatabase) -> str:
    """The database's CREATE TABLE statements, robust to dangling foreign keys.

    ``TaskDatabase.ddl()`` reads SQLite's own table text, and reflects other servers through
    SQLAlchemy, which fails when a foreign key names a missing table; a plain column list is
    used then. (Candidate SQL may not read ``sqlite_master``: the statement check refuses
    system catalogs, so it is never asked through ``db.execute``.)
    """
    try:
        return db.ddl()
    except (sa.exc.SQLAlchemyError, DatabaseError):
        pass
    return "\n".join(f"CREATE TABLE {t} ({', '.join(cols)});"
                     for t, cols in sorted(db.schema().items()))


def schema_info(db: TaskDatabase) -> SchemaInfo:
    """Columns and foreign keys of an open task database."""
    info = schema_from_ddl(read_ddl(db), db.dialect)
    return SchemaInfo({**{t: c for t, c in db.schema().items()}, **info.columns},
                      info.foreign_keys, db.dialect)


@dataclass
class VariantPool:
    """Candidates with counts summing to about ``n``, and each one's origin label."""

    candidates: list[Candidate] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def label_of(self, sql: str) -> str:
        return dict(zip((c.sql for c in self.candidates), self.labels, strict=True))[sql]


def _selects(tree: exp.Expr) -> list[exp.Select]:
    """The SELECTs of a query's top level (both branches of set operations)."""
    if isinstance(tree, exp.SetOperation):
        return _selects(tree.this) + _selects(tree.expression)
    return [tree] if isinstance(tree, exp.Select) else []


def _scope(sel: exp.Select) -> dict[str, str]:
    """alias (or name, as written) -> base table (lower-case), for FROM and JOINs."""
    out = {}
    sources = [sel.args.get("from_")] + list(sel.args.get("joins") or [])
    for src in sources:
        table = src.this if src is not None else None
        if isinstance(table, exp.Table):
            out[table.alias or table.name] = table.name.lower()
    return out


def _selected_names(sel: exp.Select) -> set[str]:
    return {e.alias_or_name.lower() for e in sel.expressions}


def add_column(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Add one more column from a table the query already reads."""
    if not isinstance(tree, exp.Select) or any(isinstance(e, exp.Star) for e in tree.expressions):
        return []
    out: list[exp.Expr] = []
    taken = _selected_names(tree)
    for alias, table in sorted(_scope(tree).items()):
        for col in info.columns.get(table, []):
            if col.lower() not in taken:
                copy = tree.copy()
                copy.append("expressions", exp.column(col, table=alias))
                out.append(copy)
    return out


def drop_column(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Drop one of several select columns."""
    if not isinstance(tree, exp.Select) or len(tree.expressions) < 2:
        return []
    out: list[exp.Expr] = []
    for i in range(len(tree.expressions)):
        copy = tree.copy()
        copy.set("expressions", [e for j, e in enumerate(copy.expressions) if j != i])
        out.append(copy)
    return out


def swap_column(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Replace a selected column by another column of the same table (one branch at a time)."""
    out: list[exp.Expr] = []
    for i, sel in enumerate(_selects(tree)):
        scope = _scope(sel)
        for j, e in enumerate(sel.expressions):
            col = e.unalias() if isinstance(e, exp.Alias) else e
            if not isinstance(col, exp.Column):
                continue
            lowered = {a.lower(): t for a, t in scope.items()}
            alias = col.table.lower() or (next(iter(lowered)) if len(lowered) == 1 else "")
            table = lowered.get(alias)
            for other in info.columns.get(table or "", []):
                if other.lower() != col.name.lower() and \
                        other.lower() not in _selected_names(sel):
                    copy = tree.copy()
                    target = _selects(copy)[i].expressions[j]
                    new = exp.column(other, table=col.table or None)
                    target.replace(exp.alias_(new, e.alias) if isinstance(e, exp.Alias) else new)
                    out.append(copy)
    return out


def select_star(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """SELECT * instead of the listed columns (not for grouped queries)."""
    if not isinstance(tree, exp.Select) or tree.args.get("group"):
        return []
    if any(isinstance(e, exp.Star) for e in tree.expressions):
        return []
    copy = tree.copy()
    copy.set("expressions", [exp.Star()])
    return [copy]


def distinct(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Toggle DISTINCT (UNION vs UNION ALL for set operations)."""
    copy = tree.copy()
    if isinstance(copy, exp.Union):
        copy.set("distinct", not copy.args.get("distinct"))
    elif isinstance(copy, exp.Select):
        copy.set("distinct", None if copy.args.get("distinct") else exp.Distinct())
    else:
        return []
    return [copy]


def order_by(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """ORDER BY the first output column ascending or descending, or flip an existing order."""
    if not isinstance(tree, exp.Select):
        return []
    order = tree.args.get("order")
    d = info.dialect
    if order is not None:
        copy = tree.copy()
        copy.set("order", None)
        flipped = [f"{o.this.sql(dialect=d)}{'' if o.args.get('desc') else ' DESC'}"
                   for o in order.expressions]
        return [copy.order_by(*flipped, dialect=d)]
    first = tree.expressions[0] if tree.expressions else None
    if first is None or isinstance(first, exp.Star):
        return []
    key = exp.column(first.alias) if isinstance(first, exp.Alias) else first
    return [tree.copy().order_by(key.sql(dialect=d) + suffix, dialect=d)
            for suffix in ("", " DESC")]


def join_kind(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """LEFT JOIN instead of an inner join, and inner instead of LEFT."""
    out: list[exp.Expr] = []
    for i, sel in enumerate(_selects(tree)):
        for j, join in enumerate(sel.args.get("joins") or []):
            if not join.args.get("on"):
                continue
            copy = tree.copy()
            target = _selects(copy)[i].args["joins"][j]
            target.set("side", None if join.side == "LEFT" else "LEFT")
            target.set("kind", None)
            out.append(copy)
    return out


def extra_join(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Join one more table along a foreign key (which can duplicate or drop rows)."""
    if not isinstance(tree, exp.Select):
        return []
    scope = _scope(tree)
    present = set(scope.values())
    alias_of = {t: a for a, t in scope.items()}
    out: list[exp.Expr] = []
    for table, col, ref, ref_col in info.foreign_keys:
        for mine, theirs, my_col, their_col in ((table, ref, col, ref_col),
                                                (ref, table, ref_col, col)):
            if mine in present and theirs not in present and theirs in info.columns:
                name = next((c for c in info.columns[theirs] if c.lower() == their_col),
                            their_col)
                cond = exp.column(my_col, table=alias_of[mine]).eq(exp.column(name,
                                                                             table=theirs))
                out.append(tree.copy().join(exp.to_table(theirs), on=cond))
    return out


def comparison(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """= on a number becomes >= ; = on a string becomes LIKE '%text%' (vague readings)."""
    out: list[exp.Expr] = []
    for i, node in enumerate(list(tree.find_all(exp.EQ))):
        right = node.expression
        if isinstance(right, exp.Literal) and not right.is_string:
            new: exp.Expr = exp.GTE(this=node.this.copy(), expression=right.copy())
        elif isinstance(right, exp.Literal) or (isinstance(right, exp.Column)
                                                and right.this.args.get("quoted")
                                                and not right.table):
            new = exp.Like(this=node.this.copy(), expression=exp.Literal.string(f"%{right.name}%"))
        else:
            continue
        copy = tree.copy()
        list(copy.find_all(exp.EQ))[i].replace(new)
        out.append(copy)
    return out


def regroup(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Attachment: (a OR b) AND c  <->  a OR (b AND c)."""
    out: list[exp.Expr] = []
    for i in range(len(list(tree.find_all(exp.And, exp.Or)))):
        copy = tree.copy()
        target = list(copy.find_all(exp.And, exp.Or))[i]
        left = target.this.unnest() if isinstance(target.this, exp.Paren) else target.this
        right = target.expression.unnest() if isinstance(target.expression, exp.Paren) \
            else target.expression
        if isinstance(target, exp.And) and isinstance(left, exp.Or):
            new = exp.or_(left.this.copy(), exp.and_(left.expression.copy(), right.copy()))
        elif isinstance(target, exp.Or) and isinstance(right, exp.And):
            new = exp.and_(exp.paren(exp.or_(left.copy(), right.this.copy())),
                           right.expression.copy())
        else:
            continue
        target.replace(new)
        out.append(copy)
    return out


def branch_filter(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Attachment across UNION branches: drop a branch's WHERE, or copy it to the other."""
    if not isinstance(tree, exp.SetOperation):
        return []
    out: list[exp.Expr] = []
    branches = _selects(tree)
    for i, sel in enumerate(branches):
        if sel.args.get("where"):
            copy = tree.copy()
            _selects(copy)[i].set("where", None)
            out.append(copy)
    for i, sel in enumerate(branches):
        other = branches[1 - i] if len(branches) == 2 else None
        if other is None or sel.args.get("where") or not other.args.get("where"):
            continue
        tables = list(_scope(sel).items())
        if len(tables) != 1:
            continue
        alias, table = tables[0]
        cond = other.args["where"].this.copy()
        for col in cond.find_all(exp.Column):
            if not info.has(table, col.name):
                break
            col.set("table", exp.to_identifier(alias))
        else:
            copy = tree.copy()
            _selects(copy)[i].where(cond, copy=False)
            out.append(copy)
    return out


def scope(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Scope: drop GROUP BY/HAVING (per pair) or require the group to cover all rows of a table."""
    if not isinstance(tree, exp.Select):
        return []
    out: list[exp.Expr] = []
    if tree.args.get("group") or tree.args.get("having"):
        copy = tree.copy()
        copy.set("group", None)
        copy.set("having", None)
        out.append(copy)
        return out
    tables = _scope(tree)
    if len(tables) < 2 or any(isinstance(e, exp.Star) for e in tree.expressions):
        return out
    for alias, table in sorted(tables.items()):
        cols = info.columns.get(table, [])
        if not cols:
            continue
        keep = [e for e in tree.expressions if not (isinstance(e, exp.Column)
                                                     and e.table.lower() == alias.lower())]
        if not keep or len(keep) == len(tree.expressions):
            continue
        copy = tree.copy()
        copy.set("expressions", [e.copy() for e in keep])
        copy = copy.group_by(*[e.copy() for e in keep])
        total = exp.select("COUNT(*)").from_(table).subquery()
        count = exp.Count(this=exp.Distinct(expressions=[exp.column(cols[0], table=alias)]))
        out.append(copy.having(count.eq(total)))
    return out


def drop_filter(tree: exp.Expr, info: SchemaInfo) -> list[exp.Expr]:
    """Drop one conjunct of a WHERE (or the whole WHERE if it has one condition)."""
    out: list[exp.Expr] = []
    for i, sel in enumerate(_selects(tree)):
        where = sel.args.get("where")
        if where is None:
            continue
        parts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
        for k in range(len(parts)):
            copy = tree.copy()
            rest = [p.copy() for j, p in enumerate(parts) if j != k]
            target = _selects(copy)[i]
            target.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
            out.append(copy)
    return out


Rule = Callable[[exp.Expr, SchemaInfo], list[exp.Expr]]
# (rule, share of a seed's weight); the pipeline in one tuple.
RULES: tuple[tuple[str, Rule, float], ...] = (
    ("add_column", add_column, 2.0),
    ("drop_column", drop_column, 1.0),
    ("swap_column", swap_column, 1.5),
    ("select_star", select_star, 1.0),
    ("distinct", distinct, 1.0),
    ("order_by", order_by, 1.0),
    ("join_kind", join_kind, 1.0),
    ("extra_join", extra_join, 0.5),
    ("comparison", comparison, 2.0),
    ("regroup", regroup, 3.0),
    ("branch_filter", branch_filter, 3.0),
    ("scope", scope, 3.0),
    ("drop_filter", drop_filter, 1.0),
)
SEED_WEIGHT = 8.0
SECOND_WEIGHT = 0.25


def _rewrites(tree: exp.Expr, info: SchemaInfo) -> Iterator[tuple[str, float, exp.Expr]]:
    for name, rule, weight in RULES:
        made = rule(tree, info)
        for variant in made:
            yield name, weight / len(made), variant


def generate_variants(seeds: list[str], info: SchemaInfo | Schema, *, n: int = 50,
                      dialect: str = "sqlite", random_state: int = 0,
                      second_order: int = 10) -> VariantPool:
    """A pool of about ``n`` samples from the seeds and their rewrites (deterministic)."""
    if isinstance(info, dict):
        info = SchemaInfo({k.lower(): list(v) for k, v in info.items()}, dialect=dialect)
    rng = random.Random(random_state)
    entries: dict[str, tuple[str, str, float]] = {}  # normalised -> (sql, label, weight)

    def add(tree: exp.Expr, label: str, weight: float) -> None:
        sql = tree.sql(dialect=dialect)
        key = normalise_sql(sql, dialect)
        if key not in entries:
            entries[key] = (sql, label, weight)

    firsts: list[tuple[str, exp.Expr]] = []
    trees = [sqlglot.parse_one(s, read=dialect) for s in seeds if s.strip()]
    for tree in trees:
        add(tree, "seed", SEED_WEIGHT / max(1, len(trees)) * 2)
    for tree in trees:
        for name, weight, variant in _rewrites(tree, info):
            add(variant, f"variant:{name}", weight / len(trees))
            firsts.append((name, variant))
    for name, variant in rng.sample(firsts, min(second_order, len(firsts))):
        more = list(_rewrites(variant, info))
        if more:
            second, _, twice = more[rng.randrange(len(more))]
            add(twice, f"variant:{name}+{second}", SECOND_WEIGHT)
    pool = list(entries.values())
    drawn = Counter(rng.choices(range(len(pool)), weights=[w for _, _, w in pool], k=n))
    for i, (_, label, _) in enumerate(pool):
        if label == "seed" and not drawn[i]:
            drawn[i] = 1
    ranked = sorted(drawn, key=lambda i: (-drawn[i], i))
    return VariantPool([Candidate(pool[i][0], drawn[i]) for i in ranked],
                       [pool[i][1] for i in ranked])
