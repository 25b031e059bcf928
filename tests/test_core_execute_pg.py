"""Safe execution against a real PostgreSQL task database (server started by tests/pg.py)."""

from __future__ import annotations

import time

import pytest

from core.engine.execute import open_database
from core.engine.pool import prepare_pool
from core.engine.session import RepairSession
from core.engine.taskbank import Candidate, DatabaseSpec, Task
from core.evaluation.simulate import SimulatedUser
from tests.pg import fetch, run_sql

pytestmark = pytest.mark.postgres


def _count(url: str) -> int:
    return int(fetch(url, "SELECT count(*) FROM film")[0][0])


def test_select_runs_and_values_are_normalised(film_pg):
    db = open_database(DatabaseSpec("url", film_pg))
    assert db.dialect == "postgres"
    res = db.execute("SELECT title, score FROM film WHERE year < 1996 ORDER BY id")
    assert res.ok, res.error
    assert res.rows == [("Pulp Fiction", 8.9), ("Heat", 8.3)]
    assert db.schema()["film"] == ["id", "title", "year", "score"]
    db.close()


@pytest.mark.parametrize("sql", [
    "DROP TABLE film",
    "DELETE FROM film",
    "INSERT INTO film VALUES (9, 'x', 2000, 1)",
    "WITH gone AS (DELETE FROM film RETURNING id) SELECT * FROM gone",
    "SELECT 1; DROP TABLE film",
])
def test_writes_are_refused_and_nothing_changes(film_pg, sql):
    db = open_database(DatabaseSpec("url", film_pg))
    res = db.execute(sql)
    assert not res.ok
    db.close()
    assert _count(film_pg) == 3


def test_sequence_write_inside_a_select_is_refused(film_pg):
    """nextval() writes inside a SELECT: the function allow-list refuses it, and past the
    allow-list the READ ONLY transaction does (test_core_execute_limits_pg)."""
    db = open_database(DatabaseSpec("url", film_pg))
    run_sql(film_pg, "CREATE SEQUENCE s")
    res = db.execute("SELECT nextval('s')")
    assert not res.ok and "nextval() is not on the allow-list" in res.error
    db.close()
    assert fetch(film_pg, "SELECT last_value, is_called FROM s") == [(1, False)]


def test_runaway_query_is_stopped_by_statement_timeout(film_pg):
    db = open_database(DatabaseSpec("url", film_pg), timeout_s=0.5)
    start = time.monotonic()
    res = db.execute("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
                     "SELECT count(*) FROM r")
    assert not res.ok and "time limit" in res.error
    assert time.monotonic() - start < 10
    db.close()


def test_row_cap_and_a_repair_session_on_postgres(film_pg):
    db = open_database(DatabaseSpec("url", film_pg), row_cap=2)
    res = db.execute("SELECT * FROM film")
    assert res.truncated and len(res.rows) == 2
    db.close()
    task = Task(id="pg", question="Which films?", database=DatabaseSpec("url", film_pg),
                gold=["SELECT title FROM film"],
                candidates=[Candidate("SELECT title FROM film", 3),
                            Candidate("SELECT title, year FROM film", 2),
                            Candidate("SELECT nope FROM film", 1)])
    pool = prepare_pool(task, layout=False)
    assert pool.valid.tolist() == [True, True, False]
    session = RepairSession(pool)
    user = SimulatedUser(session, 0)
    while not session.is_done and (variable := session.next_variable()) is not None:
        session.answer(variable.keys, user.answer(variable))
    assert session.is_done and user.succeeded()
    assert [pool.sqls[i] for i in session.survivors] == ["SELECT title FROM film"]
