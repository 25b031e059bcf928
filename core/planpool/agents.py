"""The offline structured clarification agent (PlanPool, §4–5).

The simulated chat user it is evaluated against is in :mod:`core.planpool.simulated`:
:class:`~core.planpool.simulated.SimulatedChatUser` is one of the evaluation's two users
(:mod:`core.evaluation.simulate`).
``pool-informed`` (an optimistic bound: it knows the pool) answers "yes", "no" or "not
specified": Yes/No only when the target's interpretation determines the answer — the variable
holds for all (Yes) or none (No) of the surviving candidates that realise the target's output —
and "not specified" when those realisers are split (the target does not care how that part is
written); with no realiser surviving it falls back to the target's own features.
``gold-features`` (honest: it knows only the target SQL's own features, read like the
candidates') says "yes" iff every feature of the question is among them, else "no".

:class:`StructuredAgent` asks decision variables of a :class:`RepairSession` phrased by
:mod:`core.planpool.questions`. Variants (paper §5): ``naive`` asks the top variable while its gain is
above ``gain_threshold`` and stops early once the top output class holds ``confidence`` of the
survivors' weight; ``plan-prompt`` makes a top-k plan but stops like naive (planned questions
may be abandoned); ``planpool`` keeps the plan in a :class:`QuestionPool`, drops questions that
no longer split the survivors ('resolved by earlier answers'), adds a variable that becomes
informative after re-clustering, and submits only when the pool is empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.engine.session import RankedVariable, RepairSession
from core.planpool.pool import Clock, QuestionPool, epoch_ms
from core.planpool.questions import render_question

VARIANTS = ("naive", "plan-prompt", "planpool")
YES, NO, NOT_SPECIFIED = "yes", "no", "not specified"
RESOLVED = "resolved by earlier answers"
UNSPECIFIED_REASON = "not specified by the user"


class ChatUser(Protocol):
    """Whoever answers the agent's questions (a simulated user in the evaluation)."""

    def answer_keys(self, keys: tuple[str, ...]) -> str:
        """'yes', 'no' or 'not specified' for "should the query contain all of ``keys``?"."""
        ...


@dataclass
class Episode:
    """What one agent run did: questions asked, pool history, the submitted candidate."""

    variant: str
    asked: list[dict[str, Any]] = field(default_factory=list)  # keys, text, answer
    planned: int = 0
    abandoned: int = 0  # planned questions never asked nor explicitly dropped
    submitted: int | None = None  # pool index of the submitted candidate
    submitted_sql: str | None = None
    stop: str = ""
    pool: dict[str, Any] | None = None  # QuestionPool.to_dict() for planpool

    @property
    def asked_keys(self) -> list[tuple[str, ...]]:
        return [tuple(a["keys"]) for a in self.asked]


def splits(session: RepairSession, keys: tuple[str, ...]) -> bool:
    """Whether a variable still tells survivors' outputs apart (some class on one side only)."""
    idx = session.survivors
    mask = session._mask_for(keys)[idx]
    if mask.all() or not mask.any():
        return False
    classes = session.pool.class_index[idx]
    return set(classes[mask].tolist()) != set(classes[~mask].tolist())


class StructuredAgent:
    """Asks decision variables in one of :data:`VARIANTS`; parameters only in ``__init__``."""

    def __init__(self, variant: str = "planpool", *, k: int = 5, gain_threshold: float = 0.05,
                 confidence: float = 0.8, max_turns: int = 30, clock: Clock = epoch_ms):
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
        self.variant = variant
        self.k = k
        self.gain_threshold = gain_threshold
        self.confidence = confidence
        self.max_turns = max_turns
        self.clock = clock

    # ----- shared steps -------------------------------------------------------------------
    def _confident(self, session: RepairSession) -> bool:
        _, share, _ = session.predicted_output()
        return share >= self.confidence

    def _ask(self, session: RepairSession, user: ChatUser, keys: tuple[str, ...],
             text: str, episode: Episode) -> str:
        reply = user.answer_keys(keys)
        episode.asked.append({"keys": list(keys), "text": text, "answer": reply})
        if reply != NOT_SPECIFIED:
            session.answer(keys, reply == YES)
        return reply

    def _unseen(self, session: RepairSession, seen: set[tuple[str, ...]]) -> RankedVariable | None:
        for v in session.variables():
            if v.keys not in seen:
                return v if v.gain > self.gain_threshold else None
        return None

    def _finish(self, session: RepairSession, episode: Episode, stop: str) -> Episode:
        episode.stop = stop
        episode.submitted = session.best_candidate()
        if episode.submitted is not None:
            episode.submitted_sql = session.pool.sqls[episode.submitted]
        return episode

    def _text(self, session: RepairSession, v: RankedVariable) -> str:
        return render_question(v.features, session.pool.dialect)

    # ----- variants ------------------------------------------------------------------------
    def run(self, session: RepairSession, user: ChatUser) -> Episode:
        """Clarify with ``user`` and submit; the session is filtered by the answers."""
        if self.variant == "planpool":
            return self._planpool(session, user)
        episode = Episode(self.variant)
        seen: set[tuple[str, ...]] = set()
        plan: list[RankedVariable] = []
        if self.variant == "plan-prompt":
            plan = [v for v in session.variables()[: self.k] if v.gain > self.gain_threshold]
            episode.planned = len(plan)
        stop = "no informative question left"
        while len(episode.asked) < self.max_turns:
            if self._confident(session):
                stop = "confident"
                break
            while plan and not splits(session, plan[0].keys):
                seen.add(plan.pop(0).keys)  # silently skipped: the plan lives only in text
            v = plan.pop(0) if plan else self._unseen(session, seen)
            if v is None:
                break
            seen.add(v.keys)
            self._ask(session, user, v.keys, self._text(session, v), episode)
        else:
            stop = "turn budget"
        episode.abandoned = sum(1 for v in plan if v.keys not in seen)
        return self._finish(session, episode, stop)

    def _planpool(self, session: RepairSession, user: ChatUser) -> Episode:
        episode = Episode("planpool")
        pool = QuestionPool(self.clock)
        initial = [v for v in session.variables()[: self.k] if v.gain > self.gain_threshold]
        pool.init([{"text": self._text(session, v), "priority": float(len(initial) - i),
                    "payload": {"keys": list(v.keys)}} for i, v in enumerate(initial)])
        episode.planned = len(initial)
        seen = {v.keys for v in initial}
        while not pool.is_empty and len(episode.asked) < self.max_turns:
            q = pool.next()
            keys = tuple(q.payload["keys"])
            reply = self._ask(session, user, keys, q.text, episode)
            if reply == NOT_SPECIFIED:
                pool.drop(q.id, UNSPECIFIED_REASON)
            else:
                pool.answer(q.id, reply)
            for other in pool.pending:
                if not splits(session, tuple(other.payload["keys"])):
                    pool.drop(other.id, RESOLVED)
            new = self._unseen(session, seen)
            if new is not None:
                seen.add(new.keys)
                pool.add(self._text(session, new), new.gain, {"keys": list(new.keys)})
        stop = "pool empty"
        for q in pool.open:  # the turn budget ran out: account for the rest explicitly
            pool.drop(q.id, "turn budget exhausted")
            stop = "turn budget"
        self._finish(session, episode, stop)
        pool.submit(episode.submitted_sql or "")
        episode.pool = pool.to_dict()
        return episode


__all__ = ["NOT_SPECIFIED", "RESOLVED", "VARIANTS", "ChatUser", "Episode", "StructuredAgent",
           "splits"]
