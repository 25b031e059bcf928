"""The derived views of a repair session: what is computed from its state, never state itself.

Clusters of the survivors, the mined and ranked decision variables, the predicted query and the
predicted output (and the query the session would submit) are functions of the pool and the
survivors at a step. :class:`SessionViews` computes them for :class:`~core.engine.session.
RepairSession` (its base class) and memoises each per step *and* pool (``_memo``), so a view of
a repaired pool can never outlive Back. The view types the UI and the evaluation read,
:class:`RankedVariable` and :class:`FeatureBelief`, live here and are re-exported by
:mod:`core.engine.session`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.engine import answers as answers_module
from core.engine.answers import (
    HYBRID_AFTER,
    HYBRID_FALLBACK,
    HYBRID_GUESS,
    askable,
    asked_vocabulary,
    is_answer,
    preferred,
    question_penalties,
    splits_an_output,
)
from core.engine.clustering import cluster_candidates
from core.engine.execute import ExecutionResult
from core.engine.features import Feature
from core.engine.planner import locate, pool_planner
from core.engine.strategy import GROUPED, pair_features, rank_variables
from core.engine.variables import DecisionVariable, mine_decision_variables

if TYPE_CHECKING:
    from core.engine.pool import PreparedPool
    from core.engine.session import Decision


@dataclass
class RankedVariable:
    """A decision variable as the UI and the evaluation see it (feature keys, not indices)."""

    features: tuple[Feature, ...]
    implicit: tuple[Feature, ...]
    gain: float
    kind: str
    example: int  # pool index of the example query
    yes_count: int  # survivors that contain it
    no_count: int
    cluster: int | None = None
    # lower bound on the expected questions to finish if this one is asked now (this one
    # included); set by the expected-depth strategy only
    expected_turns: float | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.features)

    @property
    def label(self) -> str:
        return " ∧ ".join(self.keys)


@dataclass
class FeatureBelief:
    """An atomic feature of the survivors with its probability (Predicted Query panel)."""

    feature: Feature
    probability: float
    confirmed: bool  # the user said Yes to it (directly or within a variable)

    @property
    def determined(self) -> bool:
        return self.probability >= 1.0 - 1e-9


class SessionViews:
    """The derived views of :class:`~core.engine.session.RepairSession`, memoised per step and
    pool; the session holds the state they read (pool, survivors, history, settings)."""

    if TYPE_CHECKING:  # the state, defined by RepairSession
        strategy: str
        questions: str
        max_clusters: int
        min_support: float
        random_state: int
        history: list[Decision]
        _cache: dict[tuple[int, int, str], Any]

        @property
        def pool(self) -> PreparedPool: ...
        @property
        def step(self) -> int: ...
        @property
        def alive(self) -> np.ndarray: ...
        @property
        def survivors(self) -> np.ndarray: ...
        @property
        def survivor_weight(self) -> float: ...
        @property
        def is_done(self) -> bool: ...
        @property
        def is_exhausted(self) -> bool: ...

    def _memo(self, name: str, compute: Callable[[], Any]) -> Any:
        key = (self.step, id(self.pool), name)
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # ----- derived views -------------------------------------------------------------------
    def clusters(self) -> np.ndarray:
        """Cluster label per survivor (re-chosen for the current survivors)."""
        pool = self.pool
        if self.is_exhausted:
            return np.zeros(0, dtype=int)
        return self._memo("clusters", lambda: cluster_candidates(
            pool.class_index[self.alive], pool.class_distance, self.max_clusters))

    def cluster_of(self) -> dict[int, int]:
        """Pool index -> cluster label for the survivors."""
        return dict(zip(self.survivors.tolist(), self.clusters().tolist(), strict=True))

    @property
    def asking(self) -> str:
        """The vocabulary asked from at this step (``hybrid``: clauses until an output was
        rejected, then :data:`core.engine.answers.HYBRID_AFTER`, or
        :data:`~core.engine.answers.HYBRID_FALLBACK` where only a clause can tell the likely
        outputs apart: :meth:`_shows_an_output`)."""
        override = getattr(self, "_asking_override", None)
        if override is not None:
            return str(override)
        asking = asked_vocabulary(self.questions, any(d.kind == "reject" for d in self.history))
        if (self.questions == "hybrid" and asking == HYBRID_AFTER and HYBRID_FALLBACK
                and not self._memo("shows an output", self._shows_an_output)):
            return HYBRID_FALLBACK
        if (self.questions == "hybrid" and asking == "clauses" and answers_module.HYBRID_SPELLING
                and self._memo("only spelling", self._only_spelling)):
            return answers_module.HYBRID_SPELLING
        if (self.questions == "hybrid" and asking == "clauses"
                and answers_module.HYBRID_SAME_SPLIT
                and self._memo("same split", self._same_split)):
            return answers_module.HYBRID_SAME_SPLIT
        return asking

    def _clause_questions(self) -> list[RankedVariable]:
        """The ranked clause questions of this step, as `clauses` would ask them (what the
        hybrid rules compare a question about the answer with)."""
        self._asking_override: str | None = "clauses"
        try:
            return self.variables()
        finally:
            self._asking_override = None

    def _only_spelling(self) -> bool:
        """Whether the clause question this step would ask splits one of the surviving outputs
        (a question about spelling: a gold spelled otherwise is answered away by it)."""
        ranked = self._clause_questions()
        if not ranked:
            return False
        idx = self.survivors[self.pool.valid[self.survivors]]
        where = {f: j for j, f in enumerate(self.pool.vocabulary)}
        cols = [where[f] for f in ranked[0].features if f in where]
        if not cols:
            return False
        mask = np.asarray(self.pool.x[np.ix_(idx, cols)], dtype=bool).all(axis=1).reshape(1, -1)
        return bool(np.asarray(splits_an_output(mask, self.pool.class_index[idx])).any())

    def _same_split(self) -> bool:
        """Whether a question about the answer splits the surviving valid outputs exactly as
        the clause question this step would ask does (so asking it loses no information about
        the outputs, and cannot answer a gold spelled unlike the pool away), for a clause
        question :func:`~core.engine.answers.same_split_clause` admits (not a SELECT list)."""
        ranked = self._clause_questions()
        if not ranked:
            return False
        idx = self.survivors[self.pool.valid[self.survivors]]
        where = {f: j for j, f in enumerate(self.pool.vocabulary)}
        if not all(answers_module.same_split_clause(f) for f in ranked[0].features):
            return False  # e.g. a SELECT list, which repair builds unrealised golds from
        cols = [where[f] for f in ranked[0].features if f in where]
        answer_cols = np.flatnonzero(askable(self.pool.vocabulary, "outputs"))
        if not cols or not len(answer_cols) or not len(idx):
            return False
        _, first = np.unique(self.pool.class_index[idx], return_index=True)
        rows = idx[first]  # one candidate per output: answers are functions of the output
        split = np.asarray(self.pool.x[np.ix_(rows, cols)], dtype=bool).all(axis=1).reshape(-1)
        if split.all() or not split.any():
            return False
        answers = np.asarray(self.pool.x[np.ix_(rows, answer_cols)], dtype=bool)
        same = (answers == split[:, None]).all(axis=0) | (answers == ~split[:, None]).all(axis=0)
        return bool(same.any())

    def _shows_an_output(self) -> bool:
        """Whether the outputs-only step may end here by showing an output: at most one valid
        output survives, one holds :data:`~core.engine.answers.HYBRID_GUESS` of their weight
        (shown, it is likely enough accepted), or a question about the answer splits them.
        Otherwise a clause question is cheaper than a likely rejection and repair round."""
        idx = self.survivors[self.pool.valid[self.survivors]]
        classes = self.pool.class_index[idx]
        if len(np.unique(classes)) < 2:
            return True
        mass = np.bincount(classes, weights=self.pool.counts[idx])
        if mass.max() >= HYBRID_GUESS * mass.sum():
            return True
        cols = np.flatnonzero(askable(self.pool.vocabulary, HYBRID_AFTER))
        x = self.pool.x[np.ix_(idx, cols)]
        return bool((x.any(axis=0) & ~x.all(axis=0)).any())

    def askable(self) -> np.ndarray:
        """Which features of the current pool the session's questions may be about."""
        return askable(self.pool.vocabulary, self.asking)

    def _mined(self) -> list[DecisionVariable]:
        def compute() -> list[DecisionVariable]:
            idx = self.survivors
            grouped = self.strategy in GROUPED
            planned = self._plan()
            return mine_decision_variables(
                self.pool.x[idx], self.pool.counts[idx], self.clusters(),
                grouped=grouped, min_support=self.min_support,
                also=(planned[0],) if planned and len(planned[0]) > 1 else (),
                allowed=self.askable(), prefer=preferred(self.pool.vocabulary, self.asking),
                pairs=pair_features(len(idx)) if self.strategy == "expected-depth" else 0)
        return self._memo("mined " + self.asking, compute)

    def _plan(self) -> tuple[tuple[int, ...], float] | None:
        """``planned``'s next question (feature indices) and its expected questions left, or
        None: another strategy, a pool too big to plan, or no plan from here.

        After a rejection the plan's model (the intent is one of the sampled outputs, as the
        pool spells it most often) is refuted for the rejected output only: the plan is made
        again over what survives — on the pool as repair extended it (one planner per extended
        pool, solved when first asked), so the added candidates' own features count.
        """
        def compute() -> tuple[tuple[int, ...], float] | None:
            if self.strategy != "planned":
                return None
            planner, vocab = pool_planner(self.pool, max_clusters=self.max_clusters,
                                          min_support=self.min_support,
                                          questions=self.asking)
            plan = planner.plan(self.alive) if planner is not None else None
            return None if plan is None or plan.best is None else (vocab[plan.best],
                                                                   plan.expected)
        return self._memo("plan " + self.asking, compute)

    def variables(self) -> list[RankedVariable]:
        """Splitting decision variables, best first under the session's strategy.

        Empty once the session is done: survivors that are functionally identical differ only
        in how they are written, and no question about them tells the intents apart (the
        clause-level path, ``answer_feature``, still lets a user pick among them).
        """
        def compute() -> list[RankedVariable]:
            if self.is_done or self.is_exhausted:
                return []
            idx = self.survivors
            mined = self._mined()
            plan = self._plan()
            lead = locate(mined, plan[0], self.pool.x[idx]) if plan else None
            vocab = self.pool.vocabulary
            valid = self.pool.valid[idx]
            penalties = question_penalties(
                [tuple(vocab[j] for j in v.features) for v in mined],
                np.array([v.mask[valid] for v in mined]).reshape(len(mined), int(valid.sum())),
                self.pool.class_index[idx][valid], self.asking)
            ordered = rank_variables(
                self.strategy, mined, self.pool.counts[idx], self.pool.class_index[idx],
                self.clusters(), rng_seed=(self.random_state, self.step),
                counted=valid,
                planned=None if lead is None or plan is None else (lead, plan[1]),
                penalties=penalties)
            return [RankedVariable(
                tuple(vocab[j] for j in v.features), tuple(vocab[j] for j in v.implicit),
                float(v.gain), v.kind, int(idx[v.example]), int(v.mask.sum()),
                int((~v.mask).sum()), v.cluster, v.extra.get("expected_turns"))
                for v in ordered]
        return self._memo("variables " + self.asking, compute)

    def next_variable(self) -> RankedVariable | None:
        ranked = self.variables()
        return ranked[0] if ranked else None

    def _confirmed(self) -> set[str]:
        out: set[str] = set()
        for d in self.history:
            if d.kind in ("variable", "feature") and d.answer:
                out.update(d.features)
        return out

    def predicted_query(self) -> list[FeatureBelief]:
        """Features of the valid survivors with their weighted probability, most likely first."""
        def compute() -> list[FeatureBelief]:
            idx = self.survivors[self.pool.valid[self.survivors]]
            if len(idx) == 0:
                return []
            w = self.pool.counts[idx]
            p = (w @ self.pool.x[idx]) / float(w.sum())
            confirmed = self._confirmed()
            beliefs = [FeatureBelief(f, float(p[j]), f.key in confirmed)
                       for j, f in enumerate(self.pool.vocabulary)
                       if p[j] > 0 and not is_answer(f)]  # clauses only: it shows the query
            beliefs.sort(key=lambda b: (b.feature.sort_key()[0], -b.probability,
                                        b.feature.value))
            return beliefs
        return self._memo("predicted_query", compute)

    def class_weights(self) -> list[tuple[int, float, int]]:
        """(class position, weight, candidates) of the surviving functional classes, heaviest first."""
        idx = self.survivors
        classes = self.pool.class_index[idx]
        out = []
        for c in np.unique(classes):
            members = idx[classes == c]
            out.append((int(c), float(self.pool.counts[members].sum()), len(members)))
        out.sort(key=lambda t: (self.pool.class_keys[t[0]] == "error", -t[1], t[0]))
        return out

    def predicted_output(self) -> tuple[ExecutionResult | None, float, int]:
        """Output of the most probable valid class, its weight share and candidate count."""
        weights = self.class_weights()
        if not weights or self.pool.class_keys[weights[0][0]] == "error":
            return None, 0.0, 0
        cls, w, count = weights[0]
        rep = int(np.flatnonzero(self.alive & (self.pool.class_index == cls))[0])
        return self.pool.results[rep], w / self.survivor_weight, count

    def best_candidate(self) -> int | None:
        """Pool index of the query the session would submit now (heaviest of the top class)."""
        weights = self.class_weights()
        if not weights:
            return None
        members = np.flatnonzero(self.alive & (self.pool.class_index == weights[0][0]))
        return int(members[np.argmax(self.pool.counts[members])])


__all__ = ["FeatureBelief", "RankedVariable", "SessionViews"]
