"""Per-process caches for the study pages: the store, study files, task pools, database previews.

Only read-only or thread-safe objects live here (shared between participants); each user's
flow state is in ``st.session_state`` (see ui/participant_views.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from core.engine.poolfile import default_pool_dir
from core.engine.taskbank import Task, load_task_bank
from core.generation.keys import has_api_key
from core.settings import study_roots
from study.registry import StudyEntry, key_notices, open_problems, pool_problems, scan
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
def _studies(roots: tuple[str, ...], stamp: tuple[tuple[str, float], ...]
             ) -> dict[str, StudyEntry]:
    """Every study of the current study folders (``roots`` and ``stamp`` key the cache)."""
    return scan()


def studies() -> dict[str, StudyEntry]:
    """Every study under the study folders by id (rescanned when a file changes)."""
    roots = study_roots()
    files = [f for root in roots if root.is_dir()
             for f in [*root.rglob("*.yaml"), *root.rglob("*.jsonl")]]
    return _studies(tuple(map(str, roots)),
                    tuple(sorted((str(f), f.stat().st_mtime) for f in files)))


def study(study_id: str) -> StudyEntry | None:
    """The study with this id, or None."""
    return studies().get(study_id)


def blocking(entry: StudyEntry) -> list[SpecProblem]:
    """Errors that keep this study closed to participants ([] when it may open), unprepared
    pools included."""
    if entry.spec is None:
        return list(entry.problems)
    return [*entry.problems, *open_problems(entry.spec,
                                            api_key=has_api_key(secret("ANTHROPIC_API_KEY"))),
            *pools_missing(entry.spec)]


def researcher_notices(spec: StudySpec) -> list[str]:
    """What runs differently in ``spec`` without an API key, for Setup and Facilitator only."""
    return key_notices(spec, api_key=has_api_key(secret("ANTHROPIC_API_KEY")))


@st.cache_resource(show_spinner=False, max_entries=32)
def _pools_missing(spec_hash: str, stamp: tuple, _spec: StudySpec) -> list[SpecProblem]:
    return pool_problems(_spec)


def pools_missing(spec: StudySpec) -> list[SpecProblem]:
    """:func:`study.registry.pool_problems`, re-read only when the bank or a pool changes."""
    bank = spec.task_bank
    if bank is None or not bank.is_file():
        return []
    pools = bank.parent / "pools"
    files = sorted(pools.glob("*.json")) if pools.is_dir() else []
    stamp = (bank.stat().st_mtime_ns, *((f.name, f.stat().st_mtime_ns) for f in files))
    return _pools_missing(spec.hash, (str(bank), stamp), spec)


def _stamp(path: str | Path) -> tuple[int, int]:
    """(mtime ns, size) of a file, (0, 0) when absent: part of the keys below, so a bank
    saved again or a pool prepared again (Setup) is read again instead of served stale."""
    try:
        info = Path(path).stat()
    except OSError:
        return 0, 0
    return info.st_mtime_ns, info.st_size


@st.cache_resource(show_spinner=False, max_entries=32)
def _tasks(bank: str, stamp: tuple[int, int]) -> dict[str, Task]:
    tasks, _ = load_task_bank(bank, lenient=True)
    return {t.id: t for t in tasks}


def _bank_tasks(bank: str) -> dict[str, Task]:
    """The tasks of the bank as it is on disk now."""
    return _tasks(bank, _stamp(bank))


def task(spec: StudySpec, task_id: str) -> Task:
    """A task of the study's bank."""
    return _bank_tasks(str(spec.task_bank))[task_id]


@st.cache_resource(show_spinner="Loading the candidate pool…", max_entries=64)
def _pool(bank: str, task_id: str, stamp: tuple[tuple[int, int], ...]) -> PreparedPool:
    from core.engine.prepare import load_prepared
    from core.engine.recombine import warm_pool

    # never a layout fit on a participant's request: the study stays closed until prepared
    pool = load_prepared(_bank_tasks(bank)[task_id], default_pool_dir(bank), fit=False)
    warm_pool(pool)  # the default plan and repair's atoms, made while the page draws
    return pool


def pool(spec: StudySpec, task_id: str) -> PreparedPool:
    """The prepared pool of a study task (shared, never mutated)."""
    bank = str(spec.task_bank)
    return _pool(bank, task_id, (_stamp(bank), _stamp(default_pool_dir(bank) / f"{task_id}.json")))


def forget_banks() -> None:
    """Drop the cached banks, pools and previews (after Setup changed a bank's candidates)."""
    _tasks.clear()
    _pool.clear()
    _preview.clear()
    _tables.clear()


@st.cache_data(show_spinner=False, max_entries=64)
def _preview(bank: str, task_id: str, rows: int, stamp: tuple[int, int]
             ) -> dict[str, tuple[list[str], list[list[Any]]]]:
    from core.engine.execute import open_database

    db = open_database(_bank_tasks(bank)[task_id].database)
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
    bank = str(spec.task_bank)
    return _preview(bank, task_id, rows, _stamp(bank))


@st.cache_resource(show_spinner=False, max_entries=64)
def _tables(bank: str, task_id: str, rows: int, stamp: tuple[int, int]) -> dict[str, Any]:
    import pandas as pd
    from streamlit.dataframe_util import convert_pandas_df_to_arrow_table

    return {name: convert_pandas_df_to_arrow_table(pd.DataFrame(body, columns=cols))
            for name, (cols, body) in _preview(bank, task_id, rows, stamp).items()}


def database_tables(spec: StudySpec, task_id: str, rows: int = 20) -> dict[str, Any]:
    """:func:`database_preview` as Arrow tables, converted once per process and shared
    (read-only): every task part shows them, and pandas → Arrow took ~0.1 s per part."""
    bank = str(spec.task_bank)
    return _tables(bank, task_id, rows, _stamp(bank))


def secret(name: str) -> str | None:
    """A value from .streamlit/secrets.toml, if there is one."""
    try:
        return st.secrets.get(name)
    except StreamlitSecretNotFoundError:
        return None
