"""Free exploration with the participant's own wording: sample candidates for an edited question.

Sampling spends the researcher's Anthropic key (environment or ``.streamlit/secrets.toml``), so
only a session with researcher access may sample a fresh pool for the question typed in the
workspace; everyone else keeps the shipped pool and is told why. The key is passed to the
sampler directly and never copied into the process environment. The generated pool is kept
per browser session.
"""

from __future__ import annotations

import logging
import os

import streamlit as st

from core import settings
from core.engine.errors import GenerationError
from core.engine.layout import request_budget
from core.engine.pool import PreparedPool
from core.engine.taskbank import Task
from core.generation.generate import question_pool
from core.generation.sampler import NO_KEY_MESSAGE, AnthropicSampler, SamplerConfig, has_api_key
from ui.access import is_researcher
from ui.result import notice
from ui.state import PREFIX
from ui.study_cache import secret

_KEY = f"{PREFIX}.generated"
LOG = logging.getLogger(__name__)
RESEARCHER_ONLY = ("Sampling candidates for your own question needs researcher access (unlock "
                   "it on the Researcher page).")


def api_key() -> str | None:
    """The configured Anthropic key (environment, else secrets.toml); read, never exported."""
    key = os.environ.get(settings.API_KEY_ENV) or secret("ANTHROPIC_API_KEY")
    return str(key).strip() if key and str(key).strip() else None


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
    """Under an edited question: a Generate button (researcher with a key) or why not."""
    if not is_researcher():
        st.info(f"The candidates below are the shipped pool for “{task.question}”. "
                f"{RESEARCHER_ONLY}")
        return
    key = api_key()
    if not has_api_key(key):
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
        sampler = AnthropicSampler(SamplerConfig(n=50), api_key=key)
        with request_budget(1.0):  # a cold UMAP must not hold the page: provisional layout
            pool = question_pool(task, question, sampler=sampler, on_progress=progress)
    except GenerationError as exc:  # the sampler's own words go under the plain notice
        LOG.warning("sampling for task %s failed: %s", task.id, exc)
        notice("No candidates were generated for this question, so the shipped pool stays. "
               "Try again in a moment.", str(exc))
        return
    st.session_state[_KEY] = {"task": task.id, "pool": pool}
    st.rerun()
