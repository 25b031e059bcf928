"""Expected information gain of Yes/No decision variables (paper eq. 7), in bits.

The belief is over *candidates*, weighted by their sample counts; the quantity whose
uncertainty a question should reduce is a labelling of the candidates (functional classes or
clusters). A variable is a Boolean mask over the candidates: IG = H(L) − Σ_v P(v) H(L | v).
Everything is vectorised over variables so ranking hundreds of them stays cheap.

:func:`expected_depth_bound` is the lookahead strategy's score: one question plus a lower bound
on the questions each answer still needs (Huffman over the answer's classes, or Shannon's
entropy bound when there are too many classes to build codes for every variable quickly).
"""

from __future__ import annotations

import numpy as np

HUFFMAN_LABELS = 32  # above this many labels the entropy bound stands in for Huffman (speed)


def entropy(weights: np.ndarray, labels: np.ndarray) -> float:
    """Shannon entropy (bits) of the label distribution under ``weights``."""
    total = float(weights.sum())
    if total <= 0:
        return 0.0
    _, inverse = np.unique(labels, return_inverse=True)
    mass = np.bincount(inverse, weights=weights)
    p = mass[mass > 0] / total
    return float(-(p * np.log2(p)).sum())


def _rows_entropy(mass: np.ndarray) -> np.ndarray:
    """Entropy of each row of a (variables × labels) mass matrix, in bits."""
    totals = mass.sum(axis=1, keepdims=True)
    # the same figures as p = mass / totals (0 in an empty row), log2 p where p > 0 (else 0),
    # in fewer passes over the matrix: it is scored ~100 times in one decision step
    p = mass / np.where(totals > 0, totals, 1.0)
    logs = np.zeros_like(p)
    np.log2(p, out=logs, where=p > 0)
    p *= logs
    return -p.sum(axis=1)


def label_masses(masks: np.ndarray, weights: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(variables × labels) weight of each variable's Yes candidates per label.

    Summed per label with ``np.add.reduceat`` over candidates sorted by label: O(variables ×
    candidates) and no BLAS call (a threaded matrix product is slow on a busy machine).
    """
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    _, inverse = np.unique(labels, return_inverse=True)
    if len(inverse) == 0:
        return np.zeros((masks.shape[0], 0))
    order = np.argsort(inverse, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
    weighted = np.where(masks[:, order], np.asarray(weights, dtype=float)[order], 0.0)
    return np.add.reduceat(weighted, starts, axis=1)


def information_gain(masks: np.ndarray, weights: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """IG (bits, ≥ 0) of each row of ``masks`` (variables × candidates, bool)."""
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    if masks.shape[1] == 0:
        return np.zeros(masks.shape[0])
    total = float(weights.sum())
    if total <= 0:
        return np.zeros(masks.shape[0])
    yes = label_masses(masks, weights, labels)
    no = label_masses(np.ones((1, masks.shape[1]), dtype=bool), weights, labels) - yes
    no[no < 1e-12] = 0.0
    h = entropy(weights, labels)
    p_yes = yes.sum(axis=1) / total
    gain = h - p_yes * _rows_entropy(yes) - (1 - p_yes) * _rows_entropy(no)
    return np.clip(gain, 0.0, None)


def split_entropy(masks: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Binary entropy of each variable's Yes/No weight split (balance of the question)."""
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    total = float(weights.sum())
    if total <= 0:
        return np.zeros(masks.shape[0])
    p = (masks.astype(float) @ weights) / total
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0)
              + np.where(p < 1, (1 - p) * np.log2(np.where(p < 1, 1 - p, 1)), 0))
    return h


def guess_cost(weights: np.ndarray | list[float]) -> float:
    """Expected rejections when outputs no question can tell apart are shown heaviest first.

    This is what a session does once nothing splits the survivors: it shows the predicted
    output, a rejection is a turn, acceptance is not.
    """
    w = np.sort(np.asarray(weights, dtype=float))[::-1]
    return float(np.dot(np.arange(len(w)), w) / w.sum()) if len(w) and w.sum() > 0 else 0.0


