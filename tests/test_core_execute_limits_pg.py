"""Hard limits and least privilege on a real PostgreSQL server (tests/pg.py starts it)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from benchmarks.attacks import ATTACKS, INFO_ATTACKS, Attack, run_attack
from core.engine.dbrole import role_warnings
from core.engine.execute import open_database
from core.engine.taskbank import DatabaseSpec
from core.engine.workerpool import POOL
from tests.limits_helpers import assert_info_refused, assert_stopped, unchanged
from tests.pg import fetch, run_sql

pytestmark = pytest.mark.postgres
LIMIT_S = 1.0

ROOT = Path(__file__).resolve().parents[1]


def reader_sql(database: str) -> list[str]:
    """The README's statements for a read-only role (its ``sql`` block under "A read-only role
    for PostgreSQL task databases"), for ``database`` instead of ``films``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("**A read-only role for PostgreSQL task databases.**"):]
    block = section[section.index("```sql\n") + 7:section.index("```", section.index("```sql") + 6)]
    block = block.replace("DATABASE films", f"DATABASE {database}")
    return [s for s in block.split(";") if s.strip()]


def _content(url: str) -> tuple:
    """Rows of film and the number of advisory locks held on the server."""
    return (tuple(fetch(url, "SELECT * FROM film ORDER BY id")),
            fetch(url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")[0][0])


@pytest.mark.parametrize("attack", ATTACKS["postgres"], ids=lambda a: a.name)
def test_each_attack_stops_in_time_and_memory(film_pg, attack: Attack):
    same = unchanged(lambda: _content(film_pg))
    db = open_database(DatabaseSpec("url", film_pg), timeout_s=LIMIT_S)
    assert_stopped(run_attack(db, attack.sql), LIMIT_S, *attack.expected(LIMIT_S))
    assert db.execute("SELECT count(*) FROM film").rows == [(3,)]  # the handle still works
    db.close()
    same()


@pytest.mark.parametrize("sql", [
    "SELECT pg_read_file('/etc/passwd')", "SELECT * FROM pg_ls_dir('.')",
    "SELECT pg_terminate_backend({pid})", "SELECT pg_cancel_backend({pid})",
    "SELECT pg_advisory_lock(42)", "SELECT pg_try_advisory_lock(42)",
    "SELECT lo_import('/etc/passwd')", "SELECT * FROM dblink('x', 'SELECT 1') AS t(a int)",
    "SELECT set_config('transaction_read_only', 'off', true)", "SELECT pg_sleep(5)",
    "SELECT nextval('film_seq')", "SELECT pg_catalog.pg_read_file('/etc/passwd')",
])
def test_server_functions_are_refused_and_leave_no_trace(film_pg, sql):
    """As the superuser the tests connect with, the allow-list alone must stop these."""
    other = sa.create_engine(film_pg, poolclass=sa.pool.NullPool)
    with other.connect() as victim:
        pid = victim.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        same = unchanged(lambda: _content(film_pg))
        db = open_database(DatabaseSpec("url", film_pg), timeout_s=LIMIT_S)
        run = run_attack(db, sql.format(pid=pid))
        assert_stopped(run, LIMIT_S, "function")
        assert "allow-list" in run.result.error or "schema-qualified" in run.result.error
        db.close()
        assert victim.exec_driver_sql("SELECT 1").scalar_one() == 1  # not terminated
        same()
    other.dispose()


def test_server_information_and_catalogs_are_refused(film_pg):
    """version(), current_user, current_setting(), inet_server_addr(), pg_* catalogs,
    information_schema: each answers past the check on a real server, and the check refuses
    it with one error naming it (one database handle for the whole corpus: it is slow to open)."""
    db = open_database(DatabaseSpec("url", film_pg), timeout_s=LIMIT_S)
    for attack in INFO_ATTACKS["postgres"]:
        assert_info_refused(db, attack)
    assert db.execute("SELECT title FROM public.film WHERE id = 1").rows == [("Pulp Fiction",)]
    db.close()


@pytest.mark.parametrize(("sql", "stopped_by"), [
    ("INSERT INTO film VALUES (9, 'x', 2000)", "syntax error"),  # DECLARE CURSOR needs a query
    ("CREATE TABLE evil (a int)", "syntax error"),
    ("WITH d AS (DELETE FROM film RETURNING id) SELECT * FROM d", "data-modifying"),
    ("SELECT nextval('film_seq')", "read-only transaction"),
    ("SELECT pg_advisory_lock(42)", ""),  # runs: only the allow-list stops it (checked above)
])
def test_read_only_transaction_refuses_a_write_past_every_check(film_pg, sql, stopped_by):
    """Straight to the worker (no check_query): the cursor and READ ONLY transaction refuse."""
    run_sql(film_pg, "CREATE SEQUENCE film_seq")
    rows = _content(film_pg)[0]
    db = open_database(DatabaseSpec("url", film_pg))
    reply = POOL.run({"kind": "postgres", "target": db._target, "sql": sql, "timeout_s": 2.0,
                      "row_cap": 10, "max_bytes": 1000}, 5.0)
    if stopped_by:
        assert stopped_by in reply.get("error", ""), reply
    else:  # the lock was taken and is released when the worker's session ends
        assert reply.get("rows") == [("",)], reply
        POOL.shutdown()
        deadline = time.monotonic() + 10
        while _content(film_pg)[1] and time.monotonic() < deadline:
            time.sleep(0.05)
    db.close()
    assert _content(film_pg) == (rows, 0)


def test_role_warnings_for_superuser_writer_and_reader(film_pg):
    # the tests' own role is a superuser
    warnings = role_warnings(DatabaseSpec("url", film_pg))
    assert any("superuser" in w for w in warnings), warnings
    dbname = sa.engine.make_url(film_pg).database
    owner = sa.create_engine(film_pg)
    with owner.begin() as conn:
        for stmt in reader_sql(f'"{dbname}"'):
            conn.exec_driver_sql(stmt)
        conn.exec_driver_sql("CREATE ROLE studio_writer LOGIN")
        conn.exec_driver_sql("GRANT SELECT, INSERT ON film TO studio_writer")
    reader = sa.engine.make_url(film_pg).set(username="studio_reader").render_as_string(False)
    writer = sa.engine.make_url(film_pg).set(username="studio_writer").render_as_string(False)
    try:
        assert role_warnings(DatabaseSpec("url", reader)) == []
        writes = role_warnings(DatabaseSpec("url", writer))
        assert len(writes) == 1 and "can write or owns public.film" in writes[0]
        assert "read-only role" in writes[0]
        # the reader role cannot read server files even past the allow-list
        db = open_database(DatabaseSpec("url", reader))
        assert db.execute("SELECT count(*) FROM film").rows == [(3,)]
        reply = POOL.run({"kind": "postgres", "target": db._target, "timeout_s": 2.0,
                          "sql": "SELECT pg_read_file('/etc/passwd')", "row_cap": 10,
                          "max_bytes": 10000}, 5.0)
        assert "permission denied" in reply["error"], reply
        db.close()
    finally:
        with owner.begin() as conn:
            conn.exec_driver_sql("DROP OWNED BY studio_reader, studio_writer")
            conn.exec_driver_sql("DROP ROLE studio_reader")
            conn.exec_driver_sql("DROP ROLE studio_writer")
        owner.dispose()


def test_sqlite_databases_need_no_role_warning(tmp_path):
    assert role_warnings(DatabaseSpec("sqlite", str(tmp_path / "x.sqlite"))) == []


def test_setup_warns_about_a_superuser_task_database(film_pg, tmp_path):
    """The Setup page's warnings: a study whose bank points at PostgreSQL as a superuser."""
    import json
    import shutil
    from pathlib import Path

    from study.setup_pools import database_warnings
    from study.spec import load_study

    film = Path(__file__).resolve().parent.parent / "studies" / "film"
    lines = [json.loads(x) for x in (film / "tasks.jsonl").read_text().splitlines() if x.strip()]
    for line in lines:
        line["database"] = {"url": film_pg}
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    shutil.copy(film / "study-two-conditions.yaml", tmp_path / "study.yaml")
    warnings = database_warnings(load_study(tmp_path / "study.yaml"))
    assert len(warnings) == 1 and "superuser" in warnings[0] and "read-only role" in warnings[0]
    assert warnings[0].startswith("task film-")
