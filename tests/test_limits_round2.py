"""Issue #22, observations 1 and 2: the statement check is bounded before it reads the text, and
one hostile candidate fails alone (never its batch, its pool or the chat page)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.attacks import CHECK_ATTACKS, Attack, run_check
from core.engine.atoms import decompose, nested_parts
from core.engine.errors import UnsafeQueryError
from core.engine.execute import execute_candidates, open_database
from core.engine.features import extract_features
from core.engine.sqlguard import MAX_NESTING, MAX_SQL_CHARS, MAX_SQL_TOKENS, check_query
from core.engine.taskbank import DatabaseSpec
from core.generation.extract import normalise_sql
from core.planpool.llm_tools import datasource
from tests.conftest_core import FILM_DUMP
from tests.limits_helpers import finishes

# A hang detector, not a speed target (bench_limits prints the figures): b320bc6 needed ~14 s
# for the 20 K literal and ~47 s and 1.3 GB for the 2 MB of tokens.
HANG_S = 5.0

LITERAL_20K = "SELECT '" + "x" * 20_000 + "'"
DENSE_2MB = "SELECT 1" + "+1" * 1_000_000
NESTED_50 = "SELECT " + "(" * 50 + "1" + ")" * 50


def _finishes(fn: Callable[[], Any]) -> dict[str, Any]:
    return finishes(fn, HANG_S)


@pytest.fixture(scope="module")
def film_db():
    db = open_database(DatabaseSpec("dump", FILM_DUMP))
    yield db
    db.close()


def test_long_literal_is_checked_without_backtracking():
    """Observation 1: the function-name scan is linear; a 20 K literal passes at once."""
    box = _finishes(lambda: check_query(LITERAL_20K))
    assert "error" not in box, box.get("error")
    words = "SELECT '" + "ab" * 9_000 + "' AS " + "w" * 9_000
    assert "error" not in _finishes(lambda: check_query(words))


def test_oversized_sql_is_refused_by_length_first():
    """Observation 1: 2 MB of tokens is refused before parsing, the number in the error."""
    box = _finishes(lambda: check_query(DENSE_2MB))
    assert isinstance(box.get("error"), UnsafeQueryError), box
    assert f"{MAX_SQL_CHARS:,}" in str(box["error"]) and "2,000,008" in str(box["error"])


def test_token_dense_sql_under_the_length_is_refused_by_token_count():
    """Observation 1: under the length limit, a token count bounds the parser's tree."""
    sql = "SELECT 1" + "+1" * (MAX_SQL_CHARS // 2 - 10)
    box = _finishes(lambda: check_query(sql))
    assert isinstance(box.get("error"), UnsafeQueryError), box
    assert f"{MAX_SQL_TOKENS:,}" in str(box["error"])


@pytest.mark.parametrize("sql", [
    NESTED_50,
    "SELECT " + "CASE WHEN 1 THEN " * 50 + "1" + " END" * 50,
    "SELECT " + "NOT " * 900 + "1",  # no brackets: sqlglot's own recursion is caught
    "SELECT printf('%" + "9" * 5000 + "c', 'x')",  # int() of 5000 digits raised ValueError
], ids=["parentheses", "case", "not-chain", "printf-digits"])
def test_deep_or_odd_sql_is_a_refusal_not_an_exception(sql: str):
    """Observation 2: RecursionError (and ValueError) inside the check become refusals."""
    box = _finishes(lambda: check_query(sql))
    assert isinstance(box.get("error"), UnsafeQueryError), box


def test_nesting_error_names_the_bound():
    with pytest.raises(UnsafeQueryError, match=f"50 deep; at most {MAX_NESTING}"):
        check_query(NESTED_50)
    check_query("SELECT " + "(" * MAX_NESTING + "1" + ")" * MAX_NESTING)


def test_one_deep_candidate_fails_alone_in_its_batch(film_db):
    """Observation 2: execute_candidates gives the nested one its error, the others run."""
    results = execute_candidates(film_db, ["SELECT 1", NESTED_50, "SELECT 2", DENSE_2MB,
                                           LITERAL_20K])
    assert [r.ok for r in results] == [True, False, True, False, True]
    assert results[0].rows == [(1,)] and results[2].rows == [(2,)]
    assert "deep" in results[1].error and "characters" in results[3].error
    assert results[4].rows == [("x" * 20_000,)]


def test_chat_tool_call_with_deep_sql_is_a_tool_error(film_db):
    """Observation 2: the LLM chat's run_sql returns the refusal as the tool's text (the chat
    condition showed ``EXCEPTION RecursionError``)."""
    text = datasource("run_sql", {"sql": NESTED_50}, film_db)
    assert text.startswith("error:") and "deep" in text
    text = datasource("run_sql", {"sql": "SELECT '" + "x" * 30_000 + "'"}, film_db)
    assert text.startswith("columns:")


@pytest.mark.parametrize("sql", [NESTED_50, DENSE_2MB, "SELECT " + "NOT " * 900 + "1"],
                         ids=["nested", "dense", "not-chain"])
def test_feature_and_atom_readers_skip_a_hostile_candidate(sql: str):
    """Observation 2: the readers that parse pool candidates (features, clause atoms, the
    sampler's dedupe key) treat a hostile one as unreadable instead of raising."""
    box = _finishes(lambda: extract_features(sql))
    assert isinstance(box.get("error"), sqlglot.errors.ParseError), box
    assert _finishes(lambda: decompose(sql, "sqlite", {})) == {"value": None}
    assert _finishes(lambda: nested_parts(sql, "sqlite", {})) == {"value": []}
    assert isinstance(_finishes(lambda: normalise_sql(sql)).get("value"), str)


@pytest.mark.parametrize("attack", CHECK_ATTACKS, ids=lambda a: a.name)
def test_each_input_of_the_check_benchmark_is_decided_as_it_expects(attack: Attack):
    """bench_limits prints these rows; here each must get the decision its row names."""
    run = _finishes(lambda: run_check(attack.sql))["value"]
    assert all(w in (run.error or "") for w in attack.words), run.error
    assert (run.error is None) == (not attack.words)


def test_a_hostile_candidate_in_a_bank_does_not_stop_its_pool():
    """Pool preparation (execution, features, clause atoms) keeps going past hostile SQL."""
    from tests.conftest_core import make_pool

    pool = make_pool(["SELECT title FROM film", NESTED_50, DENSE_2MB,
                      "SELECT title, year FROM film"])
    assert [r.ok for r in pool.results] == [True, False, False, True]
    assert not pool.x[1].any() and not pool.x[2].any() and pool.x[0].any()


# Call-like text where no call is: a title, a LIKE pattern, a comment, an alias. Each must be
# accepted (the name scan reads sqlglot's tokens, not the text), while the same names written
# as calls stay refused.
CALL_TEXT = [
    ("sqlite", "SELECT title FROM film WHERE title = 'version()'"),
    ("sqlite", "SELECT title FROM film WHERE title LIKE '%pg_catalog%' OR title = 'pg_sleep(1)'"),
    ("sqlite", "SELECT title FROM film WHERE title <> 'sqlite_version() load_extension(x)'"),
    ("sqlite", "SELECT title AS \"pg_read_file(\" FROM film -- current_setting('x')\n"),
    ("postgres", "SELECT title FROM film WHERE title = E'current_setting(''port'')'"),
    ("postgres", "SELECT title FROM film /* inet_server_addr() */ WHERE title = $$version()$$"),
]


@pytest.mark.parametrize(("dialect", "sql"), CALL_TEXT)
def test_call_names_inside_literals_and_comments_are_text(film_db, dialect: str,
                                                          sql: str) -> None:
    """A candidate that only *mentions* a server function (in a string or a comment) is not
    refused; on SQLite it runs, so the former refusal was of a valid query."""
    check_query(sql, dialect)
    if dialect == "sqlite":
        assert film_db.execute(sql).ok


@pytest.mark.parametrize(("dialect", "sql"), [
    ("sqlite", "SELECT title FROM film WHERE title = version()"),
    ("sqlite", 'SELECT "pg_sleep"(1) FROM film'),
    ("sqlite", "SELECT [load_extension]('x') FROM film"),
    ("postgres", "SELECT current_setting /* a comment */ ('port')"),
    ("postgres", "SELECT title FROM film WHERE title = E'x' || inet_server_addr()::text"),
])
def test_the_same_names_written_as_calls_stay_refused(dialect: str, sql: str) -> None:
    with pytest.raises(UnsafeQueryError, match="refused|not on the allow-list"):
        check_query(sql, dialect)


_CALLS = ["version()", "pg_sleep(1)", "current_setting(''port'')", "sqlite_version()",
          "load_extension(x)", "pg_read_file(f)", "-- ", "/* ", "*/", "\"", "(", "x"]


@settings(max_examples=40, deadline=1000, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from(_CALLS), min_size=1, max_size=12),
       times=st.one_of(st.integers(1, 50), st.integers(1_000, 60_000)))
def test_a_literal_is_never_read_as_calls_and_never_holds_the_check(parts: list[str],
                                                                     times: int) -> None:
    """Any literal — call names, comment and quote marks, up to ~1 MB — is accepted while the
    text is within MAX_SQL_CHARS and refused by its length above it, within the deadline
    (the check runs in the app process: a long input must not freeze it)."""
    sql = "SELECT title FROM film WHERE title = '" + " ".join(parts) * times + "'"
    if len(sql) > MAX_SQL_CHARS:
        with pytest.raises(UnsafeQueryError, match="characters long"):
            check_query(sql)
    else:
        check_query(sql)
