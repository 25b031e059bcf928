"""Plain-language clarification questions from atomic features, for users who do not read SQL.

``render_question(features)`` turns a decision variable (a conjunction of :class:`Feature` s)
into one Yes/No question: ``SELECT reviews.review_text`` becomes "Should the result include the
review's text?", a WHERE predicate becomes "Should only rows where <predicate in words> be
kept?". Expressions are read from the sqlglot AST (columns become "the film's release year",
aggregates "the average …", comparisons "is at least …"); whatever has no template falls back
to its SQL text, so every feature renders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import sqlglot
from sqlglot import exp

from core.engine.answers import answer_phrase
from core.engine.display import join_class, respell
from core.engine.features import Feature

_IRREGULAR = {"people": "person", "casting": "casting", "series": "series", "news": "news"}
_COMPARE: dict[type[exp.Expr], str] = {exp.EQ: "is", exp.NEQ: "is not", exp.GT: "is greater than",
            exp.GTE: "is at least", exp.LT: "is less than", exp.LTE: "is at most"}
_AGG: dict[type[exp.Expr], str] = {exp.Avg: "the average", exp.Sum: "the total", exp.Max: "the highest",
        exp.Min: "the lowest"}


def snake(name: str) -> str:
    """A schema name in lower snake case ('instrumentName' -> 'instrument_name'), for words."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def singular(table: str) -> str:
    """A table name read as one of its rows ('reviews' -> 'review', 'people' -> 'person')."""
    t = snake(table).strip("()")
    if t in _IRREGULAR:
        return _IRREGULAR[t]
    if t.endswith("ies") and len(t) > 4:
        return t[:-3] + "y"
    if t.endswith(("sses", "xes", "ches", "shes")):
        return t[:-2]
    if t.endswith("s") and not t.endswith("ss"):
        return t[:-1]
    return t


def column_words(column: str, table: str = "") -> str:
    """'reviews.review_text' -> "the review's text"; an unqualified column -> 'the <name>'."""
    col = snake(column)
    if not table:
        return "the " + col.replace("_", " ")
    owner = singular(table)
    for prefix in (owner + "_", snake(table) + "_"):
        if col.startswith(prefix) and len(col) > len(prefix):
            col = col[len(prefix):]
            break
    return f"the {owner.replace('_', ' ')}'s {col.replace('_', ' ')}"


def _literal(node: exp.Literal) -> str:
    return f"'{node.this}'" if node.is_string else str(node.this)


def _like(node: exp.Like | exp.ILike) -> str:
    subject = words(node.this)
    pattern = node.expression.this if isinstance(node.expression, exp.Literal) else None
    if pattern is None:
        return f"{subject} matches {words(node.expression)}"
    core = pattern.strip("%")
    if "%" in core or "_" in core:
        return f"{subject} matches the pattern '{pattern}'"
    if pattern.startswith("%") and pattern.endswith("%") and core:
        return f"{subject} contains '{core}'"
    if pattern.endswith("%") and core:
        return f"{subject} starts with '{core}'"
    if pattern.startswith("%") and core:
        return f"{subject} ends with '{core}'"
    return f"{subject} is '{core}' (ignoring case)"


