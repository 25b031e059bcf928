"""The structured PlanPool agent as an interactive, resumable chat (the planpool-chat condition).

The offline :class:`core.planpool.agents.StructuredAgent` runs a whole episode against a simulated user;
:class:`ChatAgent` takes the same steps one user turn at a time. ``start`` initialises the
:class:`QuestionPool` from the top ``k`` decision variables by information gain (each phrased by
:mod:`core.planpool.questions`) and asks the first; ``reply`` applies the participant's Yes / No to the
:class:`RepairSession` (or drops the question for "not specified"), drops pending questions that
no longer split the survivors ('resolved by earlier answers'), adds a newly informative variable
and asks the next. When the pool is empty it submits the pool with the session's best candidate
and waits for ``confirm`` or ``reject``; ``restart`` begins a new attempt from the full pool.
``to_dict``/``from_dict`` persist everything but the session (saved as the workspace is);
``events_since`` turns what changed since a :meth:`mark` into trace events.
"""

from __future__ import annotations

import re
from typing import Any

from core.engine.errors import SessionError
from core.engine.session import RankedVariable, RepairSession
from core.planpool.agents import NO, NOT_SPECIFIED, RESOLVED, UNSPECIFIED_REASON, YES, splits
from core.planpool.pool import ASKED, Clock, PoolEvent, Question, QuestionPool, epoch_ms
from core.planpool.questions import render_question

NEW, ASKING, CONFIRM, CONFIRMED, REJECTED = "new", "asking", "confirm", "confirmed", "rejected"
BUDGET_REASON = "turn budget exhausted"
NO_MATCH_REASON = "no remaining query fits that answer"
_UNSURE = re.compile(r"\b(not specified|unspecified|don'?t know|do not know|not sure|unsure|"
                     r"doesn'?t matter|does not matter|either|whatever|no preference)\b")
_YES = re.compile(r"^(y|yes|yeah|yep|yup|sure|correct|right|of course|ok|okay)\b")
_NO = re.compile(r"^(n|no|nope|not really|never)\b")
_POOL_TRACE = {"init": "pool.init", "add": "pool.add", "drop": "pool.drop", "next": "pool.ask",
               "answer": "pool.answer"}


def parse_reply(text: str) -> str | None:
    """'yes', 'no' or 'not specified' for a typed reply, or None when it is neither."""
    t = text.strip().lower()
    if _UNSURE.search(t):
        return NOT_SPECIFIED
    if _YES.match(t):
        return YES
    if _NO.match(t):
        return NO
    return None


