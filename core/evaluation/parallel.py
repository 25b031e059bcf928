"""``core.evaluate --jobs N``: the per-task work of the evaluation in N processes.

Each task is prepared and evaluated in a worker exactly as the serial path does it
(:func:`core.evaluation.evaluate.evaluate` over that one task; every run's random state depends
only on its task, target and strategy), and the results are gathered in bank order, so the
runs, the summary and the JSON are identical to ``--jobs 1``. Workers are spawned (not forked:
the engine may hold background threads) and take one task at a time, so a slow task does not
hold back the others.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from core.engine.execute import open_database
from core.engine.pool import prepare_pool
from core.engine.progress import Progress

Evaluate = Callable[..., tuple[list[Any], list[dict]]]


def _one_task(task: Any, options: dict[str, Any], evaluate: Evaluate
              ) -> tuple[list[Any], list[dict]]:
    """Prepare one task's pool and run ``evaluate`` on it (in a worker process; ``evaluate`` is
    passed in, pickled by name, so this module never imports the evaluation back)."""
    db = open_database(task.database)
    try:
        schema = db.schema()
        pool = prepare_pool(task, db=db, layout=False, conjuncts=options["conjuncts"])
    finally:
        db.close()
    return evaluate([(pool, task.ambiguity)], options["strategies"],
                    populations=options["populations"], repair=options["repair"],
                    schemas=[schema], conjuncts=options["conjuncts"],
                    max_turns=options["max_turns"], databases=[task.database],
                    vocabularies=options["vocabularies"], look=options.get("look", "end"),
                    resampling=options.get("resampling"))


def evaluate_tasks(tasks: list[Any], jobs: int, evaluate: Evaluate,
                   progress: Progress | None = None, **options: Any
                   ) -> tuple[list[Any], list[dict]]:
    """Runs and unrealised pairs of every task, computed by ``evaluate`` (the serial
    :func:`core.evaluation.evaluate.evaluate`) in ``jobs`` processes, in task order.

    ``options``: strategies, populations, repair, conjuncts, max_turns, vocabularies, look,
    resampling (as for ``evaluate``).
    """
    runs: list[Any] = []
    unrealised: list[dict] = []
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=context) as pool:
        results = pool.map(_one_task, tasks, [options] * len(tasks), [evaluate] * len(tasks),
                           chunksize=1)
        for task, (task_runs, task_unrealised) in zip(tasks, results, strict=True):
            runs.extend(task_runs)
            unrealised.extend(task_unrealised)
            if progress is not None:
                progress.advance(task.id)
    return runs, unrealised
