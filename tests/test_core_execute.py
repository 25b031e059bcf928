"""Safe execution: read-only, one query, a real time limit, a row cap, errors as data."""

from __future__ import annotations

import sqlite3
import time

import pytest

from core.engine.errors import DatabaseError, UnsafeQueryError
from core.engine.execute import (
    ExecutionResult,
    check_query,
    execute_candidates,
    materialise_dump,
    open_database,
)
from core.engine.taskbank import DatabaseSpec
from tests.conftest_core import FILM_DUMP, file_hash

REFUSED = [
    ("DROP TABLE film", "DROP"),
    ("INSERT INTO film VALUES (9, 'x', 2000, 'y')", "INSERT"),
    ("UPDATE film SET title = 'x'", "UPDATE"),
    ("DELETE FROM film", "DELETE"),
    ("CREATE TABLE evil(a INT)", "CREATE"),
    ("CREATE INDEX ix ON film(title)", "CREATE"),
    ("ATTACH DATABASE 'other.db' AS other", "ATTACH"),
    ("DETACH DATABASE other", "DETACH"),
    ("PRAGMA query_only = OFF", "PRAGMA"),
    ("PRAGMA journal_mode = WAL", "PRAGMA"),
    ("PRAGMA user_version = 7", "PRAGMA"),
    ("SELECT 1; SELECT 2", "2 statements"),
    ("SELECT * FROM film; DROP TABLE film", "2 statements"),
    ("WITH x AS (SELECT 1) DELETE FROM film", "DELETE"),
    ("SELECT * INTO copy FROM film", "INTO"),
    ("BEGIN", "TRANSACTION"),
    ("", "empty SQL"),
    ("SELECT (1", "does not parse"),
]


@pytest.fixture
def film_file(tmp_path):
    """A SQLite file database (not a dump), so byte identity can be checked."""
    path = tmp_path / "film.sqlite"
    con = sqlite3.connect(path)
    con.executescript(FILM_DUMP)
    con.commit()
    con.close()
    return path


@pytest.fixture
def film_db(film_file):
    db = open_database(DatabaseSpec("sqlite", str(film_file)), timeout_s=0.5)
    yield db
    db.close()


@pytest.mark.parametrize(("sql", "named"), REFUSED)
def test_check_query_refuses_and_names_what(sql, named):
    with pytest.raises(UnsafeQueryError) as info:
        check_query(sql)
    assert named in str(info.value)


@pytest.mark.parametrize("sql", [
    "SELECT title FROM film", "WITH a AS (SELECT 1 AS x) SELECT x FROM a",
    "SELECT 1 UNION SELECT 2", "SELECT 1 INTERSECT SELECT 1", "SELECT 1 EXCEPT SELECT 2",
    "SELECT title FROM film WHERE id IN (SELECT film_id FROM review)",
])
def test_check_query_allows_single_read_queries(sql):
    assert check_query(sql) is not None


def test_refused_statements_leave_the_file_byte_identical(film_db, film_file):
    before = file_hash(film_file)
    for sql, named in REFUSED:
        result = film_db.execute(sql)
        assert not result.ok and named in result.error, (sql, result.error)
        assert result.rows == [] and result.shape == (0, 0)
    assert file_hash(film_file) == before
    assert film_db.execute("SELECT COUNT(*) FROM film").rows == [(4,)]
    assert not (film_file.parent / "other.db").exists()


def test_connection_is_read_only_even_if_a_write_slips_through(film_db, film_file):
    """Bypass the allow-list: the engine's own connection still cannot write."""
    before = file_hash(film_file)
    with film_db._engine.connect() as conn:
        raw = conn.connection.driver_connection
        with pytest.raises(sqlite3.OperationalError):
            raw.execute("INSERT INTO film VALUES (9, 'x', 2000, 'y')")
        raw.execute("PRAGMA query_only = OFF")  # even without query_only, mode=ro holds
        for sql in ("INSERT INTO film VALUES (9, 'x', 2000, 'y')", "DROP TABLE review",
                    "CREATE TABLE evil(a INT)"):
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                raw.execute(sql)
    assert file_hash(film_file) == before


def test_dump_database_is_read_only_too(tmp_path, monkeypatch):
    monkeypatch.setenv("PLEASQLARIFY_CACHE_DIR", str(tmp_path))
    spec = DatabaseSpec("dump", FILM_DUMP)
    db = open_database(spec)
    path = materialise_dump(FILM_DUMP)
    before = file_hash(path)
    assert "DROP" in db.execute("DROP TABLE film").error
    with db._engine.connect() as conn, pytest.raises(sqlite3.OperationalError):
        conn.connection.driver_connection.execute("DELETE FROM film")
    assert file_hash(path) == before
    db.close()


