"""The LLM agent in the planpool-chat condition: each participant answer resumes its tool loop.

:class:`LLMChatAgent` has the interface of :class:`core.planpool.chat_agent.ChatAgent` (status, messages,
question pool, trace events, confirm / reject / restart, ``to_dict``/``from_dict``) but the
questions come from :class:`core.planpool.llm_agent.LLMAgent`: ``start`` and every ``reply`` run one
:meth:`LLMAgent.advance` until the model asks (status ``asking``) or submits (``confirm``). The
agent's whole JSON state is in ``to_dict``, so a refresh resumes mid-chat. An API failure keeps
the last good state and sets ``error_``; :meth:`retry` resends. The API key stays in the
:class:`LLMAgent` and never enters the state or the trace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.engine.errors import GenerationError, SessionError
from core.engine.execute import ExecutionResult, TaskDatabase
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.planpool.agents import NOT_SPECIFIED
from core.planpool.chat_agent import (
    ASKING,
    BUDGET_REASON,
    CONFIRM,
    NEW,
    REJECTED,
    ChatAgent,
    parse_reply,
)
from core.planpool.llm_agent import ASKING as LLM_ASKING
from core.planpool.llm_agent import SUBMITTED, LLMAgent, State, restore_pool
from core.planpool.pool import Clock, PoolEvent, QuestionPool, epoch_ms

VARIANT = "planpool"
RESULT_TEXT = ("I have no open questions left. This is the query I would run and its result. "
               "Is this what you meant?")
BUDGET_TEXT = ("I ran out of steps before settling on a query. This is the most likely reading "
               "of your question and its result. Is this what you meant?")


class LLMChatAgent(ChatAgent):
    """One chat whose questions and query come from the LLM agent (state ending in ``_``)."""

    kind = "llm"
    free_answers = True

    def __init__(self, session: RepairSession, llm: LLMAgent,
                 open_db: Callable[[], TaskDatabase], *, clock: Clock = epoch_ms):
        super().__init__(session, clock=clock)
        self.llm, self.open_db = llm, open_db
        self.state_: State | None = None
        self.sql_: str | None = None
        self.error_: str | None = None
        self.unsent_: str | None = None

    @property
    def sql(self) -> str | None:
        """The SQL the LLM submitted (or the fallback candidate's after the turn budget)."""
        return self.sql_

    def start(self) -> None:
        """Start the LLM on the task's question and run it to its first question or submit."""
        if self.status_ != NEW:
            raise SessionError(f"the chat has already started (status {self.status_})")
        p = self.session.pool
        self.state_ = self.llm.start(p.question, VARIANT, p.dialect)
        self.status_ = ASKING  # waiting on the model; its first step follows
        self._step(None)

    def reply(self, answer: str, typed: str | None = None) -> None:
        """The participant's answer (a button's 'yes' | 'no' | 'not specified' or typed text)."""
        pending = (self.state_ or {}).get("pending")
        if self.status_ != ASKING or not pending:
            raise SessionError("no question is waiting for an answer")
        text = (typed or answer).strip()
        if not text:
            raise SessionError("an empty answer cannot be sent")
        self._say("user", typed or answer.capitalize(), "answer", pending.get("qid"))
        self._step(NOT_SPECIFIED if parse_reply(text) == NOT_SPECIFIED else text)

    def retry(self) -> None:
        """Resend the last step after an API failure."""
        if self.error_ is None:
            raise SessionError("nothing to retry")
        self._step(self.unsent_)

    def _step(self, answer: str | None) -> None:
        assert self.state_ is not None
        old = self.state_
        db = self.open_db()
        try:
            new = self.llm.advance(old, db, answer)
        except GenerationError as exc:
            self.error_, self.unsent_ = str(exc), answer
            return
        finally:
            db.close()
        self.error_ = self.unsent_ = None
        for m in new["messages"][len(old["messages"]):]:
            if m["role"] == "assistant":
                for b in m["content"]:
                    if b["type"] == "text" and b["text"].strip():
                        self._say("agent", b["text"].strip(), "info")
        self.state_ = new
        self.pool_ = restore_pool(new, self.clock) or QuestionPool(self.clock)
        if new["status"] == LLM_ASKING:
            self._say("agent", new["pending"]["question"], "question", new["pending"]["qid"])
            return
        if new["status"] == SUBMITTED:
            self.sql_ = new["submitted_sql"]
            self.candidate_ = self._match(self.sql_ or "")
            self._say("agent", RESULT_TEXT, "result")
        else:  # the turn budget ran out: account for the open questions, propose the mode
            for q in self.pool_.open:
                self.pool_.drop(q.id, BUDGET_REASON)
            self.state_ = {**new, "pool": self.pool_.to_dict()}
            self.candidate_ = self.session.best_candidate()
            self.sql_ = self.session.pool.sqls[self.candidate_] if self.candidate_ is not None else None
            self._say("agent", BUDGET_TEXT, "result")
        self.status_ = CONFIRM

    def _match(self, sql: str) -> int | None:
        """The pool candidate with this SQL, else the likeliest one with the same output."""
        p = self.session.pool
        if sql in p.sqls:
            return p.sqls.index(sql)
        result = self.result()
        if result is None or not result.ok:
            return None
        key = output_key(result)
        same = [i for i, r in enumerate(p.results) if r.ok and output_key(r) == key]
        return max(same, key=lambda i: p.counts[i]) if same else None

    def result(self) -> ExecutionResult | None:
        """The proposed SQL's output, run read-only on the task's database."""
        if self.sql_ is None:
            return None
        db = self.open_db()
        try:
            return db.execute(self.sql_)
        finally:
            db.close()

    def restart(self) -> None:
        """A new attempt: a fresh LLM conversation and question pool."""
        if self.status_ != REJECTED:
            raise SessionError("restart is possible after 'Not what I meant'")
        self.session.back_to(0)
        self.pool_, self.candidate_, self.sql_ = QuestionPool(self.clock), None, None
        self.state_, self.attempt_, self.status_ = None, self.attempt_ + 1, NEW
        self.start()

    # ----- trace and persistence -------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """What a submit event records about the agent (never the key)."""
        s = self.state_ or {}
        return {"agent": "llm", "model": s.get("model"), "turns": s.get("turns", 0),
                "usage": s.get("usage", {}), "llm_status": s.get("status")}

    def mark(self) -> tuple[int, int, int]:
        """(attempt, pool history length, message count), with the tool-call count appended."""
        calls = len((self.state_ or {}).get("calls", []))
        return (*super().mark(), calls)  # type: ignore[return-value]

    def events_since(self, mark: tuple[int, ...]) -> list[tuple[str, dict[str, Any]]]:
        """Pool operations (refused submits too), messages and the LLM's tool calls since mark."""
        attempt, n_hist, n_msgs, n_calls = (*mark, 0)[:4]
        same = attempt == self.attempt_
        out = super().events_since((attempt, n_hist, n_msgs))
        refused = [e for e in self.pool_.history[n_hist if same else 0:] if e.op == "refused"]
        out += [("pool.refused", {"pool": "questions", "attempt": self.attempt_, "t": e.t,
                                  "sql": e.data.get("sql"), "open": e.data.get("open", [])})
                for e in refused]
        s = self.state_ or {}
        calls = s.get("calls", [])[n_calls if same else 0:]
        if calls:
            out.append(("llm.step", {"attempt": self.attempt_, "status": s.get("status"),
                                     "turns": s.get("turns"), "usage": s.get("usage"),
                                     "calls": [{"name": c["name"], "input": c["input"],
                                                "error": c["error"]} for c in calls]}))
        return out

    def _pool_event(self, e: PoolEvent) -> tuple[str, dict[str, Any]]:
        kind, payload = super()._pool_event(e)
        payload.pop("survivors", None)  # the LLM's answers do not filter the candidates
        return kind, payload

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "kind": self.kind, "llm": self.state_, "sql": self.sql_,
                "error": self.error_, "unsent": self.unsent_}

    @classmethod
    def restore(cls, d: dict[str, Any], session: RepairSession, llm: LLMAgent,
                open_db: Callable[[], TaskDatabase], clock: Clock = epoch_ms) -> LLMChatAgent:
        """Resume a saved chat (mid-conversation too) with a live :class:`LLMAgent`."""
        agent = cls(session, llm, open_db, clock=clock)
        agent.pool_ = QuestionPool.from_dict(d["pool"])
        agent.pool_.clock = clock
        agent.messages_ = [dict(m) for m in d.get("messages", [])]
        agent.status_, agent.attempt_ = d.get("status", NEW), int(d.get("attempt", 1))
        agent.candidate_, agent.sql_ = d.get("candidate"), d.get("sql")
        agent.state_, agent.error_, agent.unsent_ = d.get("llm"), d.get("error"), d.get("unsent")
        return agent


__all__ = ["LLMChatAgent", "VARIANT"]
