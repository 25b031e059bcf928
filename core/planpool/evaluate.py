"""PlanPool evaluation (paper §2, §5.1): groundedness metrics and the Table-2 CLI.

``python -m core.planpool_eval BANK.jsonl [BANK2 …] --agent structured|llm
[--variant naive plan-prompt planpool] [--json OUT] [--limit N]``

One run per (task, realised gold as target). An *ambiguity* is a set of gold interpretations
(the task's optional ``ambiguities`` list, each ``{"type", "golds": [indices]}``; otherwise one
per task over all its golds). It is *addressed* when some asked question's variable separates
two of its golds with different outputs: the variable holds for most of one gold's realisers'
weight and not for the other's. An ambiguity with fewer than two realised, distinct golds is
not applicable (it cannot be asked about). Per run: *correct* (submitted output equals the
target gold's), *resolved* (every applicable ambiguity addressed); grounded success = correct
and resolved, ungrounded success = correct and unresolved, silent failure = incorrect and
unresolved.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.pool import PreparedPool, prepare_pool
from core.engine.progress import Progress
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.engine.taskbank import Task, load_tasks
from core.planpool.agents import VARIANTS, Episode, realiser_masks, run_structured


@dataclass
class Outcome:
    """The metrics of one run (task, target gold, variant)."""

    task: str
    ambiguity: str
    gold: int
    variant: str
    correct: bool
    applicable: int  # ambiguities that can be addressed
    addressed: int
    questions: int
    added: int = 0
    dropped: int = 0
    planned: int = 0
    abandoned: int = 0
    refused_submits: int = 0

    @property
    def resolved(self) -> bool:
        return self.addressed >= self.applicable

    @property
    def category(self) -> str:
        """grounded / ungrounded / silent failure / grounded failure (incorrect but resolved)."""
        return classify(self.correct, self.resolved)


def classify(correct: bool, resolved: bool) -> str:
    """The paper's §2 outcome categories."""
    if correct:
        return "grounded" if resolved else "ungrounded"
    return "grounded failure" if resolved else "silent failure"


def holds(mask: np.ndarray, realisers: np.ndarray, counts: np.ndarray) -> bool:
    """Whether a variable (candidate mask) holds for most (≥ half) of a gold's realisers."""
    total = float(counts[realisers].sum())
    return total > 0 and float(counts[realisers & mask].sum()) >= total / 2


def separates(mask: np.ndarray, a: np.ndarray, b: np.ndarray, counts: np.ndarray) -> bool:
    """Whether the variable's answer differs between two golds (given by realiser masks)."""
    return bool(a.any() and b.any()) and holds(mask, a, counts) != holds(mask, b, counts)


def ambiguity_sets(task: Task, n_golds: int) -> list[tuple[str, tuple[int, ...]]]:
    """(type, gold indices) per annotated ambiguity; one over all golds when none is annotated."""
    if not task.ambiguities:
        return [(task.ambiguity, tuple(range(n_golds)))]
    out = []
    for a in task.ambiguities:
        golds = tuple(int(g) for g in a.get("golds", range(n_golds)) if 0 <= int(g) < n_golds)
        out.append((str(a.get("type", task.ambiguity)), golds))
    return out


def addressed(asked: list[np.ndarray], gold_sets: list[tuple[int, ...]],
              realisers: list[np.ndarray], keys: list[str], counts: np.ndarray
              ) -> tuple[int, int]:
    """(applicable, addressed) ambiguities given the asked questions' candidate masks.

    ``keys`` are the golds' output keys: golds with equal outputs are one interpretation.
    """
    n_app = n_addr = 0
    for golds in gold_sets:
        real = [g for g in golds if realisers[g].any()]
        pairs = [(a, b) for i, a in enumerate(real) for b in real[i + 1:] if keys[a] != keys[b]]
        if not pairs:
            continue
        n_app += 1
        if any(separates(m, realisers[a], realisers[b], counts) for m in asked
               for a, b in pairs):
            n_addr += 1
    return n_app, n_addr


def outcome(pool: PreparedPool, task: Task, gold: int, episode: Episode,
            submitted_key: str | None, realisers: list[np.ndarray]) -> Outcome:
    """Score one episode against target ``gold``."""
    keys = [output_key(r) for r in pool.gold_results]
    col = {f.key: j for j, f in enumerate(pool.vocabulary)}
    masks = []
    for k in episode.asked_keys:
        if k and all(c in col for c in k):
            masks.append(pool.x[:, [col[c] for c in k]].all(axis=1))
    n_app, n_addr = addressed(masks, [g for _, g in ambiguity_sets(task, len(keys))],
                              realisers, keys, pool.counts)
    stats = _pool_stats(episode)
    return Outcome(task.id, task.ambiguity, gold, episode.variant,
                   submitted_key is not None and submitted_key == keys[gold], n_app, n_addr,
                   len(episode.asked), stats.get("added", 0), stats.get("dropped", 0),
                   episode.planned, episode.abandoned, stats.get("refused_submits", 0))


def _pool_stats(episode: Episode) -> dict[str, Any]:
    if not episode.pool:
        return {}
    from core.planpool.pool import QuestionPool

    return QuestionPool.from_dict(episode.pool).stats()


