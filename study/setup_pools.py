"""Setup-page logic: pool status of a study's tasks, preparing missing pools, candidate pools.

Pure of Streamlit: progress is reported through a ``(done, total, label)`` callback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.engine.dbrole import role_warnings
from core.engine.pool import prepare_pool
from core.engine.prepare import default_pool_dir, pool_ready, write_prepared
from core.engine.taskbank import Task, load_task_bank
from core.generation.generate import pool_line, variant_pool
from core.generation.poolcache import GeneratedPool, open_pool_cache
from core.generation.sampler import AnthropicSampler, SamplerConfig, generate_pool
from study.spec import StudySpec

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class PoolStatus:
    """One study task (or the practice task) and whether its prepared pool is up to date."""

    task: str
    role: str  # task | practice
    in_bank: bool
    prepared: bool
    candidates: int
    path: Path | None


def study_tasks(spec: StudySpec) -> dict[str, Task]:
    """The bank's tasks by id ({} when the study names no readable bank)."""
    if spec.task_bank is None or not spec.task_bank.is_file():
        return {}
    tasks, _ = load_task_bank(spec.task_bank, lenient=True)
    return {t.id: t for t in tasks}


def planned_tasks(spec: StudySpec) -> list[tuple[str, str, Task | None, Path | None]]:
    """Every task the study names, practice first: (id, role, its bank task or None, its
    prepared-pool file or None without a bank) — what Setup's pool list and readiness read."""
    bank = study_tasks(spec)
    folder = default_pool_dir(spec.task_bank) if spec.task_bank else None
    ids = ([(spec.onboarding.practice_task, "practice")] if spec.onboarding.practice_task
           else []) + [(t, "task") for t in spec.task_ids]
    return [(tid, role, bank.get(tid), folder / f"{tid}.json" if folder else None)
            for tid, role in ids]


def database_warnings(spec: StudySpec) -> list[str]:
    """Least-privilege warnings for each distinct task database of the study (PostgreSQL roles
    that are superusers or can write); SQLite databases always open read-only."""
    seen: dict[str, Task] = {}
    for task in study_tasks(spec).values():
        seen.setdefault(task.database.value, task)
    return [f"task {t.id}: {w}" for t in seen.values() for w in role_warnings(t.database)]


def pool_status(spec: StudySpec) -> list[PoolStatus]:
    """Every task of the study (practice first) with its prepared-pool status."""
    out = []
    for tid, role, task, path in planned_tasks(spec):
        ok = bool(task and path and pool_ready(task, path.parent))
        out.append(PoolStatus(tid, role, task is not None, ok,
                              len(task.candidates) if task else 0, path))
    return out


def prepare_missing(spec: StudySpec, on_progress: Progress | None = None) -> list[str]:
    """Prepare (and write beside the bank) every missing pool; returns the task ids done."""
    bank = study_tasks(spec)
    todo = [s for s in pool_status(spec) if s.in_bank and not s.prepared and s.path]
    done = []
    for i, s in enumerate(todo):
        if on_progress:
            on_progress(i, len(todo), s.task)
        assert s.path is not None  # todo keeps only statuses with a path
        s.path.parent.mkdir(parents=True, exist_ok=True)
        write_prepared(prepare_pool(bank[s.task]), bank[s.task], s.path)
        done.append(s.task)
    if on_progress:
        on_progress(len(todo), len(todo), "done")
    return done


def generate_candidates(task: Task, *, n: int, offline: bool, study_db: Any = None,
                        model: str | None = None, on_progress: Progress | None = None,
                        api_key: str | None = None) -> tuple[GeneratedPool, dict]:
    """A candidate pool for ``task`` (LLM samples with ``api_key`` or $ANTHROPIC_API_KEY, or
    offline variants); (pool, bank line)."""
    if offline:
        pool = variant_pool(task, n)
    else:
        config = SamplerConfig(n=n, model=model) if model else SamplerConfig(n=n)
        cache = open_pool_cache(study_db)

        def progress(done: int, total: int, info: dict[str, Any]) -> None:
            if on_progress:
                on_progress(done, total, "cached" if info.get("cached") else "sampling")

        pool = generate_pool(AnthropicSampler(config, api_key=api_key), task.question,
                             task.database, cache,
                             on_progress=progress)
    return pool, pool_line(task, pool)
