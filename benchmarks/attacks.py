"""The attacks the hard execution limits must stop, and how one is measured.

One list per dialect, shared by the limit tests (which assert each is stopped in time and memory)
and ``python -m benchmarks.limits`` (which prints the same measurements).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from core.engine.execute import ExecutionResult, TaskDatabase
from core.engine.workerpool import POOL, reset_peak, status_mb


@dataclass(frozen=True)
class Attack:
    """A query that would run away; ``words`` must appear in its error ({limit} = the limit)."""

    name: str
    sql: str
    words: tuple[str, ...] = ()
    behind: str = ""  # INFO_ATTACKS: what the worker answers past the check ("" = it runs)

    def expected(self, limit_s: float) -> tuple[str, ...]:
        """The words its error must contain under a ``limit_s`` time limit."""
        return tuple(w.format(limit=f"{limit_s:g}") for w in self.words)


_COUNT = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
_TIME = ("{limit} s time limit",)

ATTACKS: dict[str, tuple[Attack, ...]] = {
    "sqlite": (
        Attack("randomblob 1e9", "SELECT randomblob(1000000000)", ("size limit",)),
        Attack("printf %.*c 9e8", "SELECT printf('%.*c', 900000000, 'x')",
               ("printf()", "not '*'")),
        Attack("printf %9e8c", "SELECT printf('%900000000c', 'x')", ("printf()",)),
        Attack("recursive doubling", "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s "
               "FROM r) SELECT max(length(s)) FROM r", ("stopped",)),  # size, memory or time
        Attack("recursive count", _COUNT, _TIME),
        Attack("recursive UNION count", _COUNT.replace("UNION ALL", "UNION"), _TIME),
        Attack("many big rows", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
               "WHERE x < 100) SELECT randomblob(9000000), randomblob(9000000) FROM c",
               ("stopped",)),
        Attack("zeroblob 9e8", "SELECT zeroblob(900000000)", ("size limit",)),
    ),
    "postgres": (
        Attack("repeat 9e8", "SELECT repeat('x', 900000000)"),
        Attack("repeat 2e8", "SELECT repeat('x', 200000000)"),  # reaches the memory limit
        Attack("lpad 9e8", "SELECT lpad('x', 900000000, 'x')"),
        Attack("format %9e8s", "SELECT format('%900000000s', 'x')"),
        Attack("recursive doubling", "WITH RECURSIVE r(s) AS (SELECT 'x'::text UNION ALL "
               "SELECT s || s FROM r) SELECT max(length(s)) FROM r"),
        Attack("recursive count", _COUNT, _TIME),
        Attack("generate_series rows",
               "SELECT g, repeat('x', 1000) FROM generate_series(1, 100000000) g"),
        Attack("many big rows", "SELECT repeat('x', 9000000), repeat('y', 9000000) "
               "FROM generate_series(1, 100)", ("stopped",)),
    ),
}


# Candidates that read the server instead of the task's data (issue: leftovers 2): versions,
# accounts, settings, addresses and system catalogs. Each must be refused by the statement
# check, with an error holding ``words``; run past the check (straight to the worker) each one
# answers (or gets ``behind``, the worker's own terse refusal), which the tests check first, so
# a refusal is never vacuous.
_ONLY_OWN = "only read the task database's own tables"
_AUTHORIZER = "not authorized"  # the worker's SQLite authorizer refuses PRAGMA, tersely
INFO_ATTACKS: dict[str, tuple[Attack, ...]] = {
    "sqlite": (
        Attack("sqlite_version()", "SELECT sqlite_version()", ("SQLITE_VERSION()", _ONLY_OWN)),
        Attack("sqlite_source_id()", "SELECT sqlite_source_id()", ("sqlite_source_id()",)),
        Attack("compile options", "SELECT sqlite_compileoption_get(0)",
               ("sqlite_compileoption_get()",)),
        Attack("sqlite_master", "SELECT sql FROM sqlite_master", ("'sqlite_master'", _ONLY_OWN)),
        Attack("sqlite_schema", "SELECT name FROM sqlite_schema", ("'sqlite_schema'",)),
        Attack("main.sqlite_master", "SELECT name FROM main.sqlite_master",
               ("'main.sqlite_master'",)),
        Attack("quoted sqlite_master", 'SELECT name FROM "sqlite_master"', ("sqlite_master",)),
        Attack("sqlite_temp_master", "SELECT name FROM sqlite_temp_master",
               ("'sqlite_temp_master'",)),
        Attack("sqlite_master in a subquery", "SELECT title FROM film WHERE title IN "
               "(SELECT name FROM sqlite_master)", ("'sqlite_master'",)),
        Attack("pragma_table_info()", "SELECT name FROM pragma_table_info('film')",
               ("pragma_table_info()", _ONLY_OWN), _AUTHORIZER),
        Attack("pragma_database_list", "SELECT file FROM pragma_database_list",
               ("'pragma_database_list'",), _AUTHORIZER),
        Attack("pragma_compile_options()", "SELECT * FROM pragma_compile_options()",
               ("pragma_compile_options()",), _AUTHORIZER),
        Attack("temp schema", "SELECT name FROM temp.sqlite_master", ("temp.sqlite_master",)),
    ),
    "postgres": (
        Attack("version()", "SELECT version()", ("VERSION()", _ONLY_OWN)),
        Attack("current_user", "SELECT current_user", ("CURRENT_USER", _ONLY_OWN)),
        Attack("session_user", "SELECT session_user", ("SESSION_USER",)),
        Attack("bare user", "SELECT user", ("user is refused",)),
        Attack("current_role", "SELECT current_role", ("current_role",)),
        Attack("current_database()", "SELECT current_database()", ("CURRENT_DATABASE()",)),
        Attack("current_schema", "SELECT current_schema", ("CURRENT_SCHEMA",)),
        Attack("current_catalog", "SELECT current_catalog", ("CURRENT_CATALOG",)),
        Attack("current_setting()", "SELECT current_setting('data_directory')",
               ("current_setting()", _ONLY_OWN)),
        Attack("inet_server_addr()", "SELECT inet_server_addr()", ("inet_server_addr()",)),
        Attack("inet_server_port()", "SELECT inet_server_port()", ("inet_server_port()",)),
        Attack("inet_client_addr()", "SELECT inet_client_addr()", ("inet_client_addr()",)),
        Attack("has_table_privilege()", "SELECT has_table_privilege('film', 'SELECT')",
               ("has_table_privilege()",)),
        Attack("pg_roles", "SELECT rolname FROM pg_roles", ("'pg_roles'", _ONLY_OWN)),
        Attack("pg_catalog.pg_tables", "SELECT tablename FROM pg_catalog.pg_tables",
               ("'pg_catalog.pg_tables'",)),
        Attack("pg_stat_activity", "SELECT query FROM pg_stat_activity",
               ("'pg_stat_activity'",)),
        Attack("pg_settings in a join", "SELECT f.title, s.setting FROM film AS f "
               "JOIN pg_settings AS s ON s.name = 'port'", ("'pg_settings",)),
        Attack("information_schema", "SELECT table_name FROM information_schema.tables",
               ("'information_schema.tables'",)),
        Attack("regclass cast", "SELECT 'pg_authid'::regclass::oid", ("REGCLASS",)),
        Attack("pg_backend_pid()", "SELECT pg_backend_pid()", ("pg_backend_pid()",)),
    ),
}


# Inputs aimed at the statement check itself, which runs in the app process before any worker
# limit (issue #22): each must be decided in well under 0.5 s and 50 MB.
CHECK_ATTACKS: tuple[Attack, ...] = (
    Attack("20 K-character literal", "SELECT '" + "x" * 20_000 + "'"),  # accepted, linear scan
    # calls written inside a literal are text: accepted (the name scan reads tokens, not text)
    Attack("45 K literal of call text", "SELECT title FROM film WHERE title = '"
           + "version() pg_sleep(1) " * 2_000 + "'"),
    Attack("1 MB literal of call text", "SELECT '" + "version() pg_sleep(1) " * 46_000 + "'",
           ("characters",)),
    Attack("2 MB token-dense SQL", "SELECT 1" + "+1" * 1_000_000, ("characters",)),
    Attack("50 K-char dense (tokens)", "SELECT 1" + "+1" * 24_990, ("tokens",)),
    Attack("60-deep nesting", "SELECT " + "(" * 60 + "1" + ")" * 60, ("deep",)),
    Attack("900 NOT (recursion)", "SELECT " + "NOT " * 900 + "1", ("deep",)),
)


@dataclass
class CheckRun:
    """How the statement check decided one input: its refusal (None: accepted), the time and
    this process's peak memory growth (VmHWM after a reset, minus VmRSS before)."""

    error: str | None
    elapsed_s: float
    peak_growth_mb: float


