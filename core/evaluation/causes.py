"""Why a failed task×gold pair failed: the categories ``core.evaluate --causes`` counts.

Apart from the runner and the report so that both can name them without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlglot

from core.engine.answers import is_answer
from core.engine.errors import UnsafeQueryError
from core.engine.predicates import _RENDER, _conjuncts
from core.engine.sqlguard import parse_one_bounded

CAUSES = {
    "needs-clause": "needs a clause no candidate has (only resampling can add it)",
    "answered-away": "the target's output was present from the start and a question removed it",
    "added-then-answered-away": "repair added the target's output and a question removed it",
    "alive-at-budget": "the target's output was still alive when the turns ran out",
    "never-produced": "never produced although every piece of the target (columns, conjuncts, "
                      "tables, …) is in some candidate",
    "other": "ended otherwise (repair found nothing new after a rejection)",
}



def _where_conjuncts(predicate: str, dialect: str) -> list[str]:
    """The top-level conjuncts of a WHERE feature's rendered predicate, each rendered as the
    features render it; the whole predicate when it does not parse."""
    try:
        tree = parse_one_bounded(f"SELECT 1 WHERE {predicate}", dialect)
    except (UnsafeQueryError, sqlglot.errors.SqlglotError):
        return [predicate]
    where = tree.args.get("where")
    if where is None:
        return [predicate]
    return [c.sql(dialect=dialect, **_RENDER) for c in _conjuncts(where.this)]


def missing_pieces(target_keys: Iterable[str], have: set[str], dialect: str) -> list[str]:
    """The target's clauses that no candidate has, counted as the pieces repair combines.

    A column list (``SELECT ONLY``) is not a piece: each of its columns is a ``SELECT``
    feature of its own, and recomposition composes lists from columns. A WHERE of several
    conjuncts is missing only in the conjuncts that no candidate's WHERE has (recomposition
    composes WHERE from conjuncts). So ``needs-clause`` says "only resampling can add it" only
    where that is so; a gold whose every piece exists is ``never-produced``.
    """
    pool_conjuncts = {c for key in have if key.startswith("WHERE ")
                      for c in _where_conjuncts(key.removeprefix("WHERE "), dialect)}
    pool_conjuncts |= {key.removeprefix("WHERE … ") for key in have
                       if key.startswith("WHERE … ")}
    missing: set[str] = set()
    for key in target_keys:
        if is_answer(key) or key in have or key.startswith("SELECT ONLY"):
            continue
        if key.startswith("WHERE "):
            parts = _where_conjuncts(key.removeprefix("WHERE "), dialect)
            if len(parts) > 1:
                missing.update(f"WHERE {p}" for p in parts if p not in pool_conjuncts)
                continue
        missing.add(key)
    return sorted(missing)


__all__ = ["CAUSES", "missing_pieces"]
