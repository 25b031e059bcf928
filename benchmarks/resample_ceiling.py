"""What LLM resampling would have to achieve for issue #26's turns target: a ceiling, not a
product figure.

``python -m benchmarks.resample_ceiling BANK.jsonl [--weights 0.5 0.05] [--budget 15]
[--look end|each] [--jobs N]``

Every task×gold pair runs as the headline evaluation does (the honest gold-features user, who
knows only the gold's own clauses and output; expected-depth over the hybrid vocabulary;
recomposition after each rejection). Then the same pairs run with an *oracle resampler* after
recomposition: it proposes the gold's own query at weight W, as a model that always finds the
user's reading would, and the query is admitted like any repair candidate (it must run, agree
with every answer and give an output not yet alive or rejected). Printed per W: success and
mean turns over all pairs with the oracle in every round, and with it only for the pairs whose
recomposition run fails needing a clause no candidate has (what only resampling can add; the
other pairs keep their recomposition runs). The real resampling is measured by
``python -m core.evaluate … --repair recompose+resample`` with a key.
"""

from __future__ import annotations

import argparse
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from core.engine.execute import open_database
from core.engine.pool import prepare_pool
from core.engine.repair import Resampler, _admit
from core.engine.taskbank import load_tasks
from core.evaluation.evaluate import MAX_TURNS, Run, simulate
from core.evaluation.populations import targets
from core.evaluation.simulate import LOOKS

STRATEGY, QUESTIONS = "expected-depth", "hybrid"


def _oracle(sql: str, weight: float) -> Resampler:
    """A resampling step that proposes ``sql`` (the gold's query) at ``weight``."""
    return lambda session: _admit(session, [(sql, weight)], "resample", 24)


def task_runs(task: Any, weights: tuple[float, ...], budget: int, look: str
              ) -> list[dict[Any, Any]]:
    """Per gold of ``task``: its recomposition run and one oracle run per weight."""
    db = open_database(task.database)
    try:
        schema = db.schema()
        pool = prepare_pool(task, db=db, layout=False)
        cache: dict = {"pool": pool}
        rows = []
        for target in targets(pool, "all", schema):
            kw: dict[str, Any] = {"random_state": target.index * 31, "user": "gold-features",
                                  "population": "all", "max_turns": budget, "database": db,
                                  "cache": cache, "questions": QUESTIONS, "look": look}
            row: dict[Any, Any] = {"task": task.id, "gold": target.index,
                                   "base": simulate(pool, target, STRATEGY, task.ambiguity,
                                                    repair="recompose", **kw)}
            for w in weights:
                row[w] = simulate(pool, target, STRATEGY, task.ambiguity,
                                  repair="recompose+resample",
                                  resampler=_oracle(target.sql, w), **kw)
            rows.append(row)
        return rows
    finally:
        db.close()


def _figures(runs: list[Run]) -> tuple[float, float, int]:
    turns = int(sum(r.turns for r in runs))
    return sum(r.success for r in runs) / len(runs), turns / len(runs), turns


def report(rows: list[dict[Any, Any]], weights: tuple[float, ...]) -> list[str]:
    """The table: recomposition, then per weight the oracle everywhere and where needed."""
    base = [r["base"] for r in rows]
    needs = [r["base"].cause == "needs-clause" for r in rows]
    lines = [f"{'repair after a rejection':<56}{'success':>8}{'turns':>7}{'total':>7}",
             "-" * 78]

    def line(name: str, runs: list[Run]) -> None:
        s, t, total = _figures(runs)
        lines.append(f"{name:<56}{s:>8.3f}{t:>7.2f}{total:>7}")

    line("recomposition (the headline evaluation)", base)
    for w in weights:
        line(f"+ oracle at weight {w:g}, every round", [r[w] for r in rows])
        line(f"+ oracle at weight {w:g}, only the {sum(needs)} needs-clause pairs",
             [r[w] if n else r["base"] for r, n in zip(rows, needs, strict=True)])
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.resample_ceiling",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("banks", nargs="+")
    parser.add_argument("--weights", nargs="+", type=float, default=[0.5, 0.05],
                        help="the oracle's weight for the gold's query (repair's prior is "
                        "0.05-0.5)")
    parser.add_argument("--budget", type=int, default=MAX_TURNS)
    parser.add_argument("--look", default="end", choices=LOOKS)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    weights = tuple(args.weights)
    print("Oracle ceiling, not a product figure. User: honest gold-features (knows the gold's "
          f"own clauses and output); {STRATEGY}, {QUESTIONS} questions, budget {args.budget}, "
          f"look {args.look}. Oracle: the gold's own query proposed after each recomposition "
          "round, admitted only if it agrees with every answer.")
    for bank in args.banks:
        tasks = load_tasks(bank)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=max(1, args.jobs), mp_context=context) as ex:
            per_task = ex.map(task_runs, tasks, [weights] * len(tasks),
                              [args.budget] * len(tasks), [args.look] * len(tasks))
            rows = [row for task_rows in per_task for row in task_rows]
        print(f"\n{bank}: {len(rows)} task×gold pairs")
        print("\n".join(report(rows, weights)))
    return 0


__all__ = ["main", "report", "task_runs"]

if __name__ == "__main__":
    raise SystemExit(main())
