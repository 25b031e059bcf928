"""Shared measurements for the hard-limit tests: RSS from /proc and the worker's peak growth."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from core.engine.execute import ExecutionResult, TaskDatabase
from core.engine.workerpool import POOL, reset_peak, status_mb

MEMORY_BOUND_MB = 200.0  # the bound on process growth per attack
STOP_MARGIN_S = 0.5  # the bound on stopping: the limit plus this


@dataclass
class Run:
    """One attack's result, stop time and memory growth of this process and of the worker."""

    result: ExecutionResult
    elapsed_s: float
    app_growth_mb: float
    worker_growth_mb: float


def run_attack(db: TaskDatabase, sql: str) -> Run:
    """Execute ``sql`` on a warm worker and measure it (the worker is started beforehand)."""
    assert db.execute("SELECT 1").ok
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


def assert_stopped(run: Run, limit_s: float, *words: str) -> None:
    """The attack came back as an error naming ``words``, in time and within the memory bound."""
    assert not run.result.ok, run.result.rows[:1]
    for w in words:
        assert w in run.result.error, run.result.error
    assert run.elapsed_s < limit_s + STOP_MARGIN_S, (run.elapsed_s, run.result.error)
    assert run.app_growth_mb < MEMORY_BOUND_MB, run.app_growth_mb
    assert run.worker_growth_mb < MEMORY_BOUND_MB, run.worker_growth_mb


def unchanged(snapshot: Callable[[], object]) -> Callable[[], None]:
    """A check that ``snapshot()`` still returns what it returned now."""
    first = snapshot()

    def check() -> None:
        assert snapshot() == first

    return check
