"""Question-selection strategies: which decision variable to ask next.

The workspace asks with :data:`WORKSPACE_DEFAULT` (``expected-depth`` over the ``hybrid``
vocabulary, chosen on real golds); :data:`DEFAULT_STRATEGY` (``planned``) is only
:class:`~core.engine.session.RepairSession`'s own default.

``planned`` asks the first question of the best decision tree over the
pool's question vocabulary (:mod:`core.engine.planner`: every splitting feature and the groups
mined over the whole pool), solved once per pool; its user model is
that the intent is an output spelled the way the pool spells it most often. After a rejected
output it plans again over the survivors (after repair, over the extended pool); in pools above
:data:`core.engine.planner.PLAN_MAX_CANDIDATES` valid candidates and where the plan gives no
question it ranks as ``expected-depth``; the alternatives after the planned question
keep their one-question bound.

``expected-depth`` asks the paper's grouped variables (and, when :data:`PAIR_FEATURES` > 0,
every conjunction of two of that many most evenly splitting features: questions that stay on
offer from one step to the next), in the order of
the fewest expected questions left, looking :data:`LOOKAHEAD_DEPTH` questions ahead: each
variable among the :data:`LOOKAHEAD_BEAM` best by a one-question bound is scored by
1 + Σ_answer P(answer) · (the best score of a variable inside that answer, searched the same way
over the :data:`INNER_BEAM` best there, one level less deep), where the last level takes the
one-question bound: one question plus the Huffman bound
(:func:`core.engine.gain.expected_depth_bound`) of each answer's functional classes. It differs from information gain where that is myopic: a question that
settles the heaviest intent now can beat a better-balanced one whose answers stay hard.
``cluster-grouped`` (the paper's method) and ``cluster-atomic`` rank by
expected information gain (eq. 7) about the *functional class* of the intended query — the
intent, not the SQL string (design requirement R2) — with variables mined per cluster.
``eig-atomic`` is the paper's "no clustering" baseline: every distinct candidate is its own
intent, so IG is just the balance of the split. ``max-prob-first`` asks about the atomic
feature with the highest current probability first (the greedy baseline); ``random`` picks a
splitting atomic feature at random (seeded per step, so replays agree).

Tie-breaks (``expected-depth`` first orders by its score), in order: higher gain (to 1e-9), more
balanced Yes/No split (binary entropy of the weights), fewer features, then the features' order
in the vocabulary (display order) — deterministic, and simple variables before compound ones
when they are equally useful.
"""

from __future__ import annotations

import numpy as np

from core.engine.gain import (
    guess_cost,
    information_gain,
    label_masses,
    split_bounds,
    split_entropy,
)
from core.engine.variables import DecisionVariable

STRATEGIES = ("planned", "expected-depth", "cluster-grouped", "cluster-atomic", "eig-atomic",
              "max-prob-first", "random")
