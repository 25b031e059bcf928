"""Setup-page sections: what a study can do before it opens, and candidates added to its pools.

:func:`readiness` shows, per task, the pool (candidates, distinct outputs, golds some candidate
produces) and the honest simulated user's success (:mod:`study.readiness`, the same figures as
``python -m core.evaluate``), with what to fix. :func:`candidates` generates LLM samples or
offline variants for one task and adds them to the task's bank line, then prepares its pool
again, so the check above it shows the difference.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from core.engine.errors import StudioError
from core.engine.prepare import default_pool_dir
from core.generation.keys import NO_KEY_MESSAGE, has_api_key
from study.readiness import TaskReadiness, add_candidates, study_readiness
from study.setup_pools import generate_candidates, prepare_missing, study_tasks
from study.spec import StudySpec
from ui import study_cache as data
from ui.generation import api_key

GENERATED = "setup_generated"  # session state: (study, task, GeneratedPool, bank line)


def _stamp(spec: StudySpec) -> tuple:
    """What the check depends on: the bank and the prepared pools, by modification time."""
    bank = spec.task_bank
    if bank is None or not bank.is_file():
        return ()
    pools = default_pool_dir(bank)
    files = sorted(pools.glob("*.json")) if pools.is_dir() else []
    return (bank.stat().st_mtime_ns, *((f.name, f.stat().st_mtime_ns) for f in files))


@st.cache_data(show_spinner=False, max_entries=16)
def _check(path: str, stamp: tuple) -> list[TaskReadiness]:
    """:func:`study_readiness` of the study file at ``path``, computed once per ``stamp``."""
    spec = data.spec(Path(path))
    return study_readiness(spec)


def readiness(spec: StudySpec) -> None:
    """Per task: pool figures, the honest evaluation, and warnings (computed once per bank)."""
    st.subheader("What the study can do", anchor=False)
    if not study_tasks(spec):
        st.info("The study's task bank is missing or empty.")
        return
    with st.spinner("Running the honest simulated user on every task…"):
        rows = _check(str(spec.path), _stamp(spec))
    st.caption("Per task: its candidates, their distinct outputs, the golds (intended readings) "
               "some candidate produces, and how often the honest simulated user "
               "(gold-features: it knows only the gold's own clauses) reaches each gold with "
               "the workspace's questions and repair — the figures of `python -m "
               "core.evaluate`, task by task.")
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


__all__ = ["candidates", "readiness"]
