"""Panels of the Analysis page that must not take the others down with them.

Every tab runs inside :func:`isolated`: an exception shows as an error in that tab (with the
reason and where to look) and the other tabs still open and draw, so a trace the replay
cannot reproduce leaves Export, Workflows and Questionnaires as they were. The replay
panel (:func:`replay_panel`) reports the step where a replay stopped in a panel of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
import streamlit as st

from study.analysis import figures as F
from study.analysis.replay import failure, replay
from ui.analysis_cache import memo

LOG = logging.getLogger(__name__)


@contextmanager
def isolated(what: str) -> Iterator[None]:
    """Draw one panel; an exception in it becomes an error box naming ``what`` and the reason
    (Streamlit's own stop/rerun signals are BaseExceptions and pass through)."""
    try:
        yield
    except Exception as exc:
        LOG.exception("analysis panel %s failed", what)
        st.error(f"{what} could not be drawn: {type(exc).__name__}: {exc}. The other tabs are "
                 "unaffected; the server log has the traceback.", icon=":material/error:")


def _swimlane(evs: list[Any], intervals: pd.DataFrame, pid: str) -> Any:
    """The timeline of ``evs`` with ``pid``'s subtask spans, unmarked."""
    return F.swimlane(evs, intervals[intervals["participant"] == pid])


def replay_panel(evs: list[Any], pool: Any, intervals: pd.DataFrame, pid: str) -> None:
    """The replay of one participant × task: a step slider, the swimlane, the state at that
    step, and — when replay had to stop — the failing step and its reason in its own box."""
    steps = memo(replay, evs, pool)  # once per trace (its events are cached objects)
    if not steps:
        return
    stopped = failure(steps)
    if stopped is not None:
        k_fail = steps.index(stopped)
        with st.container(border=True, key="an_rp_failure"):
            st.error(f"Replay cannot reproduce this trace: it stopped at step {k_fail}, event "
                     f"`{stopped.type}` ({stopped.event_id or 'no id'}), with "
                     f"{stopped.failure}. Steps 0–{k_fail - 1} are as replayed; the events "
                     "after it were not replayed.", icon=":material/error:")
    # the slider itself shows only its value (its range only on hover): the label and the
    # caption say how many steps there are
    last = len(steps) - 1
    k = st.slider(f"Step (0 to {last})", 0, last, 0, key="an_rp_k") if last else 0
    s = steps[k]
    st.caption(f"Step {k} of {last}" + (" (the start)" if k == 0 else
                                        f": `{s.type}`") if last else
               "Only the start: this trace has no events to step through.")
    marked = evs[s.index].server_ts if s.index >= 0 else None
    lane = memo(_swimlane, evs, intervals, pid)  # once per trace; a step adds its mark
    st.plotly_chart(lane if marked is None else F.mark_time(lane, marked), key="an_swim")
    cols = st.columns(4)
    cols[0].metric("Survivors", len(s.survivors))
    cols[1].metric("Distinct outputs", s.n_classes)
    cols[2].metric("Decisions", s.history_len)
    cols[3].metric("Event", s.type)
    st.write(f"Next question: `{s.next_variable or '—'}`")
    cols[0].caption(f"of {s.pool_size} queries")
    if s.best_sql is not None:
        st.code(s.best_sql, language="sql")
    bad = [x for x in steps if x.mismatch]
    if s.mismatch:
        st.error(f"Replay mismatch at this step: {s.mismatch}")
    st.caption(f"{len(bad)} of {len(steps) - 1} decision steps disagree with the "
               "recorded survivor counts." if bad else "Replay matches the recorded trace.")
