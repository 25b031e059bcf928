"""The attacks the hard execution limits must stop, and how one is measured.

One list per dialect, shared by the limit tests (which assert each is stopped in time and memory)
and ``python -m benchmarks.limits`` (which prints the same measurements).
"""

from __future__ import annotations

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
