"""What question ordering alone could save: the segment floor of a session's turns.

A session is a chain of *segments*: questions from a pool state until an output is shown
(under ``--look end`` when one output is left, or no question splits the survivors); a rejection
costs a turn and repair makes the next state. For every segment :func:`segment_record` stores,
at the state it starts from, the Huffman floor over the valid outputs alive (weighted by the
session's own prior: the candidates' counts, repair's weights for added ones), the *show floor*
(:func:`show_floor`: questions or shown outputs), the target's share and Huffman depth there,
the questions asked and how many outputs were alive when one was shown.

The *segment floor* of a run (:func:`run_floor`) keeps the session as it went — the same pools,
repair rounds and rejections. While the target's output is not in the pool, each state costs
its Huffman floor (the clause answers the next repair builds from; the policy cannot know the
target is missing) and the rejection that ends it; from the first state that holds it, that
state's floor covers the rest of the session. Both floors are expectations under the state's
own prior: no policy (over any vocabulary, so also over the session's) averages fewer turns
on targets drawn from it, so summed over a bank the floor says what ordering the questions
could reach with these rejections. It is not a bound on one gold: a gold heavier than average
in its state takes fewer (``at gold`` prints the prior-optimal code's turns on the golds
themselves). On ``prior`` (targets drawn from the first state's prior) it is a theorem, tested.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
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
    shown output accepted), so at most 2**k targets cost ≤ k turns (heaviest first: 0, 1, 2, 2,
    3, 3, 3, 3, …), and Σ 2**-cost ≤ 2 (so Huffman − 1); the larger of the two. Not always
    attained (uniform over 8: 2.125, best 2.5); :func:`show_policy` is attained.
    """
    w = np.sort(np.asarray(weights, dtype=float))[::-1]
    if len(w) <= 1 or w.sum() <= 0:
        return 0.0
    k = np.arange(len(w))
    cost = np.where(k == 0, 0, np.floor(np.log2(np.maximum(k, 1))) + 1)
    return max(float(np.dot(cost, w) / w.sum()), expected_questions(w) - 1)


def show_policy(weights: list[float] | np.ndarray) -> float:
    """Expected turns of the best policy that shows the heaviest output or splits the outputs,
    heaviest first, into two runs by any question: attained, so the best policy with any
    question and shown outputs lies between :func:`show_floor` and this."""
    return _show_policy(tuple(sorted((float(x) for x in weights), reverse=True)))


@lru_cache(maxsize=4096)
def _show_policy(weights: tuple[float, ...]) -> float:
    """:func:`show_policy` over weights sorted heaviest first (cached: every target of a task
    starts from the same state; O(n³) over the n outputs)."""
    w = np.asarray(weights, dtype=float)
    n = len(w)
    if n <= 1 or w.sum() <= 0:
        return 0.0
    prefix = np.concatenate([[0.0], np.cumsum(w)])
    cost = np.zeros((n, n))  # cost[i, j]: weighted turns to single out one of w[i..j]
    for size in range(2, n + 1):
        for i in range(n - size + 1):
            j = i + size - 1
            total = prefix[j + 1] - prefix[i]
            best = prefix[j + 1] - prefix[i + 1] + cost[i + 1, j]  # show w[i]
            for k in range(i, j):
                best = min(best, total + cost[i, k] + cost[k + 1, j])
            cost[i, j] = best
    return float(cost[0, n - 1] / prefix[n])


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
            "show_floor": show_floor(values), "show_policy": show_policy(values),
            "share": values[mine] / total if mine is not None and total > 0 else None,
            "depth": depths[mine] if mine is not None else None, "questions": 0,
            "shown_among": None}


def gold_state(segments: list[dict[str, Any]]) -> int | None:
    """Index of the first segment whose start state holds the target's output (None: never)."""
    return next((i for i, s in enumerate(segments) if s["depth"] is not None), None)


def run_floor(segments: list[dict[str, Any]], rejections: int, budget: int,
              key: str = "floor") -> float:
    """The run's segment floor, capped at the budget: each segment before the target's output
    is in the pool at its Huffman floor (the questions repair builds from) plus the rejection
    that ends it, then the floor ``key`` of the first state holding the target — ``floor``
    (questions until one output is left: the paper's protocol) or ``show_floor`` (a shown
    output may stand in for questions) — which covers the rest of the session under the
    state's prior. A target never in the pool: every segment's floor and every rejection."""
    j = gold_state(segments)
    if j is None:
        return min(float(budget), sum(float(s["floor"]) for s in segments) + rejections)
    return min(float(budget), sum(float(s["floor"]) for s in segments[:j]) + j
               + float(segments[j][key]))


def run_at_gold(segments: list[dict[str, Any]], rejections: int, budget: int) -> float:
    """:func:`run_floor` with, at the first state holding the target, the Huffman depth of its
    own class: what the prior-optimal code (any question) would spend on this very target."""
    j = gold_state(segments)
    if j is None:
        return run_floor(segments, rejections, budget)
    return min(float(budget), sum(float(s["floor"]) for s in segments[:j]) + j
               + float(segments[j]["depth"]))


