"""Extract one SQL query from a model reply, and deduplicate samples by normalised SQL.

A reply may hold the query in a ```sql fence, in an untagged fence, bare, or inside prose
("Here is the query: SELECT ... This returns ..."). ``extract_sql`` tries those shapes in that
order and keeps the first text that sqlglot parses as exactly one read-only query in the task's
dialect. ``normalise_sql`` is the dedupe key: the sqlglot rendering with unquoted identifiers
normalised for the dialect, so spacing, keyword case and a trailing semicolon do not split a
candidate in two; string literals are left as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import sqlglot
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from core.engine.errors import UnsafeQueryError
from core.engine.execute import check_query
from core.engine.sqlguard import parse_one_bounded
from core.engine.taskbank import Candidate

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)(?:```|\Z)", re.S)
_START = re.compile(r"(?im)(?:^|(?<=[:>`\s]))(WITH\s+\w+(?:\s*\([^)]*\))?\s+AS\s*\(|SELECT\b)")
_PROSE_END = re.compile(r"\n\s*\n|;")
_SENTENCE_END = re.compile(r"(?<=[\w')\]])\.\s+(?=[A-Z][a-z])")


@dataclass(frozen=True)
class Extraction:
    """The SQL found in one reply, or why none was usable (``sql`` is None then)."""

    sql: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.sql is not None


def _candidates_in(reply: str) -> list[str]:
    """Texts that may be the query, most specific first: sql fences, other fences, prose."""
    tagged: list[str] = []
    untagged: list[str] = []
    for lang, body in _FENCE.findall(reply):
        (tagged if lang.lower() in ("sql", "sqlite", "postgresql", "postgres", "mysql")
         else untagged).append(body)
    outside = _FENCE.sub("\n\n", reply)
    prose = []
    for match in _START.finditer(outside):
        rest = outside[match.start():]
        end = _PROSE_END.search(rest)
        head = rest[: end.start()] if end else rest
        prose.append(head)
        sentence = _SENTENCE_END.search(head)
        if sentence:
            prose.append(head[: sentence.start()])
        prose.append(rest)  # the query may span blank lines; the parser decides
    return tagged + untagged + prose


def _check(sql: str, dialect: str) -> None:
    """check_query, with tokenizer errors (unclosed quotes) reported the same way."""
    try:
        check_query(sql, dialect)
    except sqlglot.errors.SqlglotError as exc:
        raise UnsafeQueryError(f"SQL does not parse ({str(exc).splitlines()[0][:120]})") from None


def _trim_trailing_prose(text: str, dialect: str) -> str | None:
    """The longest leading run of lines that parses as one query (drops trailing prose)."""
    lines = text.strip().splitlines()
    for end in range(len(lines), 0, -1):
        chunk = "\n".join(lines[:end]).strip().rstrip(";").strip()
        if not chunk:
            continue
        try:
            _check(chunk, dialect)
        except UnsafeQueryError:
            continue
        return chunk
    return None


def extract_sql(reply: str, dialect: str = "sqlite") -> Extraction:
    """Find the one SQL query in a model reply, checked with sqlglot for ``dialect``."""
    if not reply or not reply.strip():
        return Extraction(None, "empty reply")
    first_error = None
    for text in _candidates_in(reply):
        cleaned = text.strip().rstrip(";").strip()
        if not cleaned:
            continue
        try:
            _check(cleaned, dialect)
            return Extraction(cleaned)
        except UnsafeQueryError as exc:
            first_error = first_error or str(exc)
        trimmed = _trim_trailing_prose(cleaned, dialect)
        if trimmed is not None:
            return Extraction(trimmed)
    if first_error is None:
        return Extraction(None, "no SELECT query found in the reply")
    return Extraction(None, first_error)


def normalise_sql(sql: str, dialect: str = "sqlite") -> str:
    """The dedupe key of a query: canonical sqlglot text (falls back to collapsed whitespace)."""
    try:
        tree = normalize_identifiers(parse_one_bounded(sql, dialect), dialect=dialect)
        return tree.sql(dialect=dialect, normalize_functions="upper", pretty=False)
    except (UnsafeQueryError, sqlglot.errors.SqlglotError, ValueError, RecursionError):
        return " ".join(sql.split()).rstrip(";").strip()


def dedupe(sqls: Iterable[str], dialect: str = "sqlite",
           counts: Iterable[int] | None = None) -> list[Candidate]:
    """Merge queries with the same normalised SQL; the first spelling is kept, counts add up.

    Candidates come out by descending count, ties in order of first appearance.
    """
    first: dict[str, str] = {}
    total: dict[str, int] = {}
    weights = iter(counts) if counts is not None else None
    for sql in sqls:
        key = normalise_sql(sql, dialect)
        weight = next(weights) if weights is not None else 1
        first.setdefault(key, sql)
        total[key] = total.get(key, 0) + weight
    order = {key: i for i, key in enumerate(first)}
    keys = sorted(first, key=lambda k: (-total[k], order[k]))
    return [Candidate(first[k], total[k]) for k in keys]
