"""The information-theoretic floor: Huffman code lengths over functional classes.

If any Yes/No question about the functional classes could be asked, the optimal expected
number of questions to identify the intended class, with classes weighted by their candidates'
counts, is the expected length of a Huffman code over those weights. Strategies that may only
ask about SQL features cannot beat it on average *over that prior*, so it is a floor only for
the ``prior`` population of ``python -m core.evaluate`` (every class as target, weighted by its
prior); for a single gold the depth of its class is information, not a bound.

:func:`tree_floor` is the second floor: the best expected number of questions when only a fixed
vocabulary of Yes/No questions exists (the pool's own, see
:func:`core.evaluation.populations.vocabulary_floor`). tree floor ≤ any deterministic strategy's
turns on ``prior``, and Huffman ≤ tree floor unless no question separates some classes (the
session then shows outputs in turn, and an accepted one costs no turn); so tree ÷ Huffman is the
vocabulary's share of a gap and turns ÷ tree the strategy's.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from itertools import count
from typing import Any

import numpy as np

from core.engine.gain import guess_cost  # noqa: F401  (re-exported: tests, callers)
from core.engine.planner import set_bits


def huffman_depths(weights: list[float] | np.ndarray) -> list[int]:
    """Code length (number of binary questions) of each weight in an optimal Huffman code."""
    w = [float(x) for x in weights]
    if len(w) <= 1:
        return [0] * len(w)
    tie = count()
    heap = [(x, next(tie), [i]) for i, x in enumerate(w)]
    heapq.heapify(heap)
    depth = [0] * len(w)
    while len(heap) > 1:
        a, _, ia = heapq.heappop(heap)
        b, _, ib = heapq.heappop(heap)
        for i in ia + ib:
            depth[i] += 1
        heapq.heappush(heap, (a + b, next(tie), ia + ib))
    return depth


def expected_questions(weights: list[float] | np.ndarray) -> float:
    """Expected number of binary questions under the optimal (Huffman) code."""
    w = np.asarray(weights, dtype=float)
    if len(w) <= 1 or w.sum() <= 0:
        return 0.0
    return float(np.dot(huffman_depths(w), w) / w.sum())


# ----- the vocabulary floor: an optimal decision tree over the questions one can actually ask --

TREE_STATES = 200_000  # solved class sets before the search falls back to lower bounds


@dataclass(frozen=True)
class TreeFloor:
    """Expected questions of the best decision tree over a fixed question vocabulary.

    ``exact`` is False when the search hit its cap: the value is then still a lower bound (the
    unsolved class sets count at their bound), just not attained. ``states`` is how many class
    sets were solved.
    """

    expected: float
    exact: bool
    states: int


def tree_floor(answers: np.ndarray, weights: list[float] | np.ndarray, *,
               max_states: int = TREE_STATES) -> TreeFloor:
    """Fewest expected questions to identify a class when only ``answers``' questions exist.

    ``answers`` is questions × classes (bool): the Yes/No answer each class's user gives to each
    question. Exact dynamic programming over the set of classes still consistent with the
    answers (memoised on that set), branch-and-bound with an admissible bound: Huffman over the
    groups of classes no question separates, plus the heaviest-first guessing inside each group.
    Classes no question separates end in :func:`guess_cost`, as the session ends.
    """
    w = [float(x) for x in weights]
    n = len(w)
    if n <= 1:
        return TreeFloor(0.0, True, 0)
    answers = np.asarray(answers, dtype=bool).reshape(-1, n)
    masks = sorted({sum(1 << int(c) for c in np.flatnonzero(row)) for row in answers} - {0})
    groups: dict[bytes, int] = {}
    for c in range(n):
        key = answers[:, c].tobytes()
        groups[key] = groups.get(key, 0) | (1 << c)
    atoms = list(groups.values())

    classes = set_bits

    weight_memo: dict[int, float] = {}

    def weight(s: int) -> float:
        if s not in weight_memo:
            weight_memo[s] = sum(w[c] for c in classes(s))
        return weight_memo[s]

    def guess(s: int) -> float:  # guess_cost over the classes of s, without numpy per call
        ws = sorted((w[c] for c in classes(s)), reverse=True)
        total = sum(ws)
        return sum(i * x for i, x in enumerate(ws)) / total if total > 0 else 0.0

    bound_memo: dict[int, float] = {}

    def bound(s: int) -> float:
        if s not in bound_memo:
            parts = [s & a for a in atoms if s & a]
            pw = [weight(p) for p in parts]
            total = sum(pw)
            inside = sum(x * guess(p) for p, x in zip(parts, pw, strict=True)) / total \
                if total else 0.0
            bound_memo[s] = expected_questions(pw) + inside
        return bound_memo[s]

    memo: dict[int, float] = {}
    state = {"capped": False}

    def solve(s: int) -> float:
        if s in memo:
            return memo[s]
        if bin(s).count("1") <= 1:
            return 0.0
        if any(s & a == s for a in atoms):  # nothing separates these classes
            memo[s] = guess(s)
            return memo[s]
        if len(memo) >= max_states:
            state["capped"] = True
            return bound(s)
        ws = weight(s)
        splits: dict[Any, Any] = {}
        for m in masks:
            y = s & m
            if y and y != s:
                splits[min(y, s ^ y)] = None
        scored = []
        for y in splits:
            no = s ^ y
            wy = weight(y)
            scored.append((1 + (wy * bound(y) + (ws - wy) * bound(no)) / ws, y, no, wy))
        scored.sort()
        best = float("inf")
        for lb, y, no, wy in scored:
            if lb >= best - 1e-12:
                break
            best = min(best, 1 + (wy * solve(y) + (ws - wy) * solve(no)) / ws)
        memo[s] = best
        return best

    value = solve((1 << n) - 1)
    return TreeFloor(float(value), not state["capped"], len(memo))
