"""Plan the questions: the best decision tree over the questions the session can ask now.

The ``expected-depth`` strategy scores each question two answers ahead; this module looks all
the way down. Given a pool's candidates (weighted by their sample counts, labelled by
functional class) and the masks of the questions on offer, :class:`Planner` finds the question
that starts the decision tree with the fewest expected questions until one output is left —
exact dynamic programming over the sets of survivors an answer sequence can leave, with
branch-and-bound on the tree floor's bound (:func:`core.evaluation.optimal.tree_floor`), the
:data:`PLAN_BEAM` best-bounded questions per set, and a cap on solved sets after which unsolved
sets count at their bound (the plan is then no longer provably optimal).

Who the user is, for the plan: the intent is one of the outputs, with probability its
candidates' share of the counts, spelled the way the pool spells that output most often
(:func:`modal_targets`); the user answers as that spelling would. The output's other spellings,
and every spelling of the other outputs, still have to be ruled out, because a session ends
only when the survivors share one output. The search runs over *atoms* — candidates that
answer every question alike and share an output — which keeps it small. This is the model of
``python -m core.evaluate``'s ``prior`` population (each output's most frequent candidate
stands in for the gold), so there the plan's value is the measured mean; ``all`` (real golds,
spelled as their authors spelled them) is the test of the model.
"""

from __future__ import annotations

import heapq
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine.clustering import DEFAULT_MAX_CLUSTERS, cluster_candidates
from core.engine.variables import mine_decision_variables

PLAN_STATES = 4000  # sets solved for the whole pool before the rest count at their bound
LOCAL_STATES = 400  # sets solved for survivors the first search did not reach
PLAN_BEAM = 16  # questions tried per set, best lower bound first
PLAN_MAX_CANDIDATES = 120  # above this many valid candidates no plan is made (it takes seconds)


def set_bits(s: int) -> list[int]:
    """The indices of the set bits of ``s``, lowest first (a set of atoms or classes as a mask)."""
    out = []
    while s:
        low = s & -s
        out.append(low.bit_length() - 1)
        s ^= low
    return out


@dataclass(frozen=True)
class Plan:
    """The planned first question and what the search knows of every question.

    ``best`` indexes the planner's questions (None: none is worth asking, or none splits the
    survivors); ``expected`` is the plan's expected number of questions (optimal over the
    vocabulary when ``exact``); ``states`` the sets solved for this plan beyond the first.
    """

    best: int | None
    expected: float
    exact: bool
    states: int


