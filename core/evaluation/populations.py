"""Who the simulated users want: the evaluation's target populations.

- ``realised`` — every task×gold pair whose gold output some candidate produces (the old
  evaluation's only population; it cannot count what the pool lacks).
- ``all`` — every task×gold pair; a gold no candidate produces fails unless repair reaches it.
- ``prior`` — every valid functional class of every task, weighted by its candidates' counts
  (each task sums to 1); the class's most frequent candidate stands in for the gold. Only here
  is the Huffman expectation over the task's classes a floor on the mean number of turns.

Each target carries the Huffman depth of its own class (None when no candidate realises it).
"""

from __future__ import annotations

import numpy as np

from core.engine.pool import PreparedPool
from core.engine.similarity import ERROR_CLASS, output_key
from core.evaluation.optimal import expected_questions, huffman_depths
from core.evaluation.simulate import Target, gold_target, own_feature_keys

POPULATIONS = ("all", "realised", "prior")
DEFAULT_POPULATION = "all"
POPULATION_NOTES = {
    "realised": "task×gold pairs whose gold output some candidate produces",
    "all": "every task×gold pair; an unrealised gold fails unless repair reaches it",
    "prior": "every functional class as target, weighted by its prior (each task sums to 1); "
             "the Huffman expectation is a floor here",
}


def class_weights(pool: PreparedPool) -> dict[int, float]:
    """Prior weight of each valid (non-error) functional class."""
    w = np.bincount(pool.class_index, weights=pool.counts, minlength=len(pool.class_keys))
    return {c: float(w[c]) for c, k in enumerate(pool.class_keys) if k != ERROR_CLASS and w[c] > 0}


def class_depths(pool: PreparedPool) -> dict[int, int]:
    """Huffman depth of each valid class in the optimal code over the valid classes' prior."""
    weights = class_weights(pool)
    return dict(zip(weights, huffman_depths(list(weights.values())), strict=True))


def huffman_floor(pool: PreparedPool) -> float:
    """Expected questions of the optimal code over the valid classes: a floor for ``prior``."""
    return expected_questions(list(class_weights(pool).values()))


def targets(pool: PreparedPool, population: str, schema: dict[str, list[str]] | None = None,
            *, conjuncts: bool = False) -> list[Target]:
    """The targets of ``population`` for one task."""
    depths = class_depths(pool)
    if population in ("realised", "all"):
        out = []
        for g in range(len(pool.gold_sqls)):
            key = output_key(pool.gold_results[g])
            cls = pool.class_keys.index(key) if key != ERROR_CLASS and key in pool.class_keys \
                else None
            if cls is None and population == "realised":
                continue
            out.append(gold_target(pool, g, schema, conjuncts=conjuncts,
                                   depth=None if cls is None else depths.get(cls)))
        return out
    if population == "prior":
        weights = class_weights(pool)
        total = sum(weights.values())
        out = []
        for c, w in weights.items():
            members = np.flatnonzero(pool.class_index == c)
            rep = int(members[np.argmax(pool.counts[members])])
            out.append(Target("class", c, pool.sqls[rep], pool.results[rep],
                              own_feature_keys(pool.sqls[rep], pool, schema, conjuncts=conjuncts),
                              w / total, depths[c]))
        return out
    raise ValueError(f"unknown population {population!r}; choose one of {', '.join(POPULATIONS)}")


__all__ = ["DEFAULT_POPULATION", "POPULATIONS", "POPULATION_NOTES", "class_depths",
           "class_weights", "huffman_floor", "targets"]
