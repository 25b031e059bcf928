"""What a study can do before it opens: per task, its pool and the honest evaluation.

"Valid" only says the study file and bank parse. Whether a participant can reach the reading a
task means depends on the pool: how many candidates and distinct outputs it has, whether each
gold's output is produced by some candidate, and how often the honest simulated user
(``gold-features``, the default of ``python -m core.evaluate``) reaches each gold with the
workspace's strategy — the same :func:`core.evaluation.evaluate.evaluate` and
:func:`core.evaluation.report.summarise` figures, one task at a time. Offline variants
(:func:`core.generation.generate.variant_pool`) can be merged into a task's bank line
(:func:`add_candidates`), after which its pool is prepared again.

Pure of Streamlit: progress goes through a ``(done, total, label)`` callback.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.engine.execute import open_database
from core.engine.pool import PreparedPool, prepare_pool
from core.engine.prepare import _read, pool_fingerprint
from core.engine.strategy import WORKSPACE_DEFAULT
from core.engine.taskbank import Task
from core.evaluation.evaluate import DEFAULT_REPAIR, evaluate
from core.evaluation.report import summarise
from core.evaluation.simulate import DEFAULT_USER
from core.generation.poolcache import GeneratedPool
from study.setup_pools import planned_tasks
from study.spec import StudySpec

Progress = Callable[[int, int, str], None]
SMALL_POOL = 20  # fewer candidates than this: little for the Action and Decision Spaces
FEW_OUTPUTS = 2  # fewer distinct outputs than this: nothing to decide


@dataclass(frozen=True)
class TaskReadiness:
    """One task's pool and how the honest simulated user fares on its golds."""

    task: str
    role: str  # task | practice
    candidates: int  # distinct candidate queries in the pool
    outputs: int  # distinct outputs (functional classes) of the valid candidates
    golds: int
    golds_produced: int  # golds whose output some candidate produces
    success: float | None  # honest user, every gold (None without golds)
    mean_turns: float | None
    silent_failure: float | None
    warnings: tuple[str, ...]


def _pool(task: Task, pool_dir: Path | None) -> tuple[PreparedPool, dict[str, list[str]]]:
    """The prepared pool (the file Setup prepared, else computed without a layout) and the
    schema the honest user reads the golds with, as in ``python -m core.evaluate``."""
    db = open_database(task.database)
    try:
        schema = db.schema()
        pool = _read(pool_dir / f"{task.id}.json", pool_fingerprint(task)) if pool_dir else None
        if pool is None:
            pool = prepare_pool(task, db=db, layout=False)
        pool.database = task.database
        return pool, schema
    finally:
        db.close()


Vocabulary = tuple[str, bool]  # (questions, values): what the Decision Space may ask
DEFAULT_VOCABULARY: Vocabulary = (str(WORKSPACE_DEFAULT["questions"]),
                                  bool(WORKSPACE_DEFAULT["values"]))


def study_vocabulary(spec: StudySpec) -> Vocabulary:
    """What the study's full-workspace condition asks (its ``questions`` and ``values``; unset
    questions are the workspace default), so the check runs the questions participants get;
    the workspace default for a study without one."""
    for cond in spec.conditions:
        if cond.id == "pleasqlarify":
            return (cond.questions or DEFAULT_VOCABULARY[0], cond.values)
    return DEFAULT_VOCABULARY


