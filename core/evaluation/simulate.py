"""Simulated users who want one target output, for the §7 evaluation.

Two users answer the engine's Yes/No questions; both judge the output a session ends on.

- ``pool-informed`` (:class:`SimulatedUser`) — an **optimistic bound**. It knows which surviving
  candidates produce the target's output (its *realisers*) and says Yes iff the variable holds
  for at least half of their weight, so a truthful answer never removes every realiser and a
  realised target stays reachable. Only when no realiser survives does it fall back to the
  target SQL's own features. No real user knows the pool like this.
- ``gold-features`` (:class:`GoldFeatureUser`) — the **honest** user. It knows only the target
  SQL's own features, read with the task's schema and exactly the candidates' canonicalisation
  (:func:`core.engine.pool.candidate_features`), and the target's *output* (the same knowledge
  it judges a shown output with): questions about the answer (:mod:`core.engine.answers`) are
  answered from that output and the database's column values
  (:func:`core.engine.answers.answer_keys`), never from the pool. It says Yes iff every
  feature of the variable is among these. It knows nothing about the pool, so it can answer a
  pool into a wrong output.

Judging: shown the predicted output, either user accepts iff it equals the target's output as a
row multiset with column order ignored (:func:`output_matches`). When the user looks at it is
the evaluation's ``look`` (:data:`LOOK_NOTES`): when one output is left, or before every
question too (the workspace shows it at every step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import permutations, product
from typing import Any

import numpy as np
import sqlglot

from core.engine.answers import answer_keys, profile_of
from core.engine.execute import ExecutionResult
from core.engine.pool import PreparedPool, candidate_features
from core.engine.session import RankedVariable, RepairSession
from core.engine.similarity import ERROR_CLASS, canonical_table, output_key

USERS = ("gold-features", "pool-informed")
DEFAULT_USER = "gold-features"
USER_NOTES = {
    "pool-informed": "OPTIMISTIC bound: knows which candidates produce the target's output and "
                     "answers so that they survive",
    "gold-features": "HONEST: knows only the target SQL's own features (schema-aware, the "
                     "candidates' canonicalisation) and its output (questions about the answer "
                     "are answered from it); Yes iff all of a question's features are among "
                     "them; knows nothing about the pool",
}
LOOKS = ("end", "each")  # when the user judges the predicted output (core.evaluate --look)
DEFAULT_LOOK = "end"
LOOK_NOTES = {
    "end": "the user judges the predicted output when one output is left (the paper's protocol)",
    "each": "the user reads the predicted output before every question, as the workspace shows "
            "it, and accepts it as soon as it is theirs (no turn); rejecting still waits for one "
            "output; the Huffman and tree floors count questions to one output and do not bound "
            "these turns",
}
MAX_PERMUTATIONS = 5040  # column permutations tried when tied columns make the key ambiguous


def output_matches(a: ExecutionResult | None, b: ExecutionResult | None) -> bool:
    """Whether two outputs are the same row multiset up to a permutation of columns.

    :func:`~core.engine.similarity.output_key` orders columns by their sorted values, which is
    ambiguous when two columns hold the same multiset of values (``(1,2),(2,3),(3,1)`` vs its
    column swap); here tied columns are also tried in every order.
    """
    if a is None or b is None or not a.ok or not b.ok:
        return False
    if output_key(a) == output_key(b):
        return True
    if len(a.columns) != len(b.columns) or len(a.rows) != len(b.rows) or not a.rows:
        return False
    want = canonical_table(a)
    rows = [tuple(r) for r in canonical_table(b)]
    ncols = len(b.columns)
    groups: dict[tuple[str, ...], list[int]] = {}
    for j in range(ncols):
        groups.setdefault(tuple(sorted(r[j] for r in rows)), []).append(j)
    tied = [g for g in groups.values() if len(g) > 1]
    if not tied or math.prod(math.factorial(len(g)) for g in tied) > MAX_PERMUTATIONS:
        return False
    for choice in product(*(permutations(g) for g in tied)):
        order = list(range(ncols))
        for group, perm in zip(tied, choice, strict=True):
            for src, dst in zip(group, perm, strict=True):
                order[src] = dst
        if tuple(sorted(tuple(r[order[j]] for j in range(ncols)) for r in rows)) == want:
            return True
    return False


def own_feature_keys(sql: str, pool: PreparedPool, schema: dict[str, list[str]] | None,
                     *, conjuncts: bool = False) -> frozenset[str]:
    """Feature keys of ``sql`` read exactly as the pool's candidates are (empty if unparsable).

    A pool that keeps what its features read (schema, NOT NULL columns) reads ``sql`` itself;
    otherwise the given ``schema`` is used with the candidates' extraction.
    """
    try:
        if getattr(pool, "schema", None) and not conjuncts:
            return frozenset(f.key for f in pool.features_of(sql))
        extra = {"not_null": pool.not_null} if getattr(pool, "not_null", None) else {}
        vocab, _ = candidate_features([sql], [ExecutionResult()], pool.dialect,
                                      getattr(pool, "schema", None) or schema or {},
                                      conjuncts=conjuncts, **extra)
    except sqlglot.errors.SqlglotError:
        return frozenset()
    return frozenset(f.key for f in vocab)


@dataclass(frozen=True)
class Target:
    """What a simulated user wants: an output, and the SQL whose features it knows.

    ``kind`` is 'gold' (the task's gold ``index``) or 'class' (functional class ``index``, its
    most frequent candidate standing in for the gold). ``weight`` is the target's share of its
    task (prior population) or 1; ``depth`` the Huffman depth of its class (None: no candidate
    realises it).
    """

    kind: str
    index: int
    sql: str
    result: ExecutionResult
    own_keys: frozenset[str]
    weight: float = 1.0
    depth: int | None = None

    @property
    def key(self) -> str:
        return output_key(self.result)


def target_keys(sql: str, result: ExecutionResult, pool: PreparedPool,
                schema: dict[str, list[str]] | None, *, conjuncts: bool = False) -> frozenset[str]:
    """What a person who wants ``sql``'s output says Yes to: its own clause features and the
    answer features of its output, typed with the task database's values
    (:func:`core.engine.answers.answer_keys`; the pool gives only its schema and database)."""
    return own_feature_keys(sql, pool, schema, conjuncts=conjuncts) | answer_keys(
        result, profile_of(pool.database))


def gold_target(pool: PreparedPool, gold: int, schema: dict[str, list[str]] | None = None,
                **kw: Any) -> Target:
    """Gold ``gold`` of ``pool`` as a target (``kw``: weight, depth, conjuncts)."""
    conj = bool(kw.pop("conjuncts", False))
    return Target("gold", gold, pool.gold_sqls[gold], pool.gold_results[gold],
                  target_keys(pool.gold_sqls[gold], pool.gold_results[gold], pool, schema,
                              conjuncts=conj), **kw)


class _User:
    """Shared part of both users: the target, its realisers in the session's current pool."""

    kind = ""

    def __init__(self, session: RepairSession, target: Target):
        self.session = session
        self.target = target
        self.target_key = target.key
        self._own_keys = set(target.own_keys)
        self._realisers: tuple[int, np.ndarray] | None = None

    @property
    def realisers(self) -> np.ndarray:
        """Per candidate of the (possibly repaired) pool: does it produce the target's output?"""
        pool = self.session.pool
        if self._realisers is None or self._realisers[0] != pool.n:
            ok = self.target_key != ERROR_CLASS
            keys = [ok and k == self.target_key for k in pool.class_keys]
            self._realisers = (pool.n, np.array([keys[c] for c in pool.class_index], dtype=bool))
        return self._realisers[1]

    @property
    def realised(self) -> bool:
        """Whether some candidate of the pool produces the target's output."""
        return bool(self.realisers.any())

    def own_answer(self, keys: tuple[str, ...]) -> bool:
        """Yes iff every feature is among the target SQL's own features."""
        return bool(self._own_keys) and all(k in self._own_keys for k in keys)

    def answer(self, variable: RankedVariable) -> bool:
        return self.answer_keys(variable.keys)

    def answer_keys(self, keys: tuple[str, ...]) -> bool:
        raise NotImplementedError

    def accepts(self, result: ExecutionResult | None) -> bool:
        """Shown an output: Yes iff it is the target's output (rows as a multiset, any column order)."""
        return output_matches(result, self.target.result)

    def succeeded(self) -> bool:
        """Every survivor's output equals the target's output."""
        return bool(self.realisers[self.session.survivors].all())


