"""The trace: the documented event vocabulary and the one logging call every page uses.

Each event is one row of the ``events`` table (see ``study/schema.py``): ``event_id`` (client
UUID + sequence where the browser is the source; idempotent), ``session_id``, ``participant``
(pseudonym), ``study``, ``condition``, ``task``, ``subtask``, ``type`` (a key of
:data:`EVENT_TYPES`), ``payload`` (JSON object), ``client_ts`` (browser epoch ms or None) and
``server_ts`` (epoch ms from the injected clock). Study-specific types may be added under the
``x.`` prefix (e.g. ``x.my-widget``); every other unknown type is refused.
"""

from __future__ import annotations

import difflib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from core.engine.errors import StudioError
from study.limits import payload_problem
from study.store import Store

EVENT_TYPES: dict[str, str] = {
    # decisions in the workspace (replaying these through core/ reproduces the workspace)
    "dv.accept": "Yes on a decision variable; payload: {variable, rank, n_before, n_after}",
    "dv.reject": "No on a decision variable; payload as dv.accept",
    "dv.browse": "a decision variable was expanded or inspected without answering; {variable}",
    "dv.dismiss": "a decision variable was skipped/hidden without answering; {variable}",
    "clause.accept": "a Predicted Query clause (atomic feature) was required; {feature}",
    "clause.reject": "a Predicted Query clause was excluded; {feature}",
    "undo": "Back: the user's last gesture was taken back (a rejection with the repair it "
            "triggered is one); {undone, decisions (how many engine decisions, default 1)}",
    # the Action Space
    "space.lasso": "lasso selection in the Action Space; {candidate_ids}",
    "space.box": "box selection in the Action Space; {candidate_ids}",
    "space.click": "a click on one glyph kept that candidate (a selection); "
                   "{candidates, kept, previous}",
    "space.cluster": "a cluster was selected or focused; {cluster}",
    "space.hover": "hover on a point (sampled); {candidate_id}",
    "output.view": "an output table was opened; {candidate_id}",
    "output.accept": "Yes to \"Is this the output you want?\"; {output, candidate, step}",
    "output.reject": "No to the predicted output, or \"None of these\" (trigger reject | none); "
                     "the outputs were ruled out; {outputs, trigger, step}",
    "repair": "repair after a rejection added candidates; {method (recompose | resample), "
              "requested, trigger, added, sqls, new_outputs, step, survivors_before/after; "
              "resample also llm_requests, llm_usd: requests sent to the model and their "
              "estimated cost, 0 when the round came from the pool cache}",
    "repair.fail": "a repair round after a rejection stopped with an error (the user was told "
                   "in plain words; the rejection stays); {requested, trigger, step, error}",
    # timing and attention
    "timer.start": "the task/subtask timer starts (the event's task/subtask name it)",
    "timer.pause": "the timer pauses (facilitator or participant)",
    "timer.resume": "the timer resumes after a pause",
    "timer.stop": "the timer stops (subtask done)",
    "tab.hidden": "the browser reported the tab hidden (time excluded until tab.visible)",
    "tab.visible": "the browser reported the tab visible again",
    # facilitator and flow
    "marker": "a one-click facilitator marker; {label}",
    "note": "a free facilitator note; {text}",
    "override": "the facilitator's override chose (part of) this participant's assignment at "
                "join; {task_sequence, condition, condition_sequence, cell, by}",
    "flag": "a researcher flagged (excluded) or unflagged the participant; {flagged, reason}",
    "step": "the participant moved to a flow step; {step}",
    "consent": "consent given or declined; {given: bool}",
    "answer": "a questionnaire/demographics/subtask answer was saved; {item, value}",
    "submit": "the participant submitted a task's final query; {candidate_id, sql}",
    "result.reject": "the participant said a proposed query is not what they meant "
                     "(planpool-chat, single-shot); {candidate, sql}",
    "audio": "a think-aloud recording was stored under logs/; {path, duration_ms}",
    "session.start": "a browser session (re)connected; {resumed: bool}",
    "session.end": "the session ended; {status: completed | withdrawn} (a withdrawal that keeps "
                   "the data; one that deletes it leaves only a withdrawals row)",
    # candidate pools and the comparison conditions
    "pool.init": "the candidate pool for a task was loaded; {n_candidates, key, strategy, and the "
                 "condition's questions / values when it sets them} — or, with "
                 "pool: questions, the chat's question pool was planned; {questions}",
    "pool.add": "a question was added to the chat's question pool; {qid, question, priority}",
    "pool.drop": "a question was dropped from the question pool; {qid, question, reason}",
    "pool.ask": "a clarification question from the pool was shown (planpool-chat); {question}",
    "pool.answer": "the participant answered a pool question; {question, answer}",
    "chat.message": "a chat message in a chat condition; {role, text}",
    "pool.refused": "the LLM agent's submit was refused while questions were open; {sql, open}",
    "llm.step": "one resumed step of the LLM chat agent; {status, turns, usage, calls}",
    "chat.fail": "a step of the LLM chat agent stopped with an error (the participant was told "
                 "in plain words and offered Try again); {attempt, error}",
    "chat.agent_fallback": "agent: llm without an API key: the structured agent asks; {reason}",
}

