"""PlanPool: an explicit, mutable pool of pending clarification questions (paper §4).

The pool is pure state plus an append-only history. Operations: ``init`` from a ranked plan,
``add`` a newly discovered question, ``drop`` one with a stated reason, ``next`` (the highest
priority pending question becomes *asked*), ``answer`` it, and ``submit``, which is refused
with :class:`PoolNotEmptyError` naming every open question while any is pending or awaiting its
answer. Every operation is recorded with the time of an injected clock (epoch ms by default),
so the history can be shown, analysed (:meth:`QuestionPool.stats`) and replayed to the same
pool (:meth:`QuestionPool.from_dict`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from core.engine.errors import StudioError

Clock = Callable[[], float]
PENDING, ASKED, ANSWERED, DROPPED = "pending", "asked", "answered", "dropped"


class PoolError(StudioError):
    """A pool operation is impossible in the pool's current state (unknown or closed question)."""


class PoolNotEmptyError(PoolError):
    """Submission was refused because questions are still open; ``open`` lists them."""

    def __init__(self, open_questions: list[Question]):
        self.open = open_questions
        listed = "; ".join(f"{q.id} [{q.status}] {q.text!r}" for q in open_questions)
        super().__init__(f"cannot submit: {len(open_questions)} question(s) still open — "
                         f"{listed}. Ask each (ask_next) or drop it with a reason "
                         "(drop_question) first.")


def epoch_ms() -> float:
    """The default clock: wall time in epoch milliseconds (as trace rows store it)."""
    return float(int(time.time() * 1000))


@dataclass
class Question:
    """One clarification question with its rank, state and (for agents) a payload."""

    id: str
    text: str
    priority: float
    origin: str  # "plan" | "added"
    payload: dict[str, Any] = field(default_factory=dict)
    status: str = PENDING
    answer: str | None = None
    reason: str | None = None

    @property
    def is_open(self) -> bool:
        return self.status in (PENDING, ASKED)


@dataclass(frozen=True)
class PoolEvent:
    """One recorded operation: time, operation name, question id and arguments."""

    t: float
    op: str  # init | add | drop | next | answer | submit | refused
    qid: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


