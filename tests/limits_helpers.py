"""Shared checks for the hard-limit tests; the attacks and their measurement live in
benchmarks.attacks (the benchmark measures the same list)."""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.attacks import Run

MEMORY_BOUND_MB = 200.0  # the bound on process growth per attack
STOP_MARGIN_S = 0.5  # the bound on stopping: the limit plus this


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