def test_runaway_recursive_cte_is_stopped_by_the_time_limit(film_db):
    start = time.monotonic()
    result = film_db.execute(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c")
    elapsed = time.monotonic() - start
    assert not result.ok
    assert "time limit" in result.error and "0.5" in result.error
    assert elapsed < 5.0  # a safety net only: the limit is 0.5 s
    # the handle still works afterwards (the progress handler was removed)
    assert film_db.execute("SELECT COUNT(*) FROM review").rows == [(4,)]


def test_fast_query_is_not_cut_by_the_time_limit(film_db):
    result = film_db.execute(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
        "SELECT SUM(x) FROM c")
    assert result.ok and result.rows == [(500500,)]


@pytest.mark.parametrize(("cap", "n_rows", "truncated"), [(2, 2, True), (3, 3, True),
                                                          (4, 4, False), (10, 4, False)])
def test_row_cap_sets_truncated(film_file, cap, n_rows, truncated):
    db = open_database(DatabaseSpec("sqlite", str(film_file)), row_cap=cap)
    result = db.execute("SELECT id FROM film ORDER BY id")
    assert result.ok
    assert len(result.rows) == n_rows
    assert result.truncated is truncated
    assert result.rows == [(i,) for i in range(1, n_rows + 1)]
    db.close()


def test_failing_candidates_become_data_not_exceptions(film_db):
    sqls = ["SELECT title FROM film WHERE year < 1996 ORDER BY id", "SELECT nope FROM film",
            "SELECT * FROM missing_table", "SELEC title FROM film", "DROP TABLE film",
            "SELECT title FROM film WHERE id = 3"]
    results = execute_candidates(film_db, sqls)
    assert len(results) == len(sqls)
    assert [r.ok for r in results] == [True, False, False, False, False, True]
    assert results[0].columns == ["title"]
    assert results[0].rows == [("Pulp Fiction",), ("Heat",)]
    assert "nope" in results[1].error
    assert "missing_table" in results[2].error
    assert results[5].rows == [("Inception",)]
    assert all(isinstance(r, ExecutionResult) and r.elapsed_ms >= 0 for r in results)


def test_dump_materialises_once(tmp_path, monkeypatch):
    monkeypatch.setenv("PLEASQLARIFY_CACHE_DIR", str(tmp_path))
    first = materialise_dump(FILM_DUMP)
    mtime = first.stat().st_mtime_ns
    second = materialise_dump(FILM_DUMP)
    assert first == second and second.stat().st_mtime_ns == mtime
    assert first.parent.parent == tmp_path
    db1 = open_database(DatabaseSpec("dump", FILM_DUMP))
    db2 = open_database(DatabaseSpec("dump", FILM_DUMP))
    assert db1.execute("SELECT COUNT(*) FROM film").rows == [(4,)]
    assert db2.execute("SELECT COUNT(*) FROM film").rows == [(4,)]
    assert sorted(p.name for p in first.parent.iterdir()) == [first.name]  # no temp files left
    other = materialise_dump(FILM_DUMP + "\nINSERT INTO film VALUES (5, 'Up', 2009, 'kids');")
    assert other != first
    db1.close()
    db2.close()


def test_bad_dump_and_missing_file_raise_database_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PLEASQLARIFY_CACHE_DIR", str(tmp_path))
    with pytest.raises(DatabaseError, match="does not load"):
        open_database(DatabaseSpec("dump", "CREATE TABLE (broken"))
    assert not list((tmp_path / "databases").glob("*"))  # no half-written cache entry
    with pytest.raises(DatabaseError, match="does not exist"):
        open_database(DatabaseSpec("sqlite", str(tmp_path / "missing.sqlite")))


def test_schema_is_lower_cased_and_cells_normalised(tmp_path, monkeypatch):
    monkeypatch.setenv("PLEASQLARIFY_CACHE_DIR", str(tmp_path))
    dump = "CREATE TABLE Room(Id INT, Name TEXT, Price REAL, Blob BLOB);" \
           "INSERT INTO Room VALUES (1, 'Hall', 2.0, X'ABCD'), (2, 'Patio', 2.5, NULL);"
    db = open_database(DatabaseSpec("dump", dump))
    assert db.schema() == {"room": ["id", "name", "price", "blob"]}
    result = db.execute("SELECT Price, Blob FROM Room ORDER BY Id")
    assert result.rows == [(2, "abcd"), (2.5, None)]
    assert isinstance(result.rows[0][0], int)  # 2.0 -> 2, so 2 and 2.0 compare equal
    sample = db.sample_rows("Room", 1)
    assert sample.ok and len(sample.rows) == 1 and sample.columns == ["Id", "Name", "Price", "Blob"]
    assert "CREATE TABLE" in db.ddl()
    db.close()


def test_execution_result_round_trip():
    r = ExecutionResult(["a", "b"], [(1, "x"), (2, None)], None, True, 1.5)
    assert ExecutionResult.from_dict(r.to_dict()) == r
    assert r.shape == (2, 2) and r.ok
    e = ExecutionResult(error="boom")
    assert ExecutionResult.from_dict(e.to_dict()) == e
    assert not e.ok and e.shape == (0, 0)


def test_server_decimals_normalise_like_sqlite_reals():
    """PostgreSQL returns Decimal: 2.00 must become 2, like SQLite's REAL 2.0 does."""
    import decimal

    from core.engine.execute import _norm_row

    assert _norm_row((decimal.Decimal("2.00"), decimal.Decimal("2.5"), 3.0, b"\x01")) == (
        2, 2.5, 3, "01")
    assert isinstance(_norm_row((decimal.Decimal("2.00"),))[0], int)