def words(node: exp.Expr) -> str:
    """An expression in words; unknown constructs keep their SQL text."""
    if isinstance(node, exp.Paren):
        return words(node.this)
    if isinstance(node, exp.Column):
        if isinstance(node.this, exp.Star):
            return f"every {singular(node.table)} column" if node.table else "every column"
        return column_words(node.name, node.table)
    if isinstance(node, exp.Star):
        return "every column"
    if isinstance(node, exp.Literal):
        return _literal(node)
    if isinstance(node, exp.Null):
        return "missing"
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    for kind, phrase in _COMPARE.items():
        if type(node) is kind:
            return f"{words(node.this)} {phrase} {words(node.expression)}"
    if isinstance(node, exp.And):
        return " and ".join(words(p) for p in node.flatten())
    if isinstance(node, exp.Or):
        return " or ".join(words(p) for p in node.flatten())
    if isinstance(node, exp.Not):
        inner = node.this
        if isinstance(inner, exp.Is):
            return f"{words(inner.this)} is not missing"
        if isinstance(inner, exp.In):
            return words(inner).replace(" is one of ", " is not one of ", 1)
        return f"not ({words(inner)})"
    if isinstance(node, exp.Is):
        return f"{words(node.this)} is missing"
    if isinstance(node, exp.Like | exp.ILike):
        return _like(node)
    if isinstance(node, exp.Between):
        return (f"{words(node.this)} is between {words(node.args['low'])} and "
                f"{words(node.args['high'])}")
    if isinstance(node, exp.In):
        if node.args.get("query") is not None:
            return f"{words(node.this)} is one of the values of ({words(node.args['query'])})"
        return f"{words(node.this)} is one of {', '.join(words(e) for e in node.expressions)}"
    if isinstance(node, exp.Count):
        arg = node.this
        if arg is None or isinstance(arg, exp.Star):
            return "the number of rows"
        if isinstance(arg, exp.Distinct):
            return "the number of distinct " + ", ".join(
                words(e).removeprefix("the ") for e in arg.expressions)
        return "the number of " + words(arg).removeprefix("the ")
    for kind, phrase in _AGG.items():
        if isinstance(node, kind):
            return f"{phrase} {words(node.this).removeprefix('the ')}"
    if isinstance(node, exp.Subquery):
        return words(node.this)
    if isinstance(node, exp.Select):
        outs = ", ".join(words(e) for e in node.expressions)
        where = node.args.get("where")
        cond = f" where {words(where.this)}" if where is not None else ""
        return f"{outs}{cond}"
    if isinstance(node, exp.Alias):
        return words(node.this)
    return _more_words(node)


_ARITHMETIC: dict[type[exp.Expr], str] = {exp.Add: "plus", exp.Sub: "minus", exp.Mul: "times",
                                         exp.Div: "divided by", exp.Mod: "modulo",
                                         exp.DPipe: "followed by"}
_FUNCTION_WORDS = {"round": "{} (rounded)", "upper": "{} in capitals", "lower": "{} in lower case",
                   "coalesce": "{} (or a default when missing)", "ifnull": "{} (or a default "
                   "when missing)", "abs": "the absolute value of {}", "substring": "part of {}",
                   "substr": "part of {}", "trim": "{} without surrounding spaces"}
_SAME = (exp.Cast, exp.TryCast, exp.TsOrDsToTimestamp, exp.TsOrDsToDate, exp.Distinct)