def run_check(sql: str, dialect: str = "sqlite") -> CheckRun:
    """Run :func:`core.engine.sqlguard.check_query` on ``sql`` in this process and measure it."""
    from core.engine.errors import UnsafeQueryError
    from core.engine.sqlguard import check_query

    reset_peak(os.getpid())
    rss = status_mb("self", "VmRSS")
    start = time.perf_counter()
    try:
        check_query(sql, dialect)
        error = None
    except UnsafeQueryError as exc:
        error = str(exc)
    elapsed = time.perf_counter() - start
    return CheckRun(error, elapsed, status_mb("self", "VmHWM") - rss)


@dataclass
class Run:
    """One attack's result, stop time and memory growth of this process and of the worker."""

    result: ExecutionResult
    elapsed_s: float
    app_growth_mb: float
    worker_growth_mb: float


def run_attack(db: TaskDatabase, sql: str) -> Run:
    """Execute ``sql`` on a warm worker (started first: a start-up is not the query's time)."""
    if not db.execute("SELECT 1").ok:
        raise RuntimeError(f"the database does not answer SELECT 1: {db.execute('SELECT 1')}")
    pids = POOL.pids()
    before = {p: status_mb(p, "VmRSS") for p in pids}
    for p in pids:
        reset_peak(p)
    rss = status_mb("self", "VmRSS")
    start = time.monotonic()
    result = db.execute(sql)
    elapsed = time.monotonic() - start
    # a killed worker's peak was read just before the kill
    worker = max((POOL.killed_peaks.get(p, status_mb(p, "VmHWM")) - before[p] for p in pids),
                 default=0.0)
    return Run(result, elapsed, status_mb("self", "VmRSS") - rss, worker)