class QuestionPool:
    """The ranked mutable pool; see the module docstring."""

    def __init__(self, clock: Clock = epoch_ms):
        self.clock = clock
        self.questions: dict[str, Question] = {}
        self.history: list[PoolEvent] = []
        self.initialised = False
        self.submitted: str | None = None
        self._seq = 0

    # ----- views ------------------------------------------------------------------------
    def _by_status(self, *statuses: str) -> list[Question]:
        return [q for q in self.questions.values() if q.status in statuses]

    @property
    def pending(self) -> list[Question]:
        """Pending questions, highest priority first (ties: earlier first)."""
        order = list(self.questions)
        return sorted(self._by_status(PENDING), key=lambda q: (-q.priority, order.index(q.id)))

    @property
    def open(self) -> list[Question]:
        """Questions that block submission: asked-but-unanswered, then pending."""
        return self._by_status(ASKED) + self.pending

    @property
    def is_empty(self) -> bool:
        return not self.open

    def get(self, qid: str) -> Question:
        if qid not in self.questions:
            known = ", ".join(self.questions) or "none"
            raise PoolError(f"no question {qid!r} in the pool (known: {known})")
        return self.questions[qid]

    # ----- operations --------------------------------------------------------------------
    def _record(self, op: str, qid: str | None = None, **data: Any) -> None:
        self.history.append(PoolEvent(float(self.clock()), op, qid, data))

    def _check_live(self) -> None:
        if self.submitted is not None:
            raise PoolError("the pool was already submitted; start a new pool for a new task")

    def _new(self, text: str, priority: float, origin: str, payload: dict[str, Any]) -> Question:
        if not text or not text.strip():
            raise PoolError("a question needs non-empty text")
        self._seq += 1
        q = Question(f"q{self._seq}", text.strip(), float(priority), origin, dict(payload))
        self.questions[q.id] = q
        return q

    def init(self, plan: list[dict[str, Any]]) -> list[str]:
        """Start from a ranked plan of {"text", optional "priority", "payload"}; returns ids."""
        self._check_live()
        if self.initialised:
            raise PoolError("the pool is already initialised; add questions with add()")
        n = len(plan)
        items: list[dict[str, Any]] = [{"text": str(p["text"]), "priority": float(p.get("priority", n - i)),
                  "payload": dict(p.get("payload", {}))} for i, p in enumerate(plan)]
        for item in items:
            if not item["text"].strip():
                raise PoolError("a planned question needs non-empty text")
        ids = [self._new(it["text"], it["priority"], "plan", it["payload"]).id for it in items]
        self.initialised = True
        self._record("init", None, plan=items, ids=ids)
        return ids

    def add(self, text: str, priority: float = 0.0, payload: dict[str, Any] | None = None) -> str:
        """Add a newly discovered question (allowed before and after init); returns its id."""
        self._check_live()
        q = self._new(text, priority, "added", payload or {})
        self._record("add", q.id, text=q.text, priority=q.priority, payload=q.payload)
        return q.id

    def drop(self, qid: str, reason: str) -> None:
        """Drop an open question with a stated, non-empty reason."""
        self._check_live()
        q = self.get(qid)
        if not q.is_open:
            raise PoolError(f"question {qid} is already {q.status}; only open questions drop")
        if not reason or not reason.strip():
            raise PoolError(f"state why question {qid} is dropped (a non-empty reason)")
        q.status, q.reason = DROPPED, reason.strip()
        self._record("drop", qid, reason=q.reason)

    def next(self) -> Question:
        """Take the highest-priority pending question to ask (it becomes 'asked')."""
        self._check_live()
        waiting = self._by_status(ASKED)
        if waiting:
            raise PoolError(f"question {waiting[0].id} was asked and awaits its answer; record "
                            "it with answer() or drop it first")
        pending = self.pending
        if not pending:
            raise PoolError("no pending question; the pool is empty and may be submitted")
        q = pending[0]
        q.status = ASKED
        self._record("next", q.id)
        return q

    def answer(self, qid: str, answer: str) -> None:
        """Record the user's answer to the asked question ``qid``."""
        self._check_live()
        q = self.get(qid)
        if q.status != ASKED:
            raise PoolError(f"question {qid} is {q.status}, not asked; take it with next() first")
        q.status, q.answer = ANSWERED, str(answer)
        self._record("answer", qid, answer=q.answer)

    def submit(self, sql: str) -> str:
        """Submit the final SQL; refused (and the refusal recorded) while a question is open."""
        self._check_live()
        blocking = self.open
        if blocking:
            self._record("refused", None, sql=sql, open=[q.id for q in blocking])
            raise PoolNotEmptyError(blocking)
        self.submitted = sql
        self._record("submit", None, sql=sql)
        return sql

    # ----- analysis and persistence ----------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Counts for analysis: planned, added, dropped, asked, refused submits, modified?"""
        ops = [e.op for e in self.history]
        planned = sum(1 for q in self.questions.values() if q.origin == "plan")
        added, dropped = ops.count("add"), ops.count("drop")
        return {"planned": planned, "added": added, "dropped": dropped, "asked": ops.count("next"),
                "answered": ops.count("answer"), "refused_submits": ops.count("refused"),
                "modified": bool(added or dropped), "submitted": self.submitted is not None}

    def snapshot(self) -> dict[str, Any]:
        """The pool's state without its history (equal snapshots mean equal pools)."""
        return {"initialised": self.initialised, "submitted": self.submitted,
                "questions": [asdict(q) for q in self.questions.values()]}

    def to_dict(self) -> dict[str, Any]:
        return {"history": [asdict(e) for e in self.history], **self.snapshot()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QuestionPool:
        """Rebuild a pool by replaying its recorded history (times included)."""
        events = [PoolEvent(float(e["t"]), e["op"], e.get("qid"), dict(e.get("data", {})))
                  for e in d.get("history", [])]
        return replay(events)


def replay(events: list[PoolEvent]) -> QuestionPool:
    """Apply recorded events to a fresh pool whose clock returns the recorded times."""
    times = iter([e.t for e in events])
    pool = QuestionPool(clock=lambda: next(times))
    for e in events:
        if e.op == "init":
            pool.init(e.data["plan"])
        elif e.op == "add":
            pool.add(e.data["text"], e.data.get("priority", 0.0), e.data.get("payload"))
        elif e.op == "drop":
            pool.drop(str(e.qid), e.data["reason"])
        elif e.op == "next":
            pool.next()
        elif e.op == "answer":
            pool.answer(str(e.qid), e.data["answer"])
        elif e.op in ("submit", "refused"):
            with contextlib.suppress(PoolNotEmptyError):
                pool.submit(e.data["sql"])
        else:
            raise PoolError(f"unknown pool operation {e.op!r} in the history")
    return pool


__all__ = ["PoolError", "PoolEvent", "PoolNotEmptyError", "Question", "QuestionPool",
           "epoch_ms", "replay"]
