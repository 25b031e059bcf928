"""Who the simulated users want: the evaluation's target populations.

- ``realised`` — every task×gold pair whose gold output some candidate produces (the old
  evaluation's only population; it cannot count what the pool lacks).
- ``all`` — every task×gold pair; a gold no candidate produces fails unless repair reaches it.
- ``prior`` — every valid functional class of every task, weighted by its candidates' counts
  (each task sums to 1); the class's most frequent candidate stands in for the gold. Only here
  is the Huffman expectation over the task's classes a floor on the mean number of turns.

Each target carries the Huffman depth of its own class (None when no candidate realises it).
:func:`vocabulary_floor` is the second floor of ``prior``: the best expected number of questions
when only the pool's own Yes/No questions (conjunctions of its features) can be asked.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from core.engine.answers import DatabaseProfile, answer_matrix, profile_of
from core.engine.pool import PreparedPool
from core.engine.similarity import ERROR_CLASS, output_key
from core.evaluation.optimal import TreeFloor, expected_questions, huffman_depths, tree_floor
from core.evaluation.simulate import Target, gold_target, target_keys

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


def representatives(pool: PreparedPool) -> dict[int, int]:
    """Valid class -> its most frequent candidate (the prior population's stand-in gold)."""
    out = {}
    for c in class_weights(pool):
        members = np.flatnonzero(pool.class_index == c)
        out[c] = int(members[np.argmax(pool.counts[members])])
    return out


def vocabulary_answers(pool: PreparedPool, max_group: int = 3) -> np.ndarray:
    """Questions × valid classes: the gold-features user's answer for each class's stand-in.

    The questions are every conjunction of up to ``max_group`` of the pool's features (the
    session mines its groups among these), deduplicated by how they split the classes; the
    answer is Yes iff the stand-in holds every feature, exactly as the honest user answers.
    """
    reps = list(representatives(pool).values())
    if not reps:
        return np.zeros((0, 0), dtype=bool)
    x = pool.x[reps].T  # features × classes
    atomic = {row.tobytes(): row for row in x if row.any() and not row.all()}
    rows = list(atomic.values())
    found = dict(atomic)
    for size in range(2, max_group + 1):
        for combo in combinations(range(len(rows)), size):
            row = np.logical_and.reduce([rows[i] for i in combo])
            if row.any():
                found.setdefault(row.tobytes(), row)
    return np.array(list(found.values()), dtype=bool).reshape(-1, len(reps))


def vocabulary_floor(pool: PreparedPool, max_group: int = 3, **kw: int) -> TreeFloor:
    """Optimal decision tree over :func:`vocabulary_answers`: a floor for the honest user on
    ``prior`` that, unlike the Huffman floor, only uses questions the interface can ask."""
    weights = list(class_weights(pool).values())
    return tree_floor(vocabulary_answers(pool, max_group), weights, **kw)


def invariant_answers(pool: PreparedPool, *, clauses: bool = True, answers: bool = True,
                      values: bool = False, profile: DatabaseProfile | None = None,
                      max_group: int = 3) -> np.ndarray:
    """Questions × valid classes that every spelling of a class answers alike.

    The questions are every conjunction of up to ``max_group`` of the pool's clause features
    (``clauses``) and its questions about the answer (``answers``; value questions too with
    ``values``), kept only if each class's candidates all answer it alike: an honest user who
    would spell their output another way still gives that answer, so none of these can answer
    a gold spelled unlike the pool away. Columns follow :func:`class_weights`.
    """
    weights = class_weights(pool)
    cls = list(weights)
    if len(cls) <= 1:
        return np.zeros((0, len(cls)), dtype=bool)
    valid = np.isin(pool.class_index, cls)
    index = pool.class_index[valid]
    rows: list[np.ndarray] = []
    if clauses:
        rows.extend(np.asarray(pool.x, dtype=bool)[valid].T)
    if answers:
        if profile is None:
            profile = profile_of(pool.database)
        _, xa, _ = answer_matrix(pool, profile, values)
        rows.extend(xa[valid].T)
    atomic = {r.tobytes(): r for r in rows if r.any() and not r.all()}
    base = np.array(list(atomic.values()), dtype=bool).reshape(-1, len(index))
    order = np.argsort(index, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(index[order]) != 0])
    sizes = np.diff(np.r_[starts, len(order)])
    column = {int(c): k for k, c in enumerate(index[order][starts])}
    perm = [column[c] for c in cls]
    found: dict[bytes, np.ndarray] = {}
    for size in range(1, max_group + 1):
        combos = np.array(list(combinations(range(len(base)), size)), dtype=int).reshape(-1, size)
        for lo in range(0, len(combos), 20_000):
            part = combos[lo:lo + 20_000]
            block = np.logical_and.reduce([base[part[:, k]] for k in range(size)])
            yes = np.add.reduceat(block[:, order].astype(np.int32), starts, axis=1)
            alike = ((yes == 0) | (yes == sizes[None, :])).all(axis=1)
            for row in (yes[alike] > 0)[:, perm]:
                if row.any() and not row.all():
                    found.setdefault(row.tobytes(), row)
    return np.array(list(found.values()), dtype=bool).reshape(-1, len(cls))


def invariant_floor(pool: PreparedPool, **kw: Any) -> TreeFloor:
    """Optimal decision tree over :func:`invariant_answers` (same rules as the tree floor):
    the floor for a user who is never asked about spelling."""
    weights = list(class_weights(pool).values())
    return tree_floor(invariant_answers(pool, **kw), weights)


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
                              target_keys(pool.sqls[rep], pool.results[rep], pool, schema,
                                          conjuncts=conjuncts), w / total, depths[c]))
        return out
    raise ValueError(f"unknown population {population!r}; choose one of {', '.join(POPULATIONS)}")


__all__ = ["DEFAULT_POPULATION", "POPULATIONS", "POPULATION_NOTES", "class_depths",
           "class_weights", "huffman_floor", "invariant_answers", "invariant_floor",
           "representatives", "targets", "vocabulary_answers", "vocabulary_floor"]