class ChatAgent:
    """One chat over ``session``; parameters in ``__init__``, state ending in ``_``."""

    kind = "structured"
    free_answers = False  # typed replies must read as yes / no / not specified

    def __init__(self, session: RepairSession, *, k: int = 5, gain_threshold: float = 0.05,
                 max_turns: int = 30, clock: Clock = epoch_ms):
        self.session = session
        self.k, self.gain_threshold, self.max_turns = k, gain_threshold, max_turns
        self.clock = clock
        self.pool_ = QuestionPool(clock)
        self.messages_: list[dict[str, Any]] = []
        self.seen_: list[list[str]] = []
        self.status_ = NEW
        self.attempt_ = 1
        self.candidate_: int | None = None

    # ----- views -------------------------------------------------------------------------
    @property
    def question(self) -> Question | None:
        """The question awaiting the participant's answer, if any."""
        return next((q for q in self.pool_.questions.values() if q.status == ASKED), None)

    @property
    def sql(self) -> str | None:
        """The SQL the agent proposes once the pool is empty."""
        return None if self.candidate_ is None else self.session.pool.sqls[self.candidate_]

    def _asked(self) -> int:
        return sum(1 for e in self.pool_.history if e.op == "next")

    # ----- steps -------------------------------------------------------------------------
    def _say(self, role: str, text: str, kind: str, qid: str | None = None) -> None:
        self.messages_.append({"role": role, "text": text, "kind": kind, "qid": qid,
                               "attempt": self.attempt_, "t": float(self.clock())})

    def _text(self, v: RankedVariable) -> str:
        return render_question(v.features, self.session.pool.dialect)

    def _informative(self) -> list[RankedVariable]:
        seen = {tuple(k) for k in self.seen_}
        return [v for v in self.session.variables()
                if v.gain > self.gain_threshold and v.keys not in seen]

    def start(self) -> None:
        """Initialise the pool from the ranked variables and ask the first question."""
        if self.status_ != NEW:
            raise SessionError(f"the chat has already started (status {self.status_})")
        plan = self._informative()[: self.k]
        self.seen_ += [list(v.keys) for v in plan]
        # priority by the strategy's rank (a planned question need not have the most gain)
        self.pool_.init([{"text": self._text(v), "priority": float(len(plan) - i),
                          "payload": {"keys": list(v.keys)}} for i, v in enumerate(plan)])
        n = len(plan)
        self._say("agent", f"I found {n} thing{'s' if n != 1 else ''} to clarify about your "
                  "question. I will ask one at a time." if n else
                  "Your question seems clear to me: every likely reading gives the same answer.",
                  "info")
        self._advance()

    def _advance(self) -> None:
        if self.pool_.pending and self._asked() < self.max_turns:
            q = self.pool_.next()
            self._say("agent", q.text, "question", q.id)
            self.status_ = ASKING
            return
        for q in self.pool_.open:  # the turn budget ran out: account for the rest explicitly
            self.pool_.drop(q.id, BUDGET_REASON)
        self.candidate_ = self.session.best_candidate()
        self.pool_.submit(self.sql or "")
        self._say("agent", "I have no open questions left. This is the query I would run and "
                  "its result. Is this what you meant?", "result")
        self.status_ = CONFIRM

    def reply(self, answer: str, typed: str | None = None) -> None:
        """The participant's answer ('yes' | 'no' | 'not specified') to the asked question."""
        q = self.question
        if self.status_ != ASKING or q is None:
            raise SessionError("no question is waiting for an answer")
        if answer not in (YES, NO, NOT_SPECIFIED):
            raise SessionError(f"answer {answer!r} is not yes, no or not specified")
        self._say("user", typed or answer.capitalize(), "answer", q.id)
        keys = tuple(q.payload["keys"])
        if answer == NOT_SPECIFIED:
            self.pool_.drop(q.id, UNSPECIFIED_REASON)
        else:
            try:
                self.session.answer(keys, answer == YES)
            except SessionError:
                self.pool_.drop(q.id, NO_MATCH_REASON)
                self._say("agent", "None of the remaining readings fits that answer, so I "
                          "will leave this point open.", "info")
            else:
                self.pool_.answer(q.id, answer)
        for other in self.pool_.pending:
            if not splits(self.session, tuple(other.payload["keys"])):
                self.pool_.drop(other.id, RESOLVED)
        new = self._informative()
        if new:
            self.seen_.append(list(new[0].keys))
            self.pool_.add(self._text(new[0]), new[0].gain, {"keys": list(new[0].keys)})
        self._advance()

    def not_understood(self, typed: str) -> None:
        """A typed reply that is neither yes, no nor not specified: ask again."""
        q = self.question
        self._say("user", typed, "answer", q.id if q else None)
        self._say("agent", "Sorry, I did not understand. Please answer Yes, No or Not "
                  "specified.", "info")

    def confirm(self) -> None:
        """The participant accepts the proposed query."""
        self._require(CONFIRM)
        self._say("user", "Yes, that is what I meant.", "confirm")
        self.status_ = CONFIRMED

    def reject(self) -> None:
        """The participant says the proposed query is not what they meant."""
        self._require(CONFIRM)
        self._say("user", "Not what I meant.", "reject")
        self.status_ = REJECTED

    def restart(self) -> None:
        """A new attempt from the full candidate pool with a fresh question pool."""
        if self.status_ != REJECTED:
            raise SessionError("restart is possible after 'Not what I meant'")
        self.session.back_to(0)
        self.pool_, self.seen_, self.candidate_ = QuestionPool(self.clock), [], None
        self.attempt_ += 1
        self.status_ = NEW
        self.start()

    def _require(self, status: str) -> None:
        if self.status_ != status:
            raise SessionError(f"the chat is {self.status_}, not {status}")

    # ----- trace and persistence -------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """What a submit event records about the agent."""
        return {"agent": self.kind}

    def mark(self) -> tuple[int, int, int]:
        """(attempt, pool history length, message count): a point to diff events against."""
        return self.attempt_, len(self.pool_.history), len(self.messages_)

    def events_since(self, mark: tuple[int, int, int]) -> list[tuple[str, dict[str, Any]]]:
        """Trace events (type, payload) for the pool operations and messages after ``mark``."""
        attempt, n_hist, n_msgs = mark
        hist = self.pool_.history[n_hist if attempt == self.attempt_ else 0:]
        out = [self._pool_event(e) for e in hist if e.op in _POOL_TRACE]
        out += [("chat.message", {k: v for k, v in m.items() if k != "t"})
                for m in self.messages_[n_msgs:]]
        return out

    def _pool_event(self, e: PoolEvent) -> tuple[str, dict[str, Any]]:
        base: dict[str, Any] = {"pool": "questions", "attempt": self.attempt_, "qid": e.qid,
                                "t": e.t}
        if e.op == "init":
            qs = [{"id": i, "text": p["text"], "priority": p["priority"],
                   "keys": p["payload"].get("keys", [])}
                  for i, p in zip(e.data["ids"], e.data["plan"], strict=True)]
            return "pool.init", {**base, "questions": qs}
        q = self.pool_.questions[str(e.qid)]
        base.update(question=q.text, keys=q.payload.get("keys", []))
        if e.op == "add":
            base["priority"] = e.data.get("priority")
        elif e.op == "drop":
            base["reason"] = e.data["reason"]
        elif e.op == "answer":
            base.update(answer=e.data["answer"], survivors=len(self.session.survivors))
        return _POOL_TRACE[e.op], base

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "gain_threshold": self.gain_threshold, "max_turns": self.max_turns,
                "pool": self.pool_.to_dict(), "messages": list(self.messages_),
                "seen": [list(k) for k in self.seen_], "status": self.status_,
                "attempt": self.attempt_, "candidate": self.candidate_}

    @classmethod
    def from_dict(cls, d: dict[str, Any], session: RepairSession,
                  clock: Clock = epoch_ms) -> ChatAgent:
        """Restore a chat on ``session`` (which holds its decisions, restored separately)."""
        agent = cls(session, k=d.get("k", 5), gain_threshold=d.get("gain_threshold", 0.05),
                    max_turns=d.get("max_turns", 30), clock=clock)
        agent.pool_ = QuestionPool.from_dict(d["pool"])
        agent.pool_.clock = clock
        agent.messages_ = [dict(m) for m in d.get("messages", [])]
        agent.seen_ = [list(k) for k in d.get("seen", [])]
        agent.status_, agent.attempt_ = d.get("status", NEW), int(d.get("attempt", 1))
        agent.candidate_ = d.get("candidate")
        return agent


__all__ = ["ASKING", "CONFIRM", "CONFIRMED", "NEW", "REJECTED", "ChatAgent", "parse_reply"]
