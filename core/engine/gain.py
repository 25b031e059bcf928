"""Expected information gain of Yes/No decision variables (paper eq. 7), in bits.

The belief is over *candidates*, weighted by their sample counts; the quantity whose
uncertainty a question should reduce is a labelling of the candidates (functional classes or
clusters). A variable is a Boolean mask over the candidates: IG = H(L) − Σ_v P(v) H(L | v).
Everything is vectorised over variables so ranking hundreds of them stays cheap.
"""

from __future__ import annotations

import numpy as np


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
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(totals > 0, mass / totals, 0.0)
        logs = np.where(p > 0, np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -(p * logs).sum(axis=1)


def information_gain(masks: np.ndarray, weights: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """IG (bits, ≥ 0) of each row of ``masks`` (variables × candidates, bool)."""
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    if masks.shape[1] == 0:
        return np.zeros(masks.shape[0])
    _, inverse = np.unique(labels, return_inverse=True)
    onehot = np.zeros((len(labels), inverse.max() + 1))
    onehot[np.arange(len(labels)), inverse] = weights
    yes = masks.astype(float) @ onehot
    no = (~masks).astype(float) @ onehot
    total = float(weights.sum())
    if total <= 0:
        return np.zeros(masks.shape[0])
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
