"""The simulated chat users the PlanPool agents are evaluated against (Table 2).

:class:`SimulatedChatUser` answers the structured agent's questions from a target gold (see the
docstring of :mod:`core.planpool.agents` for the two users); :class:`MatchingUser` maps the LLM
agent's free-text questions to a decision variable first (App. B). Kept apart from the agents so
the participant chat (ui/chat.py) never imports the evaluation's simulated users.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from core.engine.execute import open_database
from core.engine.session import RankedVariable, RepairSession
from core.engine.similarity import output_key
from core.evaluation.simulate import SimulatedUser, Target, make_user
from core.generation.sampler import DEFAULT_MODEL
from core.planpool.agents import NO, NOT_SPECIFIED, YES, Episode, StructuredAgent
from core.planpool.llm_agent import LLMAgent
from core.planpool.questions import render_question


class SimulatedChatUser:
    """Answers only what the target gold determines; see the module docstring."""

    def __init__(self, session: RepairSession, gold: int | Target, user: str = "pool-informed"):
        self.session = session
        self.kind = user
        target = gold if isinstance(gold, Target) else SimulatedUser(session, gold).target
        self.inner = make_user(user, session, target)

    def answer_keys(self, keys: tuple[str, ...]) -> str:
        """'yes', 'no' or 'not specified' for "should the query contain all of ``keys``?"."""
        if self.kind == "gold-features":
            return YES if self.inner.own_answer(keys) else NO
        s = self.session
        realisers = s.alive & self.inner.realisers
        if not realisers.any():
            own = self.inner._own_keys
            return YES if own and all(k in own for k in keys) else (NO if own else NOT_SPECIFIED)
        holds = s._mask_for(keys) & realisers
        if holds.sum() == realisers.sum():
            return YES
        return NO if not holds.any() else NOT_SPECIFIED

    def answer(self, variable: RankedVariable) -> str:
        return self.answer_keys(variable.keys)


def run_structured(session: RepairSession, gold: int | Target, variant: str, *,
                   user: str = "pool-informed", **params: Any) -> Episode:
    """One structured-agent episode for target ``gold`` with the simulated chat user ``user``."""
    return StructuredAgent(variant, **params).run(session, SimulatedChatUser(session, gold, user))


def realiser_masks(session: RepairSession) -> list[np.ndarray]:
    """Per gold: which pool candidates produce its output (all False when none does)."""
    return [SimulatedUser(session, g).realisers.copy() for g in range(len(session.pool.gold_sqls))]


_WORD = re.compile(r"[a-z0-9]+")


class MatchingUser:
    """The two-stage simulated user (App. B): map a question to a decision variable, answer it.

    A free-text question is matched to the session's variable whose rendered question shares
    the most words (Jaccard ≥ ``min_overlap``); unmatched questions are "not specified".
    """

    def __init__(self, chat: SimulatedChatUser, min_overlap: float = 0.35):
        self.chat = chat
        self.min_overlap = min_overlap
        s = chat.session
        self.options = [(v.keys, set(_WORD.findall(render_question(v.features, s.pool.dialect)
                                                   .lower()))) for v in s.variables()]
        self.matched: list[tuple[str, ...] | None] = []  # per question asked

    def __call__(self, question: str) -> str:
        words = set(_WORD.findall(question.lower()))
        best, score = None, 0.0
        for keys, opt in self.options:
            j = len(words & opt) / max(1, len(words | opt))
            if j > score:
                best, score = keys, j
        if best is None or score < self.min_overlap:
            self.matched.append(None)
            return NOT_SPECIFIED
        self.matched.append(best)
        return self.chat.answer_keys(best)


def llm_runner(model: str | None = None, **kwargs: Any) -> Callable[..., tuple[Episode, str | None]]:
    """A per-run callable for :func:`core.planpool.evaluate.evaluate_task` (--agent llm)."""
    agent = LLMAgent(model=model or DEFAULT_MODEL, **kwargs)

    def run(task: Any, pool: Any, session: Any, gold: Any, variant: str,
            user_kind: str = "pool-informed") -> tuple[Episode, str | None]:
        user = MatchingUser(SimulatedChatUser(session, gold, user_kind))
        db = open_database(task.database)
        try:
            llm = agent.run(task.question, db, user, variant)
            key = output_key(db.execute(llm.submitted_sql)) if llm.submitted_sql else None
        finally:
            db.close()
        asked = [{"keys": list(k or ()), "text": a["text"], "answer": a["answer"]}
                 for a, k in zip(llm.asked, user.matched, strict=True)]
        ep = Episode(variant, asked,
                     stop=llm.stop, submitted_sql=llm.submitted_sql,
                     pool=llm.pool.to_dict() if llm.pool else None)
        ep.planned = llm.pool.stats()["planned"] if llm.pool else 0
        return ep, key

    return run


__all__ = ["MatchingUser", "SimulatedChatUser", "llm_runner", "realiser_masks", "run_structured"]