EXTENSION_PREFIX = "x."
MAX_EVENT_ID = 200


class TraceError(StudioError, ValueError):
    """An event cannot be logged as given (unknown type, bad payload, bad id)."""


@dataclass(frozen=True)
class Event:
    """One trace event as stored; ``inserted`` is False when its event_id already existed."""

    event_id: str
    session_id: str
    participant: str
    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    study: str = ""
    condition: str = ""
    task: str = ""
    subtask: str = ""
    client_ts: int | None = None
    server_ts: int = 0
    inserted: bool = True

    def to_row(self) -> dict[str, Any]:
        """The event as an ``events`` table row (payload serialised)."""
        return {
            "event_id": self.event_id, "session_id": self.session_id,
            "participant": self.participant, "study": self.study,
            "condition": self.condition, "task": self.task, "subtask": self.subtask,
            "type": self.type, "payload": json.dumps(self.payload, sort_keys=True),
            "client_ts": self.client_ts, "server_ts": self.server_ts,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Event:
        """An event read back from the ``events`` table."""
        return cls(event_id=row["event_id"], session_id=row["session_id"],
                   participant=row["participant"], type=row["type"],
                   payload=json.loads(row["payload"]), study=row["study"],
                   condition=row["condition"], task=row["task"], subtask=row["subtask"],
                   client_ts=row["client_ts"], server_ts=row["server_ts"])


def check_type(type: str) -> None:
    """Raise TraceError unless ``type`` is in the vocabulary or an ``x.`` extension."""
    if type in EVENT_TYPES or (type.startswith(EXTENSION_PREFIX) and len(type) > 2):
        return
    close = difflib.get_close_matches(type, EVENT_TYPES, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise TraceError(f"unknown event type '{type}'; {hint}use a type from "
                     "study.trace.EVENT_TYPES, or prefix a study-specific type with 'x.'")


def log_event(store: Store, *, session_id: str, participant: str, type: str,
              payload: dict[str, Any] | None = None, study: str = "", condition: str = "",
              task: str = "", subtask: str = "", client_ts: int | None = None,
              event_id: str | None = None,
              clock: Callable[[], float] = time.time) -> Event:
    """Validate and store one event; it is committed before this returns (re-sends are no-ops)."""
    check_type(type)
    payload = {} if payload is None else payload
    if not isinstance(payload, dict):
        raise TraceError(f"payload of '{type}' must be a dict (JSON object), "
                         f"got {payload.__class__.__name__}")
    try:
        too_big = payload_problem(payload)
    except (TypeError, ValueError) as exc:
        raise TraceError(f"payload of '{type}' is not JSON-serialisable ({exc}); convert "
                         "values to str/int/float/bool/list/dict first") from None
    if too_big:
        raise TraceError(f"'{type}' not stored: {too_big} (bound what the browser sends with "
                         "study.limits first)")
    if not session_id or not participant:
        raise TraceError("session_id and participant are required for every event")
    if event_id is None:
        event_id = f"srv-{uuid.uuid4().hex}"
    if not event_id or len(event_id) > MAX_EVENT_ID:
        raise TraceError(f"event_id must be 1..{MAX_EVENT_ID} characters, got {len(event_id)}")
    if client_ts is not None and not isinstance(client_ts, int):
        raise TraceError("client_ts must be epoch milliseconds as an int (or None)")
    ev = Event(event_id=event_id, session_id=session_id, participant=participant, type=type,
               payload=payload, study=study, condition=condition, task=task,
               subtask=str(subtask), client_ts=client_ts, server_ts=int(clock() * 1000))
    inserted = store.insert_event(ev.to_row())
    return ev if inserted else replace(ev, inserted=False)


def read_events(store: Store, *, participant: str | None = None,
                session_id: str | None = None, study: str | None = None,
                types: list[str] | None = None) -> list[Event]:
    """The stored events (insertion order) as :class:`Event` objects."""
    rows = store.events(participant=participant, session_id=session_id, study=study,
                        types=types)
    return [Event.from_row(r) for r in rows]
