"""Participants' flows through a study that no order of actions can break: a Hypothesis
RuleBasedStateMachine joins participants into the two-condition film study (Williams orders,
12 cells), main or pilot, advances them (also from a stale step, as a second tab or a
facilitator who was a step behind would), reloads their page, lets the facilitator pause,
resume and advance a participant and override the next assignment, lets time pass beyond the
abandon timeout, and withdraws participants (the study's ``withdrawal:`` drawn once per run:
delete or keep).

After every step: each participant is where the model says; every participant's trace is
append-only (what was read before is still its prefix) and each move is whole (every event of
a step transition is there, written at one clock tick); a paused participant stays paused and
cannot leave the step themselves; an override is in the trace of the participant who got it;
an abandoned participant is marked and keeps every row; a withdrawal with ``keep`` keeps the
trace and answers (plus one ``session.end``), with ``delete`` leaves nothing; pilots are
balanced among themselves and kept apart from the main participants by the analysis filters
and in the export; a completed participant has exactly one session.end and a stable code; and
each join took a least-filled cell of its stage among the cells the override allows.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from study import flow
from study.analysis.data import filter_data, load_study_data
from study.assignment import Override, cells, condition_sequences, slot_counts, task_sequences
from study.export import build_tables
from study.facilitator import Console
from study.runner import Runner, join, pending_override, set_override
from study.spec import StudySpec, load_study
from study.store import open_store
from study.trace import Event, read_events
from study.withdraw import withdraw

SPEC = load_study(Path(__file__).resolve().parents[1] / "studies" / "film"
                  / "study-two-conditions.yaml")
START = 1_800_000_000.0  # the clock starts here and moves only when a rule lets time pass
TIMEOUT_S = SPEC.assignment.abandon_timeout_minutes * 60
DATA_TABLES = ("answers", "progress")


@dataclasses.dataclass
class Who:
    """What the model knows of one participant."""

    stage: str
    at: int = 1  # index of the step they are on
    status: str = "active"  # active | completed | abandoned | withdrawn (kept)
    last_active: float = START
    paused: bool = False
    override: Override | None = None


class FlowMachine(RuleBasedStateMachine):
    """Several participants of one study, each at a step the model tracks."""

    def __init__(self) -> None:
        super().__init__()
        self.store = open_store(f"sqlite:///{tempfile.mkdtemp(prefix='flowm-')}/s.sqlite")
        self.spec: StudySpec = SPEC
        self.now = START
        self.people: dict[str, Who] = {}
        self.codes: dict[str, str] = {}
        self.seen: dict[str, list[Event]] = {}  # the trace as last read (append-only check)
        self.override: Override | None = None

    @initialize(keep=st.booleans())
    def choose_withdrawal(self, keep: bool) -> None:
        """The study's ``withdrawal:`` (delete is the film study's own)."""
        if keep:
            self.spec = dataclasses.replace(SPEC, withdrawal="keep")

    # -- helpers ------------------------------------------------------------------------------
    def clock(self) -> float:
        return self.now

    def ms(self) -> int:
        return int(self.now * 1000)

    def runner(self, pid: str) -> Runner:
        """A new page's runner (a reload or another tab builds its own)."""
        return Runner(self.store, self.spec, pid, clock=self.clock)

    def present(self) -> list[str]:
        """Participants whose row exists (everyone but those withdrawn with delete)."""
        return sorted(self.people)

    def in_flow(self) -> list[str]:
        """Participants who can still move (not withdrawn)."""
        return sorted(p for p, w in self.people.items() if w.status != "withdrawn")

    def holds_slot(self, w: Who) -> bool:
        """What assignment counts: completed, or active within the abandon timeout."""
        return w.status == "completed" or (
            w.status == "active" and w.last_active * 1000 >= self.ms() - TIMEOUT_S * 1000)

    def touched(self, pid: str) -> None:
        """The participant acted (or was moved): active again, idle clock reset."""
        w = self.people[pid]
        w.last_active = self.now
        if w.status == "abandoned":
            w.status = "active"

    def moved(self, pid: str, runner: Runner, new: flow.Step | None) -> None:
        """Apply a successful move to the model (a step forward; done completes)."""
        w = self.people[pid]
        assert new is not None and new.id == runner.steps[w.at + 1].id
        w.at += 1
        w.paused = False  # the new subtask's timer starts running
        self.touched(pid)
        if new.kind == "done":
            w.status = "completed"
            code = self.store.completion_code(pid, self.ms())
            assert self.codes.setdefault(pid, code) == code
            assert runner.finish() == code  # finishing again changes nothing

    # -- the participant ----------------------------------------------------------------------
    @rule(pilot=st.booleans())
    def join_one(self, pilot: bool) -> None:
        """Consent: the participant takes a least-filled cell of their stage (among those the
        pending override allows) and starts after consent; a pending override is used once."""
        stage = "pilot" if pilot else "main"
        before = slot_counts(self.store, self.spec, now=self.ms(), stage=stage)
        override = self.override
        for w in self.people.values():  # joining marks the timed-out ones abandoned
            if w.status == "active" and w.last_active * 1000 < self.ms() - TIMEOUT_S * 1000:
                w.status = "abandoned"
        runner = join(self.store, self.spec, stage=stage, clock=self.clock)
        cell = runner.assignment.cell
        allowed = [i for i, (c, t) in enumerate(cells(self.spec)) if override is None or (
            override.condition_sequence in (None, c) and override.task_sequence in (None, t))]
        assert cell in allowed and before[cell] == min(before[i] for i in allowed)
        assert runner.assignment.stage == stage
        self.override = None
        assert pending_override(self.store, self.spec.id) is None
        self.people[runner.participant] = Who(stage, last_active=self.now, override=override)

    @precondition(lambda self: bool(self.people))
    @rule(data=st.data(), stale=st.booleans())
    def advance(self, data: st.DataObject, stale: bool) -> None:
        """Continue from the step shown; from a stale one (already left), while paused, or
        after a withdrawal nothing moves."""
        pid = data.draw(st.sampled_from(self.present()))
        w = self.people[pid]
        runner = self.runner(pid)
        i = w.at
        if stale and i > 1:
            assert runner.advance(runner.steps[i - 1].id) is None
            return
        new = runner.advance(runner.steps[i].id)
        if w.status == "withdrawn" or w.paused or i == len(runner.steps) - 1:
            assert new is None  # withdrawn, paused, or done is the last step
            return
        self.moved(pid, runner, new)

    @precondition(lambda self: bool(self.people))
    @rule(data=st.data(), value=st.sampled_from(["one reading", "another reading"]))
    def answer_one(self, data: st.DataObject, value: str) -> None:
        """An answer is saved (and the participant is active again) unless it is unchanged or
        the participant has withdrawn."""
        pid = data.draw(st.sampled_from(self.present()))
        w = self.people[pid]
        runner = self.runner(pid)
        old = runner.answers().get("demographics/free")
        saved = runner.answer("demographics/free", value)
        assert saved == (w.status != "withdrawn" and old != value)
        if saved:
            self.touched(pid)

    @precondition(lambda self: bool(self.people))
    @rule(data=st.data())
    def reload(self, data: st.DataObject) -> None:
        """A reload resumes at the same step, paused if it was."""
        pid = data.draw(st.sampled_from(self.present()))
        runner = self.runner(pid)
        assert runner.current().id == runner.steps[self.people[pid].at].id
        assert runner.paused() == self.people[pid].paused

    @precondition(lambda self: bool(self.in_flow()))
    @rule(data=st.data())
    def withdraw_one(self, data: st.DataObject) -> None:
        """Withdrawal: with delete the participant and their data are gone; with keep they stay
        (status withdrawn) and one session.end is added; either way the slot is free."""
        pid = data.draw(st.sampled_from(self.in_flow()))
        before = read_events(self.store, participant=pid)
        answers = self.store.answers(pid)
        record = withdraw(self.store, self.spec, pid, by="participant", now=self.ms())
        self.codes.pop(pid, None)
        if self.spec.withdrawal == "keep":
            assert record["mode"] == "kept"
            self.people[pid].status = "withdrawn"
            after = read_events(self.store, participant=pid)
            assert after[:len(before)] == before and [e.type for e in after[len(before):]] == [
                "session.end"] and after[-1].payload["status"] == "withdrawn"
            assert self.store.answers(pid) == answers
            assert (self.store.participant(pid) or {}).get("status") == "withdrawn"
        else:
            assert record["mode"] == "deleted"
            del self.people[pid]
            self.seen.pop(pid, None)
            assert self.store.participant(pid) is None
            assert not read_events(self.store, participant=pid)
            assert not self.store.answers(pid) and self.store.get_progress(pid) is None

    # -- the facilitator ----------------------------------------------------------------------
    @precondition(lambda self: bool(self.people))
    @rule(data=st.data(), pause=st.booleans())
    def facilitator_timer(self, data: st.DataObject, pause: bool) -> None:
        """Pause or resume the current subtask's timer: only a task step's running (paused)
        timer can be paused (resumed); nothing is logged for a withdrawn participant."""
        pid = data.draw(st.sampled_from(self.present()))
        w = self.people[pid]
        console = Console(self.store, self.spec, pid, "facilitator-m", clock=self.clock)
        ev = console.timer("pause" if pause else "resume")
        on_task = console.step().kind == "task"
        if not on_task or pause == w.paused:
            assert ev is None
            return
        assert ev is not None
        if w.status == "withdrawn":
            assert not ev.inserted
            return
        assert ev.inserted and ev.type == f"timer.{'pause' if pause else 'resume'}"
        assert ev.payload["by"] == "facilitator"
        w.paused = pause

    @precondition(lambda self: bool(self.people))
    @rule(data=st.data())
    def facilitator_advance(self, data: st.DataObject) -> None:
        """The facilitator moves a participant on, also a paused one; the move is theirs in the
        trace."""
        pid = data.draw(st.sampled_from(self.present()))
        w = self.people[pid]
        console = Console(self.store, self.spec, pid, "facilitator-m", clock=self.clock)
        new = console.advance()
        if w.status == "withdrawn" or w.at == len(console.runner.steps) - 1:
            assert new is None
            return
        self.moved(pid, console.runner, new)
        step = [e for e in read_events(self.store, participant=pid) if e.type == "step"][-1]
        assert step.payload["step"] == new.id and step.payload["by"] == "facilitator"

    @rule(task=st.none() | st.integers(0, len(task_sequences(SPEC)) - 1),
          cond=st.none() | st.integers(0, len(condition_sequences(SPEC)) - 1))
    def facilitator_override(self, task: int | None, cond: int | None) -> None:
        """Override (or clear) the next participant's assignment."""
        override = None if task is None and cond is None else Override(
            task_sequence=task, condition_sequence=cond)
        set_override(self.store, self.spec.id, override, self.ms())
        self.override = override
        assert pending_override(self.store, self.spec.id) == override

    # -- time ---------------------------------------------------------------------------------
    @rule(minutes=st.sampled_from([1, 10, 29, 31, 45]))
    def time_passes(self, minutes: int) -> None:
        """The clock moves on (past the abandon timeout for those who sit still long enough)."""
        self.now += minutes * 60

    # -- checks after every step --------------------------------------------------------------
    @invariant()
    def everyone_is_where_the_model_says(self) -> None:
        for pid, w in self.people.items():
            runner = self.runner(pid)
            prog = self.store.get_progress(pid) or {}
            assert prog.get("step") == runner.steps[w.at].id and prog.get("index") == w.at
            row = self.store.participant(pid) or {}
            assert row.get("status") == w.status and row.get("stage") == w.stage
            events = read_events(self.store, participant=pid)
            steps = [e.payload["step"] for e in events if e.type == "step"]
            assert steps == [s.id for s in runner.steps[1:w.at + 1]]
            ends = [e.payload["status"] for e in events if e.type == "session.end"]
            done = runner.steps[w.at].kind == "done"
            assert ends == ["completed"] * int(done) + ["withdrawn"] * int(
                w.status == "withdrawn")
            assert runner.paused() == w.paused
        for stage in ("main", "pilot"):
            held = slot_counts(self.store, self.spec, now=self.ms(), stage=stage)
            assert sum(held) == sum(self.holds_slot(w) for w in self.people.values()
                                    if w.stage == stage)

    @invariant()
    def the_trace_is_append_only_and_each_move_whole(self) -> None:
        for pid in self.people:
            events = read_events(self.store, participant=pid)
            old = self.seen.get(pid, [])
            assert events[:len(old)] == old, "a recorded event changed or vanished"
            self.seen[pid] = events
            runner = self.runner(pid)
            by_id = {e.event_id: e for e in events}
            for e in events:
                if e.type != "step":
                    continue
                prev = runner.steps[flow.index_of(runner.steps, e.payload["from"])]
                new = runner.steps[flow.index_of(runner.steps, e.payload["step"])]
                whole = flow.transition_events(pid, prev, new, by=e.payload["by"])
                got = [by_id.get(t["event_id"]) for t in whole]
                assert all(g is not None for g in got), f"a part of the move to {new.id} is lost"
                assert len({g.server_ts for g in got if g}) == 1  # one transaction, one tick

    @invariant()
    def an_override_is_in_the_trace(self) -> None:
        for pid, w in self.people.items():
            got = [e.payload for e in read_events(self.store, participant=pid,
                                                   types=["override"])]
            if w.override is None:
                assert got == []
            else:
                assert len(got) == 1 and got[0]["by"] == "facilitator"
                assert (got[0]["task_sequence"], got[0]["condition_sequence"]) == (
                    w.override.task_sequence, w.override.condition_sequence)

    @invariant()
    def pilots_are_kept_apart_in_analysis(self) -> None:
        raw = load_study_data(self.store, self.spec.id)
        for stage in ("main", "pilot"):
            data = filter_data(raw, stages=[stage])
            want = {p for p, w in self.people.items()
                    if w.stage == stage and w.status != "withdrawn"}
            assert set(data.ids) == want
            assert {e.participant for e in data.events} <= want
            assert set(data.answers) <= want

    @precondition(lambda self: bool(self.people))
    @rule()
    def export_keeps_pilots_apart(self) -> None:
        """The export's tables of one stage hold that stage's participants alone, and the
        participants table says the stage (an unfiltered export can be split by it)."""
        raw = load_study_data(self.store, self.spec.id)
        every = build_tables(filter_data(raw), None)["participants"]
        assert dict(zip(every["participant"], every["stage"], strict=True)) == {
            p: w.stage for p, w in self.people.items() if w.status != "withdrawn"}
        for stage in ("main", "pilot"):
            tables = build_tables(filter_data(raw, stages=[stage]), None)
            assert set(tables["participants"]["stage"]) <= {stage}
            ids = set(tables["participants"]["participant"])
            assert set(tables["events"]["participant"]) <= ids
            assert set(tables["answers"]["participant"]) <= ids

    def teardown(self) -> None:
        self.store.engine.dispose()


