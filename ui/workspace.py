"""The repair workspace (the paper's Figure 6) for one prepared pool, free or study mode.

Question on top; Action Space | Decision Space | Predicted Query side by side; Predicted Output
below. :class:`WorkspaceOptions` hides panels (the atomic-only baseline has no Decision Space)
and switches on pool accounting (Submit waits for informative variables to be settled). Gestures become :mod:`ui.actions` calls in widget callbacks (which run before the
script), so all four views show the same state in one rerun; every gesture is one trace event
through the injected ``log``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

import streamlit as st

from core.engine.pool import PreparedPool
from ui import actions
from ui.action_space import build_figure, clusters, selected_ids, shade
from ui.actions import Log, OnSubmit, no_log
from ui.chips import CSS
from ui.panels import current_variable, decision_space, predicted_output, predicted_query
from ui.state import WorkspaceOptions, WorkspaceState, workspace_state

MODES = ("free", "study")
CHART_CONFIG = {"displaylogo": False, "scrollZoom": False,
                "modeBarButtonsToRemove": ["zoom2d", "pan2d", "zoomIn2d", "zoomOut2d",
                                           "autoScale2d", "resetScale2d", "toImage"]}


def _on_select(ws: WorkspaceState, log: Log, key: str) -> None:
    """Chart callback: restrict to the selected glyphs, once per selection event."""
    event: Any = st.session_state.get(key)
    selection = event.get("selection") if event else None
    ids, gesture = selected_ids(selection)
    if not ids:
        return
    raw = json.dumps(selection, sort_keys=True, default=str)
    if ws.last_selection == f"{ws.session.step}:{raw}":
        return  # the same event delivered again: already applied
    if actions.restrict(ws, ids, gesture, log):
        ws.last_selection = f"{ws.session.step}:{raw}"


def action_space(ws: WorkspaceState, log: Log, colour_by_variable: bool = True) -> None:
    """The Action Space: glyph scatter with Voronoi cells, lasso/box/click, keep-a-cluster."""
    session = ws.session
    pool = session.pool
    n, total = len(session.survivors), pool.n
    st.subheader("Action Space", anchor=False)
    infos = clusters(session)
    st.markdown(f'<span data-testid="pq-survivors"><b>{n}</b> of {total} queries remain</span>'
                f" · {len(infos)} cluster{'s' if len(infos) != 1 else ''} · "
                f"{session.n_classes} distinct output{'s' if session.n_classes != 1 else ''}",
                unsafe_allow_html=True)
    key = ws.widget_key("space")
    fig = build_figure(session, current_variable(ws) if colour_by_variable else None)
    st.plotly_chart(fig, key=key, on_select=partial(_on_select, ws, log, key),
                    selection_mode=("points", "box", "lasso"), config=CHART_CONFIG,
                    width="stretch")
    st.caption("Hover a glyph to see its clauses and output. Drag a lasso (or click a glyph) to "
               "keep only those queries." + (" Red: contains the decision variable; blue: does "
                                             "not." if colour_by_variable else ""))
    if len(infos) > 1:
        row = st.container(horizontal=True, gap="small", vertical_alignment="center")
        row.markdown("<small>Keep cluster:</small>", unsafe_allow_html=True)
        for c in infos:
            row.button(f"Cluster {c.number} ({len(c.members)})", key=ws.widget_key(f"cluster.{c.number}"),
                       help=f"Keep only the {len(c.members)} queries of cluster {c.number}",
                       on_click=partial(actions.restrict, ws, list(c.members), "cluster", log,
                                        cluster=c.number))
    elif infos:
        colour = shade(1, False)
        st.markdown(f"<small style='color:{colour}'>All remaining queries form one "
                    "cluster.</small>", unsafe_allow_html=True)


def question(ws: WorkspaceState, mode: str,
             on_new_question: Callable[[str], None] | None = None) -> None:
    """The utterance: editable in free exploration, fixed in a study task.

    When the free-exploration text differs from the pool's question, ``on_new_question``
    (e.g. the page's candidate generation) is called with it; without one, a caption says the
    candidates are the shipped pool.
    """
    if mode == "study":
        st.markdown(f"#### {ws.question}")
        return
    text = st.text_input("Question", value=ws.question, key=ws.widget_key("question"))
    ws.question = text
    if text.strip() != ws.session.pool.question.strip():
        if on_new_question is not None:
            on_new_question(text)
        else:
            st.caption("No query generator is configured here, so the candidates are the "
                       f"shipped pool for: “{ws.session.pool.question}”.")


def render_workspace(pool: PreparedPool, *, log: Log = no_log, mode: str = "free",
                     on_submit: OnSubmit | None = None, namespace: str | None = None,
                     options: WorkspaceOptions | None = None,
                     on_new_question: Callable[[str], None] | None = None) -> WorkspaceState:
    """Draw the workspace for ``pool`` (panels per ``options``) and wire it to ``log``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    options = options or WorkspaceOptions()
    if options.pool_accounting and not options.show_decision_space:
        raise ValueError("pool accounting needs the Decision Space (dismissing happens there)")
    ws = workspace_state(pool, namespace or mode)
    st.html(CSS)
    if options.show_question:
        question(ws, mode, on_new_question)
    if ws.flash:
        st.warning(ws.flash)
        ws.flash = None
    panels = [(1.35, partial(action_space, ws, log, options.show_decision_space))
              ] if options.show_action_space else []
    if options.show_decision_space:
        panels.append((1.0, partial(decision_space, ws, log, options)))
    panels.append((1.0, partial(predicted_query, ws, log)))
    for column, (_, draw) in zip(st.columns([w for w, _ in panels], gap="medium"), panels,
                                 strict=True):
        with column:
            draw()
    predicted_output(ws, log, mode, on_submit, options)
    return ws