def _more_words(node: exp.Expr) -> str:
    """Words for arithmetic, text joins, lists, dates, EXISTS and other functions, so a plain-
    language question shows no SQL; what has no words is "a value computed from <columns>"."""
    for kind, phrase in _ARITHMETIC.items():
        if type(node) is kind:
            left, right = (f"({words(e)})" if isinstance(e, exp.Paren) else words(e)
                           for e in (node.this, node.expression))
            return f"{left} {phrase} {right}"
    if isinstance(node, exp.Neg):
        return f"minus {words(node.this)}"
    if isinstance(node, _SAME):
        parts = node.expressions if isinstance(node, exp.Distinct) else [node.this]
        return ", ".join(words(e) for e in parts)
    if isinstance(node, exp.GroupConcat):
        return "the list of " + words(node.this).removeprefix("the ")
    if isinstance(node, exp.TimeToStr):
        fmt = node.args.get("format")
        shown = f" written as '{fmt.this}'" if isinstance(fmt, exp.Literal) else " as text"
        return words(node.this) + shown
    if isinstance(node, exp.Date) and isinstance(node.this, exp.Literal):
        return f"the date {_literal(node.this)}"
    if isinstance(node, exp.Exists) and isinstance(node.this, exp.Select):
        tables = [t.name for t in node.this.find_all(exp.Table)]
        where = node.this.args.get("where")
        what = f"a matching {singular(tables[0]).replace('_', ' ')}" if tables else "a match"
        return f"there is {what}" + (f" where {words(where.this)}" if where is not None else "")
    if isinstance(node, exp.Func) and not isinstance(node, exp.Case | exp.If):
        name = (str(node.name) if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        args = [words(a) for a in node.iter_expressions()
                if not isinstance(a, exp.Literal | exp.DataType)]
        if not args:
            return f"the {name.replace('_', ' ')}"
        template = _FUNCTION_WORDS.get(name, "the " + name.replace("_", " ") + " of {}")
        return template.format(args[0]) + "".join(f", {a}" for a in args[1:])
    cols = list(dict.fromkeys(words(c) for c in node.find_all(exp.Column)))
    return "a value computed from " + ", ".join(cols) if cols else "a computed value"


def expression_words(sql: str, dialect: str = "sqlite") -> str:
    """A feature value (an SQL expression) in words; unparsable text is returned as it is."""
    try:
        return words(sqlglot.parse_one(sql, read=dialect))
    except (sqlglot.errors.SqlglotError, ValueError):
        return sql


_PLAIN_NAME = re.compile(r"[A-Za-z_][\w ]*")


def header_words(column: str, dialect: str = "sqlite") -> str:
    """An output column's header for readers who do not read SQL: a name stays as it is, an
    expression (``AVG(r.imdb_rating)``, ``COUNT(*)``) is said in words without its table
    aliases ("average imdb rating", "number of rows")."""
    if _PLAIN_NAME.fullmatch(column):
        return column
    try:
        node = sqlglot.parse_one(column, read=dialect)
    except (sqlglot.errors.SqlglotError, ValueError):
        return "computed value"
    for col in node.find_all(exp.Column):
        col.set("table", None)
    return words(node).removeprefix("the ")


def _names(tables: list[str]) -> str:
    """'a', 'a and b', 'a, b and c' of table names in words."""
    words_ = [snake(t).replace("_", " ") for t in dict.fromkeys(tables)]
    return words_[0] if len(words_) == 1 else f"{', '.join(words_[:-1])} and {words_[-1]}"


def join_words(value: str) -> str | None:
    """An inner-join class in words, or None when ``value`` is not one: ``directors.film_id =
    films.id`` -> 'films with their directors'; ``casting.film_id = ratings.film_id`` ->
    'casting and ratings of the same film'."""
    cols = join_class(value)
    if cols is None:
        return None
    pairs = [tuple(c.split(".", 1)) for c in cols]
    hubs = [t for t, c in pairs if c.lower() == "id"]
    for hub in hubs:
        refs = [t for t, c in pairs if t != hub and snake(c) in
                (singular(hub) + "_id", snake(hub) + "_id")]
        if len(refs) + 1 == len(pairs):
            return f"{snake(hub).replace('_', ' ')} with their {_names(refs)}"
    shared = {snake(c) for _, c in pairs}
    if len(shared) == 1 and not hubs and (key := shared.pop()).endswith("_id"):
        return f"{_names([t for t, _ in pairs])} of the same {key[:-3].replace('_', ' ')}"
    cols_ = [column_words(c, t) for t, c in pairs]
    return (f"{_names([t for t, _ in pairs])} where {', '.join(cols_[:-1])} and {cols_[-1]} "
            f"{'are' if len(cols_) == 2 else 'are all'} equal")


def _on_words(value: str, dialect: str) -> str:
    try:
        node = sqlglot.parse_one(value, read=dialect)
    except (sqlglot.errors.SqlglotError, ValueError):
        return f"rows be matched on {value}"
    if isinstance(node, exp.EQ):
        return f"{words(node.this)} be matched with {words(node.expression)}"
    return f"rows be matched where {words(node)}"


def _split_columns(value: str) -> list[str]:
    """The columns of a SELECT ONLY value (commas inside parentheses do not split)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(value):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(value[start:i].strip())
            start = i + 1
    out.append(value[start:].strip())
    return [c for c in out if c]


def phrases(feature: Feature, dialect: str = "sqlite") -> tuple[str, str]:
    """(Yes/No question, clause fragment for conjunctions) of one atomic feature."""
    kw, value = feature.keyword, feature.value
    if kw == "SELECT":
        what = "every column" if value == "*" else expression_words(value, dialect)
        if value.endswith(".*"):
            what = f"every {singular(value[:-2])} column"
        return f"Should the result include {what}?", f"the result include {what}"
    if kw == "SELECT ONLY":
        cols = ["every column" if c == "*" else expression_words(c, dialect)
                for c in _split_columns(value)]
        listed = cols[0] if len(cols) == 1 else f"{', '.join(cols[:-1])} and {cols[-1]}"
        return (f"Should the result show exactly {listed}, and no other columns?",
                f"the result show exactly {listed}")
    if kw == "DISTINCT":
        return ("Should duplicate rows be removed from the result?",
                "duplicate rows be removed")
    if kw in ("FROM", "JOIN"):
        name = value.replace("_", " ")
        return (f"Should the answer use information about {name}?",
                f"the answer use information about {name}")
    if kw == "LEFT JOIN":
        s = singular(value)
        return (f"Should rows without a matching {s} be kept as well?",
                f"rows without a matching {s} be kept")
    if kw == "ON":
        joined = join_words(value)
        if joined is not None:
            return (f"Should the answer combine {joined}?", f"the answer combine {joined}")
        frag = _on_words(value, dialect)
        return f"Should {frag}?", frag
    if kw in ("WHERE", "WHERE …"):
        pred = expression_words(value, dialect)
        return f"Should only rows where {pred} be kept?", f"only rows where {pred} be kept"
    if kw == "GROUP BY":
        what = expression_words(value, dialect)
        return (f"Should the result have one row per {what.removeprefix('the ')}?",
                f"the result have one row per {what.removeprefix('the ')}")
    if kw == "HAVING":
        pred = expression_words(value, dialect)
        return f"Should only groups where {pred} be kept?", f"only groups where {pred} be kept"
    if kw == "ORDER BY":
        expr, _, direction = value.rpartition(" ")
        order = "largest first" if direction == "DESC" else "smallest first"
        what = expression_words(expr or value, dialect)
        return (f"Should the result be sorted by {what}, {order}?",
                f"the result be sorted by {what}, {order}")
    if kw == "LIMIT":
        if value.strip() == "1":
            return "Should only the first row be returned?", "only the first row be returned"
        return (f"Should only the first {value} rows be returned?",
                f"only the first {value} rows be returned")
    if kw in ("UNION", "UNION ALL", "INTERSECT", "EXCEPT"):
        how = {"UNION": "combined without duplicates", "UNION ALL": "combined, keeping duplicates",
               "INTERSECT": "restricted to rows common to both parts",
               "EXCEPT": "the first part minus the second"}[kw]
        return f"Should the result be {how}?", f"the result be {how}"
    if kw == "WITH":
        return (f"Should the answer first compute an intermediate result '{value}'?",
                f"the answer first compute '{value}'")
    if kw.startswith("ANSWER "):  # a question about the answer itself (core.engine.answers)
        said = answer_phrase([feature], words=lambda c: expression_words(c, dialect))
        return f"Should the answer have {said}?", f"the answer have {said}"
    text = feature.key
    return f"Should the query contain {text}?", f"the query contain {text}"


def render_question(features: Iterable[Feature], dialect: str = "sqlite",
                    names: Mapping[str, str] | None = None) -> str:
    """One plain-language Yes/No question for a conjunction of features (identifiers in the
    spelling ``names`` gives them: see :func:`core.engine.display.spellings`)."""
    feats = [Feature(f.keyword, respell(f.value, names or {})) for f in features]
    if not feats:
        raise ValueError("a question needs at least one feature")
    if len(feats) == 1:
        return phrases(feats[0], dialect)[0]
    if all(f.keyword == "SELECT" for f in feats):
        parts = [phrases(f, dialect)[1].removeprefix("the result include ") for f in feats]
        return f"Should the result include {', '.join(parts[:-1])} and {parts[-1]}?"
    if all(f.keyword.startswith("ANSWER ") for f in feats):
        parts = [phrases(f, dialect)[1].removeprefix("the answer have ") for f in feats]
        return f"Should the answer have {', '.join(parts[:-1])} and {parts[-1]}?"
    frags = [phrases(f, dialect)[1] for f in feats]
    return f"Should {', '.join(frags[:-1])}, and {frags[-1]}?"


__all__ = ["column_words", "header_words", "join_words", "snake", "expression_words", "phrases", "render_question", "singular",
           "words"]
