"""Safe execution against a real PostgreSQL task database (server started by tests/pg.py)."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from core.engine.execute import open_database
from core.engine.pool import prepare_pool
from core.engine.session import RepairSession
from core.engine.taskbank import Candidate, DatabaseSpec, Task
from core.evaluation.simulate import SimulatedUser

pytestmark = pytest.mark.postgres


@pytest.fixture
def film_pg(pg_url: str) -> str:
    """A PostgreSQL database with a small film table (written by an owner connection)."""
    engine = sa.create_engine(pg_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE film (id int PRIMARY KEY, title text, year int, "
                             "score numeric(4,2))")
        conn.exec_driver_sql("INSERT INTO film VALUES (1, 'Pulp Fiction', 1994, 8.90), "
                             "(2, 'Jackie Brown', 1997, 7.50), (3, 'Heat', 1995, 8.30)")
    engine.dispose()
    return pg_url


def _count(url: str) -> int:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        n = conn.exec_driver_sql("SELECT count(*) FROM film").scalar_one()
    engine.dispose()
    return int(n)


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
    with sa.create_engine(film_pg).begin() as conn:
        conn.exec_driver_sql("CREATE SEQUENCE s")
    res = db.execute("SELECT nextval('s')")
    assert not res.ok and "nextval() is not on the allow-list" in res.error
    db.close()
    with sa.create_engine(film_pg).connect() as conn:
        assert conn.exec_driver_sql("SELECT last_value, is_called FROM s").one() == (1, False)


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
