"""Figures and tables of the §7 evaluation: per population, user and strategy.

Every group reports success, silent failure, turns (mean, p90), repair rounds and candidates
added by repair; runs of the ``prior`` population are weighted by their class's prior and only
they are divided by the Huffman floor (``÷floor``) and by the tree floor (``÷tree``: the best
expected questions using only the pool's own Yes/No questions), so the gap to Huffman splits into
the vocabulary's part (tree ÷ Huffman) and the strategy's part (turns ÷ tree). For gold
populations the mean Huffman depth of the golds' own classes is shown as information, never as
a ratio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import bootstrap

from core.engine.strategy import WORKSPACE_DEFAULT
from core.evaluation.causes import CAUSES
from core.evaluation.populations import POPULATION_NOTES
from core.evaluation.simulate import DEFAULT_LOOK, LOOK_NOTES, USER_NOTES, USERS

if TYPE_CHECKING:  # runs come from the runner, which imports this module to print them
    from core.evaluation.evaluate import Run


def bootstrap_ci(values: np.ndarray, stat=np.median, n_boot: int = 1000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap 95 % CI of ``stat`` over ``values`` (scipy.stats.bootstrap)."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return (float("nan"), float("nan"))
    if len(values) == 1 or np.all(values == values[0]):  # every resample is the same
        return (float(values[0]), float(values[0]))
    ci = bootstrap((values,), stat, n_resamples=n_boot, method="percentile",
                   rng=np.random.default_rng(seed)).confidence_interval
    return float(ci.low), float(ci.high)


def per_turn(runs: list[Run], attr: str, horizon: int) -> dict[str, list[float]]:
    """Median and 95 % CI per turn; a finished run keeps its final value."""
    med, lo, hi = [], [], []
    for t in range(horizon + 1):
        vals = np.array([getattr(r, attr)[min(t, len(getattr(r, attr)) - 1)] for r in runs])
        med.append(float(np.median(vals)))
        a, b = bootstrap_ci(vals, seed=t)
        lo.append(a)
        hi.append(b)
    return {"median": med, "lo": lo, "hi": hi}


def summarise(runs: list[Run], horizon: int = 10) -> dict[str, Any]:
    """Aggregate one group of runs (weighted by ``Run.weight``: 1 except for ``prior``)."""
    if not runs:
        return {"n": 0}
    w = np.array([r.weight for r in runs], dtype=float)
    turns = np.array([r.turns for r in runs], dtype=float)

    def mean(attr: str) -> float:
        return float(np.average([float(getattr(r, attr)) for r in runs], weights=w))

    out: dict[str, Any] = {
        "n": len(runs),
        "success": mean("success"), "silent_failure": mean("silent_failure"),
        "reach_zero": mean("reach_zero"),
        "mean_turns": float(np.average(turns, weights=w)),
        # the smallest value whose cumulative weight share reaches q
        "median_turns": float(np.quantile(turns, 0.5, weights=w, method="inverted_cdf")),
        "p90_turns": float(np.quantile(turns, 0.9, weights=w, method="inverted_cdf")),
        "repair_rounds": mean("repair_rounds"), "added": mean("added"),
        "new_outputs": mean("new_outputs"), "rejections": mean("rejections"),
        "unrealised": sum(not r.realised for r in runs),
        "unrealised_success": float(np.mean([r.success for r in runs if not r.realised]))
        if any(not r.realised for r in runs) else None,
    }
    if len(set(w.tolist())) == 1:
        out["mean_turns_ci"] = list(bootstrap_ci(turns, np.mean))
    depths = [r.depth for r in runs if r.depth is not None]
    out["mean_depth"] = float(np.mean(depths)) if depths else None
    # the floors count questions until one output is left: they bound only sessions that
    # judge the output then (look 'end'), so other runs get no ratio
    bounded = all(r.look == "end" for r in runs)
    if all(r.floor is not None for r in runs):
        floor = float(np.average([r.floor for r in runs], weights=w))
        out["floor"] = floor
        out["turns_per_floor"] = out["mean_turns"] / floor if floor and bounded else None
    if runs and all(r.tree_floor is not None for r in runs):
        tree = float(np.average([r.tree_floor for r in runs], weights=w))
        out["tree_floor"] = tree
        out["tree_exact"] = all(r.tree_exact for r in runs)
        out["turns_per_tree"] = out["mean_turns"] / tree if tree and bounded else None
    out["entropy"] = per_turn(runs, "entropy", horizon)
    out["similarity"] = per_turn(runs, "similarity", horizon)
    return out


def report(runs: list[Run], unrealised: list[dict], strategies: tuple[str, ...], *,
           budget: int, headline: str = USERS[0], repair: str = "none",
           look: str = DEFAULT_LOOK) -> dict[str, Any]:
    """Summaries per population × user × strategy, overall and per ambiguity type."""
    order = ("realised", "all", "prior")
    populations = sorted(dict.fromkeys(r.population for r in runs), key=order.index)
    users = [u for u in USERS if any(r.user == u for r in runs)]
    types = sorted({r.ambiguity for r in runs})
    horizon = int(min(budget, max((r.turns for r in runs), default=0)))
    results: dict[str, Any] = {}
    best: dict[str, str] = {}
    for pop in populations:
        results[pop] = {}
        for u in users:
            mine = [r for r in runs if r.population == pop and r.user == u]
            group: dict[str, dict[str, Any]] = {"overall": {}, "by_type": {t: {} for t in types}}
            for s in strategies:
                ours = [r for r in mine if r.label == s]
                group["overall"][s] = summarise(ours, horizon)
                for t in types:
                    group["by_type"][t][s] = summarise([r for r in ours if r.ambiguity == t],
                                                       horizon)
            results[pop][u] = group
        head = results[pop].get(headline) or next(iter(results[pop].values()))
        measured = [s for s in strategies if head["overall"][s]["n"]]
        if measured:
            best[pop] = min(measured, key=lambda s: (-head["overall"][s]["success"],
                                                     head["overall"][s]["mean_turns"]))
    return {"users": {u: USER_NOTES[u] for u in users},
            "populations": {p: POPULATION_NOTES[p] for p in populations},
            "headline": headline, "repair": repair, "budget": budget, "look": look,
            "results": results, "best": best,
            "default": default_label(), "unrealised": unrealised}


PRIOR_WIDTH, GOLD_WIDTH = 53, 39  # characters of one user's cells
LABEL = 30  # characters of the strategy (and vocabulary) column


def _ratio(value: float | None) -> str:
    return f"{value:>7.3f}" if value is not None else f"{'–':>7}"


def _cells(g: dict[str, Any], prior: bool) -> str:
    if not g.get("n"):
        return " " * (PRIOR_WIDTH if prior else GOLD_WIDTH)
    text = (f"{g['success']:>7.3f}{g['silent_failure']:>7.3f}{g['mean_turns']:>6.2f}"
            f"{g['p90_turns']:>5.0f}{g['repair_rounds']:>6.2f}{g['added']:>7.1f}")
    if prior:
        text += _ratio(g.get("turns_per_floor")) + _ratio(g.get("turns_per_tree"))
    return text + " "


def format_table(summary: dict[str, Any], strategies: tuple[str, ...]) -> str:
    """One block per population: strategy rows, both users side by side, per ambiguity type."""
    users = list(summary["users"])
    lines = ["Simulated users (both shown side by side, headline: "
             f"{summary['headline']}):"]
    lines += [f"  {u}: {note}" for u, note in summary["users"].items()]
    lines.append(f"repair after a rejected output: {summary['repair']}; budget {summary['budget']} "
                 "turns (questions + rejected outputs)")
    look = summary.get("look", DEFAULT_LOOK)
    lines.append(f"look {look}: {LOOK_NOTES[look]}")
    for pop, per_user in summary["results"].items():
        prior = pop == "prior"
        lines += ["", f"population {pop}: {summary['populations'][pop]}"]
        width = PRIOR_WIDTH if prior else GOLD_WIDTH
        sub = ("success silent turns  p90 rep'd  added" + (" ÷floor  ÷tree" if prior else "")
               ).rjust(width)
        lines.append(f"{'':<{LABEL + 17}}" + "".join(f"{u:^{width + 1}}" for u in users))
        head = f"{'strategy':<{LABEL}}{'type':<12}{'n':>5}" + "".join(f"{sub} " for _ in users)
        head += "  floor   tree" if prior else " Hdepth"
        lines += [head, "-" * len(head)]
        first = per_user[users[0]]
        groups = [("all", "overall")] + [(t, t) for t in sorted(first["by_type"])]
        for name, where in groups:
            for s in strategies:
                cells = []
                ref = None
                for u in users:
                    block = per_user[u]["overall"] if where == "overall" \
                        else per_user[u]["by_type"][where]
                    g = block.get(s, {})
                    ref = ref or (g if g.get("n") else None)
                    cells.append(_cells(g, prior))
                if ref is None:
                    continue
                extra = ref.get("floor") if prior else ref.get("mean_depth")
                tail = f"{extra:>7.2f}" if extra is not None else f"{'–':>7}"
                if prior:
                    tree = ref.get("tree_floor")
                    tail += (f"{tree:>6.2f}" + ("" if ref.get("tree_exact", True) else "*")
                             if tree is not None else f"{'–':>6}")
                lines.append(f"{s:<{LABEL}}{name:<12}{ref['n']:>5}" + "".join(cells) + tail)
            lines.append("")
        if pop in summary["best"]:
            lines.append(f"best measured strategy ({summary['headline']}): {summary['best'][pop]}"
                         f" (workspace default: {summary['default']})")
    n_un = len(summary["unrealised"])
    lines += ["", f"task×gold pairs whose gold output no candidate produces: {n_un} "
              "(failures in 'all' unless repair reaches them; absent from 'realised')",
              "silent = ended on an output the user rejects with nothing left to ask; rep'd = "
              "repair rounds; added = candidates added by repair; ÷floor = mean turns ÷ the "
              "prior-weighted Huffman expectation (a floor only for 'prior'); ÷tree = mean "
              "turns ÷ the tree floor, the optimal decision tree using only the pool's own "
              "questions (conjunctions of up to 3 features, answered as the honest user answers "
              "for each class's stand-in; * = search capped, still a lower bound), so tree ÷ "
              "floor is the vocabulary's gap and ÷tree the strategy's; Hdepth = mean Huffman "
              "depth of the golds' own classes (information, not a floor)"]
    return "\n".join(lines)


def vocabulary_label(questions: str, values: bool) -> str:
    """How a question vocabulary is named in tables: ``outputs+values``, ``mixed``, …"""
    return questions + ("+values" if values and questions != "clauses" else "")


def default_label() -> str:
    """The workspace default as a table row names it: strategy and question vocabulary."""
    d = WORKSPACE_DEFAULT
    return (f"{d['strategy']} with {vocabulary_label(str(d['questions']), bool(d['values']))}"
            " questions")


def format_causes(runs: list[Run], labels: tuple[str, ...]) -> str:
    """Why each failed task×gold pair of the honest user failed: counts per configuration
    (population ``all``), then every failed pair with the question that removed its output."""
    user = "gold-features" if any(r.user == "gold-features" for r in runs) else runs[0].user
    mine = [r for r in runs if r.population == "all" and r.user == user]
    if not mine:
        return "causes: needs population 'all' (every task×gold pair)"
    head = f"{'strategy':<{LABEL}}{'pairs':>6}{'failed':>7}" + "".join(
        f"{c:>{max(len(c), 6) + 1}}" for c in CAUSES)
    lines = [f"why failed pairs failed ({user}, population all):", head, "-" * len(head)]
    for s in labels:
        rs = [r for r in mine if r.label == s]
        if not rs:
            continue
        failed = [r for r in rs if not r.success]
        lines.append(f"{s:<{LABEL}}{len(rs):>6}{len(failed):>7}" + "".join(
            f"{sum(r.cause == c for r in failed):>{max(len(c), 6) + 1}}" for c in CAUSES))
    lines += [""] + [f"  {c}: {note}" for c, note in CAUSES.items()]
    for s in labels:
        failed = [r for r in mine if r.label == s and not r.success]
        if not failed:
            continue
        lines += ["", f"failed pairs, {s}:"]
        for r in failed:
            why = f" — removed by: {r.lost_by}" if r.lost_by else ""
            gap = f" — missing: {'; '.join(r.missing[:3])}" if r.missing and \
                r.cause in ("needs-clause",) else ""
            lines.append(f"  {r.task[:40]:<41}gold {r.gold:<3}{r.cause:<25}{why}{gap}")
    return "\n".join(lines)


def format_per_gold(runs: list[Run], strategy: str) -> str:
    """Per gold of the gold populations: its class's Huffman depth and both users' outcome."""
    users = [u for u in USERS if any(r.user == u for r in runs)]
    pop = "all" if any(r.population == "all" for r in runs) else "realised"
    by = {(r.task, r.gold, r.user): r for r in runs
          if r.population == pop and r.label == strategy}
    golds = list(dict.fromkeys((t, g) for t, g, _ in by))
    head = f"{'task':<34}{'gold':>5}{'Hdepth':>7}" + "".join(f"{u:>28}" for u in users)
    lines = [f"per gold ({pop}, {strategy}): outcome / turns / end per user", head,
             "-" * len(head)]
    for t, g in golds:
        first = by[(t, g, users[0])]
        depth = "–" if first.depth is None else str(first.depth)
        cells = ""
        for u in users:
            r = by.get((t, g, u))
            text = "" if r is None else \
                f"{'ok' if r.success else 'FAIL'} {r.turns:>3.0f} {r.end}"
            cells += f"{text:>28}"
        lines.append(f"{t[:33]:<34}{g:>5}{depth:>7}" + cells)
    return "\n".join(lines)


def format_per_task(runs: list[Run], strategies: tuple[str, ...]) -> str:
    """Per task of ``prior``: Huffman and tree floors, and each strategy's turns and ratios
    for the honest user (the vocabulary gap is tree ÷ floor, the strategy gap turns ÷ tree)."""
    user = "gold-features" if any(r.user == "gold-features" for r in runs) else runs[0].user
    mine = [r for r in runs if r.population == "prior" and r.user == user]
    tasks = list(dict.fromkeys(r.task for r in mine))
    head = f"{'task':<34}{'floor':>7}{'tree':>7}{'tree÷f':>7}" + "".join(
        f"{s[:14]:>15}{'÷floor':>7}{'÷tree':>7}" for s in strategies)
    lines = [f"per task (prior, {user}): Huffman floor, tree floor, turns per strategy", head,
             "-" * len(head)]
    for task in tasks + ["(mean)"]:
        ours = mine if task == "(mean)" else [r for r in mine if r.task == task]
        first = [r for r in ours if r.label == strategies[0]]
        if not first or first[0].tree_floor is None:
            continue
        w = np.array([r.weight for r in first])
        floor = float(np.average([r.floor for r in first], weights=w))
        tree = float(np.average([r.tree_floor for r in first], weights=w))
        star = "" if all(r.tree_exact for r in first) else "*"
        line = f"{task[:33]:<34}{floor:>7.2f}{tree:>6.2f}{star or ' '}{tree / floor if floor else 1:>7.3f}"
        for s in strategies:
            rs = [r for r in ours if r.label == s]
            t = float(np.average([r.turns for r in rs], weights=[r.weight for r in rs]))
            if any(r.look != "end" for r in rs):  # the floors do not bound these turns
                line += f"{t:>15.2f}{'–':>7}{'–':>7}"
                continue
            line += f"{t:>15.2f}{t / floor if floor else 1:>7.3f}{t / tree if tree else 1:>7.3f}"
        lines.append(line)
    return "\n".join(lines)


__all__ = ["bootstrap_ci", "default_label", "format_causes", "format_per_gold", "format_per_task",
           "format_table", "per_turn", "report", "summarise"]
