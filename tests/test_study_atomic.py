"""join, advance and answer are atomic: a writer SIGKILLed before any of its statements (or just
before COMMIT) leaves no partial state; the facilitator's override is used exactly once."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import event, select

from study import flow
from study import schema as S
from study.assignment import Override
from study.runner import Runner, join, pending_override, set_override
from study.spec import StudySpec, load_study
from study.store import Store, open_store
from tests.study_flow_fixtures import write_mini
from tests.threads import at_once

TABLES = ("participants", "sessions", "events", "answers", "progress", "completion_codes")


def snapshot(url: str) -> dict[str, list[tuple]]:
    """Every row of the participant-data tables, sorted (a fresh connection each time)."""
    store = open_store(url)
    try:
        with store.read() as conn:
            return {t: sorted(tuple(map(str, r)) for r in conn.execute(
                select(S.metadata.tables[t]))) for t in TABLES}
    finally:
        store.close()


def killed_run(url: str, op: Callable[[Store], Any], kill_at: int | None) -> bool:
    """Run ``op`` in a forked child that SIGKILLs itself before its ``kill_at``-th SQL statement
    (0-based; -1: at COMMIT); True when the child finished without being killed."""
    pid = os.fork()
    if pid == 0:  # child: its own engine, nothing shared with the parent's pools
        try:
            store = open_store(url, pool_size=1)
            count = [0]

            def before(*_a: Any) -> None:
                if count[0] == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
                count[0] += 1

            def commit(*_a: Any) -> None:
                if kill_at == -1:
                    os.kill(os.getpid(), signal.SIGKILL)

            event.listen(store.engine, "before_cursor_execute", before)
            event.listen(store.engine, "commit", commit)
            op(store)
            os._exit(0)
        except BaseException:  # pragma: no cover - reported through the exit code
            import traceback
            traceback.print_exc()
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return False
    assert os.WEXITSTATUS(status) == 0, "the operation failed in the child (see stderr)"
    return True


def kill_everywhere(url: str, op: Callable[[Store], Any]) -> int:
    """Kill ``op`` at COMMIT and before each statement until it completes; returns how many
    kill points were tried. Every killed run must leave the database exactly as it was."""
    before = snapshot(url)
    assert not killed_run(url, op, -1)
    assert snapshot(url) == before, "killed at COMMIT, yet something was written"
    k = 0
    while not killed_run(url, op, k):
        assert snapshot(url) == before, f"partial state after a kill before statement {k}"
        k += 1
    assert snapshot(url) != before  # the completed run wrote everything
    return k + 1


@pytest.fixture()
def spec(tmp_path) -> StudySpec:
    return load_study(write_mini(tmp_path / "studies"))


def test_join_advance_answer_survive_sigkill_between_statements(store_url, spec):
    store = open_store(store_url)
    store.close()
    tried = kill_everywhere(store_url, lambda s: join(s, spec))
    assert tried > 5  # BEGIN, assignment, session, events, progress...
    store = open_store(store_url)
    (pid,) = [p["participant"] for p in store.participants(spec.id)]
    runner = Runner(store, spec, pid, session_id="s1")
    step = runner.current()
    assert step.kind == "questionnaire"
    assert {e.type for e in runner.events()} == {"session.start", "consent", "step"}
    store.close()

    item = "demographics/sql_expertise"
    kill_everywhere(store_url, lambda s: Runner(s, spec, pid, session_id="s1")
                    .answer(item, "advanced"))
    store = open_store(store_url)
    assert store.answers(pid) == {item: "advanced"}
    assert [e.payload["item"] for e in Runner(store, spec, pid, session_id="s1").events()
            if e.type == "answer"] == [item]
    store.close()

    # onboarding -> practice -> first task: a move that stops and starts timers
    store = open_store(store_url)
    r = Runner(store, spec, pid, session_id="s1")
    while r.current().kind != "onboarding":
        r.advance(r.current().id)
    onboarding = r.current().id
    store.close()
    kill_everywhere(store_url, lambda s: Runner(s, spec, pid, session_id="s1")
                    .advance(onboarding))
    store = open_store(store_url)
    r = Runner(store, spec, pid, session_id="s1")
    assert r.current().kind == flow.PRACTICE
    steps = [e.payload["step"] for e in r.events() if e.type == "step"]
    assert steps.count(r.current().id) == 1  # the move was logged exactly once
    store.close()


def test_override_is_used_exactly_once_by_20_concurrent_joins(store_url, spec):
    setup = open_store(store_url)
    set_override(setup, spec.id, Override(task_sequence=0), now=1)
    joins = 20

    def one(_: int) -> Runner:
        store = open_store(store_url, pool_size=2)  # its own engine, like another server
        try:
            return join(store, spec)
        finally:
            store.close()

    at_once(joins, one)
    rows = setup.participants(spec.id)
    assert len(rows) == joins and sorted(r["number"] for r in rows) == list(range(1, 21))
    assert [r["override"] for r in rows if r["override"]] == [{"task_sequence": 0,
                                                               "condition": None,
                                                               "condition_sequence": None}]
    assert pending_override(setup, spec.id) is None