def huffman_costs(mass: np.ndarray) -> np.ndarray:
    """Expected Huffman code length of each row of a (rows × labels) mass matrix, in questions.

    Vectorised over rows with the two-queue construction (sorted leaves; merged nodes come out
    in order), so scoring every variable costs one pass of ``labels`` merges.
    """
    mass = np.atleast_2d(np.asarray(mass, dtype=float))
    rows, k = mass.shape
    totals = mass.sum(axis=1)
    if k < 2 or rows == 0:
        return np.zeros(rows)
    leaves = np.sort(np.where(mass > 0, mass, np.inf), axis=1)
    leaves = np.concatenate([leaves, np.full((rows, 1), np.inf)], axis=1)
    needed = (mass > 0).sum(axis=1) - 1  # merges per row
    merged = np.full((rows, k), np.inf)
    p1 = np.zeros(rows, dtype=int)
    p2 = np.zeros(rows, dtype=int)
    n2 = np.zeros(rows, dtype=int)
    cost = np.zeros(rows)
    r = np.arange(rows)
    for step in range(int(needed.max(initial=0))):
        active = step < needed
        pair = np.zeros(rows)
        for _ in range(2):
            a = leaves[r, p1]
            b = np.where(p2 < n2, merged[r, np.minimum(p2, k - 1)], np.inf)
            take_a = a <= b
            pair += np.where(take_a, a, b)
            p1 += take_a & active
            p2 += ~take_a & active
        merged[r[active], n2[active]] = pair[active]
        n2 += active
        cost += np.where(active, pair, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(totals > 0, cost / totals, 0.0)


def depth_bounds(mass: np.ndarray) -> np.ndarray:
    """Lower bound on the questions needed to tell each row's labels apart (Huffman, or the
    entropy when there are more than :data:`HUFFMAN_LABELS` labels)."""
    mass = np.atleast_2d(np.asarray(mass, dtype=float))
    return huffman_costs(mass) if mass.shape[1] <= HUFFMAN_LABELS else _rows_entropy(mass)


def _masses_within(masks: np.ndarray, w: np.ndarray, labels: np.ndarray,
                   within: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`label_masses` of ``masks`` and of every candidate, inside ``within`` only.

    The same sums as restricting to ``within`` and then calling :func:`label_masses` with a
    row of ones appended, with one gather of the masks instead of three copies (the
    lookahead calls this ~100 times per decision step)."""
    cols = np.arange(masks.shape[1]) if within is None else np.flatnonzero(within)
    _, inverse = np.unique(labels[cols], return_inverse=True)
    if len(inverse) == 0:
        return np.zeros((masks.shape[0], 0)), np.zeros(0)
    order = np.argsort(inverse, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
    idx = cols[order]
    wo = w[idx]
    yes = np.add.reduceat(np.where(masks[:, idx], wo, 0.0), starts, axis=1)
    return yes, np.add.reduceat(wo[None, :], starts, axis=1)[0]


def split_bounds(masks: np.ndarray, weights: np.ndarray, labels: np.ndarray,
                 within: np.ndarray | None = None,
                 splitting_only: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bound, Yes weight, No weight) of each variable asked inside ``within`` (default: all).

    The bound is 1 + Σ_answer P(answer) · :func:`depth_bounds` (the answer's label masses).
    ``splitting_only``: the bound of a variable with an empty side is left at inf (the
    lookahead reads only the others', and the bounds are most of a decision step's time).
    """
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    yes, inside = _masses_within(masks, np.asarray(weights, dtype=float), np.asarray(labels),
                                 within)
    no = inside[None, :] - yes
    no[no < 1e-12] = 0.0
    v = masks.shape[0]
    wy, wn = yes.sum(axis=1), no.sum(axis=1)
    total = float(inside.sum())
    if total <= 0:
        return np.ones(v), wy, wn
    if not splitting_only:
        h = depth_bounds(np.concatenate([yes, no]))
        return 1.0 + (wy * h[:v] + wn * h[v:]) / total, wy, wn
    rows = np.flatnonzero((wy > 0) & (wn > 0))
    bound = np.full(v, np.inf)
    h = depth_bounds(np.concatenate([yes[rows], no[rows]]))
    bound[rows] = 1.0 + (wy[rows] * h[:len(rows)] + wn[rows] * h[len(rows):]) / total
    return bound, wy, wn


def expected_depth_bound(masks: np.ndarray, weights: np.ndarray, labels: np.ndarray,
                         counted: np.ndarray | None = None) -> np.ndarray:
    """One question plus the bound of each answer: a lower bound on the expected questions left
    after asking each row of ``masks`` (only ``counted`` candidates need telling apart)."""
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    if masks.shape[1] == 0:
        return np.zeros(masks.shape[0])
    w = np.asarray(weights, dtype=float)
    if counted is not None:
        w = np.where(counted, w, 0.0)
    return split_bounds(masks, w, labels)[0]
