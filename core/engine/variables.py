"""Decision variables: atomic features and per-cluster feature groups mined by lift (§5.3).

A variable is a conjunction of atomic features; its *mask* says which candidates contain all of
them, and answering Yes/No keeps the mask or its complement. Groups are mined per cluster C:
features whose lift p_in/p_all exceeds 1 with support p_in ≥ ``min_support`` are combined into
conjunctions of up to ``max_group`` features that are still characteristic (lift > 1). All
probabilities are weighted by candidate counts. Variables that split the survivors identically
are merged, keeping the shortest description; what a variable carries along is reported as its
*implicit* features, p(Z | g) = 1 (eq. 6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np


@dataclass
class DecisionVariable:
    """A Yes/No question: 'should the query contain all of ``features``?'."""

    features: tuple[int, ...]  # indices into the pool's feature vocabulary
    mask: np.ndarray  # over the current survivors
    kind: str = "atomic"  # "atomic" | "group"
    cluster: int | None = None  # the cluster a group characterises
    lift: float = 1.0
    implicit: tuple[int, ...] = ()
    gain: float = 0.0
    balance: float = 0.0
    example: int = -1  # survivor position of the example query
    extra: dict = field(default_factory=dict)


def _weighted_share(mask: np.ndarray, weights: np.ndarray, within: np.ndarray) -> float:
    total = float(weights[within].sum())
    return float(weights[within & mask].sum()) / total if total > 0 else 0.0


def _splits(mask: np.ndarray) -> bool:
    n_yes = int(mask.sum())
    return 0 < n_yes < len(mask)


def _most_even(x: np.ndarray, weights: np.ndarray, columns: np.ndarray, k: int
               ) -> list[int]:
    """The ``k`` columns whose Yes share (by weight) is nearest one half, one per distinct
    split, in feature order: those whose pairwise conjunctions split the survivors most."""
    total = float(weights.sum()) or 1.0
    share = (weights @ x[:, columns]) / total
    seen: set[bytes] = set()
    picked: list[int] = []
    for i in np.argsort(np.abs(share - 0.5), kind="stable"):
        key = np.packbits(x[:, columns[i]]).tobytes()
        if key not in seen:
            seen.add(key)
            picked.append(int(columns[i]))
            if len(picked) == k:
                break
    return sorted(picked)


def mine_decision_variables(
    x: np.ndarray,
    weights: np.ndarray,
    clusters: np.ndarray,
    *,
    grouped: bool = True,
    min_support: float = 0.5,
    top_features: int = 6,
    max_group: int = 3,
    groups_per_cluster: int = 4,
    also: tuple[tuple[int, ...], ...] = (),
    allowed: np.ndarray | None = None,
    prefer: np.ndarray | None = None,
    pairs: int = 0,
) -> list[DecisionVariable]:
    """Every variable that splits the survivors (rows of ``x``), atomic and grouped.

    ``x`` is survivors × features (bool), ``weights`` the survivors' counts, ``clusters`` their
    cluster labels; ``also`` are feature groups to offer as well (those mined for the whole
    pool, which a plan made at the start counts on); ``pairs`` > 0 also offers every conjunction
    of two of the ``pairs`` most evenly splitting features (by weight; one per distinct split),
    so the questions stay the same from one step to the next, unlike the per-cluster groups,
    which are mined again for each set of survivors; ``allowed`` (bool per feature) limits the
    questions to the session's vocabulary (clauses, answers or both). Returns one variable per
    distinct split, in a deterministic order; of several descriptions of one split the one with
    fewest features outside ``prefer`` (bool per feature) is kept, then the shortest.
    """
    n, d = x.shape
    if n < 2 or d == 0:
        return []
    everyone = np.ones(n, dtype=bool)
    by_mask: dict[bytes, DecisionVariable] = {}

    def offer(var: DecisionVariable) -> None:
        if not _splits(var.mask):
            return
        key = var.mask.tobytes()
        known = by_mask.get(key)
        if known is None or describe(var) < describe(known):
            by_mask[key] = var

    def describe(var: DecisionVariable) -> tuple[int, int, tuple[int, ...]]:
        """Which description of one split is kept: fewest features outside ``prefer`` (e.g. a
        question about the answer over a clause splitting alike), then the shortest."""
        return (sum(not favoured[j] for j in var.features), len(var.features), var.features)

    counts = x.sum(axis=0)
    ok_cols = np.ones(d, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    favoured = np.ones(d, dtype=bool) if prefer is None else np.asarray(prefer, dtype=bool)
    splitting = np.flatnonzero((counts > 0) & (counts < n) & ok_cols)
    for j in splitting:
        offer(DecisionVariable((int(j),), x[:, j].copy(), "atomic"))

    if grouped:
        p_all = (weights @ x) / float(weights.sum())
        for c in np.unique(clusters):
            members = clusters == c
            w_in = float(weights[members].sum())
            if w_in <= 0:
                continue
            p_in = (weights[members] @ x[members]) / w_in
            with np.errstate(divide="ignore", invalid="ignore"):
                lift = np.where(p_all[splitting] > 0, p_in[splitting] / p_all[splitting], 0.0)
            ok = (lift > 1.0 + 1e-9) & (p_in[splitting] >= min_support)
            chosen = [int(splitting[i]) for i in np.flatnonzero(ok)]
            chosen.sort(key=lambda j: (-p_in[j] / p_all[j], -p_in[j], j))
            chosen = chosen[:top_features]
            found: list[DecisionVariable] = []
            for size in range(2, max_group + 1):
                for combo in combinations(sorted(chosen), size):
                    mask = np.asarray(x[:, list(combo)].all(axis=1))
                    support = _weighted_share(mask, weights, members)
                    share = _weighted_share(mask, weights, everyone)
                    if support < min_support or share <= 0:
                        continue
                    g_lift = support / share
                    if g_lift > 1.0 + 1e-9:
                        found.append(DecisionVariable(combo, mask, "group", int(c), g_lift))
            found.sort(key=lambda v: (-v.lift, -len(v.features), v.features))
            for var in found[:groups_per_cluster]:
                offer(var)
    if pairs > 0 and len(splitting) > 1:
        for combo in combinations(_most_even(x, weights, splitting, pairs), 2):
            offer(DecisionVariable(combo, np.asarray(x[:, combo[0]] & x[:, combo[1]]), "group"))
    for combo in also:
        offer(DecisionVariable(tuple(combo), np.asarray(x[:, list(combo)].all(axis=1)), "group"))

    variables = sorted(by_mask.values(), key=lambda v: (len(v.features), v.features))
    for var in variables:
        inside = x[var.mask]
        always = inside.all(axis=0) & ~x.all(axis=0) & ok_cols
        always[list(var.features)] = False
        var.implicit = tuple(int(j) for j in np.flatnonzero(always))
        idx = np.flatnonzero(var.mask)
        var.example = int(idx[np.argmax(weights[idx])])
    return variables
