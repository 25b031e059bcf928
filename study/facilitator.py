"""The facilitator console's logic: live sessions, timer control, advance, markers, notes, flags.

Facilitator actions are ordinary trace events of the participant they concern (same table, same
``server_ts`` clock as the participant's own events) written under a researcher session id;
``payload.by == "facilitator"`` tells them apart. The participant page reads progress and timers
from the store on every rerun, so it honours a pause or an advance on its next rerun.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from study.flow import Step, step_label
from study.runner import TIMER_TYPES, Clock, Runner
from study.spec import StudySpec
from study.store import Store
from study.timing import TimerSummary, compute_timers
from study.trace import Event, log_event, read_events

MARKERS = ("confused", "insight", "question", "error", "help given")


def facilitator_session() -> str:
    """A fresh session id for one facilitator's browser session."""
    return f"facilitator-{secrets.token_urlsafe(9)}"


def timer_state(timer: TimerSummary | None) -> str:
    """A subtask timer as the console reads it: not started, running, paused or stopped."""
    if timer is None or timer.started is None:
        return "not started"
    if timer.stopped is not None:
        return "stopped"
    return "running" if timer.running else "paused"


def _step_timer(store: Store, participant: str, step_id: str, now: int) -> str | None:
    """The timer state of the subtask ``step_id`` (``task:<task>/<subtask>``) from the
    participant's timer events alone; None when the step is not a subtask."""
    if not step_id.startswith("task:") or "/" not in step_id:
        return None
    task, _, subtask = step_id[len("task:"):].rpartition("/")
    events = read_events(store, participant=participant, types=list(TIMER_TYPES))
    return timer_state(compute_timers(events, now=now).get((task, subtask)))


def overview(store: Store, spec: StudySpec, *, now: int) -> list[dict[str, Any]]:
    """One row per participant of the study: number, status, condition, step, idle time; an
    active participant whose subtask timer is paused reads "paused" as its status."""
    rows = []
    for p in store.participants(spec.id):
        if p["simulated"]:
            continue
        prog = store.get_progress(p["participant"]) or {}
        paused = p["status"] == "active" and _step_timer(
            store, p["participant"], prog.get("step", ""), now) == "paused"
        rows.append({"number": p["number"], "participant": p["participant"],
                     "status": p["status"], "paused": paused, "stage": p["stage"],
                     "condition": p["condition"],
                     "step": prog.get("step", "consent"),
                     "where": step_label(spec, prog.get("step", "consent")),
                     "idle_s": max(0, (now - p["last_active"]) // 1000),
                     "flagged": bool(p["flagged"]), "flag_reason": p.get("flag_reason") or ""})
    return rows


def idle_words(seconds: int, status: str = "active") -> str:
    """Idle time as a person reads it: '45 s', '3 min', '2 h 5 min'; '–' once the participant
    is no longer active (a completed session is not idle, it is over)."""
    if status != "active":
        return "–"
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def flag(store: Store, spec: StudySpec, participant: str, session_id: str, *, reason: str,
         flagged: bool = True, clock: Clock = time.time) -> Event:
    """Flag (with a reason; excluded from balancing and analysis) or unflag a participant."""
    if flagged and not reason.strip():
        raise ValueError("say why the participant is flagged (e.g. 'did not follow the "
                         "instructions'); the reason is kept with the flag")
    with store.write():
        store.set_flagged(participant, flagged, reason)
        return log_event(store, session_id=session_id, participant=participant, type="flag",
                         study=spec.id, payload={"flagged": flagged, "reason": reason.strip(),
                                                 "by": "facilitator"}, clock=clock)


class Console:
    """Facilitator actions on one participant, logged under the facilitator's session."""

    def __init__(self, store: Store, spec: StudySpec, participant: str, session_id: str, *,
                 clock: Clock = time.time):
        self.runner = Runner(store, spec, participant, session_id=session_id, clock=clock)

    def step(self) -> Step:
        """The participant's current step."""
        return self.runner.current()

    def timer_state(self) -> str | None:
        """The current subtask's timer (not started, running, paused, stopped); None when the
        participant is not in a subtask (no timer to start, pause or resume)."""
        step = self.step()
        if step.kind != "task":
            return None
        return timer_state(self.runner.timers().get((step.task, step.subtask)))

    def timer(self, action: str) -> Event | None:
        """Pause or resume the current subtask's timer (``action``: pause | resume)."""
        if action not in ("pause", "resume"):
            raise ValueError(f"timer action must be pause or resume, not {action!r}")
        step = self.step()
        if step.kind != "task":
            return None
        running = self.runner.timers().get((step.task, step.subtask))
        if running is None or (action == "pause") != running.running:
            return None  # nothing to pause / already running
        return self.runner.log(f"timer.{action}", {"by": "facilitator"})

    def start(self) -> Event | None:
        """Start the current subtask's timer if it has not been started (e.g. after a break)."""
        step = self.step()
        if step.kind != "task" or (step.task, step.subtask) in self.runner.timers():
            return None
        return self.runner.log("timer.start", {"by": "facilitator"})

    def advance(self) -> Step | None:
        """Move the participant to the next step (required answers are not enforced)."""
        return self.runner.advance(self.step().id, by="facilitator")

    def marker(self, label: str) -> Event:
        """A one-click timestamped marker at the participant's current step."""
        return self.runner.log("marker", {"label": label, "by": "facilitator"})

    def note(self, text: str) -> Event:
        """A free-text note at the participant's current step (ValueError if empty)."""
        if not text.strip():
            raise ValueError("the note is empty; write something first")
        return self.runner.log("note", {"text": text.strip(), "by": "facilitator"})
