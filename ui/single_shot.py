"""The single-shot condition: "standard LLM querying" — the one most probable query, accepted or not.

The query shown is the prior mode of the candidate pool (``RepairSession.best_candidate`` before
any decision: the heaviest candidate of the heaviest functional class), with its output.
Accepting submits it; "Not what I meant" is recorded and ends the task as well.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core.engine.pool import PreparedPool
from core.engine.session import RepairSession
from ui.actions import Log, OnSubmit
from ui.result import show_result
from ui.state import PREFIX


def proposal(pool: PreparedPool) -> int | None:
    """The pool index of the single most probable query (the prior mode)."""
    return RepairSession(pool).best_candidate()


def _choose(pool: PreparedPool, candidate: int, accepted: bool, log: Log,
            on_choice: OnSubmit | None) -> None:
    sql = pool.sqls[candidate]
    share = float(pool.counts[candidate]) / float(pool.counts.sum())
    log("submit" if accepted else "result.reject",
        {"candidate": candidate, "sql": sql, "via": "single-shot", "prior_share": round(share, 4)})
    if on_choice is not None:
        on_choice(candidate, sql)


def render_single_shot(pool: PreparedPool, *, log: Log, submitted: int | None = None,
                       rejected: int | None = None, on_submit: OnSubmit | None = None,
                       on_reject: OnSubmit | None = None, show_sql: bool = True,
                       show_question: bool = True) -> int | None:
    """Draw the question (unless the page does), the proposed query, its output, Accept/reject."""
    if show_question:
        st.markdown(f"#### {pool.question}")
    candidate = proposal(pool)
    st.markdown("**The system's answer to your question:**")
    show_result(pool, candidate, show_sql=show_sql)
    if candidate is None:
        return None
    chosen = submitted is not None or rejected is not None
    row = st.container(horizontal=True, gap="small")
    row.button("Accept this answer", key=f"{PREFIX}.{pool.task_id}.single.accept", type="primary",
               disabled=chosen, on_click=partial(_choose, pool, candidate, True, log, on_submit),
               help="This is what I meant: submit it as my answer")
    row.button("Not what I meant", key=f"{PREFIX}.{pool.task_id}.single.reject",
               disabled=chosen, on_click=partial(_choose, pool, candidate, False, log, on_reject))
    if submitted is not None:
        st.success("Accepted: this query is your answer to the task.")
    elif rejected is not None:
        st.info("Recorded: this is not what you meant.")
    return candidate


__all__ = ["proposal", "render_single_shot"]
