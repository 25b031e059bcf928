"""One participant's session against the store: join, answers, step transitions, workspace.

The progress row (``progress`` table) is the single source of truth for where a participant is:
``{"step", "index", "workspace": {task: RepairSession.to_dict()}, "submitted": {task: id},
"chat": {task: {"agent": ChatAgent.to_dict(), "session": RepairSession.to_dict()}},
"rejected": {task: id}}`` (chat: the planpool-chat condition's agent, question pool and
session; rejected: a proposed query the participant said was not what they meant).
Moves are compare-and-set (``BEGIN IMMEDIATE`` on SQLite, a row lock on PostgreSQL), so a
double click, a second tab or a facilitator's advance never skips a step twice. ``join``,
``advance`` and ``answer`` each write in one transaction (participant, progress, step, timer
and answer events together), committed before the call returns, so a refresh (or a server
killed at any point) resumes at the exact step with no half-written move.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import select

from study import flow
from study import schema as S
from study.assignment import Assignment, Override, assign_participant, load_assignment
from study.limits import answer_problem
from study.spec import StudySpec
from study.store import Store
from study.timing import TimerSummary, compute_timers
from study.trace import Event, log_event, read_events

TIMER_TYPES = ("timer.start", "timer.pause", "timer.resume", "timer.stop")

FACILITATOR = "__facilitator__"
OVERRIDE_ITEM = "override/next"
Clock = Callable[[], float]


def _ms(clock: Clock) -> int:
    return int(clock() * 1000)


def pending_override(store: Store, study: str) -> Override | None:
    """The facilitator's override for the next participant of ``study``, if one is set."""
    raw = store.answers(f"{FACILITATOR}:{study}").get(OVERRIDE_ITEM)
    return Override(**raw) if raw else None


def set_override(store: Store, study: str, override: Override | None, now: int) -> None:
    """Set (or clear with None) the override the next joining participant receives."""
    store.put_answer(f"{FACILITATOR}:{study}", OVERRIDE_ITEM,
                     override.__dict__ if override else None, now, study=study)


def join(store: Store, spec: StudySpec, *, stage: str | None = None,
         clock: Clock = time.time) -> Runner:
    """Assign a new participant who has just consented, in one transaction.

    The facilitator's pending override is read and cleared under the study lock inside the
    assignment transaction, so of many concurrent joins exactly one receives it. ``stage``
    (``pilot`` from a pilot link) defaults to the study file's ``stage``.
    """
    now = _ms(clock)
    with store.write() as conn:
        store.lock_study(conn, spec.id)
        override = pending_override(store, spec.id)
        a = assign_participant(store, spec, now=now, override=override,
                               stage=stage or spec.stage)
        if override is not None:
            set_override(store, spec.id, None, now)
        runner = Runner(store, spec, a.participant, clock=clock)
        runner.log("session.start", {"resumed": False}, task="", subtask="")
        runner.log("consent", {"given": True}, task="", subtask="")
        if override is not None:  # the trace says whose assignment was not balancing's alone
            runner.log("override", {**override.__dict__, "cell": a.cell, "by": "facilitator"},
                       task="", subtask="")
        first = runner.steps[1]
        store.set_progress(a.participant, {"step": first.id, "index": 1, "workspace": {},
                                           "submitted": {}}, now)
        for ev in flow.transition_events(a.participant, runner.steps[0], first):
            runner.log(ev.pop("type"), **ev)
    return runner


def decline(store: Store, spec: StudySpec, *, clock: Clock = time.time) -> str:
    """Record a declined consent as one event under a throw-away pseudonym; nothing else."""
    pid = f"declined-{secrets.token_urlsafe(9)}"
    log_event(store, session_id=pid, participant=pid, type="consent", study=spec.id,
              payload={"given": False}, clock=clock)
    return pid