DEFAULT_STRATEGY = "planned"
GROUPED = ("planned", "expected-depth", "cluster-grouped")  # strategies that ask grouped variables
# Questions looked ahead, and how many variables are searched at the top and inside each answer.
# Three ahead brought the film prior from 1.184 to 1.174 × the Huffman floor (two: beams of 8 to
# 64 gave the same; four ahead 1.174, dev the same). INNER_BEAM 3 costs the decision step
# 28 -> 56 ms at N = 1000 and 19 -> 77 ms at N = 200 (python -m benchmarks.engine).
LOOKAHEAD_DEPTH = 3
INNER_BEAM = 3
LOOKAHEAD_BEAM = 8  # variables scored ahead (the rest keep their one-question bound)
# Share of each output class's prior that expected-depth's scores put on the class's most
# frequent spelling among the survivors (the rest stays spread over its spellings by count).
# At 0 a question that tells the modal spelling apart from the others looks as if it left the
# class on both sides, so expected-depth avoids it even where it settles the heaviest class
# for a user who writes the query the usual way (film-tarantino-cast: its 46% class has 15
# spellings). Measured with pairs on (hybrid, recompose, 15 turns, gold-features): film prior
# ÷ Huffman 1.132 -> 1.101 at 0.5 (1.109 at 1.0), film all 3.16 -> 3.00 turns, dev prior
# 1.019 -> 1.017, dev all pairs 0.905 in 5.99 turns either way (realised 3.67 -> 3.68),
# val 0.850 in 5.47 -> 5.48 (realised 1.35 -> 1.38; one task's two golds 2 turns longer).
MODAL_SPELLING = 0.5
# How many of the most evenly splitting features expected-depth pairs (A ∧ B, every pair, one
# per split; core.engine.variables.mine_decision_variables ``pairs``); 0 = none. The
# per-cluster groups are mined again at each step, so a group the lookahead counted on can be
# gone a step later; pairs stay on offer. Under the hybrid default (measured with 16; 8, 32 or
# every feature gave the same film prior under clauses): film prior ÷ Huffman floor 1.174 ->
# 1.132 (÷ tree floor 1.158 -> 1.117), dev prior 1.023 -> 1.019, honest all pairs dev 0.905
# in 6.02 -> 5.99 turns, val 0.846 in 5.49 -> 0.850 in 5.47. (Under the old `clauses` default
# it cost dev success, 0.893 -> 0.882: there the questions after a rejection were clauses.)
PAIR_FEATURES = 16
# Above this many survivors half as many features are paired (28 pairs instead of 120), which
# bounds the decision step (CPU, same process, vs no pairs: x1.14 at N = 200, x1.10 at
# N = 1000; x1.4 with 120 pairs); no bank's pool has over 42 candidates.
PAIR_FULL_UP_TO = 100
# What the workspace asks with (strategy, question vocabulary, value questions): the
# configuration with the best honest (gold-features) success over all AMBROSIA dev pairs, mean
# turns breaking ties, as printed by `python -m core.evaluate data/ambrosia/dev.jsonl
# --population all realised --strategies planned expected-depth --questions clauses outputs
# mixed hybrid --values off on` (docs/evaluation.md, "Questions about the answer, and the default
# chosen on real golds"). RepairSession's own defaults stay the paper's clause questions. Measured
# with every repair method (scope readings, composed SELECT lists, joins along foreign keys,
# three questions ahead; gold-features, all 169 pairs, recomposition, 15 turns):
# expected-depth hybrid (clauses until an output is rejected, then outputs) 0.905 (6.02 turns;
# val 0.846 in 5.49 against clauses' 0.823 in 6.49; mixed after the rejection: dev 0.905 in
# 6.32, val 0.835 in 6.05), expected-depth
# clauses 0.888 (6.55 turns), expected-depth mixed and mixed+values 0.852 (5.67, 5.56),
# outputs+values 0.840, outputs 0.822 (5.22), planned mixed+values 0.876
# (5.53), planned clauses 0.864 (7.04), planned mixed 0.852 (5.84), planned outputs+values
# 0.840 (5.25), planned outputs 0.822 (5.27). With PAIR_FEATURES, MODAL_SPELLING and the
# hybrid clause fallback (core.engine.answers.HYBRID_FALLBACK) on merged main (session 11):
# dev 0.929 in 5.95 turns, val 0.846 in 5.55, film prior ÷ Huffman floor 1.101
# (docs/evaluation.md, "Session 11").
WORKSPACE_DEFAULT: dict[str, object] = {"strategy": "expected-depth", "questions": "hybrid",
                                        "values": False}


def modal_weights(weights: np.ndarray, labels: np.ndarray, share: float) -> np.ndarray:
    """``weights`` with ``share`` of each label's mass moved onto its heaviest candidate (the
    class as the pool spells it most often; the first such candidate on ties)."""
    w = np.asarray(weights, dtype=float)
    _, inverse = np.unique(np.asarray(labels), return_inverse=True)
    if len(w) == 0:
        return w.copy()
    order = np.lexsort((np.arange(len(w)), -w, inverse))  # by label, heaviest first
    first = order[np.r_[True, np.diff(inverse[order]) != 0]]
    out = w * (1.0 - share)
    out[first] += share * np.bincount(inverse, weights=w)[inverse[first]]
    return out


