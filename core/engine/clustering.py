"""Agglomerative clustering of candidates on functional distance (1 − similarity).

Average linkage, as in the paper. The number of clusters is re-chosen for the current
survivors every turn: the k in [2, min(max_clusters, distinct outputs)] with the best
silhouette on the precomputed distances (ties: the smaller k), so coarse functional groups are
separated before fine ones. Clustering runs on distinct functional classes (identical outputs
are one point), which keeps a decision step fast at N = 1000.
"""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from sklearn.metrics import silhouette_score

DEFAULT_MAX_CLUSTERS = 8


def _cluster_classes(dist: np.ndarray, max_clusters: int) -> np.ndarray:
    m = dist.shape[0]
    if m <= 2:
        return np.arange(m)
    z = linkage(squareform(dist, checks=False), method="average")
    best_k, best_score, best_labels = m, -np.inf, np.arange(m)
    upper = min(max_clusters, m)
    for k in range(2, upper + 1):
        labels = fcluster(z, t=k, criterion="maxclust") - 1
        n_labels = len(set(labels.tolist()))
        if n_labels < 2:
            continue
        if n_labels >= m:
            score = 0.0  # every class alone: silhouette undefined, treat as neutral
        else:
            score = float(silhouette_score(dist, labels, metric="precomputed"))
        if score > best_score + 1e-9:
            best_k, best_score, best_labels = k, score, labels
    del best_k
    return _relabel(best_labels)


def _relabel(labels: np.ndarray) -> np.ndarray:
    """Number clusters by first appearance so labels are deterministic and readable."""
    order: dict[int, int] = {}
    return np.array([order.setdefault(int(lab), len(order)) for lab in labels], dtype=int)


def cluster_candidates(class_index: np.ndarray, class_distance: np.ndarray,
                       max_clusters: int = DEFAULT_MAX_CLUSTERS) -> np.ndarray:
    """Cluster label per candidate.

    ``class_index[i]`` is candidate i's functional class (an index into ``class_distance``,
    the distance matrix between the classes present). Candidates of one class share a cluster.
    """
    if len(class_index) == 0:
        return np.zeros(0, dtype=int)
    present = np.unique(class_index)
    sub = class_distance[np.ix_(present, present)]
    class_labels = _cluster_classes(np.clip(sub, 0.0, None), max_clusters)
    lookup = {int(c): int(lab) for c, lab in zip(present, class_labels, strict=True)}
    return _relabel(np.array([lookup[int(c)] for c in class_index], dtype=int))
