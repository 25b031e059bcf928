"""The repair session: the serialisable state of one user's pragmatic repair of one task.

State is the pool plus an ordered list of :class:`Decision` s (Yes/No on a decision variable or
an atomic feature, or a restriction to a selected subset). Everything else — survivors,
clusters, ranked variables, predicted query and output — is derived, cached per step, and
reproduced exactly by replaying the decisions (``RepairSession.from_dict``). Undo is popping a
decision. Decisions name features by their keys (``"SELECT film.title"``), so traces stay
readable and replayable. Two decisions serve repair (:mod:`core.engine.repair`): ``reject``
drops the survivors with a given output ("this is not the output I want"), and ``repair`` adds
candidates (their SQL is stored, so replay re-executes them instead of re-generating them); the
session then works on an extended copy of the pool, never on the shared one.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine.answers import (
    DEFAULT_QUESTIONS,
    askable,
    check_questions,
    is_answer,
    preferred,
    question_penalties,
    with_answers,
)
from core.engine.clustering import DEFAULT_MAX_CLUSTERS, cluster_candidates
from core.engine.errors import SessionError
from core.engine.execute import ExecutionResult, TaskDatabase, open_database
from core.engine.features import Feature
from core.engine.planner import locate, pool_planner
from core.engine.pool import PreparedPool, extend_pool
from core.engine.similarity import output_key
from core.engine.strategy import (
    DEFAULT_STRATEGY,
    GROUPED,
    PAIR_FEATURES,
    STRATEGIES,
    rank_variables,
)
from core.engine.taskbank import DatabaseSpec
from core.engine.variables import DecisionVariable, mine_decision_variables


@dataclass(frozen=True)
class Decision:
    """One user decision; ``kind`` is 'variable', 'feature', 'restrict', 'reject' or 'repair'.

    'reject' names output keys in ``outputs``; 'repair' carries the added ``sqls`` with their
    ``weights`` (prior counts) and its method in ``gesture`` (recompose | resample).
    """

    kind: str
    features: tuple[str, ...] = ()
    answer: bool | None = None
    candidates: tuple[int, ...] = ()
    gesture: str = ""  # for 'restrict': lasso | box | click | cluster; for 'repair': method
    outputs: tuple[str, ...] = ()
    sqls: tuple[str, ...] = ()
    weights: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "features": list(self.features),
                             "answer": self.answer, "candidates": list(self.candidates),
                             "gesture": self.gesture}
        if self.outputs:
            d["outputs"] = list(self.outputs)
        if self.sqls:
            d["sqls"] = list(self.sqls)
            d["weights"] = list(self.weights)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Decision:
        return cls(d["kind"], tuple(d.get("features", ())), d.get("answer"),
                   tuple(int(c) for c in d.get("candidates", ())), d.get("gesture", ""),
                   tuple(d.get("outputs", ())), tuple(d.get("sqls", ())),
                   tuple(float(w) for w in d.get("weights", ())))


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


class RepairSession:
    """Pragmatic repair over one prepared pool; see the module docstring."""

    def __init__(self, pool: PreparedPool, *, strategy: str = DEFAULT_STRATEGY,
                 max_clusters: int = DEFAULT_MAX_CLUSTERS, min_support: float = 0.5,
                 random_state: int = 0, database: TaskDatabase | DatabaseSpec | None = None,
                 questions: str = DEFAULT_QUESTIONS, values: bool = False):
        if strategy not in STRATEGIES:
            raise SessionError(f"unknown strategy '{strategy}'; choose one of {', '.join(STRATEGIES)}")
        try:
            self.questions = check_questions(questions)
        except ValueError as exc:
            raise SessionError(str(exc)) from None
        # value questions ("should X be in the answer?") only with answer questions
        self.values = bool(values) and questions != "clauses"
        self.origin_pool = pool  # the prepared pool as given (base_pool may add answer features)
        if questions != "clauses":
            from core.engine.answers import profile_of

            db = database if database is not None else pool.database
            pool = with_answers(pool, values=self.values,
                                profile=profile_of(db) if db is not None else None)
        self.strategy = strategy
        self.max_clusters = max_clusters
        self.min_support = min_support
        self.random_state = random_state
        self.history: list[Decision] = []
        self._pools: list[PreparedPool] = [pool]
        self._alive: list[np.ndarray] = [np.ones(pool.n, dtype=bool)]
        # derived views per state: (step, id of the step's pool, name); the pool is part of the
        # key, so a view of one pool can never be read for another (repair extends the pool,
        # Back takes the extension back)
        self._cache: dict[tuple[int, int, str], Any] = {}
        self._cols: dict[int, tuple[PreparedPool, dict[str, int]]] = {}
        self._database = database if database is not None else pool.database

    @property
    def pool(self) -> PreparedPool:
        """The pool at this step: the prepared one, or its copy extended by repair."""
        return self._pools[-1]

    @property
    def base_pool(self) -> PreparedPool:
        """The pool the session started from (shared, never changed): the prepared pool, or
        its copy with the answer questions (:attr:`origin_pool` is the one given)."""
        return self._pools[0]

    @property
    def _col(self) -> dict[str, int]:
        pool = self.pool
        entry = self._cols.get(id(pool))
        if entry is None or entry[0] is not pool:  # the entry holds its pool: ids stay unique
            entry = self._cols[id(pool)] = (pool, {f.key: j for j, f in
                                                   enumerate(pool.vocabulary)})
        return entry[1]

    @property
    def database(self) -> TaskDatabase:
        """The task database repair executes new candidates on (opened on first use)."""
        if self._database is None:
            raise SessionError("repair needs the task's database: pass database= to "
                               "RepairSession (a TaskDatabase or the task's DatabaseSpec), or "
                               "load the pool with core.engine.prepare.load_prepared(task)")
        if isinstance(self._database, DatabaseSpec):
            self._database = open_database(self._database)
        return self._database

    @property
    def has_database(self) -> bool:
        return self._database is not None

    # ----- state -------------------------------------------------------------------------
    @property
    def step(self) -> int:
        return len(self.history)

    @property
    def alive(self) -> np.ndarray:
        """Boolean mask over the pool: which candidates survive (always ``pool.n`` long)."""
        return self._alive[-1]

    def alive_at(self, step: int) -> np.ndarray:
        """The survivors after ``step`` decisions as a mask over the current pool (candidates
        added by a later repair did not exist then, so they count as not surviving)."""
        mask = self._alive[step]
        return np.concatenate([mask, np.zeros(self.pool.n - len(mask), dtype=bool)])

    @property
    def survivors(self) -> np.ndarray:
        """Pool indices of the surviving candidates."""
        return np.flatnonzero(self.alive)

    @property
    def survivor_weight(self) -> float:
        return float(self.pool.counts[self.alive].sum())

    @property
    def n_classes(self) -> int:
        return len(np.unique(self.pool.class_index[self.alive]))

    @property
    def is_done(self) -> bool:
        """True when every survivor has the same output (functionally identical).

        An empty pool is done; a session whose outputs were all rejected is not (repair next).
        """
        return self.n_classes == 1 or (self.n_classes == 0 and not self.rejected_outputs())

    @property
    def is_exhausted(self) -> bool:
        """No candidate survives (every output was rejected): only repair can go on."""
        return not self.alive.any()

    @property
    def is_stuck(self) -> bool:
        """Not done, yet no variable splits the survivors (only the Action Space can help)."""
        return not self.is_done and not self.variables()

    def survivors_per_step(self) -> list[int]:
        """Survivors after each decision of the history (the Decisions list shows them)."""
        return [int(mask.sum()) for mask in self._alive[1:]]

    def rejected_outputs(self) -> set[str]:
        """Output keys the user rejected so far."""
        return {k for d in self.history if d.kind == "reject" for k in d.outputs}

    def answered(self) -> tuple[set[str], set[str]]:
        """(keys of features said Yes to, keys said No to on their own)."""
        yes: set[str] = set()
        no: set[str] = set()
        for d in self.history:
            if d.kind == "feature" or (d.kind == "variable" and d.answer):
                (yes if d.answer else no).update(d.features)
        return yes, no

    def no_sets(self) -> list[tuple[str, ...]]:
        """Feature sets the user said No to (a candidate holding all of one is ruled out)."""
        return [d.features for d in self.history
                if d.kind in ("variable", "feature") and d.answer is False]

    def _memo(self, name: str, compute):
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

    def askable(self) -> np.ndarray:
        """Which features of the current pool the session's questions may be about."""
        return askable(self.pool.vocabulary, self.questions)

    def _mined(self) -> list[DecisionVariable]:
        def compute() -> list[DecisionVariable]:
            idx = self.survivors
            grouped = self.strategy in GROUPED
            planned = self._plan()
            return mine_decision_variables(
                self.pool.x[idx], self.pool.counts[idx], self.clusters(),
                grouped=grouped, min_support=self.min_support,
                also=(planned[0],) if planned and len(planned[0]) > 1 else (),
                allowed=self.askable(), prefer=preferred(self.pool.vocabulary, self.questions),
                pairs=PAIR_FEATURES if self.strategy == "expected-depth" else 0)
        return self._memo("mined", compute)

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
                                          questions=self.questions)
            plan = planner.plan(self.alive) if planner is not None else None
            return None if plan is None or plan.best is None else (vocab[plan.best],
                                                                   plan.expected)
        return self._memo("plan", compute)

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
                self.pool.class_index[idx][valid], self.questions)
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
        return self._memo("variables", compute)

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

    # ----- decisions -------------------------------------------------------------------------
    def _mask_for(self, keys: tuple[str, ...]) -> np.ndarray:
        missing = [k for k in keys if k not in self._col]
        if missing:
            raise SessionError(f"feature {missing[0]!r} is not in this pool; answer a feature "
                               "shown in the Decision Space or Predicted Query")
        return np.asarray(self.pool.x[:, [self._col[k] for k in keys]].all(axis=1))

    def _apply(self, decision: Decision) -> np.ndarray:
        if decision.kind == "reject":
            keys = set(decision.outputs)
            rejected = np.array([self.pool.class_keys[c] in keys
                                 for c in self.pool.class_index], dtype=bool)
            return self.alive & ~rejected  # may leave none: repair comes next
        if decision.kind in ("variable", "feature"):
            if decision.answer is None or not decision.features:
                raise SessionError("a Yes/No decision needs features and an answer")
            mask = self._mask_for(decision.features)
            keep = mask if decision.answer else ~mask
        elif decision.kind == "restrict":
            keep = np.zeros(self.pool.n, dtype=bool)
            ids = [c for c in decision.candidates if 0 <= c < self.pool.n]
            keep[ids] = True
        else:
            raise SessionError(f"unknown decision kind '{decision.kind}'")
        new = self.alive & keep
        if not new.any():
            raise SessionError("that decision would leave no candidate; nothing was changed")
        return new

    def decide(self, decision: Decision, results: list[ExecutionResult] | None = None,
               features: list[list[Feature]] | None = None) -> None:
        """Apply a decision (raises SessionError and changes nothing if it is impossible).

        A 'repair' decision's candidates are executed on the session's database unless their
        ``results`` (and ``features``) are given (repair has just computed them).
        """
        if decision.kind == "repair":
            self._extend(decision, results, features)
            return
        new = self._apply(decision)
        self.history.append(decision)
        self._alive.append(new)
        self._pools.append(self.pool)

    def _extend(self, decision: Decision, results: list[ExecutionResult] | None,
                features: list[list[Feature]] | None = None) -> None:
        if len(decision.weights) != len(decision.sqls):
            raise SessionError("a repair decision needs one weight per added query")
        if results is None:
            results, features = self._rerun(decision.sqls)
        old = self.pool
        pool = extend_pool(old, list(decision.sqls), results, list(decision.weights),
                           decision.gesture or "repair", features if results else None)
        added = pool.n - old.n
        # each step keeps its mask over its own pool: Back to before the repair finds the
        # mask and the pool of that step, both of the old size
        self.history.append(decision)
        self._alive.append(np.concatenate([self._alive[-1], np.ones(added, dtype=bool)]))
        self._pools.append(pool)

    def _rerun(self, sqls: tuple[str, ...]) -> tuple[list[ExecutionResult],
                                                      list[list[Feature]] | None]:
        """Results (and features) of a recorded repair's queries: from the pool's repair cache
        where this process ran them already (a reload, a replay), else run on the database."""
        hits = [self.pool.repair_cache.get(sql) for sql in sqls]
        results = [h[0] if h is not None else self.database.execute(sql)
                    for h, sql in zip(hits, sqls, strict=True)]
        feats = [h[2] if h is not None else None for h in hits]
        known = [f for f in feats if f is not None]
        return results, known if len(known) == len(feats) else None

    def reject_output(self, key: str) -> None:
        """Rule out every surviving candidate whose output has ``key`` ("not this output")."""
        self.reject_outputs([key])

    def reject_outputs(self, keys: list[str] | tuple[str, ...]) -> None:
        """Rule out several outputs in one decision ("none of these"); unknown keys are
        ignored, and none surviving is an error that changes nothing."""
        alive = {self.pool.class_keys[c] for c in self.pool.class_index[self.alive]}
        chosen = tuple(k for k in dict.fromkeys(keys) if k in alive)
        if not chosen:
            raise SessionError("no surviving candidate has that output; nothing changed")
        self.decide(Decision("reject", outputs=chosen))

    def output_key_of(self, i: int) -> str:
        """Output key (functional class) of pool candidate ``i``."""
        return self.pool.class_keys[self.pool.class_index[i]]

    def predicted_output_key(self) -> str | None:
        """Output key of the predicted output (None when nothing valid survives)."""
        result, _, _ = self.predicted_output()
        return None if result is None else output_key(result)

    def answer(self, features: tuple[str, ...] | list[str], yes: bool) -> None:
        """Yes/No on a decision variable given by its feature keys."""
        self.decide(Decision("variable", tuple(features), bool(yes)))

    def answer_feature(self, key: str, yes: bool) -> None:
        """Yes/No on one atomic feature (the Predicted Query's clause-level path)."""
        self.decide(Decision("feature", (key,), bool(yes)))

    def restrict(self, candidates: list[int] | tuple[int, ...], gesture: str = "lasso") -> None:
        """Keep only the selected pool indices (lasso, box, click or cluster selection)."""
        # indices outside the pool (a stale selection) are ignored, as replay ignores them
        chosen = tuple(sorted({int(c) for c in candidates
                               if 0 <= int(c) < self.pool.n and self.alive[int(c)]}))
        if not chosen:
            raise SessionError("the selection contains no surviving candidate; nothing changed")
        self.decide(Decision("restrict", candidates=chosen, gesture=gesture))

    def fork(self) -> RepairSession:
        """An independent copy at this state (shared read-only pools, own history and memo).

        For what-if work off the script path, e.g. computing the state a Yes or a No leads to
        while the user reads the current one; :meth:`adopt` takes the result back.
        """
        twin = copy.copy(self)
        twin.history = list(self.history)
        twin._pools = list(self._pools)
        twin._alive = list(self._alive)
        twin._cache = dict(self._cache)
        twin._cols = dict(self._cols)
        return twin

    def adopt(self, twin: RepairSession) -> bool:
        """Take ``twin``'s derived views of the current state if it reached this very state
        (same decisions on the same pool); True if it had. Nothing else changes."""
        if twin.history != self.history or twin.pool is not self.pool:
            return False
        for key, value in list(twin._cache.items()):
            if key[:2] == (self.step, id(self.pool)):
                self._cache.setdefault(key, value)
        return True

    def undo(self) -> Decision | None:
        """Take back the last decision (Back); returns it, or None at the start."""
        if not self.history:
            return None
        self._alive.pop()
        self._pools.pop()
        self._cache = {k: v for k, v in self._cache.items() if k[0] < self.step}
        return self.history.pop()

    def back_to(self, step: int) -> None:
        """Return to the state after ``step`` decisions."""
        if not 0 <= step <= self.step:
            raise SessionError(f"step {step} is outside 0..{self.step}")
        while self.step > step:
            self.undo()

    # ----- persistence -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {"task_id": self.pool.task_id, "strategy": self.strategy,
               "max_clusters": self.max_clusters, "min_support": self.min_support,
               "random_state": self.random_state,
               "history": [d.to_dict() for d in self.history]}
        if self.questions != DEFAULT_QUESTIONS:  # older traces stay byte-identical
            out["questions"], out["values"] = self.questions, self.values
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], pool: PreparedPool,
                  database: TaskDatabase | DatabaseSpec | None = None) -> RepairSession:
        """Rebuild a session by replaying its decisions on ``pool`` (repairs need ``database``)."""
        if d.get("task_id") not in (None, pool.task_id):
            raise SessionError(f"session belongs to task {d['task_id']!r}, not {pool.task_id!r}")
        session = cls(pool, strategy=d.get("strategy", DEFAULT_STRATEGY),
                      max_clusters=d.get("max_clusters", DEFAULT_MAX_CLUSTERS),
                      min_support=d.get("min_support", 0.5),
                      random_state=d.get("random_state", 0), database=database,
                      questions=d.get("questions", DEFAULT_QUESTIONS),
                      values=bool(d.get("values", False)))
        for step in d.get("history", []):
            session.decide(Decision.from_dict(step))
        return session


__all__ = ["Decision", "FeatureBelief", "RankedVariable", "RepairSession", "STRATEGIES"]
