"""Per-process caches for the study pages: the store, study files, task pools, database previews.

Only read-only or thread-safe objects live here (shared between participants); each user's
flow state is in ``st.session_state`` (see ui/participant_views.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from core.engine.taskbank import Task, load_task_bank
from core.generation.keys import has_api_key
from study.registry import StudyEntry, open_problems, scan, studies_dir
from study.spec import StudySpec, load_study
from study.spec_check import SpecProblem
from study.store import Store, default_url, open_store

if TYPE_CHECKING:  # the engine (numpy, scipy, sqlglot) is imported where a pool is loaded,
    from core.engine.pool import PreparedPool  # so consent and questionnaires do not wait


@st.cache_resource(show_spinner=False)
def _store(url: str) -> Store:
    return open_store(url)


def store() -> Store:
    """The study store of ``$PLEASQLARIFY_DB_URL`` (default logs/study.sqlite)."""
    return _store(default_url())


@st.cache_resource(show_spinner=False, max_entries=32)
def _spec(path: str, mtime: float) -> StudySpec:
    return load_study(path)


def spec(path: Path) -> StudySpec:
    """The validated study file (reloaded when it changes on disk)."""
    return _spec(str(path), path.stat().st_mtime if path.is_file() else 0.0)


@st.cache_resource(show_spinner=False, max_entries=8)
def _studies(root: str, stamp: tuple[tuple[str, float], ...]) -> dict[str, StudyEntry]:
    return scan(Path(root))


def studies() -> dict[str, StudyEntry]:
    """Every study under the studies directory by id (rescanned when a file changes)."""
    root = studies_dir()
    files = [*root.rglob("*.yaml"), *root.rglob("*.jsonl")] if root.is_dir() else []
    return _studies(str(root), tuple(sorted((str(f), f.stat().st_mtime) for f in files)))


def study(study_id: str) -> StudyEntry | None:
    """The study with this id, or None."""
    return studies().get(study_id)


def blocking(entry: StudyEntry) -> list[SpecProblem]:
    """Errors that keep this study closed to participants ([] when it may open)."""
    if entry.spec is None:
        return list(entry.problems)
    return [*entry.problems, *open_problems(entry.spec,
                                            api_key=has_api_key(secret("ANTHROPIC_API_KEY")))]


@st.cache_resource(show_spinner=False, max_entries=32)
def _tasks(bank: str) -> dict[str, Task]:
    tasks, _ = load_task_bank(bank, lenient=True)
    return {t.id: t for t in tasks}


def task(spec: StudySpec, task_id: str) -> Task:
    """A task of the study's bank."""
    return _tasks(str(spec.task_bank))[task_id]


@st.cache_resource(show_spinner="Loading the candidate pool…", max_entries=64)
def _pool(bank: str, task_id: str) -> PreparedPool:
    from core.engine.prepare import default_pool_dir, load_prepared
    from ui.state import warm_default_plan

    pool = load_prepared(_tasks(bank)[task_id], default_pool_dir(bank))
    warm_default_plan(pool)  # the default session's plan, solved while the page draws
    return pool


def pool(spec: StudySpec, task_id: str) -> PreparedPool:
    """The prepared pool of a study task (shared, never mutated)."""
    return _pool(str(spec.task_bank), task_id)


@st.cache_data(show_spinner=False, max_entries=64)
def _preview(bank: str, task_id: str, rows: int) -> dict[str, tuple[list[str], list[list[Any]]]]:
    from core.engine.execute import open_database

    db = open_database(_tasks(bank)[task_id].database)
    try:
        out = {}
        for table in db.schema():
            res = db.sample_rows(table, rows)
            out[table] = (list(res.columns), [list(r) for r in res.rows])
        return out
    finally:
        db.close()


def database_preview(spec: StudySpec, task_id: str, rows: int = 20
                     ) -> dict[str, tuple[list[str], list[list[Any]]]]:
    """Columns and first rows of every table of the task's database."""
    return _preview(str(spec.task_bank), task_id, rows)


def secret(name: str) -> str | None:
    """A value from .streamlit/secrets.toml, if there is one."""
    try:
        return st.secrets.get(name)
    except StreamlitSecretNotFoundError:
        return None
