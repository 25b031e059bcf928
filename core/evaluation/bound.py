"""What question ordering alone could save: the segment floor of a session's turns.

A session under ``--look end`` is a chain of *segments*: questions from a pool state until one
output is left (or none splits the survivors), then the shown output is judged; a rejection
costs a turn and repair makes the next state. For every segment
:func:`segment_record` stores, at the state the segment starts from, the Huffman floor over the
valid outputs alive (weighted by the session's own prior: the candidates' counts, repair's
weights for added ones), the target's share of that weight and its class's Huffman depth.

The *segment floor* of a run (:func:`run_floor`) keeps the session as it went — the same pools,
the same repair rounds, the same rejections — and replaces each segment's questions by its
Huffman floor: ``min(budget, Σ floors + rejections)``. No policy asking Yes/No questions (about
anything, so also over the session's own vocabulary) needs fewer questions *on average over
the state's prior* to single out one output, so summed over a bank it says what ordering the
questions alone could reach with these rejections. It bounds the expectation under the pool's
own model, not each gold: a gold heavier than average in its state can take fewer questions
(the ``prior`` population of ``core.evaluate`` is where the model is the population).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine.pool import PreparedPool
from core.engine.similarity import ERROR_CLASS
from core.evaluation.optimal import expected_questions, huffman_depths


def state_classes(pool: PreparedPool, alive: np.ndarray) -> dict[int, float]:
    """Valid class -> prior weight of its alive candidates (errors are never meant)."""
    idx = np.flatnonzero(alive)
    w = np.bincount(pool.class_index[idx], weights=pool.counts[idx],
                    minlength=len(pool.class_keys))
    return {c: float(w[c]) for c, k in enumerate(pool.class_keys)
            if k != ERROR_CLASS and w[c] > 0}


def show_floor(weights: list[float] | np.ndarray) -> float:
    """Fewest expected turns to reach the target when any Yes/No question *or showing an output*
    (free if it is theirs, a turn if not) may be used: a lower bound for every such policy.

    Each step splits the targets two ways (a question) or sets one aside at no further cost (a
    shown output accepted), so at most 2**k targets can cost ≤ k turns; the heaviest first gets
    costs 0, 1, 2, 2, 3, 3, 3, 3, …. Not always attained (uniform over 8: 2.125, best 2.5).
    """
    w = np.sort(np.asarray(weights, dtype=float))[::-1]
    if len(w) <= 1 or w.sum() <= 0:
        return 0.0
    k = np.arange(len(w))
    cost = np.where(k == 0, 0, np.floor(np.log2(np.maximum(k, 1))) + 1)
    return float(np.dot(cost, w) / w.sum())


def segment_record(pool: PreparedPool, alive: np.ndarray, target_key: str) -> dict[str, Any]:
    """One segment's start: valid outputs alive, their Huffman floor, the target's share and
    Huffman depth (None when no alive candidate produces the target's output)."""
    weights = state_classes(pool, alive)
    classes = list(weights)
    values = [weights[c] for c in classes]
    total = sum(values)
    mine = next((k for k, c in enumerate(classes) if pool.class_keys[c] == target_key), None)
    depths = huffman_depths(values) if mine is not None else []
    return {"classes": len(classes), "floor": expected_questions(values),
            "show_floor": show_floor(values),
            "share": values[mine] / total if mine is not None and total > 0 else None,
            "depth": depths[mine] if mine is not None else None, "questions": 0}


def run_floor(segments: list[dict[str, Any]], rejections: int, budget: int) -> float:
    """The run's segment floor: each segment's Huffman floor plus the same rejections, capped at
    the budget (a session never takes more turns than that)."""
    return min(float(budget), sum(float(s["floor"]) for s in segments) + rejections)


def run_at_gold(segments: list[dict[str, Any]], rejections: int, budget: int) -> float:
    """Turns of the prior-optimal Huffman policy (any question) on this very target: its
    class's depth where it is alive, the floor where it is not; a policy, not a bound."""
    return min(float(budget), sum(float(s["floor"] if s["depth"] is None else s["depth"])
                                  for s in segments) + rejections)


@dataclass
class BoundRow:
    """Measured turns against the segment floor for one group of runs."""

    name: str
    pairs: int = 0
    turns: float = 0.0
    floor: float = 0.0
    at_gold: float = 0.0  # run_at_gold: the Huffman policy's turns on these targets
    first: float = 0.0  # floors of the first segments (the clause phase before a rejection)
    later: float = 0.0  # floors of the segments after a repair
    rejections: int = 0
    later_segments: int = 0
    questions_first: int = 0
    questions_later: int = 0


def _group(run: Any) -> str:
    if not run["success"]:
        return "failures"
    return "repaired successes" if run["rejections"] else "no rejection"


def bound_rows(runs: Iterable[dict[str, Any]], budget: int) -> list[BoundRow]:
    """Per group (no rejection / repaired successes / failures) and overall: turns, floor and
    its parts, from runs as dicts (``dataclasses.asdict`` or the JSON) that have segments."""
    groups = {n: BoundRow(n) for n in ("no rejection", "repaired successes", "failures")}
    total = BoundRow("all pairs")
    for r in runs:
        segs = r["segments"]
        for row in (groups[_group(r)], total):
            row.pairs += 1
            row.turns += float(r["turns"])
            row.floor += run_floor(segs, int(r["rejections"]), budget)
            row.at_gold += run_at_gold(segs, int(r["rejections"]), budget)
            row.first += float(segs[0]["floor"]) if segs else 0.0
            row.later += sum(float(s["floor"]) for s in segs[1:])
            row.rejections += int(r["rejections"])
            row.later_segments += max(0, len(segs) - 1)
            row.questions_first += int(segs[0]["questions"]) if segs else 0
            row.questions_later += sum(int(s["questions"]) for s in segs[1:])
    return [*groups.values(), total]


def format_bound(runs: Iterable[dict[str, Any]], label: str, budget: int,
                 target: float = 5.5) -> str:
    """The segment-floor table of one configuration's honest all-pairs runs, and what must
    shrink for mean turns ≤ ``target`` when the floor alone is above it."""
    rows = bound_rows(runs, budget)
    total = rows[-1]
    if not total.pairs:
        return "segment floor: needs population 'all' runs"
    head = (f"{'group':<20}{'pairs':>6}{'turns':>8}{'floor':>8}{'at gold':>8}{'first':>8}"
            f"{'later':>8}"
            f"{'rej':>6}{'segs>1':>7}{'q first':>8}{'q later':>8}")
    lines = [f"segment floor ({label}, honest, all pairs, budget {budget}): the same pools, "
             "repair rounds and rejections, each segment's questions at the Huffman floor of "
             "its start state (an expectation under the session's own prior)", head,
             "-" * len(head)]
    for r in rows:
        lines.append(f"{r.name:<20}{r.pairs:>6}{r.turns:>8.0f}{r.floor:>8.1f}{r.at_gold:>8.1f}"
                     f"{r.first:>8.1f}"
                     f"{r.later:>8.1f}{r.rejections:>6}{r.later_segments:>7}"
                     f"{r.questions_first:>8}{r.questions_later:>8}")
    allowed = target * total.pairs
    lines.append("floor: Σ segment floors + rejections; at gold: the same with the Huffman "
                 "depth of the target's class where it is alive (a policy on these targets); "
                 "first / later: floors before the first rejection / after a repair; q: the "
                 "questions asked")
    lines.append(f"mean turns {total.turns / total.pairs:.2f}, segment floor "
                 f"{total.floor / total.pairs:.2f}; ≤ {target} needs ≤ {allowed:.0f} turns")
    if total.floor > allowed:
        excess = total.floor - allowed
        per = 1 + (total.later / total.later_segments if total.later_segments else 0.0)
        lines.append(f"question ordering alone cannot reach it: the floor is {excess:.1f} turns "
                     f"over; each rejection avoided saves 1 turn plus its repaired segment's "
                     f"floor (mean {per:.2f} together), so ≥ {excess / per:.0f} of the "
                     f"{total.rejections} rejections must go, or the later segments' floors "
                     f"({total.later:.1f}) shrink by {excess:.1f} (sharper repair proposals)")
    else:
        lines.append(f"the floor leaves {allowed - total.floor:.1f} turns of room for the "
                     "question policy")
    return "\n".join(lines)


__all__ = ["BoundRow", "bound_rows", "format_bound", "run_at_gold", "run_floor", "segment_record",
           "show_floor", "state_classes"]
