"""PlanPool evaluation (paper §2, §5.1): groundedness metrics and the Table-2 CLI.

``python -m core.planpool_eval BANK.jsonl [BANK2 …] --agent structured|llm
[--variant naive plan-prompt planpool] [--user gold-features pool-informed]
[--population all realised prior] [--json OUT] [--limit N]``

One run per (task, target of the population, simulated user, variant); the users and
populations are the §7 evaluation's (:mod:`core.evaluation.simulate`,
:mod:`core.evaluation.populations`): ``pool-informed`` is an optimistic bound (it knows which
candidates are correct), ``gold-features`` the honest user; ``all`` keeps golds no candidate
produces (they can only fail), ``prior`` targets every class weighted by its prior. An *ambiguity* is a set of gold interpretations
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

from core.engine.execute import open_database
from core.engine.pool import PreparedPool, prepare_pool
from core.engine.progress import Progress
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.engine.taskbank import Task, load_tasks
from core.evaluation.populations import DEFAULT_POPULATION, POPULATION_NOTES, POPULATIONS, targets
from core.evaluation.simulate import DEFAULT_USER, USER_NOTES, USERS, Target, output_matches
from core.planpool.agents import VARIANTS, Episode
from core.planpool.simulated import realiser_masks, run_structured


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
    user: str = "pool-informed"
    population: str = "realised"
    weight: float = 1.0
    realised: bool = True

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


def outcome(pool: PreparedPool, task: Task, gold: int | Target, episode: Episode,
            submitted_key: str | None, realisers: list[np.ndarray], **meta: Any) -> Outcome:
    """Score one episode against target ``gold`` (a gold index or a population's target)."""
    keys = [output_key(r) for r in pool.gold_results]
    target = gold if isinstance(gold, Target) else None
    index = gold.index if isinstance(gold, Target) else gold
    want = target.key if target is not None else keys[index]
    correct = submitted_key is not None and submitted_key == want and want != "error"
    if target is not None and episode.submitted is not None and not correct:
        correct = output_matches(pool.results[episode.submitted], target.result)
    col = {f.key: j for j, f in enumerate(pool.vocabulary)}
    masks = []
    for k in episode.asked_keys:
        if k and all(c in col for c in k):
            masks.append(np.asarray(pool.x[:, [col[c] for c in k]].all(axis=1)))
    n_app, n_addr = addressed(masks, [g for _, g in ambiguity_sets(task, len(keys))],
                              realisers, keys, pool.counts)
    stats = _pool_stats(episode)
    if target is not None:
        meta.setdefault("weight", target.weight)
    return Outcome(task.id, task.ambiguity, index, episode.variant, correct, n_app, n_addr,
                   len(episode.asked), stats.get("added", 0), stats.get("dropped", 0),
                   episode.planned, episode.abandoned, stats.get("refused_submits", 0), **meta)


def _pool_stats(episode: Episode) -> dict[str, Any]:
    if not episode.pool:
        return {}
    from core.planpool.pool import QuestionPool

    return QuestionPool.from_dict(episode.pool).stats()


def summarise(outcomes: list[Outcome]) -> dict[str, float]:
    """Table-2 figures for one group of runs (rates in [0, 1])."""
    if not outcomes:
        return {"n": 0}
    w = np.array([o.weight for o in outcomes], dtype=float)
    app = [i for i, o in enumerate(outcomes) if o.applicable]
    cats = [o.category for o in outcomes]

    def mean(values: list[float], idx: list[int] | None = None) -> float:
        weights = w if idx is None else w[idx]
        return float(np.average(values, weights=weights))

    def rate(c: str) -> float:
        return mean([k == c for k in cats])

    return {
        "n": len(outcomes),
        "unrealised": sum(not o.realised for o in outcomes),
        "coverage": mean([outcomes[i].addressed / outcomes[i].applicable for i in app], app)
        if app else float("nan"),
        "ex": mean([o.correct for o in outcomes]),
        "grounded": rate("grounded"), "ungrounded": rate("ungrounded"),
        "silent_failure": rate("silent failure"),
        "questions": mean([o.questions for o in outcomes]),
        "added": mean([o.added > 0 for o in outcomes]),
        "dropped": mean([o.dropped > 0 for o in outcomes]),
        "mean_added": mean([o.added for o in outcomes]),
        "mean_dropped": mean([o.dropped for o in outcomes]),
        "planned": mean([o.planned for o in outcomes]),
        "abandoned": mean([o.abandoned for o in outcomes]),
    }


def _group(outcomes: list[Outcome]) -> dict[str, Any]:
    variants = [v for v in VARIANTS if any(o.variant == v for o in outcomes)]
    types = sorted({o.ambiguity for o in outcomes})
    return {"overall": {v: summarise([o for o in outcomes if o.variant == v]) for v in variants},
            "by_type": {t: {v: summarise([o for o in outcomes if o.variant == v
                                          and o.ambiguity == t]) for v in variants}
                        for t in types}}


def report(outcomes: list[Outcome], headline: str = DEFAULT_USER) -> dict[str, Any]:
    """Summaries per population × user × variant; ``overall``/``by_type`` are the headline's.

    The headline group is the headline user on the first population.
    """
    pops = list(dict.fromkeys(o.population for o in outcomes))
    users = [u for u in USERS if any(o.user == u for o in outcomes)]
    results = {p: {u: _group([o for o in outcomes if o.population == p and o.user == u])
                   for u in users} for p in pops}
    first = results[pops[0]] if pops else {}
    head: dict[str, Any] = (first.get(headline)
                            or next(iter(first.values()), {"overall": {}, "by_type": {}}))
    return {"users": {u: USER_NOTES[u] for u in users},
            "populations": {p: POPULATION_NOTES[p] for p in pops}, "headline": headline,
            "overall": head["overall"], "by_type": head["by_type"], "results": results}


def format_table(summary: dict[str, Any]) -> str:
    """Table-2 layout per population: variant rows, each user on adjacent rows (in %)."""
    head = (f"{'variant':<12}{'user':<15}{'type':<11}{'n':>4}{'Cov':>7}{'EX':>7}{'GS':>7}"
            f"{'US':>7}{'SF':>7}{'#Q':>6}{'Add%':>7}{'Drop%':>7}")
    lines = ["Simulated users (side by side, headline: " f"{summary.get('headline')}):"]
    lines += [f"  {u}: {note}" for u, note in summary.get("users", {}).items()]
    results = summary.get("results") or {"realised": {"": summary}}
    for pop, per_user in results.items():
        lines += ["", f"population {pop}: {summary.get('populations', {}).get(pop, '')}",
                  head, "-" * len(head)]
        any_user = next(iter(per_user.values()))
        groups = [("all", "overall")] + [(t, t) for t in sorted(any_user["by_type"])]
        for name, where in groups:
            for v in VARIANTS:
                for u, group in per_user.items():
                    block = group["overall"] if where == "overall" else group["by_type"][where]
                    g = block.get(v, {})
                    if not g.get("n"):
                        continue
                    lines.append(
                        f"{v:<12}{u:<15}{name:<11}{g['n']:>4}{100 * g['coverage']:>7.1f}"
                        f"{100 * g['ex']:>7.1f}{100 * g['grounded']:>7.1f}"
                        f"{100 * g['ungrounded']:>7.1f}{100 * g['silent_failure']:>7.1f}"
                        f"{g['questions']:>6.2f}{100 * g['added']:>7.1f}"
                        f"{100 * g['dropped']:>7.1f}")
            lines.append("")
    lines.append("Cov = ambiguity coverage, EX = execution accuracy, GS/US = grounded/ungrounded "
                 "success, SF = silent failure, #Q = questions asked, Add%/Drop% = runs whose "
                 "pool gained/lost a question; prior rows are weighted by the target's prior.")
    return "\n".join(lines)


def evaluate_task(task: Task, pool: PreparedPool, variants: tuple[str, ...], agent: str,
                  llm: Any = None, *, users: tuple[str, ...] = ("pool-informed",),
                  populations: tuple[str, ...] = ("realised",),
                  schema: dict[str, list[str]] | None = None
                  ) -> tuple[list[Outcome], list[dict[str, Any]]]:
    """All runs of one task: every target of each population, every user and variant.

    The returned list names the golds no candidate produces (skipped by ``realised``, failures
    in ``all``).
    """
    realisers = realiser_masks(RepairSession(pool))
    outs: list[Outcome] = []
    unrealised = [{"task": task.id, "gold": g, "reason": "no candidate realises its output"}
                  for g in range(len(pool.gold_sqls)) if not realisers[g].any()]
    for population in populations:
        for target in targets(pool, population, schema):
            realised = target.key != "error" and target.key in pool.class_keys
            for user in users:
                for variant in variants:
                    session = RepairSession(pool)
                    if agent == "structured":
                        ep = run_structured(session, target, variant, user=user)
                        key = output_key(pool.results[ep.submitted]) \
                            if ep.submitted is not None else None
                    else:
                        ep, key = llm(task, pool, session, target, variant, user)
                    outs.append(outcome(pool, task, target, ep, key, realisers, user=user,
                                        population=population, realised=realised))
    return outs, unrealised


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.planpool_eval",
                                     description="PlanPool groundedness evaluation (Table 2).")
    parser.add_argument("banks", nargs="+", help="task banks (JSON Lines)")
    parser.add_argument("--agent", choices=("structured", "llm"), default="structured")
    parser.add_argument("--variant", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--user", nargs="+", choices=USERS, default=list(USERS),
                        help="simulated users (the first is the headline); default both")
    parser.add_argument("--population", nargs="+", choices=POPULATIONS,
                        default=[DEFAULT_POPULATION])
    parser.add_argument("--json", help="write outcomes and summary as JSON here")
    parser.add_argument("--limit", type=int, help="only the first N tasks of each bank")
    parser.add_argument("--model", help="model for --agent llm")
    args = parser.parse_args(argv)
    llm = None
    if args.agent == "llm":
        from core.generation.sampler import NO_KEY_MESSAGE, has_api_key
        from core.planpool.simulated import llm_runner

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
        db = open_database(task.database)
        try:
            schema = db.schema()
            pool = prepare_pool(task, db=db, layout=False)
        finally:
            db.close()
        outs, skip = evaluate_task(task, pool, tuple(args.variant), args.agent, llm,
                                   users=tuple(args.user), populations=tuple(args.population),
                                   schema=schema)
        outcomes.extend(outs)
        skipped.extend(skip)
        progress.advance(task.id)
    progress.close()
    summary = report(outcomes, headline=args.user[0])
    summary["skipped"] = skipped
    print(format_table(summary))
    print(f"task×gold pairs whose gold output no candidate produces: {len(skipped)} "
          "(absent from 'realised', failures in 'all')")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"summary": summary, "outcomes": [asdict(o) | {"category": o.category}
                                              for o in outcomes]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