class Runner:
    """A participant's flow bound to the store, one per browser session (not shared)."""

    def __init__(self, store: Store, spec: StudySpec, participant: str, *,
                 session_id: str | None = None, clock: Clock = time.time):
        assignment = load_assignment(store, participant)
        if assignment is None or assignment.study != spec.id:
            raise KeyError(f"no participant '{participant}' in study '{spec.id}'")
        self.store, self.spec, self.participant, self.clock = store, spec, participant, clock
        self.assignment: Assignment = assignment
        self.steps = flow.plan(spec, assignment)
        self.session_id = session_id or store.start_session(participant, spec.id, _ms(clock))
        self._seen: dict[str, Any] | None = None  # inside page_run(): what was read, if any

    # -- reading ------------------------------------------------------------------------------
    @contextmanager
    def page_run(self) -> Iterator[None]:
        """Within: progress and pause state are read from the store once, not at each of the
        ~10 places a page's views ask (each a transaction); a write through this runner reads
        them again. Outside (callbacks, a fragment's own rerun) every call reads the store."""
        self._seen = {}
        try:
            yield
        finally:
            self._seen = None

    def _forget(self) -> None:
        if self._seen is not None:
            self._seen.clear()

    def _read_progress(self) -> dict[str, Any]:
        return self.store.get_progress(self.participant) or {"step": flow.CONSENT, "index": 0}

    def progress(self) -> dict[str, Any]:
        """The stored progress object (step id, workspace sessions, submissions)."""
        if self._seen is None:
            return self._read_progress()
        if "progress" not in self._seen:
            self._seen["progress"] = self._read_progress()
        return self._seen["progress"]

    def current(self) -> flow.Step:
        """The step the participant is on now (as stored)."""
        return self.steps[flow.index_of(self.steps, self.progress()["step"])]

    def answers(self) -> dict[str, Any]:
        """Every stored answer of this participant."""
        return self.store.answers(self.participant)

    def events(self) -> list[Event]:
        """This participant's trace so far."""
        return read_events(self.store, participant=self.participant)

    def timers(self) -> dict[tuple[str, str], TimerSummary]:
        """Task and subtask timers computed from the trace, measured up to now."""
        return compute_timers(self.events(), now=_ms(self.clock))

    def paused(self) -> bool:
        """Whether the current subtask's timer is paused (by the facilitator or a break).

        Reads only the timer events: whether a timer runs depends on nothing else, and the
        whole trace (hovers, decisions) grows to thousands of rows in a session.
        """
        if self._seen is not None and "paused" in self._seen:
            return bool(self._seen["paused"])
        step = self.current()
        if step.kind != "task":
            return False
        events = read_events(self.store, participant=self.participant, types=list(TIMER_TYPES))
        t = compute_timers(events, now=_ms(self.clock)).get((step.task, step.subtask))
        paused = t is not None and not t.running and t.stopped is None and t.started is not None
        if self._seen is not None:
            self._seen["paused"] = paused
        return paused

    def workspace(self, task: str) -> dict[str, Any] | None:
        """The stored repair session (``RepairSession.to_dict``) of ``task``, if any."""
        return self.progress().get("workspace", {}).get(task)

    def submitted(self, task: str) -> int | None:
        """The candidate submitted for ``task``, if any."""
        return self.progress().get("submitted", {}).get(task)

    def chat(self, task: str) -> dict[str, Any] | None:
        """The stored chat of ``task`` (``{"agent": ChatAgent.to_dict(), "session": ...}``)."""
        return self.progress().get("chat", {}).get(task)

    def rejected(self, task: str) -> int | None:
        """The proposed candidate the participant said was not what they meant, if any."""
        return self.progress().get("rejected", {}).get(task)

    def finished(self, task: str) -> bool:
        """Whether ``task`` has a submitted query or a rejected proposal (either ends it)."""
        prog = self.progress()
        return task in prog.get("submitted", {}) or task in prog.get("rejected", {})

    # -- writing ------------------------------------------------------------------------------
    def log(self, type: str, payload: dict[str, Any] | None = None, *, task: str | None = None,
            subtask: str | None = None, condition: str | None = None,
            event_id: str | None = None, client_ts: int | None = None) -> Event:
        """One trace event; task/subtask/condition default to the current step's.

        Nothing is written for a participant who has withdrawn (``inserted`` is False), so an
        open tab or console cannot add data after a withdrawal.
        """
        self._forget()  # a timer event may pause or resume the step
        with self.store.write():
            if self.withdrawn():
                return Event(event_id or "", self.session_id, self.participant, type,
                             payload or {}, self.spec.id, inserted=False)
            if None in (task, subtask, condition):
                step = self.steps[flow.index_of(self.steps, self._read_progress()["step"])]
                condition = condition if condition is not None else (
                    step.condition or self.assignment.condition)
                task = task if task is not None else step.task
                subtask = subtask if subtask is not None else step.subtask
            assert task is not None and subtask is not None and condition is not None
            return log_event(self.store, session_id=self.session_id,
                             participant=self.participant, type=type, payload=payload,
                             study=self.spec.id, condition=condition, task=task, subtask=subtask,
                             event_id=event_id, client_ts=client_ts, clock=self.clock)

    def withdrawn(self) -> bool:
        """Whether the participant has withdrawn (row deleted, or kept with that status)."""
        with self.store.read() as conn:
            status = conn.execute(select(S.participants.c.status).where(
                S.participants.c.participant == self.participant)).scalar()
        return status in (None, "withdrawn")

    def answer(self, item: str, value: Any) -> bool:
        """Upsert one answer and log it; False (nothing written) when it is unchanged or over
        the participant input bounds (:func:`study.limits.answer_problem`: the page shows why)."""
        if answer_problem(value):
            return False
        with self.store.write():
            if self.withdrawn() or self.answers().get(item, object()) == value:
                return False
            self.store.put_answer(self.participant, item, value, _ms(self.clock),
                                  study=self.spec.id)
            self.log("answer", {"item": item, "value": value})
            self.store.touch(self.participant, _ms(self.clock))
        return True

    def _update(self, change: Callable[[dict[str, Any]], bool]) -> bool:
        """Read-modify-write the progress row in one write transaction."""
        self._forget()
        with self.store.write() as conn:
            self.store.lock_study(conn, f"progress:{self.participant}")
            if self.withdrawn():
                return False
            raw = conn.execute(select(S.progress.c.step).where(
                S.progress.c.participant == self.participant)).scalar()
            prog = json.loads(raw) if raw else {"step": flow.CONSENT, "index": 0}
            if not change(prog):
                return False
            stmt = self.store.insert(S.progress).values(
                participant=self.participant, step=json.dumps(prog), updated=_ms(self.clock))
            conn.execute(stmt.on_conflict_do_update(
                index_elements=["participant"],
                set_={"step": stmt.excluded.step, "updated": stmt.excluded.updated}))
        return True

    def _put(self, part: str, task: str, value: Any) -> bool:
        """Set ``progress[part][task]`` in one write (False when withdrawn)."""
        def change(prog: dict[str, Any]) -> bool:
            prog.setdefault(part, {})[task] = value
            return True
        return self._update(change)

    def save_workspace(self, task: str, session: dict[str, Any]) -> None:
        """Store the task's repair session (its decision history) with the progress."""
        self._put("workspace", task, session)

    def save_chat(self, task: str, chat: dict[str, Any], session: dict[str, Any]) -> None:
        """Store a chat's agent state and its repair session together, in one write."""
        self._put("chat", task, {"agent": chat, "session": session})

    def reject(self, task: str, candidate: int | None, sql: str, subtask: str = "3") -> None:
        """Record that the proposed query is not what the participant meant (ends the task)."""
        with self.store.write():  # progress and answer together
            self._put("rejected", task, candidate)
            if self.submitted(task) is None:
                self.answer(flow.task_step_id(task, subtask),
                            {"candidate": candidate, "sql": sql, "accepted": False})

    def submit(self, task: str, candidate: int | None, sql: str, subtask: str = "3") -> None:
        """Record a task's submitted query (answer ``task:<task>/<subtask>`` and progress)."""
        with self.store.write():  # progress and answer together
            self._put("submitted", task, candidate)
            self.answer(flow.task_step_id(task, subtask), {"candidate": candidate, "sql": sql})

    def advance(self, expected: str, *, by: str = "participant") -> flow.Step | None:
        """Move from step ``expected`` to the next one; None if the participant had moved on,
        or (``by`` the participant) while the facilitator has paused the step: a page drawn
        before the pause still shows Continue enabled. The facilitator's advance moves on."""
        prev = self.steps[flow.index_of(self.steps, expected)]
        new = flow.next_step(self.steps, expected)
        if new is None:
            return None

        def change(prog: dict[str, Any]) -> bool:
            if prog.get("step") != expected:
                return False
            prog["step"], prog["index"] = new.id, flow.index_of(self.steps, new.id)
            return True

        with self.store.write():
            self._forget()  # the pause is read inside this transaction, not from a page run
            if by != "facilitator" and self.paused():
                return None
            if not self._update(change):
                return None
            for ev in flow.transition_events(self.participant, prev, new, by=by):
                self.log(ev.pop("type"), **ev)
            self.store.touch(self.participant, _ms(self.clock))
            if new.kind == "done":
                self.finish()
        return new

    def finish(self) -> str:
        """Issue (or return) the completion code and mark the participant completed."""
        now = _ms(self.clock)
        with self.store.write():
            code = self.store.completion_code(self.participant, now)
            if (self.store.participant(self.participant) or {}).get("status") != "completed":
                self.store.set_status(self.participant, "completed", now)
                self.log("session.end", {"status": "completed"}, task="", subtask="",
                         event_id=f"{self.participant}:session.end")
        return code
