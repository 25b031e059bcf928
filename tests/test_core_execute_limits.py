"""Hard limits on SQLite: every attack of issue #12 is stopped in time, in memory, read-only."""

from __future__ import annotations

import sqlite3
import time
import urllib.parse

import pytest

from benchmarks.attacks import ATTACKS, INFO_ATTACKS, Attack, run_attack
from core.engine.errors import DatabaseError
from core.engine.execute import open_database, sqlite_uri
from core.engine.sqlguard import check_query
from core.engine.taskbank import DatabaseSpec
from core.engine.workerpool import KILL_GRACE_S, POOL, WorkerTimeout
from tests.conftest_core import FILM_DUMP, file_hash
from tests.limits_helpers import STOP_MARGIN_S, assert_info_refused, assert_stopped, unchanged

LIMIT_S = 1.0

def _write_film(path) -> None:
    con = sqlite3.connect(path)
    con.executescript(FILM_DUMP)
    con.commit()
    con.close()


@pytest.fixture
def film_file(tmp_path):
    path = tmp_path / "film.sqlite"
    _write_film(path)
    return path


@pytest.mark.parametrize("attack", ATTACKS["sqlite"], ids=lambda a: a.name)
def test_each_attack_stops_in_time_and_memory(film_file, attack: Attack):
    same = unchanged(lambda: file_hash(film_file))
    db = open_database(DatabaseSpec("sqlite", str(film_file)), timeout_s=LIMIT_S)
    assert_stopped(run_attack(db, attack.sql), LIMIT_S, *attack.expected(LIMIT_S))
    assert db.execute("SELECT count(*) FROM film").rows == [(4,)]  # the handle still works
    db.close()
    same()


def test_uninterruptible_step_is_killed_from_outside(film_file):
    """printf's padding loop ignores interrupts: the outer deadline kills the worker.

    Under the worker's memory limit the loop itself ends (NULL, out of memory) after about
    1.3 s on the 2-core machine, so a 1 s limit raced it (the outer deadline is 1.3 s): the
    limit here is 0.2 s, its outer deadline 0.5 s, well before the loop could end by itself.
    """
    limit_s = 0.2
    db = open_database(DatabaseSpec("sqlite", str(film_file)), timeout_s=LIMIT_S)
    assert db.execute("SELECT 1").ok
    request = {"kind": "sqlite", "target": db._target, "sql": "SELECT printf('%.*c', 900000000, "
               "'x')", "timeout_s": limit_s, "row_cap": 10, "max_bytes": 1_000_000}
    start = time.monotonic()
    with pytest.raises(WorkerTimeout):
        POOL.run(request, limit_s + KILL_GRACE_S)  # past check_query on purpose
    assert time.monotonic() - start < limit_s + STOP_MARGIN_S
    assert db.execute("SELECT count(*) FROM film").rows == [(4,)]  # a fresh worker answers
    db.close()


def test_blobs_are_not_doubled(film_file):
    db = open_database(DatabaseSpec("sqlite", str(film_file)))
    small, big = db.execute("SELECT X'ABCD', zeroblob(5000000)").rows[0]
    assert small == "abcd"
    assert big.startswith("<blob 5000000 bytes sha256 ") and len(big) < 60
    db.close()


@pytest.mark.parametrize("sql", [
    "ATTACH DATABASE 'other.db' AS other", "PRAGMA query_only = OFF",
    "INSERT INTO film VALUES (9, 'x', 2000, 'y')", "SELECT load_extension('x')",
    "CREATE TABLE evil(a)", "BEGIN IMMEDIATE"])
def test_worker_authorizer_refuses_what_slips_past_the_check(film_file, sql):
    """Bypass check_query: the worker's connection refuses writes, ATTACH, PRAGMA, extensions."""
    same = unchanged(lambda: file_hash(film_file))
    db = open_database(DatabaseSpec("sqlite", str(film_file)))
    reply = POOL.run({"kind": "sqlite", "target": db._target, "sql": sql, "timeout_s": 1.0,
                      "row_cap": 10, "max_bytes": 1000}, 5.0)
    assert "not authorized" in reply["error"] or "readonly" in reply["error"], reply
    db.close()
    same()
    assert not (film_file.parent / "other.db").exists()


