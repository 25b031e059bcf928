"""Output column headers a reader can tell apart.

A database names an output column after the column alone, so ``SELECT f.name, c.name`` comes
back headed ``name | name``. Where two headers repeat, each repeated one is qualified by the
table its column comes from, read from the query's own select list (``festivals.name``, or in
words "festival's name" under ``plain`` labels); where the select list cannot say (``SELECT
*``, a subquery), the repeats are numbered ("name (2)"), so no two headers read alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import sqlglot
from sqlglot import exp

from core.planpool.questions import column_words, header_words


@lru_cache(maxsize=4096)
def column_header(column: str, labels: str = "sql") -> str:
    """An output column's header as shown: as the query named it, or under ``plain`` labels an
    expression header in words (``AVG(r.imdb_rating)`` -> "average imdb rating")."""
    return header_words(column) if labels == "plain" else column


@lru_cache(maxsize=1024)
def _select_tables(sql: str, n: int, dialect: str) -> tuple[str | None, ...] | None:
    """Per output column of ``sql``, the base table its column is read from (None for an
    expression or an unqualified column); None when the select list does not give ``n``
    columns one by one (a star, a parse error, a set operation)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except (sqlglot.errors.SqlglotError, ValueError):
        return None
    if not isinstance(tree, exp.Select) or len(tree.expressions) != n:
        return None
    tables: dict[str, str] = {}
    for source in [tree.args.get("from"), tree.args.get("from_"), *tree.args.get("joins", [])]:
        if source is None:
            continue
        for table in source.find_all(exp.Table):
            tables[table.alias_or_name.lower()] = table.name
    out: list[str | None] = []
    for projection in tree.expressions:
        if isinstance(projection, exp.Star) or projection.find(exp.Star) is not None:
            return None
        column = projection.this if isinstance(projection, exp.Alias) else projection
        qualifier = column.table.lower() if isinstance(column, exp.Column) else ""
        out.append(tables.get(qualifier) if qualifier else None)
    return tuple(out)


def distinct_headers(columns: Sequence[str], sql: str | None = None, labels: str = "sql",
                     dialect: str = "sqlite") -> list[str]:
    """The headers of an output as shown (under ``plain`` labels an expression in words),
    each repeated one qualified by its table from ``sql``'s select list, else numbered."""
    shown = [column_header(str(c), labels) for c in columns]
    repeats = {h for h, k in Counter(shown).items() if k > 1}
    if not repeats:
        return shown
    tables = _select_tables(sql, len(columns), dialect) if sql else None
    if tables is not None:
        for j, header in enumerate(shown):
            table = tables[j]
            if header in repeats and table:
                name = str(columns[j]).split(".")[-1]
                shown[j] = (column_words(name, table).removeprefix("the ") if labels == "plain"
                            else f"{table}.{name}")
    seen: Counter[str] = Counter()
    for j, header in enumerate(shown):  # what the tables did not tell apart: numbered
        seen[header] += 1
        if seen[header] > 1:
            shown[j] = f"{header} ({seen[header]})"
    return shown
