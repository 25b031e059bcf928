"""Runner.page_run: a page reads the participant's progress and pause state once, and still
sees its own writes inside the run and the facilitator's from the next run on."""

from __future__ import annotations

import pytest
from sqlalchemy import event

from study import flow
from study.facilitator import Console
from study.runner import join
from study.spec import load_study
from study.store import open_store
from tests.study_flow_fixtures import TASK, write_mini


@pytest.fixture()
def setup(tmp_path):
    """A mini-study participant on task part 1, their runner, a facilitator's console, and a
    counter of the store's transactions."""
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    spec = load_study(write_mini(tmp_path / "studies"))
    runner = join(store, spec)
    while runner.current().id != flow.task_step_id(TASK, "1"):
        runner.advance(runner.current().id)
    console = Console(store, spec, runner.participant, "facilitator-session")
    begun = [0]
    event.listen(store.engine, "begin", lambda _conn: begun.__setitem__(0, begun[0] + 1))
    return runner, console, begun


def test_a_page_run_reads_progress_and_pause_once(setup) -> None:
    runner, _, begun = setup
    with runner.page_run():
        before = begun[0]
        for _ in range(5):  # what a task part's views ask
            runner.current()
            runner.paused()
            runner.finished(TASK)
            runner.workspace(TASK)
        assert begun[0] - before == 2  # one read of the progress, one of the timers
    before = begun[0]
    runner.current()
    runner.current()
    assert begun[0] - before == 2  # outside a page run every call reads the store


def test_own_writes_are_seen_inside_a_page_run_and_others_after_it(setup) -> None:
    runner, console, _ = setup
    part1, part2a = flow.task_step_id(TASK, "1"), flow.task_step_id(TASK, "2a")
    with runner.page_run():
        assert runner.current().id == part1 and not runner.paused()
        console.timer("pause")  # the facilitator, from another session
        assert not runner.paused()  # this page shows what it read at its start
        runner.save_workspace(TASK, {"history": []})  # a write through this runner
        assert runner.paused() and runner.workspace(TASK) == {"history": []}
        console.timer("resume")
        runner.advance(part1)
        assert runner.current().id == part2a and not runner.paused()
        console.advance()  # the facilitator moves them on
        assert runner.current().id == part2a
    assert runner.current().id == flow.task_step_id(TASK, "2b")  # the next run (or fragment)
    with runner.page_run():
        assert runner.current().id == flow.task_step_id(TASK, "2b")
        runner.log("marker", {"label": "x"})
        assert runner.events()[-1].subtask == "2b"
