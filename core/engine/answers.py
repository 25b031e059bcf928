"""Questions about the answer itself: output-level decision variables.

A clause question ("should the query contain DISTINCT?") is answered from how a query is
*spelled*, so a person who would write the same output another way answers a correct output
away. A question about the *answer* cannot do that: it is a function of the output table, and
every candidate of a functional class has the same output, so it never splits a class.

Each output gets :class:`~core.engine.features.Feature` s under ``ANSWER …`` keywords:

- ``ANSWER COLUMN t.c`` — a column whose values all occur in the database column ``t.c`` (the
  narrowest such column), or ``ANSWER COLUMN whole numbers`` / ``decimal numbers`` / ``text``
  when none holds them (counts, averages, computed text);
- ``ANSWER COLUMNS n`` — exactly ``n`` columns;
- ``ANSWER SHAPE`` — ``no rows``, ``a single value``, ``a single row`` or ``several rows``;
- ``ANSWER ONE ROW PER t.c`` — a column of ``t.c`` values with no value twice (two rows or more);
- ``ANSWER REPEATS rows`` — some row occurs more than once;
- ``ANSWER HAS v`` and ``ANSWER ROWS n`` — *value questions*: the value ``v`` is in some cell;
  the answer has exactly ``n`` rows.

The first five a person can answer without knowing the answer (which columns, one row per
what, counts or names, one number or a list); value questions assume the person recognises the
right rows — the same assumption as accepting or rejecting a shown output, but a stronger one
to lean on — so they are offered only with ``values=True`` and ranked behind the others
(:data:`VALUE_PENALTY`). Row order is not asked: functional classes ignore it.

What a column's values are is read from the database (:func:`database_profile`: the distinct
values of every column), never from the candidates, so a target's answers — the honest
simulated user's — come from its output and the database alone.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine.execute import ExecutionResult, TaskDatabase, open_database
from core.engine.features import Feature
from core.engine.similarity import ERROR_CLASS, _cell

# the question vocabularies a session can ask; ``hybrid`` asks ``clauses`` until the first
# rejected output and :data:`HYBRID_AFTER` from then on (:func:`asked_vocabulary`)
QUESTIONS = ("clauses", "outputs", "mixed", "hybrid")
DEFAULT_QUESTIONS = "clauses"
DEFAULT_VALUES = False  # value questions offered by default (with outputs/mixed)
ANSWER_PREFIX = "ANSWER "
VALUE_KEYWORDS = ("ANSWER HAS", "ANSWER ROWS")
ANSWER_KEYWORDS = ("ANSWER COLUMN", "ANSWER COLUMNS", "ANSWER SHAPE", "ANSWER ONE ROW PER",
                   "ANSWER REPEATS", *VALUE_KEYWORDS)
MAX_VALUES = 24  # value questions offered per pool (the best-balanced ones)
MIN_NUMERIC_MATCH = 3  # distinct numbers before a numeric column is read as a database column
PROFILE_PAGES = 20  # pages of 1000 distinct values read per database column at most
VALUE_PENALTY = 0.5  # expected questions a value question must save to be asked first
SPELLING_PENALTY = 0.5  # the same for a clause question that splits an output (mixed only)
HYBRID_AFTER = "outputs"  # what ``hybrid`` asks once an output was rejected (asked_vocabulary)
# What ``hybrid`` asks after a rejection at a step where no question about the answer splits
# the surviving outputs and none of them holds HYBRID_GUESS of their weight (SessionViews.asking):
# a clause question costs one turn (and may answer a repaired output away by its spelling);
# showing the heaviest output costs nothing if it is theirs and otherwise a rejection, a repair
# round and the questions after it. Where one output is that likely it is shown, as before.
# Measured alone on AMBROSIA dev (gold-features, all pairs; docs/evaluation.md, "Session 11"):
# never falling back 0.905 in 6.02 turns, always 0.899 in 6.26, below half 0.911 in 6.07,
# below 0.3 0.917 in 6.01 (with pairs and MODAL_SPELLING, the default: 0.929 in 5.95).
# None: never fall back.
HYBRID_FALLBACK: str | None = "mixed"
HYBRID_GUESS = 0.3
# What ``hybrid`` asks *before* a rejection at a step where the clause question it would ask
# splits one of the surviving outputs (a question about spelling, which can answer a gold spelled
# otherwise away; SessionViews._only_spelling). "outputs" (the default again since session 13;
# None keeps the clauses, session 11's default) takes film prior from 1.101 to 1.042 of the
# Huffman floor (all 19 golds 1.000 in 2.79 turns) and dev all 0.929 from 5.95 to 5.91 turns;
# val all loses one task's two golds (0.846 -> 0.838: fewer clause answers for repair to build
# from). docs/evaluation.md, "Film's prior gap, measured against a class-invariant floor",
# "Session 12" and "Session 13".
HYBRID_SPELLING: str | None = "outputs"
# Before a rejection, where the clause question ``hybrid`` would ask is of a kind
# HYBRID_SAME_SPLIT_CLAUSES admits and tells the surviving outputs apart exactly as some question
# about the answer does (SessionViews._same_split), ask from this vocabulary instead: the same
# split of the outputs, and an answer a gold spelling that clause otherwise (a subquery, a link
# table, MAX for LIMIT 1) cannot get wrong. Dev all pairs 997 -> 984 turns (3 realised golds no
# longer answered away), no pair lost or gained on dev or val. For every clause kind it reached
# 5.50 on dev but lost 12 dev and 14 val pairs (repair builds from clause answers).
# docs/evaluation.md, "Session 14". None: keep the clause question.
HYBRID_SAME_SPLIT: str | None = "outputs"
# Which clause questions HYBRID_SAME_SPLIT acts on (SessionViews._same_split; every feature of
# the question must be one): "tables" (FROM, JOIN: session 14's rule), "clauses" (the default:
# also GROUP BY, HAVING, ORDER BY, LIMIT, DISTINCT, ON, which a gold may spell unlike the pool
# with the same output), "spelling" (also a condition holding a disjunction or an IN list),
# "all" (every clause but the SELECT list). Measured on branch turns7 (docs/evaluation.md,
# "Session 14"): "clauses" keeps dev all pairs at 984 turns and val at 1431, no pair lost or
# gained, and takes film prior from 1.042 to 1.035 of the Huffman floor; "spelling" dev 981
# but loses a val attachment pair whose gold repair builds from the condition's answer; "all"
# dev 977 but loses a dev pair.
SAME_SPLIT_MODES = ("tables", "clauses", "spelling", "all")
HYBRID_SAME_SPLIT_CLAUSES = "clauses"
_SAME_SPLIT_TABLES = frozenset({"FROM", "JOIN", "LEFT JOIN"})
_SAME_SPLIT_CLAUSES = _SAME_SPLIT_TABLES | {"ON", "GROUP BY", "HAVING", "ORDER BY", "LIMIT",
                                            "DISTINCT"}
_SAME_SPLIT_CONDITIONS = frozenset({"WHERE", "WHERE …"})


def same_split_clause(feature: Feature, mode: str | None = None) -> bool:
    """Whether :data:`HYBRID_SAME_SPLIT` may ask about the answer instead of a clause question
    holding ``feature`` (``mode`` as :data:`HYBRID_SAME_SPLIT_CLAUSES`); never the SELECT list,
    which repair builds unrealised golds from."""
    mode = mode or HYBRID_SAME_SPLIT_CLAUSES
    if mode not in SAME_SPLIT_MODES:
        raise ValueError(f"unknown same-split mode {mode!r}; choose one of "
                         f"{', '.join(SAME_SPLIT_MODES)}")
    key = feature.keyword
    if key in _SAME_SPLIT_TABLES:
        return True
    if mode == "tables":
        return False
    if key in _SAME_SPLIT_CLAUSES:
        return True
    if key not in _SAME_SPLIT_CONDITIONS or mode == "clauses":
        return False
    value = f" {feature.value.upper()} "
    return mode == "all" or " IN " in value or " OR " in value


def asked_vocabulary(questions: str, rejected: bool) -> str:
    """The vocabulary a session with ``questions`` asks from now: ``hybrid`` asks the clauses
    (which repair builds from) until an output was rejected, then :data:`HYBRID_AFTER`."""
    if questions != "hybrid":
        return questions
    return HYBRID_AFTER if rejected else "clauses"


def is_answer(feature: Feature | str) -> bool:
    """Whether a feature (or key) is a question about the answer, not a clause."""
    key = feature if isinstance(feature, str) else feature.keyword
    return key.startswith(ANSWER_PREFIX)


def is_value(feature: Feature | str) -> bool:
    """Whether a feature (or key) is a value question (assumes the right rows are known)."""
    key = feature if isinstance(feature, str) else f"{feature.keyword} "
    return any(key.startswith(k + " ") for k in VALUE_KEYWORDS)


def check_questions(questions: str) -> str:
    """``questions`` if it names a vocabulary, else a ValueError naming the choices."""
    if questions not in QUESTIONS:
        raise ValueError(f"unknown question vocabulary {questions!r}; choose one of "
                         f"{', '.join(QUESTIONS)}")
    return questions


@dataclass(frozen=True)
class DatabaseProfile:
    """Distinct values (as canonical cell strings) of every column, and which are numeric."""

    columns: tuple[tuple[str, bool, frozenset[str]], ...]  # (table.column, numeric, values)


_PROFILES: dict[Any, DatabaseProfile] = {}
_PROFILE_LOCK = threading.Lock()


def _quote(name: str, dialect: str) -> str:
    import sqlglot

    return sqlglot.exp.to_identifier(name, quoted=True).sql(dialect)


def database_profile(db: TaskDatabase) -> DatabaseProfile:
    """Read every column's distinct values through the safe execution path (cached per spec)."""
    spec = getattr(db, "spec", None)
    if spec is not None and spec in _PROFILES:
        return _PROFILES[spec]
    columns = []
    for table, cols in sorted(db.schema().items()):
        for col in cols:
            values: set[str] = set()
            numeric = True
            for page in range(PROFILE_PAGES):
                res = db.execute(f"SELECT DISTINCT {_quote(col, db.dialect)} FROM "
                                 f"{_quote(table, db.dialect)} LIMIT 1000 OFFSET {page * 1000}")
                if not res.ok:
                    break
                for (v,) in res.rows:
                    if v is None:
                        continue
                    numeric &= isinstance(v, int | float) and not isinstance(v, bool)
                    values.add(_cell(v))
                if len(res.rows) < 1000:
                    break
            if values:
                columns.append((f"{table}.{col}", numeric, frozenset(values)))
    profile = DatabaseProfile(tuple(sorted(columns, key=lambda c: (len(c[2]), c[0]))))
    if spec is not None:
        with _PROFILE_LOCK:
            _PROFILES[spec] = profile
    return profile