def task_readiness(task: Task, role: str = "task", pool_dir: Path | None = None,
                   vocabulary: Vocabulary | None = None) -> TaskReadiness:
    """Pool figures, the honest evaluation over every gold of ``task`` with ``vocabulary``
    (default: the workspace's), and what to fix."""
    pool, schema = _pool(task, pool_dir)
    golds = len(pool.gold_results)
    produced = [g for g in range(golds) if pool.gold_class(g) is not None]
    outputs = len({int(c) for c, ok in zip(pool.class_index, pool.valid, strict=True) if ok})
    warnings: list[str] = []
    success = turns = silent = None
    if golds:
        runs, _ = evaluate([(pool, task.ambiguity)], (str(WORKSPACE_DEFAULT["strategy"]),),
                           users=(DEFAULT_USER,), populations=("all",), repair=DEFAULT_REPAIR,
                           schemas=[schema], databases=[task.database],
                           vocabularies=(vocabulary or DEFAULT_VOCABULARY,))
        figures = summarise(runs)
        success, turns = figures["success"], figures["mean_turns"]
        silent = figures["silent_failure"]
    elif role == "task":
        warnings.append("has no gold query: nothing says which reading is meant, so neither "
                        "the evaluation nor the analysis can check an answer. Add 'gold' to "
                        "its line in the task bank")
    for g in range(golds):
        if g not in produced:
            res = pool.gold_results[g]
            why = f"fails ({res.error})" if not res.ok else "is produced by no candidate"
            warnings.append(f"gold {g + 1} {why}: a participant who means it can reach it only "
                            "through repair. Add candidates (offline variants or LLM samples "
                            "below)")
    if pool.n < SMALL_POOL or outputs < FEW_OUTPUTS:
        warnings.append(f"has only {pool.n} candidates with {outputs} distinct output(s): the "
                        "Action Space and Decision Space have little to show (30-50 candidates "
                        "are typical). Add candidates below")
    if success is not None and success < 1:
        warnings.append(f"the honest simulated user reaches the gold in {success:.0%} of "
                        "sessions")
    return TaskReadiness(task.id, role, pool.n, outputs, golds, len(produced), success, turns,
                         silent, tuple(warnings))


def readiness_tasks(spec: StudySpec) -> list[tuple[Task, str, Path | None]]:
    """The study's tasks in its bank, practice first: (task, role, prepared-pool file or None).

    What :func:`task_readiness` needs per task, so a caller can check (and cache) one at a time.
    """
    return [(task, role, path) for _, role, task, path in planned_tasks(spec)
            if task is not None]


def study_readiness(spec: StudySpec, on_progress: Progress | None = None
                    ) -> list[TaskReadiness]:
    """:func:`task_readiness` of every task of the study in the bank (practice first)."""
    todo = readiness_tasks(spec)
    vocabulary = study_vocabulary(spec)
    out = []
    for i, (task, role, path) in enumerate(todo):
        if on_progress:
            on_progress(i, len(todo), task.id)
        out.append(task_readiness(task, role, path.parent if path else None, vocabulary))
    if on_progress:
        on_progress(len(todo), len(todo), "done")
    return out


def add_candidates(bank: Path, task_id: str, pool: GeneratedPool) -> tuple[int, int]:
    """Merge ``pool``'s candidates into ``task_id``'s line of the bank file (counts of equal
    SQL add up; every other line is kept byte for byte); returns (new distinct candidates,
    candidates now). The task's prepared pool is then out of date, so Setup prepares it again.
    """
    lines = bank.read_text(encoding="utf-8").splitlines(keepends=True)
    for i, text in enumerate(lines):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            continue
        if not isinstance(line, dict) or line.get("id") != task_id:
            continue
        have = [dict(c) if isinstance(c, dict) else {"sql": c, "count": 1}
                for c in line.get("candidates", [])]
        by_sql = {c["sql"]: c for c in have}
        new = 0
        for c in pool.candidates:
            if c.sql in by_sql:
                by_sql[c.sql]["count"] = int(by_sql[c.sql].get("count", 1)) + c.count
            else:
                by_sql[c.sql] = {"sql": c.sql, "count": c.count}
                new += 1
        line["candidates"] = list(by_sql.values())
        lines[i] = json.dumps(line, ensure_ascii=False) + "\n"
        tmp = bank.with_name(f".{bank.name}.adding")
        tmp.write_text("".join(lines), encoding="utf-8")
        os.replace(tmp, bank)
        return new, len(by_sql)
    raise KeyError(f"{bank}: no task '{task_id}' in this bank; add its line first")


__all__ = ["SMALL_POOL", "TaskReadiness", "add_candidates", "readiness_tasks", "study_readiness",
           "task_readiness"]
