"""Free exploration: pick a built-in task (or ask your own question on its database) and repair."""

from __future__ import annotations

from functools import partial

import streamlit as st

from core.engine.pool import PreparedPool
from core.engine.taskbank import Task
from ui import warmup
from ui.bank_cache import bank, bank_path, task_pool
from ui.components import preload
from ui.generation import back_to_shipped, generated_pool, offer_generation
from ui.router import ensure_router
from ui.state import select_task, selected_task
from ui.workspace import field, head_deferred, render_workspace

ensure_router()
preload()  # the chart's and panels' files load while this script runs
warmup.layout()  # UMAP for a question typed here compiles in the background meanwhile
st.title("Repair workspace")  # the page's name in the navigation, as every page opens
path = bank_path()
if not path.is_file():
    st.info(f"No task bank at `{path}`. Set PLEASQLARIFY_BANK to a JSON Lines bank.")
    st.stop()
tasks, _ = bank(str(path))
if not tasks:
    st.info("The task bank has no readable task.")
    st.stop()
ids = [t.id for t in tasks]
titles = {t.id: t.title or t.id for t in tasks}
chosen = selected_task(ids[0])
chosen = chosen if chosen in ids else ids[0]


def pool_of(task: Task) -> PreparedPool:
    """The pool the workspace shows for ``task``: generated for an edited question, else shipped."""
    return generated_pool(task) or task_pool(str(path), task.id)


by_id = {t.id: t for t in tasks}
defer = head_deferred(pool_of(by_id[chosen]))  # the first paint: no select box, text input
with st.container(key="pq-task"):
    field("Task", titles[chosen], select=True)  # until the select box has rendered
    if defer:
        task_id = chosen
    else:
        task_id = st.selectbox("Task", ids, index=ids.index(chosen), format_func=titles.get,
                               key="workspace.task")
select_task(task_id)
task = by_id[task_id]
back_to_shipped(task)
render_workspace(pool_of(task), mode="free", on_new_question=partial(offer_generation, task),
                 defer_head=defer)