def test_sqlite_url_takes_the_read_only_path(film_file):
    same = unchanged(lambda: file_hash(film_file))
    db = open_database(DatabaseSpec("url", f"sqlite:///{film_file}"))
    assert db.dialect == "sqlite" and db.path == film_file.resolve()
    assert db.execute("SELECT count(*) FROM film").rows == [(4,)]
    assert "INSERT" in db.execute("INSERT INTO film VALUES (9, 'x', 2000, 'y')").error
    with db._engine.connect() as conn, pytest.raises(sqlite3.OperationalError, match="readonly"):
        raw = conn.connection.driver_connection
        raw.execute("PRAGMA query_only = OFF")
        raw.execute("DELETE FROM film")
    db.close()
    same()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_sqlite_url_without_a_file_is_refused(url):
    with pytest.raises(DatabaseError, match="names no file"):
        open_database(DatabaseSpec("url", url))


@pytest.mark.parametrize("url", ["mysql+pymysql://u@127.0.0.1/db", "mssql+pyodbc://h/db",
                                 "duckdb:///x.db"])
def test_other_dialects_are_refused_with_the_reason(url):
    with pytest.raises(DatabaseError, match="refused.*read-only with a hard time limit"):
        open_database(DatabaseSpec("url", url))


@pytest.mark.parametrize("char", ["#", "?", "%", " ", "%20", "&mode=rw"])
def test_path_with_special_characters_opens_that_file_read_only(tmp_path, char):
    folder = tmp_path / f"dir{char}x"
    folder.mkdir()
    path = folder / f"film{char}1.sqlite"
    _write_film(path)
    before_files = sorted(p.name for p in tmp_path.rglob("*"))
    same = unchanged(lambda: file_hash(path))
    url = f"sqlite:///{urllib.parse.quote(str(path))}"  # a URL's own syntax needs the quoting
    for spec in (DatabaseSpec("sqlite", str(path)), DatabaseSpec("url", url)):
        db = open_database(spec)
        assert db.execute("SELECT count(*) FROM film").rows == [(4,)], sqlite_uri(db.path)
        with db._engine.connect() as conn:
            raw = conn.connection.driver_connection
            assert raw.execute("SELECT count(*) FROM review").fetchone() == (4,)
            raw.execute("PRAGMA query_only = OFF")
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                raw.execute("DELETE FROM film")
        db.close()
    assert sorted(p.name for p in tmp_path.rglob("*")) == before_files  # no stray file opened
    same()


REFUSED_FUNCTIONS = [
    "SELECT pg_read_file('/etc/passwd')", "SELECT * FROM pg_ls_dir('.')",
    "SELECT pg_terminate_backend(1)", "SELECT pg_advisory_lock(1)",
    "SELECT lo_import('/etc/passwd')", "SELECT * FROM dblink('host=x', 'SELECT 1') AS t(a int)",
    "SELECT load_extension('/tmp/x.so')", "SELECT pg_sleep(10)", "SELECT nextval('s')",
    "SELECT set_config('transaction_read_only', 'off', true)",
    "SELECT pg_catalog.pg_read_file('x')", 'SELECT "pg_read_file"(\'x\')',
    "SELECT pg_catalog.upper('x')", "SELECT fts3_tokenizer('simple')",
    "SELECT query_to_xml('SELECT 1', true, true, '')", "SELECT txid_current()",
    "SELECT title FROM film WHERE pg_sleep(1) IS NULL",
]


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
@pytest.mark.parametrize("sql", REFUSED_FUNCTIONS)
def test_functions_outside_the_allow_list_are_refused(sql, dialect):
    with pytest.raises(Exception, match="not on the allow-list|schema-qualified") as info:
        check_query(sql, dialect)
    assert type(info.value).__name__ == "UnsafeQueryError"


@pytest.mark.parametrize("sql", REFUSED_FUNCTIONS)
def test_refused_functions_never_reach_the_file(film_file, sql):
    same = unchanged(lambda: file_hash(film_file))
    db = open_database(DatabaseSpec("sqlite", str(film_file)), timeout_s=LIMIT_S)
    assert_stopped(run_attack(db, sql), LIMIT_S, "function")
    db.close()
    same()


