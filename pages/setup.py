"""Researcher-only setup: every study by id, add one (upload or path), pools, candidates."""

from __future__ import annotations

from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from core.settings import REPO_ROOT
from study import setup_files
from study.setup_pools import database_warnings, pool_status
from study.spec import load_study
from study.spec_check import SpecProblem
from ui import setup_views, warmup
from ui import study_cache as data
from ui.access import require_researcher
from ui.chips import counted
from ui.router import ensure_router


def _problems(problems: list[SpecProblem] | tuple[SpecProblem, ...], what: str) -> None:
    """Every problem as one ``file:line: field: reason. Fix: …`` line."""
    st.error(f"{counted(len(problems), 'problem')} {what}:")
    st.markdown("\n".join(f"- `{p.file}:{p.line or '?'}` **{p.where}**: {p.message}."
                          + (f" *Fix:* {p.fix}" if p.fix else "") for p in problems))


def _link(study_id: str) -> str:
    """The participant link of a study on this server."""
    url = urlsplit(st.context.url or "")
    base = f"{url.scheme}://{url.netloc}" if url.netloc else ""
    return f"{base}/participant?study={study_id}"


ensure_router()
st.title("Study setup")
require_researcher("setup_login")
studies = data.studies()

# open while files or a path are being checked: a rerun must not hide "is valid" and Save
adding = any(st.session_state.get(k) for k in ("setup_up_yaml", "setup_up_bank", "setup_path"))
# keyed (stateful): the expander stays as the researcher left it across reruns
with st.expander("Add a study: upload a study file and its task bank, or give a path",
                 expanded=not studies or adding, icon=":material/upload_file:",
                 key="setup_add", on_change="rerun"):
    # keyed: a rerun that opens the expander (a path was typed) keeps the tab the researcher is on
    up, local = st.tabs(["Upload", "From a path on this computer"], key="setup_add_tab",
                        on_change="rerun")
    with up:
        yml = st.file_uploader("Study file (YAML)", type=["yaml", "yml"], key="setup_up_yaml")
        bank = st.file_uploader("Task bank (JSON Lines; optional if already saved)",
                                type=["jsonl"], key="setup_up_bank")
        checked = (setup_files.check(yml.name, yml.getvalue(), bank.name if bank else None,
                                     bank.getvalue() if bank else None) if yml else None)
    with local:
        path = st.text_input("Path to the study file", key="setup_path",
                             placeholder="e.g. /home/me/my-study/study.yaml")
        if path.strip() and checked is None:
            checked = setup_files.check_path(path.strip())
    if checked is not None:
        if checked.problems:
            _problems(checked.problems, f"in {checked.study_name}; nothing was saved")
        elif checked.spec is not None:
            dest = setup_files.destination(checked.spec)
            where = (dest.relative_to(REPO_ROOT) if dest.is_relative_to(REPO_ROOT)
                     else dest).as_posix()
            st.success(f"**{checked.spec.title}** (`{checked.spec.id}`) is valid: "
                       f"{counted(len(checked.spec.tasks), 'task')}, "
                       f"{counted(len(checked.spec.conditions), 'condition')}.")
            for w in checked.spec.warnings:
                st.warning(str(w).replace(str(checked.spec.path), checked.study_name))
            prepare = st.checkbox("Prepare the candidate pools on save (the study stays closed "
                                  "to participants until every pool is prepared)", value=True,
                                  key="setup_prepare_on_save")
            if prepare:
                warmup.layout()  # UMAP compiles while the researcher reads, not after Save
            if st.button(f"Save under {where}/", type="primary",
                         key="setup_save"):
                target = setup_files.save(checked)
                if prepare:
                    setup_views.prepare_pools(load_study(target))
                st.toast(f"Saved {' and '.join(setup_files.saved_names(checked))} in "
                         f"{where}/.")
                st.session_state["setup_study"] = checked.spec.id
                st.rerun()

if not studies:
    st.info("No study files yet. Add one above.")
    st.stop()
st.subheader("Studies", anchor=False)
rows = []
for e in studies.values():
    closed = data.blocking(e)
    rows.append({"id": e.id, "title": e.title, "file": e.relative(),
                 "status": f"closed: {counted(len(closed), 'problem')}" if closed else "open",
                 "participant link": _link(e.id) if not closed else ""})
st.dataframe(pd.DataFrame(rows), hide_index=True, key="setup_studies",
             column_config={"participant link": st.column_config.LinkColumn(width="large"),
                            "title": st.column_config.TextColumn(width="medium")})
choice = st.selectbox("Study", list(studies), key="setup_study",
                      format_func=lambda k: f"{studies[k].id} · {studies[k].relative()}")
entry = studies[choice]
closed = data.blocking(entry)
if closed:
    _problems(closed, f"keep {entry.id} closed to participants")
if entry.spec is None:
    st.stop()
spec = entry.spec
if not closed:
    st.success(f"**{spec.title}** (`{spec.id}`) is open: {counted(len(spec.tasks), 'task')}, "
               f"{counted(len(spec.conditions), 'condition')}, "
               f"{counted(len(spec.questionnaires), 'questionnaire')}.")
    st.markdown(f"Participant link: [{_link(spec.id)}]({_link(spec.id)})")
for w in spec.warnings:
    st.warning(str(w))
for note in data.researcher_notices(spec):
    st.warning(note, icon=":material/key_off:")

st.subheader("Tasks and pools", anchor=False)
for w in database_warnings(spec):
    st.warning(w)
status = pool_status(spec)
st.dataframe(pd.DataFrame([{"task": s.task, "role": s.role, "in bank": s.in_bank,
                            "candidates": s.candidates, "pool prepared": s.prepared}
                           for s in status]), hide_index=True, key="setup_pools")
missing = [s.task for s in status if s.in_bank and not s.prepared]
if missing:
    warmup.layout()  # preparing lays pools out with UMAP: compile it while the researcher reads
if missing and st.button(f"Prepare {counted(len(missing), 'missing pool')}", type="primary",
                         key="setup_prepare"):
    done = setup_views.prepare_pools(spec)
    st.toast(f"Prepared {counted(len(done), 'pool')}.")
    st.rerun()
elif not missing:
    st.caption("Every pool is prepared.")

setup_views.readiness(spec)
setup_views.candidates(spec)