def modal_targets(weights: np.ndarray, labels: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Each class's whole counted weight on its most frequent counted candidate, 0 elsewhere.

    The planner's user model: the intent is an output, spelled the way the sampler spelled it
    most often; the output's other spellings still have to be told apart from the others.
    """
    w = np.where(counted, np.asarray(weights, dtype=float), 0.0)
    out = np.zeros(len(w))
    for c in np.unique(labels[counted]):
        members = np.flatnonzero(counted & (labels == c))
        out[members[np.argmax(w[members])]] = float(w[members].sum())
    return out


class Planner:
    """The best decision tree over one pool's question vocabulary, solved once, asked often.

    ``masks`` (questions × candidates of the whole pool) is the vocabulary; ``intents`` each
    candidate's weight as the spelling meant (:func:`modal_targets`), ``labels`` the classes,
    ``counted`` the candidates that need telling apart, ``sizes`` their counts. The tree from
    the whole pool is solved when the planner is made (up to ``max_states`` sets); a later set
    of survivors is looked up, or solved on its own (up to ``local_states``) reading the first
    solution but never changing it, so every plan depends on the pool and the survivors alone
    — replays and evaluations see the same questions. Sets are Python ints over *atoms*.
    """

    def __init__(self, masks: np.ndarray, intents: np.ndarray, labels: np.ndarray,
                 counted: np.ndarray, sizes: np.ndarray, *, max_states: int = PLAN_STATES,
                 local_states: int = LOCAL_STATES, beam: int = PLAN_BEAM,
                 costs: np.ndarray | None = None):
        self.masks = np.atleast_2d(np.asarray(masks, dtype=bool))
        # what asking each question costs (1, or more for the kinds asked only when they pay)
        self.costs = (np.ones(self.masks.shape[0]) if costs is None
                      else np.asarray(costs, dtype=float)).tolist()
        self.intents = np.asarray(intents, dtype=float)
        self.labels = np.asarray(labels)
        self.counted = np.asarray(counted, dtype=bool) & np.isfinite(self.intents)
        self.sizes = np.asarray(sizes, dtype=float)
        self.local_states, self.beam = local_states, beam
        keys: dict[tuple[bytes, int], int] = {}
        signatures: dict[bytes, int] = {}
        self.atom_of = np.full(len(self.intents), -1)
        self._sig: list[int] = []  # per atom, its answers to every question (an id)
        for i in np.flatnonzero(self.counted):
            key = (self.masks[:, i].tobytes(), int(self.labels[i]))
            if key not in keys:
                keys[key] = len(keys)
                self._sig.append(signatures.setdefault(key[0], len(signatures)))
            self.atom_of[i] = keys[key]
        self.n_atoms = len(keys)
        self._tw = [0.0] * self.n_atoms  # target weight per atom
        self._cw = [0.0] * self.n_atoms  # count per atom (how the session ranks outputs)
        self._lab = [0] * self.n_atoms
        self._bits = [0] * self.masks.shape[0]  # per question, its Yes atoms
        for i in np.flatnonzero(self.counted):
            a = int(self.atom_of[i])
            self._tw[a] += float(self.intents[i])
            self._cw[a] += float(self.sizes[i])
            self._lab[a] = int(self.labels[i])
        for q in range(self.masks.shape[0]):
            for a in {int(self.atom_of[i]) for i in np.flatnonzero(self.masks[q] & self.counted)}:
                self._bits[q] |= 1 << a
        self._info: dict[int, tuple[float, float, bool]] = {}
        self._root: dict[int, tuple[float, int | None]] = {}
        self._plans: dict[bytes, Plan] = {}
        self.root_exact = True
        if self.n_atoms:
            flag = [False]
            self._value((1 << self.n_atoms) - 1, self._root, {}, max_states, flag)
            self.root_exact = not flag[0]

    # ----- the search ----------------------------------------------------------------------
    def _members(self, s: int) -> list[int]:
        return set_bits(s)

    def info(self, s: int) -> tuple[float, float, bool]:
        """(target weight, lower bound on questions left, more than one output present).

        The bound is the tree floor's: Huffman over the groups of atoms no question tells
        apart, plus the outputs shown in turn inside each group — and at least one question
        when two groups and two outputs are left (the session asks before it shows).
        """
        hit = self._info.get(s)
        if hit is None:
            groups: dict[int, int] = {}
            labels: set[int] = set()
            for a in self._members(s):
                groups[self._sig[a]] = groups.get(self._sig[a], 0) | (1 << a)
                labels.add(self._lab[a])
            total = sum(self._tw[a] for a in self._members(s))
            many = len(labels) > 1
            if not many or total <= 0:
                bound = 0.0
            elif len(groups) == 1:
                bound = self._guess(s)
            else:
                weights = [sum(self._tw[a] for a in self._members(g)) for g in groups.values()]
                inside = sum(w * self._guess(g) for w, g in zip(weights, groups.values(),
                                                                strict=True) if w > 0)
                bound = max((_huffman([w for w in weights if w > 0]) + inside) / total, 1.0)
            hit = self._info[s] = (total, bound, many)
        return hit

    def _value(self, s: int, memo: dict, frozen: dict, cap: int, flag: list[bool]) -> float:
        hit = frozen.get(s) or memo.get(s)
        if hit is not None:
            return hit[0]
        total, bound, many = self.info(s)
        if not many or total <= 0:
            return 0.0
        if len(memo) >= cap:
            flag[0] = True
            return bound
        rows = self._splits(s, total)
        if not rows:
            value = self._guess(s)
            memo[s] = (value, None)
            return value
        best, best_q = float("inf"), None
        for lb, q, y in rows:
            if lb >= best - 1e-12:
                break
            no = s ^ y
            wy = self.info(y)[0]
            v = self.costs[q] + (wy * self._value(y, memo, frozen, cap, flag)
                     + (total - wy) * self._value(no, memo, frozen, cap, flag)) / total
            if v < best - 1e-12:
                best, best_q = v, q
        memo[s] = (best, best_q)
        return best

    def _splits(self, s: int, total: float) -> list[tuple[float, int, int]]:
        """(lower bound, question, Yes atoms) of the ``beam`` best questions splitting ``s``,
        best bound first; one question per distinct split."""
        cheapest: dict[int, int] = {}  # split -> its cheapest question (first on a tie)
        for q, m in enumerate(self._bits):
            y = s & m
            if y and y != s and (y not in cheapest or self.costs[q] < self.costs[cheapest[y]]):
                cheapest[y] = q
        out = []
        for y, q in cheapest.items():
            wy, by, _ = self.info(y)
            _, bn, _ = self.info(s ^ y)
            out.append((self.costs[q] + (wy * by + (total - wy) * bn) / total, q, y))
        out.sort()
        return out[: self.beam]

    def _guess(self, s: int) -> float:
        """Expected rejections when outputs no question tells apart are shown biggest first."""
        target: dict[int, float] = {}
        shown: dict[int, float] = {}
        for a in self._members(s):
            target[self._lab[a]] = target.get(self._lab[a], 0.0) + self._tw[a]
            shown[self._lab[a]] = shown.get(self._lab[a], 0.0) + self._cw[a]
        order = sorted(target, key=lambda c: (-shown[c], -target[c], c))
        total = sum(target.values())
        if len(order) < 2:
            return 0.0
        return sum(k * target[c] for k, c in enumerate(order)) / total if total > 0 else 0.0

    # ----- asking --------------------------------------------------------------------------
    def plan(self, alive: np.ndarray) -> Plan:
        """The planned first question for the survivors ``alive`` (bool over the pool)."""
        alive = np.asarray(alive, dtype=bool)
        live = alive & self.counted
        atoms = self.atom_of[live]
        whole = np.isin(self.atom_of[self.counted], atoms)
        if not np.array_equal(whole, live[self.counted]):  # an atom only partly alive (lasso)
            return self._sub(alive)
        s = sum(1 << int(a) for a in set(atoms.tolist()))
        key = s.to_bytes((self.n_atoms + 7) // 8 or 1, "little")
        if key not in self._plans:
            hit = self._root.get(s)
            memo: dict = {}
            flag = [False]
            if hit is None:
                self._value(s, memo, self._root, self.local_states, flag)
                hit = memo.get(s, (0.0, None))
            self._plans[key] = Plan(hit[1], float(hit[0]), self.root_exact and not flag[0],
                                    len(memo))
        return self._plans[key]

    def _sub(self, alive: np.ndarray) -> Plan:
        key = b"sub" + np.packbits(alive).tobytes()
        if key not in self._plans:
            sub = Planner(self.masks[:, alive], self.intents[alive], self.labels[alive],
                          self.counted[alive], self.sizes[alive], max_states=self.local_states,
                          local_states=self.local_states, beam=self.beam, costs=self.costs)
            self._plans[key] = sub.plan(np.ones(int(alive.sum()), dtype=bool))
        return self._plans[key]


def _huffman(weights: list[float]) -> float:
    """Sum of merged weights of a Huffman code (= Σ weight × code length)."""
    if len(weights) < 2:
        return 0.0
    heap = sorted(weights)
    heapq.heapify(heap)
    cost = 0.0
    while len(heap) > 1:
        merged = heapq.heappop(heap) + heapq.heappop(heap)
        cost += merged
        heapq.heappush(heap, merged)
    return cost


_PLANNERS: dict[tuple, list] = {}  # (id(pool), settings) -> [built, planner, vocabulary]
_LOCK = threading.Lock()


def pool_planner(pool: Any, *, max_clusters: int = DEFAULT_MAX_CLUSTERS,
                 min_support: float = 0.5, questions: str = "clauses"
                 ) -> tuple[Planner | None, list[tuple[int, ...]]]:
    """The planner of a prepared pool and its vocabulary (feature-index tuples), made once per
    pool and shared by every session on it (the pools are shared; so is the solved tree).

    The vocabulary: every feature that splits the pool and the groups mined over the whole
    pool (§5.3). (Adding every two-feature conjunction planned film's prior 1.045× the Huffman
    floor instead of 1.078×, but cost honest users on real golds: dev success over all pairs
    0.740 instead of 0.751 — questions about spelling-level pairs.) A pool
    of more than :data:`PLAN_MAX_CANDIDATES` valid candidates gets no planner (None). A caller
    arriving while another thread builds the same planner waits for it (and gets no planner if
    that build fails; a failed build is not remembered, so a later call builds it again,
    rather than every later session on the pool asking without a plan). ``questions`` is the
    vocabulary (:data:`core.engine.answers.QUESTIONS`; answer questions need a pool made by
    :func:`core.engine.answers.with_answers`), its penalties the questions' extra costs.
    """
    key = (id(pool), max_clusters, min_support, questions)
    with _LOCK:
        known = _PLANNERS.get(key)
        mine = known is None
        if mine:
            _PLANNERS[key] = known = [threading.Event(), None, []]
            weakref.finalize(pool, _PLANNERS.pop, key, None)
    assert known is not None  # found, or just created above
    if not mine:
        known[0].wait()
        return known[1], known[2]
    try:
        known[1], known[2] = _build(pool, max_clusters, min_support, questions)
    except BaseException:  # not remembered: the next caller builds it again
        with _LOCK:
            if _PLANNERS.get(key) is known:
                del _PLANNERS[key]
        raise
    finally:
        known[0].set()
    return known[1], known[2]


def locate(variables: list[Any], features: tuple[int, ...], x: np.ndarray) -> int | None:
    """Position of the variable asking ``features`` among ``variables`` mined over the
    survivors ``x`` (matched by split: mining keeps one description per split), or None."""
    want = x[:, list(features)].all(axis=1)
    return next((i for i, v in enumerate(variables) if np.array_equal(v.mask, want)), None)


def build_planner(pool: Any, questions: str = "clauses", values: bool = False
                  ) -> tuple[Planner | None, list[tuple[int, ...]]]:
    """:func:`pool_planner` (default settings) of the pool a session with this question
    vocabulary works on: ``pool`` itself for clauses, its copy with answer features otherwise."""
    target = pool
    if questions != "clauses":  # the pool with answer features a session makes
        from core.engine.answers import profile_of, with_answers

        target = with_answers(pool, values=values, profile=profile_of(pool.database))
    return pool_planner(target, questions=questions)


def warm_planner(pool: Any, questions: str = "clauses", values: bool = False
                 ) -> threading.Thread:
    """Build the pool's planner (default settings) in a background thread, so a session's
    first question does not wait for the search."""
    thread = threading.Thread(target=build_planner, args=(pool, questions, values), daemon=True,
                              name="pleasqlarify-planner")
    thread.start()
    return thread


def _build(pool: Any, max_clusters: int, min_support: float, questions: str = "clauses"
           ) -> tuple[Planner | None, list[tuple[int, ...]]]:
    from core.engine.answers import askable, preferred, question_penalties

    if int(np.count_nonzero(pool.valid)) > PLAN_MAX_CANDIDATES:
        return None, []
    x = np.asarray(pool.x, dtype=bool)
    labels = cluster_candidates(pool.class_index, pool.class_distance, max_clusters)
    mined = mine_decision_variables(x, pool.counts, labels, grouped=True, min_support=min_support,
                                    allowed=askable(pool.vocabulary, questions),
                                    prefer=preferred(pool.vocabulary, questions))
    vocab = [v.features for v in mined]
    masks = np.array([x[:, list(f)].all(axis=1) for f in vocab]).reshape(len(vocab), pool.n)
    valid = np.asarray(pool.valid, dtype=bool)
    counts = np.asarray(pool.counts, dtype=float)
    penalties = question_penalties([tuple(pool.vocabulary[j] for j in f) for f in vocab],
                                   masks[:, valid], pool.class_index[valid], questions)
    return Planner(masks, modal_targets(counts, pool.class_index, valid), pool.class_index,
                   valid, counts, costs=1.0 + penalties), vocab


__all__ = ["LOCAL_STATES", "PLAN_BEAM", "PLAN_MAX_CANDIDATES", "PLAN_STATES", "Plan", "Planner",
           "build_planner", "locate", "modal_targets", "pool_planner", "warm_planner"]
