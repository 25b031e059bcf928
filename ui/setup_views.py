"""Setup-page sections: what a study can do before it opens, and candidates added to its pools.

:func:`readiness` shows, per task, the pool (candidates, distinct outputs, golds some candidate
produces) and the honest simulated user's success (:mod:`study.readiness`, the same figures as
``python -m core.evaluate``), with what to fix. :func:`candidates` generates LLM samples or
offline variants for one task and adds them to the task's bank line, then prepares its pool
again, so the check above it shows the difference.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from pathlib import Path

import pandas as pd
import streamlit as st

from core.engine.errors import StudioError
from core.engine.taskbank import Task
from core.generation.keys import NO_KEY_MESSAGE, has_api_key
from study.readiness import (
    DEFAULT_VOCABULARY,
    TaskReadiness,
    Vocabulary,
    add_candidates,
    readiness_tasks,
    study_vocabulary,
    task_readiness,
)
from study.setup_pools import generate_candidates, prepare_missing, study_tasks
from study.spec import StudySpec
from ui import study_cache as data
from ui.chips import counted
from ui.generation import api_key

GENERATED = "setup_generated"  # session state: (study, task, GeneratedPool, bank line)


def _pool_stamp(path: Path | None) -> int | None:
    """The prepared pool file's modification time (None when there is none)."""
    return path.stat().st_mtime_ns if path is not None and path.is_file() else None


@st.cache_resource(show_spinner=False)
def _checked() -> OrderedDict[tuple, TaskReadiness]:
    """Each task's check, kept per bank line and pool file (shared, newest 256)."""
    return OrderedDict()


_CHECKED_MAX = 256
_checked_lock = threading.Lock()


def _key(task: Task, role: str, pool: Path | None, vocabulary: Vocabulary | None = None
         ) -> tuple:
    """What one task's check depends on: its bank line, its role, its pool file and the
    questions the study asks."""
    return (json.dumps(task.to_json(), sort_keys=True), role, str(pool), _pool_stamp(pool),
            vocabulary or DEFAULT_VOCABULARY)


def is_checked(task: Task, role: str, pool: Path | None,
               vocabulary: Vocabulary | None = None) -> bool:
    """Whether :func:`task_check` has this task's result already (nothing to wait for)."""
    with _checked_lock:
        return _key(task, role, pool, vocabulary) in _checked()


def task_check(task: Task, role: str, pool: Path | None,
               vocabulary: Vocabulary | None = None) -> TaskReadiness:
    """:func:`task_readiness` of one task with the study's questions, computed once per bank
    line, pool file and vocabulary (so preparing or changing one pool checks that task
    again, not the whole study)."""
    key = _key(task, role, pool, vocabulary)
    cache = _checked()
    with _checked_lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    result = task_readiness(task, role, pool.parent if pool is not None else None, vocabulary)
    with _checked_lock:
        cache[key] = result
        while len(cache) > _CHECKED_MAX:
            cache.popitem(last=False)
    return result


def readiness(spec: StudySpec) -> None:
    """Per task: pool figures, the honest evaluation, and warnings; while tasks are checked a
    progress bar names the one being checked."""
    st.subheader("What the study can do", anchor=False)
    todo = readiness_tasks(spec)
    if not todo:
        st.info("The study's task bank is missing or empty.")
        return
    vocabulary = study_vocabulary(spec)
    pending = [t for t in todo if not is_checked(*t, vocabulary)]
    bar = st.progress(0.0) if pending else None
    rows = []
    for task, role, pool in todo:
        if bar is not None and (task, role, pool) in pending:
            i = pending.index((task, role, pool))
            bar.progress(i / len(pending), text="Running the honest simulated user on "
                         f"{task.id} ({i + 1} of {len(pending)})…")
        rows.append(task_check(task, role, pool, vocabulary))
    if bar is not None:
        bar.empty()
    st.caption("Per task: its candidates, their distinct outputs, the golds (intended readings) "
               "some candidate produces, and how often the honest simulated user "
               "(gold-features: it knows only the gold's own clauses) reaches each gold with "
               f"the study's questions ({vocabulary[0]}{', with values' if vocabulary[1] else ''}"
               ") and repair — the figures of `python -m core.evaluate`, task by task.")
    st.dataframe(pd.DataFrame([{
        "task": r.task, "role": r.role, "candidates": r.candidates,
        "distinct outputs": r.outputs,
        "golds produced": f"{r.golds_produced} of {r.golds}" if r.golds else "no gold",
        "honest success": "–" if r.success is None else f"{r.success:.0%}",
        "questions (mean)": "–" if r.mean_turns is None else f"{r.mean_turns:.1f}",
        "warnings": len(r.warnings)} for r in rows]), hide_index=True, key="setup_ready")
    warned = [r for r in rows if r.warnings]
    for r in warned:
        st.warning(f"**{r.task}** " + "; ".join(r.warnings) + ".", icon=":material/warning:")
    if not warned:
        st.success("Every task has golds that its candidates produce, and the honest simulated "
                   "user reaches each of them.")


