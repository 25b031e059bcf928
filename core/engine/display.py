"""How a feature is shown to people: identifiers as the schema spells them, joins as SQL.

Features are read with lower-cased identifiers (``instrumentName`` is the feature
``instrumentname``) so that spellings of one query meet; that is their identity and stays so.
What a person reads maps each identifier back to the spelling the database and its candidates
use (:func:`spellings`, :func:`respell`), and an inner-join class (``ON a.x = b.y = c.z``, the
columns a query equates, closed under transitivity) is written as valid SQL
(``a.x = b.y AND b.y = c.z``). Nothing here changes a feature's key.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from core.engine.features import Feature

_WORD = re.compile(r"'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|[A-Za-z_][A-Za-z0-9_]*")
_COLUMN = r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*"
_CLASS = re.compile(rf"^{_COLUMN}(?: = {_COLUMN})+$")


def spellings(texts: Iterable[str], schema: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Lower-case identifier -> its most frequent spelling in ``texts`` (candidate SQL, DDL),
    for the tables and columns of ``schema`` only (keywords and values are never respelled).

    Identifiers spelled only in lower case are left out: they read the same either way.
    """
    known = {t.lower() for t in schema} | {c.lower() for cols in schema.values() for c in cols}
    seen: dict[str, Counter[str]] = {}
    for text in texts:
        for m in _WORD.finditer(text):
            word = m.group(0)
            if word[0] in "'\"":
                word = word.strip('"')
                if not word or "'" in word:
                    continue
            low = word.lower()
            if low in known:
                seen.setdefault(low, Counter())[word] += 1
    out = {}
    for low, counts in seen.items():
        best = max(counts.items(), key=lambda kv: (kv[1], kv[0] != low))[0]
        if best != low:
            out[low] = best
    return out


def respell(text: str, names: Mapping[str, str]) -> str:
    """``text`` with every identifier outside quotes in the spelling ``names`` gives it."""
    if not names:
        return text
    return _WORD.sub(lambda m: m.group(0) if m.group(0)[0] in "'\"" else
                     names.get(m.group(0).lower(), m.group(0)), text)


def join_class(value: str) -> list[str] | None:
    """The columns of an inner-join class value (``a.x = b.y = c.z``), or None if ``value``
    is an ordinary predicate."""
    if not _CLASS.match(value):
        return None
    return value.split(" = ")


def sql_value(feature: Feature, names: Mapping[str, str] | None = None) -> str:
    """The feature's value as a person reads it: schema spelling, and a join class of three
    or more columns as equalities joined by AND (valid SQL, the same meaning)."""
    value = respell(feature.value, names or {})
    if feature.keyword == "ON":
        cols = join_class(value)
        if cols is not None and len(cols) > 2:
            return " AND ".join(f"{a} = {b}" for a, b in zip(cols, cols[1:], strict=False))
    return value


def shown(feature: Feature, names: Mapping[str, str] | None = None) -> Feature:
    """``feature`` with its value as :func:`sql_value` shows it (for display only: the key
    of the result is not the feature's key)."""
    value = sql_value(feature, names)
    return feature if value == feature.value else Feature(feature.keyword, value)


__all__ = ["join_class", "respell", "shown", "spellings", "sql_value"]
