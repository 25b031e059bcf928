"""Task banks and prepared pools for the pages, cached once per process (they are read-only).

Pools are read from the precomputed ``pools/`` folder beside the bank (``python -m
core.prepare``), so no layout is fitted on a request path. ``st.cache_resource`` is keyed by
bank path and task id; per-user state never goes here (see :mod:`ui.state`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from core.engine.taskbank import Task, TaskBankProblem, load_task_bank

if TYPE_CHECKING:  # the engine (numpy, scipy) is imported where a pool is loaded, so Home's
    from core.engine.pool import PreparedPool  # first paint in a fresh server does not wait

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_BANK = ROOT / "studies" / "film" / "tasks.jsonl"
BANK_ENV = "PLEASQLARIFY_BANK"


def bank_path() -> Path:
    """The built-in task bank, or the one named by $PLEASQLARIFY_BANK (tests, other studies)."""
    return Path(os.environ.get(BANK_ENV) or BUILTIN_BANK)


@st.cache_resource(show_spinner=False)
def bank(path: str) -> tuple[tuple[Task, ...], tuple[TaskBankProblem, ...]]:
    """Tasks of the bank at ``path`` and the lines that could not be read."""
    tasks, problems = load_task_bank(path, lenient=True)
    return tuple(tasks), tuple(problems)


@st.cache_resource(show_spinner="Loading the candidate pool…", max_entries=64)
def task_pool(path: str, task_id: str) -> PreparedPool:
    """The prepared pool of ``task_id`` in the bank at ``path`` (shared, never mutated)."""
    from core.engine.prepare import default_pool_dir, load_prepared
    from ui.state import warm_default_plan

    tasks, _ = bank(path)
    for task in tasks:
        if task.id == task_id:
            pool = load_prepared(task, default_pool_dir(path))
            warm_default_plan(pool)  # the default session's plan, solved while the page draws
            return pool
    raise KeyError(f"task {task_id!r} is not in {path}")