@dataclass
class BoundRow:
    """Measured turns against the segment floor for one group of runs."""

    name: str
    pairs: int = 0
    turns: float = 0.0
    absent_rejections: int = 0  # rejections before the target's output is in the pool
    absent_questions: int = 0  # questions asked meanwhile
    absent_floor: float = 0.0  # their states' Huffman floors
    present_turns: float = 0.0  # measured turns from the first state holding the target on
    present_floor: float = 0.0  # that state's Huffman floor
    present_show: float = 0.0  # that state's show floor
    present_policy: float = 0.0  # that state's show policy (attained with any question)
    present_depth: float = 0.0  # the target's Huffman depth there
    floor: float = 0.0  # Σ run_floor (questions only)
    show: float = 0.0  # Σ run_floor with the show floor
    policy: float = 0.0  # Σ run_floor with the show policy
    at_gold: float = 0.0  # Σ run_at_gold


def _group(run: Any) -> str:
    if not run["success"]:
        return "failures"
    return "repaired successes" if run["rejections"] else "no rejection"


def bound_rows(runs: Iterable[dict[str, Any]], budget: int) -> list[BoundRow]:
    """Per group (no rejection / repaired successes / failures) and overall: turns, floors and
    their parts, from runs as dicts (``dataclasses.asdict`` or the JSON) that have segments."""
    groups = {n: BoundRow(n) for n in ("no rejection", "repaired successes", "failures")}
    total = BoundRow("all pairs")
    for r in runs:
        segs, rej = r["segments"], int(r["rejections"])
        j = gold_state(segs)
        absent = segs if j is None else segs[:j]
        asked = sum(int(s["questions"]) for s in absent)
        before = rej if j is None else j
        for row in (groups[_group(r)], total):
            row.pairs += 1
            row.turns += float(r["turns"])
            row.absent_rejections += before
            row.absent_questions += asked
            row.absent_floor += sum(float(s["floor"]) for s in absent)
            if j is not None:
                row.present_turns += float(r["turns"]) - asked - before
                row.present_floor += float(segs[j]["floor"])
                row.present_show += float(segs[j]["show_floor"])
                row.present_policy += float(segs[j]["show_policy"])
                row.present_depth += float(segs[j]["depth"])
            row.floor += run_floor(segs, rej, budget)
            row.show += run_floor(segs, rej, budget, "show_floor")
            row.policy += run_floor(segs, rej, budget, "show_policy")
            row.at_gold += run_at_gold(segs, rej, budget)
    return [*groups.values(), total]


def format_bound(runs: Iterable[dict[str, Any]], label: str, budget: int,
                 target: float = 5.5) -> str:
    """The segment-floor table of one configuration's honest all-pairs runs, and what must
    shrink for mean turns ≤ ``target`` when a floor is above it."""
    rows = bound_rows(runs, budget)
    total = rows[-1]
    if not total.pairs:
        return "segment floor: needs population 'all' runs"
    cols = [("pairs", "pairs", 0), ("turns", "turns", 0), ("rej-", "absent_rejections", 0),
            ("q-", "absent_questions", 0), ("H-", "absent_floor", 1),
            ("turns+", "present_turns", 0), ("H+", "present_floor", 1),
            ("show+", "present_show", 1), ("policy+", "present_policy", 1),
            ("depth+", "present_depth", 0), ("floor", "floor", 1), ("show", "show", 1),
            ("policy", "policy", 1), ("at gold", "at_gold", 1)]
    head = f"{'group':<20}" + "".join(f"{c:>9}" for c, _, _ in cols)
    lines = [f"segment floor ({label}, honest, all pairs, budget {budget}): the same pools, "
             "repair rounds and rejections; '-' while the target's output is not in the pool, "
             "'+' from the first state that holds it", head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.name:<20}" + "".join(
            f"{float(getattr(r, a)):>9.{d}f}" for _, a, d in cols))
    lines.append("rej-/q-: rejections and questions before the target's output is in the pool, "
                 "H-: those states' Huffman floors; turns+: measured turns from the first state "
                 "holding it, H+/show+: that state's Huffman / show floor (expectations under "
                 "its prior: a policy that must ask until one output is left / one that may "
                 "show an output instead), policy+: the best such showing policy heaviest first with any question (attained; the best lies between show+ and it), depth+: the target's own Huffman depth there; floor "
                 "= H- + rej- + H+ per pair (show, policy, at gold: with show+, policy+, "
                 "depth+), capped at the budget")
    allowed = target * total.pairs
    lines.append(f"mean turns {total.turns / total.pairs:.2f}; floor {total.floor / total.pairs:.2f}"
                 f", show {total.show / total.pairs:.2f}, policy "
                 f"{total.policy / total.pairs:.2f}, at gold "
                 f"{total.at_gold / total.pairs:.2f}; ≤ {target} needs ≤ {allowed:.1f} turns")
    for name, value in (("floor", total.floor), ("show floor", total.show),
                        ("show policy", total.policy)):
        if value > allowed:
            lines.append(f"{name}: question ordering alone cannot reach it ({value - allowed:.1f}"
                         f" turns over): the {total.absent_rejections} rejections before the "
                         f"target is in the pool or the states' floors must shrink by that much")
        else:
            gap = total.turns - value
            lines.append(f"{name}: leaves {allowed - value:.1f} turns for the question policy "
                         f"(measured {abs(gap):.1f} {'above' if gap >= 0 else 'below'} it)")
    return "\n".join(lines)


__all__ = ["BoundRow", "bound_rows", "format_bound", "gold_state", "run_at_gold", "run_floor",
           "segment_record", "show_floor", "show_policy", "state_classes"]
