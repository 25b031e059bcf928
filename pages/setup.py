"""Researcher-only setup: validate a study file, check and prepare pools, generate candidates."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from core.engine.errors import StudioError
from core.generation.sampler import NO_KEY_MESSAGE, has_api_key
from study.runner import studies_dir
from study.setup_pools import (
    database_warnings,
    generate_candidates,
    pool_status,
    prepare_missing,
    study_tasks,
)
from study.spec import StudySpecError, load_study
from ui import study_cache as data
from ui.access import require_researcher
from ui.generation import api_key
from ui.router import ensure_router

ensure_router()
st.title("Study setup")
require_researcher("setup_login")
found = sorted(str(p) for p in studies_dir().glob("*/*.yaml"))
choice = st.selectbox("Study file", [*found, "other path…"], key="setup_file")
path = Path(st.text_input("Path to study.yaml", key="setup_path") if choice == "other path…"
            else choice)
if not str(path).strip() or str(path) == ".":
    st.info("Enter the path of a study file.")
    st.stop()
try:
    spec = load_study(path)
except StudySpecError as exc:
    st.error(f"{len(exc.problems)} problem(s) in the study file; nothing was loaded.")
    st.dataframe(pd.DataFrame([{"file": p.file, "line": p.line or None, "path": p.where,
                                "problem": p.message, "fix": p.fix} for p in exc.problems]),
                 hide_index=True, key="setup_errors")
    st.stop()
st.success(f"**{spec.title}** ({spec.id}) is valid: {len(spec.tasks)} tasks, "
           f"{len(spec.conditions)} condition(s), {len(spec.questionnaires)} questionnaires.")
for w in spec.warnings:
    st.warning(str(w))
st.caption(f"Participant link: `/participant?study={path.parent.name}`")

st.subheader("Tasks and pools", anchor=False)
for w in database_warnings(spec):
    st.warning(w)
status = pool_status(spec)
st.dataframe(pd.DataFrame([{"task": s.task, "role": s.role, "in bank": s.in_bank,
                            "candidates": s.candidates, "pool prepared": s.prepared}
                           for s in status]), hide_index=True, key="setup_pools")
missing = [s.task for s in status if s.in_bank and not s.prepared]
if missing and st.button(f"Prepare {len(missing)} missing pool(s)", type="primary",
                         key="setup_prepare"):
    bar = st.progress(0.0, text="Preparing…")
    prepare_missing(spec, lambda i, n, t: bar.progress(i / max(n, 1), text=f"Preparing {t}"))
    st.rerun()
elif not missing:
    st.caption("Every pool is prepared.")

st.subheader("Candidate generation", anchor=False)
tasks = study_tasks(spec)
if not tasks:
    st.info("The study's task bank is missing or empty.")
    st.stop()
tid = st.selectbox("Task", list(tasks), key="setup_gen_task")
n = st.number_input("Samples", 5, 200, 50, step=5, key="setup_gen_n")
key = api_key()
online = has_api_key(key)
if not online:
    st.info(f"{NO_KEY_MESSAGE}\n\nCommand line: `python -m core.generate {spec.task_bank} "
            "--n 50 --out pools.jsonl` (with a key) or add `--offline-variants`.")
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
        st.stop()
    bar.progress(1.0, text="Done")
    st.success(pool.summary())
    st.download_button("Download as a task-bank line (JSONL)", json.dumps(line) + "\n",
                       file_name=f"{tid}-pool.jsonl", key="setup_gen_dl")