def prepare_pools(spec: StudySpec) -> list[str]:
    """Prepare the study's missing pools with a progress bar and one line per task done (its
    time), then say how many; returns the task ids prepared."""
    from core.engine.layout import layout_ready

    cold = not layout_ready()
    started = [time.monotonic()]
    with st.status("Preparing the candidate pools…", expanded=True) as status:
        bar = st.progress(0.0)

        def progress(i: int, n: int, task: str) -> None:
            now = time.monotonic()
            if i:
                st.write(f"Prepared **{done_ids[i - 1]}** ({now - started[0]:.1f} s)")
            started[0] = now
            if i < n:
                done_ids.append(task)
                note = (" — the first one also compiles the layout engine (once per server)"
                        if cold and i == 0 else "")
                bar.progress(i / n, text=f"Preparing {task} ({i + 1} of {n}){note}…")
            else:
                bar.progress(1.0, text=f"{counted(n, 'pool')} prepared")

        done_ids: list[str] = []
        done = prepare_missing(spec, progress)
        status.update(label=f"Prepared {counted(len(done), 'pool')}", state="complete", expanded=False)
    return done


def _add(spec: StudySpec) -> None:
    """Button callback: merge the generated candidates into the bank, prepare the pool again."""
    sid, tid, pool, _ = st.session_state.pop(GENERATED)
    assert spec.task_bank is not None and sid == spec.id
    new, total = add_candidates(spec.task_bank, tid, pool)
    prepare_missing(spec)
    data.forget_banks()
    st.session_state["setup_added"] = (f"Added {new} new candidate(s) to **{tid}** (now "
                                       f"{total}) and prepared its pool again. The check above "
                                       "shows what changed.")


def candidates(spec: StudySpec) -> None:
    """Generate LLM samples or offline variants for one task, then add them to its pool."""
    st.subheader("Candidate generation", anchor=False)
    tasks = study_tasks(spec)
    if not tasks:
        st.info("The study's task bank is missing or empty.")
        return
    if msg := st.session_state.pop("setup_added", None):
        st.success(msg, icon=":material/check:")
    tid = st.selectbox("Task", list(tasks), key="setup_gen_task")
    n = st.number_input("Samples", 5, 200, 50, step=5, key="setup_gen_n")
    key = api_key()
    online = has_api_key(key)
    if not online:
        st.info(f"{NO_KEY_MESSAGE}\n\nOffline variants rewrite the task's golds (or its "
                "candidates) into other readings with sqlglot; no key is needed. Command "
                f"line: `python -m core.generate {spec.task_bank} --offline-variants --out "
                "pools.jsonl`.")
    cols = st.columns(2)
    run_llm = cols[0].button("Generate with the LLM", disabled=not online, key="setup_gen_llm")
    run_off = cols[1].button("Offline variants (no key)", key="setup_gen_off")
    if run_llm or run_off:
        bar = st.progress(0.0, text="Starting…")
        try:
            pool, line = generate_candidates(
                tasks[tid], n=int(n), offline=run_off, study_db=data.store(), api_key=key,
                on_progress=lambda d, t, what: bar.progress(min(d / max(t, 1), 1.0),
                                                           text=f"{what}: {d}/{t}"))
        except StudioError as exc:
            st.error(str(exc))
            return
        bar.empty()
        st.session_state[GENERATED] = (spec.id, tid, pool, line)
    made = st.session_state.get(GENERATED)
    if made is None or made[0] != spec.id or made[1] != tid:
        return
    _, _, pool, line = made
    st.success(pool.summary())
    st.markdown(f"**Next step:** add these {len(pool.candidates)} candidates to the pool of "
                f"**{tid}** (equal queries add up their counts); its pool is then prepared "
                "again and the check above runs on the new pool.")
    row = st.container(horizontal=True)
    row.button(f"Add to {tid}'s pool", type="primary", key="setup_gen_add",
               on_click=_add, args=(spec,))
    row.download_button("Download as a task-bank line (JSONL)", json.dumps(line) + "\n",
                        file_name=f"{tid}-pool.jsonl", key="setup_gen_dl")
    if data.store().participants(spec.id):
        st.caption("This study already has participants: a changed pool changes what the next "
                   "ones see, and replays of earlier sessions run on the new pool.")


__all__ = ["candidates", "prepare_pools", "readiness"]