@pytest.mark.parametrize("sql", [
    "SELECT upper(title), lower(genre), length(title), substr(title, 1, 3) FROM film",
    "SELECT count(*), sum(year), avg(year), min(year), max(year), total(year) FROM film",
    "SELECT group_concat(title, ', '), coalesce(NULL, 1), ifnull(NULL, 2), nullif(1, 1) FROM film",
    "SELECT julianday('2024-01-02') - julianday('2024-01-01'), strftime('%Y', '2024-05-01')",
    "SELECT printf('%.2f', 3.14159), round(2.567, 1), abs(-3), instr('abc', 'b')",
    "SELECT title, rank() OVER (ORDER BY year) FROM film",
    "SELECT CASE WHEN year > 1995 THEN 'late' ELSE 'early' END, CAST(year AS TEXT) FROM film",
    "SELECT replace(title, ' ', '_'), trim(' x '), typeof(year), hex('a') FROM film",
])
def test_common_pure_functions_run(film_file, sql):
    db = open_database(DatabaseSpec("sqlite", str(film_file)))
    res = db.execute(sql)
    assert res.ok, res.error
    assert res.rows
    db.close()


def test_a_batch_keeps_going_past_a_killed_worker(film_file):
    """One streamed request per pool: a query that kills its worker fails alone, in time.

    The padding loop ends by itself after about 1.3 s in a worker (see the test above), so at
    a 1 s limit the worker's own reply could win the race with the outer deadline: the batch's
    limit is 0.2 s, its outer deadline 0.5 s.
    """
    limit_s = 0.2
    db = open_database(DatabaseSpec("sqlite", str(film_file)), timeout_s=LIMIT_S)
    sqls = ["SELECT count(*) FROM film", "SELECT printf('%.*c', 900000000, 'x')",
            "SELECT count(*) FROM review"]
    start = time.monotonic()
    request = {**db._request(), "timeout_s": limit_s}
    out = POOL.run_many(request, sqls, limit_s + KILL_GRACE_S)  # past check_query
    assert time.monotonic() - start < limit_s + STOP_MARGIN_S + 5.0  # + a new worker's start
    assert out[0]["rows"] == [(4,)] and isinstance(out[1], WorkerTimeout)
    assert out[2]["rows"] == [(4,)]
    mixed = db.execute_many([
        "SELECT title FROM film WHERE id = 1", "DROP TABLE film",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        "SELECT nope FROM film", "SELECT count(*) FROM film"])
    assert [r.ok for r in mixed] == [True, False, False, False, True]
    assert "DROP" in mixed[1].error and "time limit" in mixed[2].error
    assert mixed[0].rows == [("Pulp Fiction",)] and mixed[4].rows == [(4,)]
    db.close()


def test_concurrent_queries_share_the_pool_correctly(film_file):
    """Threads (one Streamlit session each) get their own worker; a runaway blocks no one."""
    from concurrent.futures import ThreadPoolExecutor

    db = open_database(DatabaseSpec("sqlite", str(film_file)), timeout_s=LIMIT_S)
    sqls = ["WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) "
            "FROM c"] + [f"SELECT count(*) + {i} FROM film" for i in range(11)]
    with ThreadPoolExecutor(6) as ex:
        results = list(ex.map(db.execute, sqls))
    assert "time limit" in results[0].error
    assert [r.rows for r in results[1:]] == [[(4 + i,)] for i in range(11)]
    assert len(POOL.pids()) <= POOL.max_workers
    db.close()


@pytest.mark.parametrize("attack", INFO_ATTACKS["sqlite"], ids=lambda a: a.name)
def test_server_information_and_catalogs_are_refused(film_file, attack: Attack):
    """sqlite_version(), sqlite_master, pragma_* functions: each would answer past the check,
    and the check refuses it: candidates read only the task's own tables."""
    db = open_database(DatabaseSpec("sqlite", str(film_file)), timeout_s=LIMIT_S)
    assert_info_refused(db, attack)
    assert db.execute("SELECT title FROM main.film WHERE id = 1").ok  # own tables still read
    db.close()