class SimulatedUser(_User):
    """The pool-informed user (optimistic bound); see the module docstring."""

    kind = "pool-informed"

    def __init__(self, session: RepairSession, gold: int | Target,
                 schema: dict[str, list[str]] | None = None):
        target = gold if isinstance(gold, Target) else gold_target(session.pool, gold, schema)
        super().__init__(session, target)

    def answer_keys(self, keys: tuple[str, ...]) -> bool:
        """True (Yes) iff the variable holds for most of the surviving realisers' weight."""
        s = self.session
        alive_realisers = s.alive & self.realisers
        if not alive_realisers.any():
            return all(k in self._own_keys for k in keys)
        mask = s._mask_for(keys)
        w = s.pool.counts
        yes = float(w[alive_realisers & mask].sum())
        return yes >= float(w[alive_realisers].sum()) / 2


class GoldFeatureUser(_User):
    """The gold-features user (honest): answers from the target SQL's own features only."""

    kind = "gold-features"

    def answer_keys(self, keys: tuple[str, ...]) -> bool:
        return self.own_answer(keys)


def make_user(kind: str, session: RepairSession, target: Target) -> _User:
    """The simulated user named ``kind`` (one of :data:`USERS`) wanting ``target``."""
    if kind == "pool-informed":
        return SimulatedUser(session, target)
    if kind == "gold-features":
        return GoldFeatureUser(session, target)
    raise ValueError(f"unknown simulated user {kind!r}; choose one of {', '.join(USERS)}")


__all__ = ["DEFAULT_LOOK", "DEFAULT_USER", "LOOKS", "LOOK_NOTES", "USERS", "USER_NOTES", "GoldFeatureUser", "SimulatedUser", "Target",
           "gold_target", "make_user", "output_matches", "own_feature_keys", "target_keys"]