def profile_of(spec: Any) -> DatabaseProfile | None:
    """The profile of the database a spec names (opened once, then cached); None without one."""
    if spec is None:
        return None
    if isinstance(spec, TaskDatabase):
        return database_profile(spec)
    if spec not in _PROFILES:
        db = open_database(spec)
        try:
            database_profile(db)
        finally:
            db.close()
    return _PROFILES[spec]


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def column_type(values: list[Any], profile: DatabaseProfile | None) -> str:
    """What a column holds: the narrowest database column containing all its values, else
    ``whole numbers`` / ``decimal numbers`` / ``text`` (``empty`` when every cell is NULL)."""
    present = [v for v in values if v is not None]
    if not present:
        return "empty"
    numeric = all(_number(v) for v in present)
    cells = {_cell(v) for v in present}
    if profile is not None and (not numeric or len(cells) >= MIN_NUMERIC_MATCH):
        for name, col_numeric, known in profile.columns:  # narrowest first
            if col_numeric == numeric and cells <= known:
                return name
    if numeric:
        return "whole numbers" if all(float(v).is_integer() for v in present) else \
            "decimal numbers"
    return "text"


def value_text(v: Any) -> str:
    """How a cell value reads in a value question (numbers without a spurious ``.0``)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return str(int(v))
    if isinstance(v, float):
        return repr(round(v, 6))
    return str(v)


def answer_features(result: ExecutionResult, profile: DatabaseProfile | None, *,
                    values: bool = True, allowed_values: frozenset[str] | None = None
                    ) -> list[Feature]:
    """The answer features of one output (none for an error); see the module docstring.

    ``values`` adds the value features: every cell value, or only those in ``allowed_values``.
    """
    if not result.ok:
        return []
    rows = result.rows
    ncols = len(result.columns)
    out = [Feature("ANSWER COLUMNS", str(ncols))]
    shape = ("no rows" if not rows else "a single value" if len(rows) == 1 and ncols == 1
             else "a single row" if len(rows) == 1 else "several rows")
    out.append(Feature("ANSWER SHAPE", shape))
    for j in range(ncols):
        col = [r[j] for r in rows]
        kind = column_type(col, profile)
        out.append(Feature("ANSWER COLUMN", kind))
        present = [_cell(v) for v in col if v is not None]
        if len(rows) >= 2 and "." in kind and len(present) == len(rows) \
                and len(set(present)) == len(present):
            out.append(Feature("ANSWER ONE ROW PER", kind))
    if len({tuple(_cell(v) for v in r) for r in rows}) < len(rows):
        out.append(Feature("ANSWER REPEATS", "rows"))
    if values:
        out.append(Feature("ANSWER ROWS", str(len(rows))))
        cells = {value_text(v) for r in rows for v in r if v is not None}
        if allowed_values is not None:
            cells &= allowed_values
        out.extend(Feature("ANSWER HAS", c) for c in cells)
    return sorted(set(out), key=lambda f: (ANSWER_KEYWORDS.index(f.keyword), f.value))


def answer_keys(result: ExecutionResult, profile: DatabaseProfile | None) -> frozenset[str]:
    """Keys of every answer feature of an output, values included: what a person who wants
    exactly this output answers Yes to (the honest simulated user's knowledge)."""
    return frozenset(f.key for f in answer_features(result, profile))


@dataclass(frozen=True)
class AnswerContext:
    """What a pool's answer questions are read with: the profile and the offered values."""

    profile: DatabaseProfile | None
    values: bool
    allowed_values: frozenset[str] = frozenset()

    def features(self, result: ExecutionResult) -> list[Feature]:
        """The answer features of ``result`` within this pool's vocabulary."""
        return answer_features(result, self.profile, values=self.values,
                               allowed_values=self.allowed_values)


def _offered_values(pool: Any, per_class: dict[int, list[Feature]]) -> frozenset[str]:
    """The :data:`MAX_VALUES` cell values that split the pool's valid outputs most evenly."""
    weights = np.bincount(pool.class_index, weights=pool.counts, minlength=len(pool.class_keys))
    total = sum(float(weights[c]) for c in per_class)
    share: dict[str, float] = {}
    for c, feats in per_class.items():
        for f in feats:
            if f.keyword == "ANSWER HAS":
                share[f.value] = share.get(f.value, 0.0) + float(weights[c]) / (total or 1.0)
    splitting = [(abs(0.5 - s), len(v), v) for v, s in share.items() if 1e-9 < s < 1 - 1e-9]
    return frozenset(v for _, _, v in sorted(splitting)[:MAX_VALUES])


def answer_matrix(pool: Any, profile: DatabaseProfile | None, values: bool
                  ) -> tuple[list[Feature], np.ndarray, AnswerContext]:
    """(answer vocabulary, candidates × answer features, context) of a pool; computed once per
    output, then given to every candidate with that output (so never splitting a class)."""
    per_class: dict[int, list[Feature]] = {}
    for c, key in enumerate(pool.class_keys):
        if key == ERROR_CLASS:
            continue
        members = np.flatnonzero(pool.class_index == c)
        if len(members):
            per_class[c] = answer_features(pool.results[int(members[0])], profile,
                                           values=values)
    context = AnswerContext(profile, values, _offered_values(pool, per_class) if values
                            else frozenset())
    kept = {c: [f for f in fs if f.keyword != "ANSWER HAS" or f.value in context.allowed_values]
            for c, fs in per_class.items()}
    vocab = sorted({f for fs in kept.values() for f in fs},
                   key=lambda f: (ANSWER_KEYWORDS.index(f.keyword), f.value))
    col = {f: j for j, f in enumerate(vocab)}
    by_class = np.zeros((len(pool.class_keys), len(vocab)), dtype=bool)
    for c, fs in kept.items():
        by_class[c, [col[f] for f in fs]] = True
    return vocab, by_class[pool.class_index], context


_AUGMENTED: dict[tuple[int, bool], Any] = {}
_AUG_LOCK = threading.Lock()


def with_answers(pool: Any, *, values: bool, profile: DatabaseProfile | None = None) -> Any:
    """A copy of ``pool`` whose vocabulary also holds its answer features (made once per pool
    and setting, shared by sessions like the pool; the prepared pool is never changed).

    ``profile`` defaults to the one of ``pool.database`` (None without a database: columns are
    then typed only as numbers or text).
    """
    key = (id(pool), values)
    with _AUG_LOCK:
        hit = _AUGMENTED.get(key)
    if hit is not None:
        return hit
    if profile is None:
        profile = profile_of(pool.database)
    vocab, xa, context = answer_matrix(pool, profile, values)
    keep = [j for j, f in enumerate(pool.vocabulary) if not is_answer(f)]
    augmented = dataclasses.replace(
        pool, vocabulary=[pool.vocabulary[j] for j in keep] + vocab,
        x=np.hstack([np.asarray(pool.x, dtype=bool)[:, keep], xa]), answers=context)
    augmented.repair_cache = pool.repair_cache
    with _AUG_LOCK:
        _AUGMENTED.setdefault(key, augmented)
        weakref.finalize(pool, _AUGMENTED.pop, key, None)
        return _AUGMENTED[key]


_PHRASES = {
    "ANSWER COLUMN": "a column of {} values",
    "ANSWER COLUMNS": "exactly {} columns",
    "ANSWER SHAPE": "{}",
    "ANSWER ONE ROW PER": "one row per {} (no value twice)",
    "ANSWER REPEATS": "some rows more than once",
    "ANSWER HAS": "the value “{}”",
    "ANSWER ROWS": "exactly {} rows",
}


def answer_question(features: tuple[Feature, ...] | list[Feature]) -> str:
    """An answer question in words: "Should the answer have a column of people.name values
    and one row per people.name (no value twice)?" (what the Decision Space shows)."""
    return "Should the answer have " + answer_phrase(features) + "?"


def answer_phrase(features: tuple[Feature, ...] | list[Feature],
                  words: Callable[[str], str] | None = None) -> str:
    """What answer features say, in words joined by "and" (questions, repair prompts).

    ``words`` turns a column's name (``films.title``) into plain words ("the film's title"),
    for readers shown no SQL (``labels: plain``); without it the name is shown as it is."""
    parts = []
    for f in features:
        value = f.value
        if f.keyword == "ANSWER COLUMN" and "." not in value:
            # "empty": every cell of the column is NULL; "an empty column" read as a blank one
            parts.append(f"a column of {value}" if value != "empty"
                         else "a column with no value in any row")
            continue
        if words is not None and "." in value and f.keyword == "ANSWER COLUMN":
            parts.append(f"a column of {words(value)}")
            continue
        if words is not None and "." in value and f.keyword == "ANSWER ONE ROW PER":
            parts.append(f"one row per {words(value).removeprefix('the ')} (no value twice)")
            continue
        if f.keyword in ("ANSWER COLUMNS", "ANSWER ROWS") and value == "1":
            parts.append("exactly one " + ("column" if f.keyword == "ANSWER COLUMNS" else "row"))
            continue
        parts.append(_PHRASES.get(f.keyword, f.keyword.lower() + " {}").format(value))
    return " and ".join(parts)


def excerpt_columns(result: ExecutionResult, features: tuple[Feature, ...] | list[Feature],
                    profile: DatabaseProfile | None) -> list[int]:
    """Columns of ``result`` a question about the answer is about (to show them as excerpt)."""
    cols = set()
    for j in range(len(result.columns)):
        kind = column_type([r[j] for r in result.rows], profile)
        if any(f.keyword in ("ANSWER COLUMN", "ANSWER ONE ROW PER") and f.value == kind
               for f in features):
            cols.add(j)
        if any(f.keyword == "ANSWER HAS" and any(v is not None and value_text(v) == f.value
                                                 for v in (r[j] for r in result.rows))
               for f in features):
            cols.add(j)
    return sorted(cols) or list(range(len(result.columns)))


def splits_an_output(masks: np.ndarray, class_index: np.ndarray) -> np.ndarray:
    """Per question (row of ``masks`` over candidates): does it split some functional class?
    Such a question is about spelling: someone who means that output may answer either way.
    Counted per class with one ``np.add.reduceat`` over candidates sorted by class."""
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    if masks.shape[1] == 0:
        return np.zeros(masks.shape[0], dtype=bool)
    order = np.argsort(class_index, kind="stable")
    sorted_classes = np.asarray(class_index)[order]
    starts = np.flatnonzero(np.r_[True, np.diff(sorted_classes) != 0])
    sizes = np.diff(np.r_[starts, len(order)])
    yes = np.add.reduceat(masks[:, order].astype(np.int32), starts, axis=1)
    return ((yes > 0) & (yes < sizes[None, :])).any(axis=1)


def question_penalties(questions_features: list[tuple[Feature, ...]], masks: np.ndarray,
                       class_index: np.ndarray, questions: str) -> np.ndarray:
    """Extra expected questions charged to each question so the kinds a person can answer
    without knowing the answer come first: :data:`VALUE_PENALTY` for a value question and, in
    the ``mixed`` vocabulary, :data:`SPELLING_PENALTY` for a question naming a clause that
    splits an output. Zero everywhere for ``clauses`` (the paper's ranking is unchanged)."""
    pen = np.zeros(len(questions_features))
    if questions == "clauses" or not len(questions_features):
        return pen
    value = np.array([any(is_value(f) for f in fs) for fs in questions_features])
    pen += np.where(value, VALUE_PENALTY, 0.0)
    if questions == "mixed":  # a question naming any clause is answered from a spelling
        clause = np.array([not all(is_answer(f) for f in fs) for fs in questions_features])
        pen += np.where(clause & splits_an_output(masks, class_index), SPELLING_PENALTY, 0.0)
    return pen


def preferred(vocabulary: list[Feature], questions: str) -> np.ndarray | None:
    """Of several descriptions of one split, the ones to show: in ``mixed``, questions about
    the answer (a person answers them alike however they would spell the query)."""
    return np.array([is_answer(f) for f in vocabulary], dtype=bool) if questions == "mixed" \
        else None


def askable(vocabulary: list[Feature], questions: str) -> np.ndarray:
    """Which features of ``vocabulary`` a session with ``questions`` may ask about."""
    check_questions(questions)
    answer = np.array([is_answer(f) for f in vocabulary], dtype=bool)
    if questions == "clauses":
        return ~answer
    if questions == "outputs":
        return answer
    return np.ones(len(vocabulary), dtype=bool)


__all__ = ["ANSWER_KEYWORDS", "DEFAULT_QUESTIONS", "DEFAULT_VALUES", "QUESTIONS", "SPELLING_PENALTY",
           "VALUE_PENALTY", "AnswerContext", "DatabaseProfile", "answer_features", "answer_phrase",
           "answer_question",
           "excerpt_columns",
           "answer_keys", "answer_matrix", "askable", "check_questions", "column_type",
           "database_profile", "is_answer", "is_value", "preferred", "profile_of",
           "question_penalties",
           "splits_an_output", "value_text",
           "with_answers"]
