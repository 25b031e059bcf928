"""Participants' flows through a study that no order of actions can break: a Hypothesis
RuleBasedStateMachine joins participants into the two-condition film study (Williams orders,
12 cells), advances them (also from a stale step, as a second tab or a facilitator who was
a step behind would), reloads their page, and withdraws them. After every step each
participant is where the model says, the trace's step events follow the plan, a completed
participant has exactly one session.end and a stable completion code, and each join took a
least-filled cell (counterbalancing).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from study.assignment import cells, slot_counts
from study.runner import Runner, join
from study.spec import load_study
from study.store import open_store
from study.trace import read_events
from study.withdraw import withdraw

SPEC = load_study(Path(__file__).resolve().parents[1] / "studies" / "film"
                  / "study-two-conditions.yaml")
NOW = 1_800_000_000.0  # a fixed clock: nobody's slot times out during a sequence


class FlowMachine(RuleBasedStateMachine):
    """Several participants of one study, each at a step the model tracks."""

    def __init__(self) -> None:
        super().__init__()
        self.store = open_store(f"sqlite:///{tempfile.mkdtemp(prefix='flowm-')}/s.sqlite")
        self.at: dict[str, int] = {}  # participant -> index of the step they are on
        self.codes: dict[str, str] = {}

    def runner(self, pid: str) -> Runner:
        """A new page's runner (a reload or another tab builds its own)."""
        return Runner(self.store, SPEC, pid, clock=lambda: NOW)

    @rule()
    def join_one(self) -> None:
        """Consent: the participant takes a least-filled cell and starts after consent."""
        before = slot_counts(self.store, SPEC, now=int(NOW * 1000))
        runner = join(self.store, SPEC, clock=lambda: NOW)
        cell = runner.assignment.cell
        assert before[cell] == min(before) and 0 <= cell < len(cells(SPEC))
        self.at[runner.participant] = 1

    @precondition(lambda self: bool(self.at))
    @rule(data=st.data(), stale=st.booleans())
    def advance(self, data: st.DataObject, stale: bool) -> None:
        """Continue from the step shown; from a stale one (already left) nothing moves."""
        pid = data.draw(st.sampled_from(sorted(self.at)))
        runner = self.runner(pid)
        i = self.at[pid]
        if stale and i > 1:
            assert runner.advance(runner.steps[i - 1].id) is None
            return
        new = runner.advance(runner.steps[i].id)
        if i == len(runner.steps) - 1:
            assert new is None  # done is the last step
            return
        assert new is not None and new.id == runner.steps[i + 1].id
        self.at[pid] = i + 1
        if new.kind == "done":
            code = self.store.completion_code(pid, int(NOW * 1000))
            assert self.codes.setdefault(pid, code) == code
            assert runner.finish() == code  # finishing again changes nothing

    @precondition(lambda self: bool(self.at))
    @rule(data=st.data())
    def reload(self, data: st.DataObject) -> None:
        """A reload resumes at the same step."""
        pid = data.draw(st.sampled_from(sorted(self.at)))
        assert self.runner(pid).current().id == self.runner(pid).steps[self.at[pid]].id

    @precondition(lambda self: bool(self.at))
    @rule(data=st.data())
    def withdraw_one(self, data: st.DataObject) -> None:
        """Withdrawal (delete): the participant and their trace are gone, the slot is free."""
        pid = data.draw(st.sampled_from(sorted(self.at)))
        withdraw(self.store, SPEC, pid, by="participant", now=int(NOW * 1000))
        del self.at[pid]
        self.codes.pop(pid, None)
        assert self.store.participant(pid) is None
        assert not read_events(self.store, participant=pid)

    @invariant()
    def everyone_is_where_the_model_says(self) -> None:
        for pid, i in self.at.items():
            runner = self.runner(pid)
            prog = self.store.get_progress(pid) or {}
            assert prog.get("step") == runner.steps[i].id and prog.get("index") == i
            events = read_events(self.store, participant=pid)
            steps = [e.payload["step"] for e in events if e.type == "step"]
            assert steps == [s.id for s in runner.steps[1:i + 1]]
            ends = sum(e.type == "session.end" for e in events)
            done = runner.steps[i].kind == "done"
            assert ends == int(done)
            assert (self.store.participant(pid) or {}).get("status") == (
                "completed" if done else "active")
        held = slot_counts(self.store, SPEC, now=int(NOW * 1000))
        assert sum(held) == len(self.at)

    def teardown(self) -> None:
        self.store.engine.dispose()


def test_no_order_of_participant_actions_breaks_the_flow() -> None:
    FlowMachine.TestCase.settings = settings(
        max_examples=8, stateful_step_count=25, deadline=None, database=None,
        suppress_health_check=[HealthCheck.too_slow])
    FlowMachine.TestCase().runTest()
