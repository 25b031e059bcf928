"""Free exploration with the participant's own wording: sample candidates for an edited question.

With an Anthropic key (environment or ``.streamlit/secrets.toml``) the researcher can sample a
fresh pool for the question typed in the workspace, with a progress bar; without one, a clear
message says so and the shipped pool stays. The generated pool is kept per browser session.
"""

from __future__ import annotations

import os

import streamlit as st

from core.engine.errors import GenerationError
from core.engine.layout import request_budget
from core.engine.pool import PreparedPool
from core.engine.taskbank import Task
from core.generation.generate import question_pool
from core.generation.sampler import NO_KEY_MESSAGE, has_api_key
from ui.state import PREFIX

_KEY = f"{PREFIX}.generated"


def _secret_key() -> None:
    """Expose a key from Streamlit secrets to the SDK (never logged, never shown)."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        return
    try:
        key = st.secrets.get("ANTHROPIC_API_KEY")
    except (FileNotFoundError, KeyError, st.errors.StreamlitSecretNotFoundError):
        key = None
    if key:
        os.environ["ANTHROPIC_API_KEY"] = str(key)


def generated_pool(task: Task) -> PreparedPool | None:
    """The pool generated in this browser session for ``task``'s edited question, if any."""
    entry = st.session_state.get(_KEY)
    return entry["pool"] if entry and entry["task"] == task.id else None


def back_to_shipped(task: Task) -> None:
    """While a generated pool is shown, offer the way back to the shipped one."""
    pool = generated_pool(task)
    if pool is None:
        return
    row = st.container(horizontal=True, vertical_alignment="center")
    row.caption(f"Candidates sampled for your question “{pool.question}” ({pool.n} distinct "
                "queries).")
    if row.button("Back to the shipped pool", key=f"{_KEY}.back"):
        st.session_state.pop(_KEY, None)
        st.rerun()


def offer_generation(task: Task, question: str) -> None:
    """Under an edited question: a Generate button (with a key) or the no-key message."""
    _secret_key()
    if not has_api_key():
        st.info(f"The candidates below are the shipped pool for “{task.question}”. "
                f"{NO_KEY_MESSAGE}")
        return
    if not st.button("Generate candidates for this question", key=f"{_KEY}.go",
                     help="Samples about 50 SQL readings with the configured model (cached)."):
        st.caption(f"The candidates below are the shipped pool for “{task.question}”.")
        return
    bar = st.progress(0.0, text="Sampling candidates…")

    def progress(done: int, total: int, info: dict) -> None:
        label = "cached" if info.get("cached") else f"{done} of {total} samples"
        bar.progress(min(done / max(total, 1), 1.0), text=label)

    try:
        with request_budget(1.0):  # a cold UMAP must not hold the page: provisional layout
            pool = question_pool(task, question, on_progress=progress)
    except GenerationError as exc:
        st.error(f"No candidates were generated: {exc}")
        return
    st.session_state[_KEY] = {"task": task.id, "pool": pool}
    st.rerun()