def pair_features(survivors: int) -> int:
    """How many features expected-depth pairs with this many survivors (fewer in big pools,
    where each extra question costs the lookahead a pass over every candidate)."""
    return PAIR_FEATURES if survivors <= PAIR_FULL_UP_TO else PAIR_FEATURES // 2


def lookahead_scores(masks: np.ndarray, weights: np.ndarray, labels: np.ndarray,
                     counted: np.ndarray | None = None, beam: int = LOOKAHEAD_BEAM,
                     penalties: np.ndarray | None = None, depth: int = LOOKAHEAD_DEPTH,
                     inner_beam: int = INNER_BEAM,
                     modal: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Expected questions left after each variable, and which were scored ``depth`` questions
    ahead (searching the ``inner_beam`` best variables inside each answer).

    Those are the ``beam`` best by the one-question bound; the others keep that bound (they
    rank after the beam). Only ``counted``
    candidates (valid ones) need telling apart. ``penalties`` are extra cost per variable
    (a question charged more than one, wherever it is asked). ``modal`` (default
    :data:`MODAL_SPELLING`) is the share of each class's weight scored on its most frequent
    spelling (:func:`modal_weights`).
    """
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    w = np.asarray(weights, dtype=float)
    if counted is not None:
        w = np.where(counted, w, 0.0)
    pen = np.zeros(masks.shape[0]) if penalties is None else np.asarray(penalties, dtype=float)
    modal = MODAL_SPELLING if modal is None else modal
    if modal > 0:
        w = modal_weights(w, labels, modal)
    one, _, _ = split_bounds(masks, w, labels)
    one = one + pen
    total = float(w.sum())
    deep = np.zeros(len(one), dtype=bool)
    if beam < 1 or len(one) < 2 or total <= 0:
        return one, deep
    scores = one.copy()
    deep[np.argsort(one, kind="stable")[:beam]] = True
    leaves: dict[bytes, float | None] = {}  # the last level's value per answer set
    ids = np.arange(masks.shape[1])
    for i in np.flatnonzero(deep):
        scores[i] = _question_value(masks, w, labels, pen, masks[i], pen[i], total,
                                    depth - 1, max(1, inner_beam), ids, leaves)
    return scores, deep


def _question_value(masks: np.ndarray, w: np.ndarray, labels: np.ndarray, pen: np.ndarray,
                    mask: np.ndarray, cost: float, total: float, depth: int,
                    inner_beam: int, ids: np.ndarray | None = None,
                    leaves: dict[bytes, float | None] | None = None) -> float:
    """1 + cost + Σ_answer P(answer) · (best value of a question inside that answer), looking
    ``depth`` more questions ahead (the last by its one-question bound).

    Each deeper level gets only its answer's candidates and the variables that split them, so
    the search narrows as it goes down (the figures are those of the unnarrowed search).
    ``ids`` are the columns' candidates in the whole search and ``leaves`` remembers the last
    level's best bound per answer set: the variables splitting a set, and so that value, do
    not depend on the questions that led to it (A then B and B then A reach one set).
    """
    value = 1.0 + cost
    ids = np.arange(masks.shape[1]) if ids is None else ids
    leaves = {} if leaves is None else leaves
    sides = np.vstack([mask, ~mask])
    for keep, mass in zip(sides, label_masses(sides, w, labels), strict=True):
        share = float(mass.sum()) / total
        if share <= 0 or np.count_nonzero(mass > 0) <= 1:
            continue  # one output left there: nothing more to ask
        key = ids[keep].tobytes() if depth <= 1 else b""
        if depth <= 1 and key in leaves:
            leaf = leaves[key]
            value += share * (guess_cost(mass) if leaf is None else leaf)
            continue
        bound, wy, wn = split_bounds(masks, w, labels, keep, splitting_only=True)
        bound = bound + pen
        splits = (wy > 0) & (wn > 0)
        if not splits.any():
            if depth <= 1:
                leaves[key] = None
            value += share * guess_cost(mass)
            continue
        if depth <= 1:
            least = float(bound[splits].min())
            leaves[key] = least
            value += share * least
            continue
        rows = np.flatnonzero(splits)
        sub_masks, sub_pen = masks[np.ix_(rows, keep)], pen[rows]
        sub_w, sub_labels, sub_ids = w[keep], np.asarray(labels)[keep], ids[keep]
        order = np.argsort(bound[rows], kind="stable")[:inner_beam]
        best = min(_question_value(sub_masks, sub_w, sub_labels, sub_pen, sub_masks[j],
                                   float(sub_pen[j]), float(mass.sum()), depth - 1, inner_beam,
                                   sub_ids, leaves)
                   for j in order)
        value += share * best
    return value


def _labels(strategy: str, class_index: np.ndarray, clusters: np.ndarray,
            target: str) -> np.ndarray:
    if strategy == "eig-atomic":
        return np.arange(len(class_index))
    return clusters if target == "cluster" else class_index


def rank_variables(strategy: str, variables: list[DecisionVariable], weights: np.ndarray,
                   class_index: np.ndarray, clusters: np.ndarray, *,
                   rng_seed: tuple[int, int] = (0, 0), target: str = "class",
                   counted: np.ndarray | None = None,
                   planned: tuple[int, float] | None = None,
                   penalties: np.ndarray | None = None) -> list[DecisionVariable]:
    """Score ``variables`` (gain and balance set in place) and return them best first.

    ``counted`` marks the candidates whose outputs need telling apart (the valid ones); only
    ``expected-depth`` uses it (its bound, as ``extra['expected_turns']``). ``penalties`` (per
    variable, in expected questions; :func:`core.engine.answers.question_penalties`) are added
    to the depth strategies' scores and break the other strategies' ties.
    """
    pen = np.zeros(len(variables)) if penalties is None else np.asarray(penalties, dtype=float)
    if strategy not in (*GROUPED, "cluster-atomic"):
        pen = pen[[v.kind == "atomic" for v in variables]]
        variables = [v for v in variables if v.kind == "atomic"]
    if not variables:
        return []
    for v, p in zip(variables, pen, strict=True):
        v.extra["penalty"] = float(p)
    masks = np.array([v.mask for v in variables])
    gains = information_gain(masks, weights, _labels(strategy, class_index, clusters, target))
    balance = split_entropy(masks, weights)
    for v, g, b in zip(variables, gains, balance, strict=True):
        v.gain, v.balance = float(g), float(b)
    if strategy == "random":
        rng = np.random.default_rng(list(rng_seed))
        shuffled = rng.permutation(len(variables))
        return [variables[i] for i in shuffled]
    if strategy == "max-prob-first":
        total = float(weights.sum()) or 1.0
        p_yes = (masks.astype(float) @ weights) / total
        order = sorted(range(len(variables)),
                       key=lambda i: (-round(p_yes[i], 9), variables[i].features))
        return [variables[i] for i in order]
    if strategy in ("expected-depth", "planned"):
        # with a plan, the planned question leads at the plan's value and the others keep their
        # one-question bound (the lookahead pass would only reorder the alternatives)
        scores, deep = lookahead_scores(masks, weights, class_index, counted,
                                        beam=0 if planned is not None else LOOKAHEAD_BEAM,
                                        penalties=pen)
        if planned is not None:
            scores[planned[0]], deep[planned[0]] = planned[1], True
        for v, sc, d in zip(variables, scores, deep, strict=True):
            v.extra["expected_turns"], v.extra["lookahead"] = float(sc), bool(d)
        lead = variables[planned[0]] if planned is not None else None
        return sorted(variables, key=lambda v: (v is not lead, not v.extra["lookahead"],
                                                round(v.extra["expected_turns"], 9),
                                                -round(v.gain, 9), -round(v.balance, 9),
                                                len(v.features), v.features))
    return sorted(variables, key=lambda v: (-round(v.gain, 9), v.extra["penalty"],
                                            -round(v.balance, 9), len(v.features), v.features))