def test_no_order_of_participant_and_facilitator_actions_breaks_the_flow() -> None:
    FlowMachine.TestCase.settings = settings(
        max_examples=10, stateful_step_count=30, deadline=None, database=None,
        suppress_health_check=[HealthCheck.too_slow])
    FlowMachine.TestCase().runTest()


def _to_first_task(store_url: str) -> tuple[Runner, Console]:
    """A participant moved by the facilitator onto the first task step, and the console."""
    store = open_store(store_url)
    runner = join(store, SPEC, clock=lambda: START)
    console = Console(store, SPEC, runner.participant, "facilitator-r", clock=lambda: START)
    while console.step().kind != "task":
        assert console.advance() is not None
    return runner, console


def test_a_paused_participant_cannot_continue_but_the_facilitator_can_move_them() -> None:
    """Regression (found by the machine): Continue on a page drawn before the facilitator's
    pause moved the participant on; the participant's advance now refuses while paused."""
    runner, console = _to_first_task(f"sqlite:///{tempfile.mkdtemp(prefix='flowr-')}/s.sqlite")
    here = console.step()
    assert console.timer("pause") is not None and runner.paused()
    assert runner.advance(here.id) is None and runner.current() == here
    assert console.timer("resume") is not None and not runner.paused()
    assert console.timer("pause") is not None
    moved = console.advance()
    assert moved is not None and runner.current() == moved and not runner.paused()
    runner.store.engine.dispose()


def test_an_override_is_recorded_in_the_trace_of_whoever_gets_it() -> None:
    """Regression (found by the machine): the override lived only in the participants row;
    the trace now says so with an ``override`` event at join (and the next join has none)."""
    store = open_store(f"sqlite:///{tempfile.mkdtemp(prefix='flowr-')}/s.sqlite")
    set_override(store, SPEC.id, Override(task_sequence=3), int(START * 1000))
    first = join(store, SPEC, clock=lambda: START)
    second = join(store, SPEC, clock=lambda: START)
    got = read_events(store, participant=first.participant, types=["override"])
    assert [e.payload for e in got] == [{"task_sequence": 3, "condition": None,
                                         "condition_sequence": None,
                                         "cell": first.assignment.cell, "by": "facilitator"}]
    assert first.assignment.task_sequence == 3
    assert not read_events(store, participant=second.participant, types=["override"])
    store.engine.dispose()