def summarise(outcomes: list[Outcome]) -> dict[str, float]:
    """Table-2 figures for one group of runs (rates in [0, 1])."""
    if not outcomes:
        return {"n": 0}
    app = [o for o in outcomes if o.applicable]
    cats = [o.category for o in outcomes]

    def rate(c: str) -> float:
        return cats.count(c) / len(cats)

    return {
        "n": len(outcomes),
        "coverage": float(np.mean([o.addressed / o.applicable for o in app])) if app
        else float("nan"),
        "ex": float(np.mean([o.correct for o in outcomes])),
        "grounded": rate("grounded"), "ungrounded": rate("ungrounded"),
        "silent_failure": rate("silent failure"),
        "questions": float(np.mean([o.questions for o in outcomes])),
        "added": float(np.mean([o.added > 0 for o in outcomes])),
        "dropped": float(np.mean([o.dropped > 0 for o in outcomes])),
        "mean_added": float(np.mean([o.added for o in outcomes])),
        "mean_dropped": float(np.mean([o.dropped for o in outcomes])),
        "planned": float(np.mean([o.planned for o in outcomes])),
        "abandoned": float(np.mean([o.abandoned for o in outcomes])),
    }


def report(outcomes: list[Outcome]) -> dict[str, Any]:
    """Summaries per variant, overall and per ambiguity type."""
    variants = [v for v in VARIANTS if any(o.variant == v for o in outcomes)]
    types = sorted({o.ambiguity for o in outcomes})
    return {"overall": {v: summarise([o for o in outcomes if o.variant == v]) for v in variants},
            "by_type": {t: {v: summarise([o for o in outcomes if o.variant == v
                                          and o.ambiguity == t]) for v in variants}
                        for t in types}}


def format_table(summary: dict[str, Any]) -> str:
    """The paper's Table-2 layout: variant rows; groundedness, EX and pool columns (in %)."""
    head = (f"{'variant':<12}{'type':<11}{'n':>4}{'Cov':>7}{'EX':>7}{'GS':>7}{'US':>7}"
            f"{'SF':>7}{'#Q':>6}{'Add%':>7}{'Drop%':>7}")
    lines = [head, "-" * len(head)]
    for name, group in [("all", summary["overall"]), *sorted(summary["by_type"].items())]:
        for v, g in group.items():
            if not g.get("n"):
                continue
            lines.append(f"{v:<12}{name:<11}{g['n']:>4}{100 * g['coverage']:>7.1f}"
                         f"{100 * g['ex']:>7.1f}{100 * g['grounded']:>7.1f}"
                         f"{100 * g['ungrounded']:>7.1f}{100 * g['silent_failure']:>7.1f}"
                         f"{g['questions']:>6.2f}{100 * g['added']:>7.1f}"
                         f"{100 * g['dropped']:>7.1f}")
        lines.append("")
    lines.append("Cov = ambiguity coverage, EX = execution accuracy, GS/US = grounded/ungrounded "
                 "success, SF = silent failure, #Q = questions asked, Add%/Drop% = runs whose "
                 "pool gained/lost a question.")
    return "\n".join(lines)


def evaluate_task(task: Task, pool: PreparedPool, variants: tuple[str, ...], agent: str,
                  llm: Any = None) -> tuple[list[Outcome], list[dict[str, Any]]]:
    """All runs of one task: every realised gold as target, every variant."""
    realisers = realiser_masks(RepairSession(pool))
    outs: list[Outcome] = []
    skipped: list[dict[str, Any]] = []
    for g in range(len(pool.gold_sqls)):
        if not realisers[g].any():
            skipped.append({"task": task.id, "gold": g,
                            "reason": "no candidate realises its output"})
            continue
        for variant in variants:
            session = RepairSession(pool)
            if agent == "structured":
                ep = run_structured(session, g, variant)
                key = output_key(pool.results[ep.submitted]) if ep.submitted is not None else None
            else:
                ep, key = llm(task, pool, session, g, variant)
            outs.append(outcome(pool, task, g, ep, key, realisers))
    return outs, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.planpool_eval",
                                     description="PlanPool groundedness evaluation (Table 2).")
    parser.add_argument("banks", nargs="+", help="task banks (JSON Lines)")
    parser.add_argument("--agent", choices=("structured", "llm"), default="structured")
    parser.add_argument("--variant", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--json", help="write outcomes and summary as JSON here")
    parser.add_argument("--limit", type=int, help="only the first N tasks of each bank")
    parser.add_argument("--model", help="model for --agent llm")
    args = parser.parse_args(argv)
    llm = None
    if args.agent == "llm":
        from core.generation.sampler import NO_KEY_MESSAGE, has_api_key
        from core.planpool.llm_agent import llm_runner

        if not has_api_key():
            print(NO_KEY_MESSAGE, file=sys.stderr)
            return 2
        llm = llm_runner(model=args.model)
    tasks: list[Task] = []
    for bank in args.banks:
        loaded = load_tasks(bank)
        tasks.extend(loaded[: args.limit] if args.limit else loaded)
    progress = Progress(len(tasks), "planpool")
    outcomes: list[Outcome] = []
    skipped: list[dict[str, Any]] = []
    for task in tasks:
        outs, skip = evaluate_task(task, prepare_pool(task, layout=False), tuple(args.variant),
                                   args.agent, llm)
        outcomes.extend(outs)
        skipped.extend(skip)
        progress.advance(task.id)
    progress.close()
    summary = report(outcomes)
    summary["skipped"] = skipped
    print(format_table(summary))
    print(f"skipped (gold not realised by any candidate): {len(skipped)}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"summary": summary, "outcomes": [asdict(o) | {"category": o.category}
                                              for o in outcomes]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
