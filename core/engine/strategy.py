"""Question-selection strategies: which decision variable to ask next.

``cluster-grouped`` (the workspace default, the paper's method) and ``cluster-atomic`` rank by
expected information gain (eq. 7) about the *functional class* of the intended query — the
intent, not the SQL string (design requirement R2) — with variables mined per cluster.
``eig-atomic`` is the paper's "no clustering" baseline: every distinct candidate is its own
intent, so IG is just the balance of the split. ``max-prob-first`` asks about the atomic
feature with the highest current probability first (the greedy baseline); ``random`` picks a
splitting atomic feature at random (seeded per step, so replays agree).

Tie-breaks, in order: higher gain (to 1e-9), more balanced Yes/No split (binary entropy of the
weights), fewer features, then the features' order in the vocabulary (display order) — deterministic, and simple
variables before compound ones when they are equally useful.
"""

from __future__ import annotations

import numpy as np

from core.engine.gain import information_gain, split_entropy
from core.engine.variables import DecisionVariable

STRATEGIES = ("cluster-grouped", "cluster-atomic", "eig-atomic", "max-prob-first", "random")
DEFAULT_STRATEGY = "cluster-grouped"


def _labels(strategy: str, class_index: np.ndarray, clusters: np.ndarray,
            target: str) -> np.ndarray:
    if strategy == "eig-atomic":
        return np.arange(len(class_index))
    return clusters if target == "cluster" else class_index


def rank_variables(strategy: str, variables: list[DecisionVariable], weights: np.ndarray,
                   class_index: np.ndarray, clusters: np.ndarray, *,
                   rng_seed: tuple[int, int] = (0, 0), target: str = "class"
                   ) -> list[DecisionVariable]:
    """Score ``variables`` (gain and balance set in place) and return them best first."""
    if strategy not in ("cluster-grouped", "cluster-atomic"):
        variables = [v for v in variables if v.kind == "atomic"]
    if not variables:
        return []
    masks = np.array([v.mask for v in variables])
    gains = information_gain(masks, weights, _labels(strategy, class_index, clusters, target))
    balance = split_entropy(masks, weights)
    for v, g, b in zip(variables, gains, balance, strict=True):
        v.gain, v.balance = float(g), float(b)
    if strategy == "random":
        rng = np.random.default_rng(list(rng_seed))
        order = rng.permutation(len(variables))
        return [variables[i] for i in order]
    if strategy == "max-prob-first":
        total = float(weights.sum()) or 1.0
        p_yes = (masks.astype(float) @ weights) / total
        order = sorted(range(len(variables)),
                       key=lambda i: (-round(p_yes[i], 9), variables[i].features))
        return [variables[i] for i in order]
    return sorted(variables, key=lambda v: (-round(v.gain, 9), -round(v.balance, 9),
                                            len(v.features), v.features))
