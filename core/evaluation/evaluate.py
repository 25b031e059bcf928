"""The §7 evaluation: simulated users repair every realised gold with each strategy.

``python -m core.evaluate BANK.jsonl [BANK2.jsonl …] [--strategies …] [--json OUT] [--plot PNG]``

For every task and every gold interpretation whose output some candidate realises, a
:class:`~core.evaluation.simulate.SimulatedUser` answers each question truthfully for that gold until the
survivors are functionally identical (or no variable splits them, or 50 turns). Golds no
candidate realises are counted as *skipped* and listed, never dropped silently.

Reported per strategy and ambiguity type: success (every final survivor's output equals the
gold's), reach-zero (gold-label entropy reached 0; every survivor counts, unlabelled ones as
'other'), mean and median turns, and per-turn median gold-label entropy and within-set
similarity with bootstrap 95 % CIs. ``optimal`` is the Huffman floor of :mod:`core.evaluation.optimal`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from core.engine.gain import entropy
from core.engine.pool import PreparedPool, prepare_pool
from core.engine.progress import Progress
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.engine.strategy import DEFAULT_STRATEGY, STRATEGIES
from core.engine.taskbank import load_tasks
from core.evaluation.optimal import expected_questions
from core.evaluation.simulate import SimulatedUser

MAX_TURNS = 50
ALL_STRATEGIES = (*STRATEGIES, "optimal")


@dataclass
class Run:
    """One simulated repair: a strategy, a task, a gold, and what happened per turn."""

    strategy: str
    task: str
    ambiguity: str
    gold: int
    turns: float
    success: bool
    reach_zero: bool
    entropy: list[float] = field(default_factory=list)  # after 0, 1, … answers
    similarity: list[float] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)


def gold_labels(pool: PreparedPool) -> np.ndarray:
    """Per candidate: the index of the gold whose output it realises, or -1 ('other')."""
    keys = [output_key(r) for r in pool.gold_results]
    labels = np.full(pool.n, -1, dtype=int)
    for i, c in enumerate(pool.class_index):
        ck = pool.class_keys[c]
        if ck != "error" and ck in keys:
            labels[i] = keys.index(ck)
    return labels


def within_similarity(pool: PreparedPool, alive: np.ndarray) -> float:
    """Count-weighted mean pairwise output similarity of the survivors (samples, self incl.)."""
    idx = np.flatnonzero(alive)
    w = pool.counts[idx]
    sim = pool.class_similarity[np.ix_(pool.class_index[idx], pool.class_index[idx])]
    return float(w @ sim @ w / (w.sum() ** 2))


def simulate(pool: PreparedPool, gold: int, strategy: str, ambiguity: str = "",
             random_state: int = 0, max_turns: int = MAX_TURNS) -> Run:
    """Run one simulated repair and record its per-turn trajectory."""
    session = RepairSession(pool, strategy=strategy, random_state=random_state)
    user = SimulatedUser(session, gold)
    labels = gold_labels(pool)

    def snapshot(run: Run) -> None:
        a = session.alive
        run.entropy.append(entropy(pool.counts[a], labels[a]))
        run.similarity.append(within_similarity(pool, a))

    run = Run(strategy, pool.task_id, ambiguity, gold, 0, False, False)
    snapshot(run)
    while not session.is_done and session.step < max_turns:
        variable = session.next_variable()
        if variable is None:
            break
        session.answer(variable.keys, user.answer(variable))
        run.questions.append(variable.label)
        snapshot(run)
    run.turns = session.step
    run.success = user.succeeded()
    run.reach_zero = run.entropy[-1] <= 1e-12
    return run


def optimal_run(pool: PreparedPool, gold: int, ambiguity: str) -> Run:
    """The Huffman floor for this task (same for each of its golds)."""
    weights = np.bincount(pool.class_index, weights=pool.counts)
    return Run("optimal", pool.task_id, ambiguity, gold, expected_questions(weights), True, True)


def bootstrap_ci(values: np.ndarray, stat=np.median, n_boot: int = 1000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap 95 % CI of ``stat`` over ``values``."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    samples = rng.choice(values, size=(n_boot, len(values)), replace=True)
    stats = stat(samples, axis=1)
    return float(np.percentile(stats, 2.5)), float(np.percentile(stats, 97.5))


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


def summarise(runs: list[Run], horizon: int = 10) -> dict:
    """Aggregate a group of runs of one strategy."""
    turns = np.array([r.turns for r in runs], dtype=float)
    out = {
        "n": len(runs),
        "success": float(np.mean([r.success for r in runs])) if runs else float("nan"),
        "reach_zero": float(np.mean([r.reach_zero for r in runs])) if runs else float("nan"),
        "mean_turns": float(turns.mean()) if runs else float("nan"),
        "mean_turns_ci": list(bootstrap_ci(turns, np.mean)),
        "median_turns": float(np.median(turns)) if runs else float("nan"),
    }
    if runs and runs[0].entropy:
        out["entropy"] = per_turn(runs, "entropy", horizon)
        out["similarity"] = per_turn(runs, "similarity", horizon)
    return out


def evaluate(pools: list[tuple[PreparedPool, str]], strategies: tuple[str, ...] = ALL_STRATEGIES,
             progress: Progress | None = None) -> tuple[list[Run], list[dict]]:
    """All runs over (pool, ambiguity) pairs, and the skipped (task, gold) pairs with reasons."""
    runs: list[Run] = []
    skipped: list[dict] = []
    for pool, ambiguity in pools:
        for g in range(len(pool.gold_sqls)):
            probe = SimulatedUser(RepairSession(pool), g)
            if not probe.realised:
                reason = (f"gold fails: {pool.gold_results[g].error}"
                          if not pool.gold_results[g].ok else "no candidate realises its output")
                skipped.append({"task": pool.task_id, "gold": g, "ambiguity": ambiguity,
                                "reason": reason})
                continue
            for k, strategy in enumerate(strategies):
                if strategy == "optimal":
                    runs.append(optimal_run(pool, g, ambiguity))
                else:
                    runs.append(simulate(pool, g, strategy, ambiguity, random_state=g * 31 + k))
        if progress:
            progress.advance(pool.task_id)
    return runs, skipped


def report(runs: list[Run], skipped: list[dict], strategies: tuple[str, ...]) -> dict:
    """Summary per strategy, overall and per ambiguity type, plus turns relative to optimal."""
    types = sorted({r.ambiguity for r in runs})
    summary: dict = {"overall": {}, "by_type": {t: {} for t in types}, "skipped": skipped}
    horizon = int(min(MAX_TURNS, max((r.turns for r in runs if r.strategy != "optimal"),
                                     default=0)))
    for s in strategies:
        mine = [r for r in runs if r.strategy == s]
        summary["overall"][s] = summarise(mine, horizon)
        for t in types:
            summary["by_type"][t][s] = summarise([r for r in mine if r.ambiguity == t], horizon)
    if "optimal" in strategies:
        floor = summary["overall"]["optimal"]["mean_turns"]
        for s in strategies:
            summary["overall"][s]["vs_optimal"] = summary["overall"][s]["mean_turns"] / floor \
                if floor else float("nan")
    measured = [s for s in strategies if s != "optimal"]
    if measured:
        summary["best"] = min(measured, key=lambda s: (-summary["overall"][s]["success"],
                                                       summary["overall"][s]["mean_turns"]))
    summary["default"] = DEFAULT_STRATEGY
    return summary


def format_table(summary: dict, strategies: tuple[str, ...]) -> str:
    """A plain-text table: strategy rows, overall and per ambiguity type."""
    lines = []
    head = f"{'strategy':<16}{'type':<12}{'n':>5}{'success':>9}{'reach0':>8}{'mean':>7}" \
           f"{'median':>8}{'×opt':>7}"
    lines.append(head)
    lines.append("-" * len(head))
    groups = [("all", summary["overall"])] + sorted(summary["by_type"].items())
    for name, group in groups:
        floor = group.get("optimal", {}).get("mean_turns")
        for s in strategies:
            g = group.get(s)
            if not g or not g["n"]:
                continue
            ratio = g["mean_turns"] / floor if floor else float("nan")
            lines.append(f"{s:<16}{name:<12}{g['n']:>5}{g['success']:>9.3f}"
                         f"{g['reach_zero']:>8.3f}{g['mean_turns']:>7.2f}"
                         f"{g['median_turns']:>8.1f}{ratio:>7.3f}")
        lines.append("")
    lines.append(f"skipped (gold not realised by any candidate): {len(summary['skipped'])}")
    if "best" in summary:
        lines.append(f"best measured strategy: {summary['best']} (workspace default: "
                     f"{summary['default']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.evaluate",
                                     description="Simulated-user evaluation of §7.")
    parser.add_argument("banks", nargs="+", help="task banks (JSON Lines)")
    parser.add_argument("--strategies", nargs="+", default=list(ALL_STRATEGIES),
                        choices=ALL_STRATEGIES)
    parser.add_argument("--json", help="write runs and summary as JSON here")
    parser.add_argument("--plot", help="write the Figure-5 style plot (PNG) here")
    parser.add_argument("--limit", type=int, help="only the first N tasks of each bank")
    parser.add_argument("--conjuncts", action="store_true",
                        help="also use WHERE conjuncts as atomic features")
    args = parser.parse_args(argv)
    strategies = tuple(args.strategies)
    tasks = []
    for bank in args.banks:
        loaded = load_tasks(bank)
        tasks.extend(loaded[: args.limit] if args.limit else loaded)
    progress = Progress(len(tasks), "evaluate")
    pools = [(prepare_pool(t, layout=False, conjuncts=args.conjuncts), t.ambiguity)
             for t in tasks]
    runs, skipped = evaluate(pools, strategies, progress)
    progress.close()
    summary = report(runs, skipped, strategies)
    print(format_table(summary, strategies))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary,
                                               "runs": [asdict(r) for r in runs]}, indent=1))
    if args.plot:
        from core.evaluation.plot import plot_figure5

        plot_figure5(summary, strategies, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
