"""A number beside a numeric column is one feature however it is spelled, and only where
SQLite gives the same rows: property tests executing every spelling on real SQLite, and the
real AMBROSIA val task whose gold spells ``population < '10000'``."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.engine.features import extract_features, numeric_columns
from core.engine.pool import prepare_pool
from core.engine.taskbank import load_tasks
from tests.conftest_core import VAL_BANK

DDL = ("CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, n NUMERIC, b BOOLEAN, "
       "d DATE, s TEXT, x)")
COLUMNS = ("i", "r", "n", "b", "d", "s", "x")
SCHEMA = {"t": ["id", *COLUMNS]}
NUMERIC = numeric_columns(DDL)
OPS = ("=", "<>", "<", "<=", ">", ">=")

# the numbers the literals name, stored as numbers and as texts spelled several ways
CELLS = st.sampled_from([None, 0, 1, 5, 10, -3, 2.5, 5.0, 0.5, "5", "5.0", "10", "2.5", "2.50",
                         "abc", "", "-3", "1", "1.0", "0"])


def _spellings(value: int | str) -> list[str]:
    """Ways to write one number in SQL: as a number, as text, with a trailing zero."""
    if isinstance(value, str):  # a decimal such as 2.5
        return [value, f"'{value}'", f"{value}0", f"'{value}0'"]
    out = [str(value), f"'{value}'", f"{value}.0", f"'{value}.0'"]
    if value in (0, 1):
        out += ["TRUE" if value else "FALSE"]
    return out


def _where(sql: str) -> str:
    return next(f.key for f in extract_features(sql, "sqlite", SCHEMA, numeric=NUMERIC)
                if f.keyword == "WHERE")


CHECK = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@CHECK
@given(rows=st.lists(st.tuples(*[CELLS] * len(COLUMNS)), min_size=1, max_size=8),
       column=st.sampled_from(COLUMNS), op=st.sampled_from(OPS),
       value=st.sampled_from([0, 1, 5, 10, -3, "2.5", "0.5"]))
def test_one_where_feature_means_one_answer(rows, column, op, value):
    """Any two spellings that get the same WHERE feature return the same rows in SQLite, and
    beside a numeric column every spelling gets one feature (so the rewrite happens)."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute(DDL)
        con.executemany(f"INSERT INTO t ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * 7)})",
                        rows)
        by_feature: dict[str, list[tuple[str, list]]] = {}
        for literal in _spellings(value):
            sql = f"SELECT id FROM t WHERE {column} {op} {literal}"
            answer = sorted(con.execute(sql).fetchall())
            by_feature.setdefault(_where(sql), []).append((sql, answer))
    finally:
        con.close()
    for feature, queries in by_feature.items():
        first_sql, first = queries[0]
        for sql, answer in queries[1:]:
            assert answer == first, (feature, first_sql, sql)
    if column in NUMERIC["t"]:
        assert len(by_feature) == 1, sorted(by_feature)


def test_numeric_columns_follow_declared_types():
    """Numeric types (and SQLite's BOOLEAN) count; text, dates, BLOB and untyped do not."""
    assert NUMERIC == {"t": ["b", "i", "id", "n", "r"]}
    assert numeric_columns("CREATE TABLE t (b BOOLEAN, i INT)", "postgres") == {"t": ["i"]}
    assert numeric_columns("not sql at all (") == {}


def test_text_column_keeps_spellings_apart():
    """Beside a text column ``'5.0'`` and ``5`` are different rows in SQLite: two features."""
    assert _where("SELECT id FROM t WHERE s = '5.0'") != _where("SELECT id FROM t WHERE s = 5")


def test_val_gold_with_quoted_number_shares_the_pools_feature():
    """AMBROSIA val: a gold writes ``population < '10000'``, the candidates ``< 10000``; the
    honest user's answer to the candidates' WHERE is now Yes for every gold of the task."""
    task = next(t for t in load_tasks(VAL_BANK) if any(
        "< '10000'" in g for g in t.gold) and "neighborhood" in t.gold[0].lower())
    pool = prepare_pool(task, layout=False)
    wheres = {f.key for f in pool.vocabulary if f.keyword == "WHERE"}
    for gold in task.gold:
        own = {f.key for f in pool.features_of(gold) if f.keyword == "WHERE"}
        assert own and own <= wheres, (gold, own, wheres)
