"""Home: what the studio is, and the built-in tasks with a button to open each one."""

from __future__ import annotations

from urllib.parse import quote

import streamlit as st

from ui import study_cache
from ui.bank_cache import bank, bank_path
from ui.router import ensure_router
from ui.state import select_task

ensure_router()
st.title("PleaSQLarify Studio")
st.markdown("Pragmatic repair for text-to-SQL: pick an ambiguous question, then narrow its "
            "candidate queries down with decision variables, clause answers and selections in "
            "the Action Space.")
studies = {k: e for k, e in study_cache.studies().items() if e.spec is not None}
if studies:
    st.subheader(f"Studies ({len(studies)})", anchor=False)
    st.caption("Participants open a study with its link; researchers manage them on Setup.")
    st.markdown("\n".join(f"- **{e.title}** · [`/participant?study={sid}`](participant?study="
                          f"{quote(sid)})" for sid, e in studies.items()))
path = bank_path()
if not path.is_file():
    st.info(f"No task bank at `{path}`. Set PLEASQLARIFY_BANK to a JSON Lines bank.")
    st.stop()
tasks, problems = bank(str(path))
for problem in problems:
    st.warning(f"Skipped a task: {problem}")
st.subheader(f"Built-in tasks ({len(tasks)})", anchor=False)
for task in tasks:
    with st.container(border=True):
        left, right = st.columns([5, 1], vertical_alignment="center")
        left.markdown(f"**{task.title or task.id}** · `{task.id}` · {task.ambiguity} · "
                      f"{len(task.candidates)} candidates  \n{task.question}")
        if right.button("Open", key=f"home.open.{task.id}", width="stretch",
                        on_click=select_task, args=(task.id,)):
            st.switch_page("pages/workspace.py")
