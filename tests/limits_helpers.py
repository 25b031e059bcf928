"""Shared checks for the hard-limit tests; the attacks and their measurement live in
benchmarks.attacks (the benchmark measures the same list)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

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


def finishes(fn: Callable[[], Any], hang_s: float) -> dict[str, Any]:
    """``{"value": fn()}`` or ``{"error": exception}``, failing the test if ``fn`` runs past
    ``hang_s`` (a hang detector for input that once froze the server, not a speed target)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(hang_s)
    assert not thread.is_alive(), f"still running after {hang_s} s"
    return box


def past_the_check(db: Any, sql: str) -> dict[str, Any]:
    """The worker's reply to ``sql`` sent straight to it, without the statement check: what an
    attack would read if the check let it through."""
    from core.engine.workerpool import KILL_GRACE_S, POOL

    return POOL.run({**db._request(), "sql": sql}, db.timeout_s + KILL_GRACE_S)


def assert_info_refused(db: Any, attack: Any) -> None:
    """``attack`` (benchmarks.attacks.INFO_ATTACKS) answers past the check, and the check
    refuses it with one error naming what it refused."""
    reply = past_the_check(db, attack.sql)
    if attack.behind:  # a second layer (the SQLite authorizer) stops it, without saying why
        assert attack.behind in reply.get("error", ""), (attack.name, reply)
    else:
        assert "error" not in reply, (attack.name, reply)  # it runs: a real leak, not a typo
    result = db.execute(attack.sql)
    assert not result.ok and result.rows == [], (attack.name, result.rows[:1])
    for w in attack.words:
        assert w in result.error, (w, result.error)
    assert result.error.count("refused") + result.error.count("not on the allow-list") == 1
