"""The repair workspace (the paper's Figure 6) for one prepared pool, free or study mode.

Question on top; Action Space | Decision Space | Predicted Query side by side; Predicted Output
below. :class:`WorkspaceOptions` hides panels (the atomic-only baseline has no Decision Space)
and switches on pool accounting (Submit waits for informative variables to be settled).
Gestures become :mod:`ui.actions` calls in widget callbacks (which run before the script), so
all four views show the same state in one rerun; every gesture is one trace event through the
injected ``log``. The panels are one ``st.fragment``: a decision reruns them, not the page, and
the Action Space chart (:mod:`ui.components`) stays mounted and only redraws what changed. What
the mounted panels show is built in :mod:`ui.views`; the fragment ends with the speculated Yes
and No states (:mod:`ui.optimistic`), which the browser shows the moment one is pressed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from html import escape

import streamlit as st

from core.engine.pool import PreparedPool
from study import limits
from ui import actions
from ui.action_space import clusters, selected_ids
from ui.actions import Log, OnSubmit, no_log
from ui.chips import CSS
from ui.components import action_space_chart, stylesheets, trigger, view_panel
from ui.optimistic import CSS as CARRIER_CSS
from ui.optimistic import acknowledge, carrier
from ui.panels import (
    DRAWN,
    PANELS,
    decision_space,
    notice,
    predicted_output,
    predicted_query,
    repair_if_pending,
    search_watch,
)
from ui.state import PREFIX, WorkspaceOptions, WorkspaceState, workspace_state
from ui.views import LABELS, PARTICIPANT, frozen, space_data, space_footer

MODES = ("free", "study")
APP_RERUN = "rerun_app"  # ws.extra flag: a fragment callback changed what the page shows
HEAD = f"{PREFIX}.workspace.head"  # session_state: the free page's task and question were drawn
# the free page's task and question as plain HTML in their widgets' look (Streamlit 1.67, default
# theme; 68 px tall as they are), drawn first in their containers: shown until the widget after
# them has rendered (on the first paint it is not drawn at all, :func:`head_deferred`; then its
# lazily loaded chunk may still be on its way), hidden from then on, so nothing moves
FIELD_CSS = """<style>
.st-key-pq-task.st-key-pq-task, .st-key-pq-question.st-key-pq-question { gap: 0; }
:is(.st-key-pq-task, .st-key-pq-question) [data-testid="stSkeleton"] { display: none; }
.st-key-pq-task:has([data-testid="stSelectbox"]) .stElementContainer:has(.pq-field),
.st-key-pq-question:has([data-testid="stTextInput"]) .stElementContainer:has(.pq-field) {
  display: none; }
.pq-field { height: 68px; box-sizing: border-box; }
.pq-field-label { display: flex; align-items: center; min-height: 24px; height: 24px;
  margin: 0 0 4px; font-size: 14px; line-height: 22.4px; color: rgb(47, 45, 43); }
.pq-field-box { display: flex; align-items: center; height: 40px; box-sizing: border-box;
  border: 1px solid rgb(220, 216, 212); border-radius: 8px; background: rgb(248, 248, 247);
  font-size: 14px; line-height: 19.6px; color: rgb(47, 45, 43); overflow: hidden; }
.pq-field-box span { flex: 1; padding: 8px 8px 8px 12px; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; }
.pq-field-box.pq-select span { padding-left: 8px; }
.pq-field-box.pq-select::after { content: ""; flex: none; box-sizing: border-box;
  width: 7px; height: 7px; margin: 0 14px 3px 10px; transform: rotate(45deg);
  border-right: 1.5px solid rgb(47, 45, 43); border-bottom: 1.5px solid rgb(47, 45, 43); }
</style>"""


def _on_select(ws: WorkspaceState, log: Log, key: str) -> None:
    """Chart callback: restrict to the selected glyphs (the trigger fires once per gesture)."""
    ids, gesture = selected_ids(trigger(key, "select"), ws.session.pool.n)
    if ids:
        actions.restrict(ws, ids, gesture, log)


def _on_hover(ws: WorkspaceState, log: Log, key: str) -> None:
    """Chart callback: a glyph was hovered long enough to count (sampled, no state change)."""
    value = trigger(key, "hover")
    report = limits.hover(value, ws.session.pool.n) if value is not None else None
    if report is not None:
        log("space.hover", {"candidate": report[0], "client_ts": report[1],
                            "step": ws.session.step})


def action_space(ws: WorkspaceState, log: Log, colour_by_variable: bool = True) -> None:
    """The Action Space: glyph scatter with Voronoi cells, lasso/box/click, keep-a-cluster."""
    st.subheader("Action Space", anchor=False)
    key = ws.widget_key("space")
    busy = actions.searching(ws) is not None  # repair runs: no cluster to keep yet
    action_space_chart(space_data(ws, colour_by_variable, hover=log is not no_log,
                                  searching=busy), key=key,
                       on_select=partial(_on_select, ws, log, key),
                       on_hover=None if log is no_log else partial(_on_hover, ws, log, key))
    footer = space_footer(ws, colour_by_variable)
    if busy:
        footer = frozen(footer)
    view_panel(footer, on={"cluster": partial(_on_cluster, ws, log, footer["panel"],
                                              clusters(ws.session))})


def _on_cluster(ws: WorkspaceState, log: Log, footer: str, infos: list) -> None:
    """Footer callback: keep only the members of the cluster whose button was pressed."""
    value = trigger(footer, "cluster")
    number = value.get("key") if isinstance(value, dict) else None
    chosen = next((c for c in infos if str(c.number) == number), None)
    if chosen is not None:
        actions.restrict(ws, list(chosen.members), "cluster", log, cluster=chosen.number)


def head_deferred(pool: PreparedPool, namespace: str = "free") -> bool:
    """True on the free page's first render in this session, whose "painted" rerun is still to
    come: the task's select box and the question's text input are then drawn by that rerun (a
    rerun of the whole page, see :func:`render_workspace`) and the first render shows
    :func:`field` in their place, so the first paint loads and renders neither widget (their
    lazy chunks are ~25 files). Once drawn they stay: a task switched later keeps its box."""
    if st.session_state.get(HEAD):
        return False
    if workspace_state(pool, namespace).extra.get(DRAWN):  # no "painted" will come
        st.session_state[HEAD] = True
        return False
    return True


def field(label: str, value: str, *, select: bool = False) -> None:
    """A widget's label and value as plain HTML in the widget's look and place (68 px), first
    in the widget's container: shown until the select box or text input after it has rendered
    (:data:`FIELD_CSS`)."""
    st.html(f'{FIELD_CSS}<div class="pq-field"><div class="pq-field-label">{escape(label)}</div>'
            f'<div class="pq-field-box{" pq-select" if select else ""}"><span>{escape(value)}'
            f'</span></div></div>')


def _head_drawn(ws: WorkspaceState) -> None:
    """The browser painted the free page's first render: the whole page reruns (the carrier's
    fragment rerun turns into it), drawing the task's and the question's widgets."""
    st.session_state[HEAD] = True
    ws.extra[APP_RERUN] = True


def question(ws: WorkspaceState, mode: str,
             on_new_question: Callable[[str], None] | None = None, deferred: bool = False
             ) -> None:
    """The utterance: editable in free exploration, fixed in a study task.

    When the free-exploration text differs from the pool's question, ``on_new_question``
    (e.g. the page's candidate generation) is called with it; without one, a caption says the
    candidates are the shipped pool. ``deferred``: the text input is drawn by the painted rerun
    (:func:`head_deferred`); the question is shown as text meanwhile.
    """
    if mode == "study":
        st.markdown(f"### {ws.question}")  # under the page's h2: no skipped heading level
        return
    with st.container(key="pq-question"):
        field("Question", ws.question)  # until the text input has rendered
        if deferred:
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
                     on_new_question: Callable[[str], None] | None = None,
                     defer_head: bool = False) -> WorkspaceState:
    """Draw the workspace for ``pool`` (panels per ``options``) and wire it to ``log``.

    ``defer_head`` (the free page's first render, :func:`head_deferred`): the question is
    shown as text, and the browser's "painted" reruns the whole page instead of the panels, so
    the page's own widgets above are drawn then too."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    options = options or WorkspaceOptions()
    if options.pool_accounting and not options.show_decision_space:
        raise ValueError("pool accounting needs the Decision Space (dismissing happens there)")
    ws = workspace_state(pool, namespace or mode)
    ws.extra[LABELS] = options.labels
    ws.extra[PARTICIPANT] = mode == "study"
    st.html(CSS + CARRIER_CSS + stylesheets())  # the panels' first frame styled
    defer_head = defer_head and options.show_decision_space  # "painted" will come
    if options.show_question:
        question(ws, mode, on_new_question, deferred=defer_head)
    if _provisional_layout(pool):
        st.caption("Provisional layout (classical MDS): the UMAP layout replaces it in a few "
                   "seconds.")
        st.fragment(run_every=1.0)(_watch_layout)(pool)

    def submitted(candidate: int, sql: str) -> None:
        ws.extra[APP_RERUN] = True
        if on_submit is not None:
            on_submit(candidate, sql)

    _panels(ws, log, mode, submitted, options, defer_head)
    return ws


def _provisional_layout(pool: PreparedPool) -> bool:
    """Swap in the UMAP layout if it has arrived; True while the pool's layout is provisional."""
    from core.engine.layout import final_layout, is_provisional

    if not is_provisional(pool.positions):
        return False
    final = final_layout(pool.positions)
    if final is None:
        return True
    pool.positions = final  # a generated pool of this browser session only
    return False


def _watch_layout(pool: PreparedPool) -> None:
    """Polled while the layout is provisional: rerun the page once the UMAP one is ready."""
    from core.engine.layout import final_layout, is_provisional

    if is_provisional(pool.positions) and final_layout(pool.positions) is not None:
        st.rerun(scope="app")


@st.fragment(key=PANELS)
def _panels(ws: WorkspaceState, log: Log, mode: str, on_submit: OnSubmit | None,
            options: WorkspaceOptions, defer_head: bool = False) -> None:
    """Everything a decision changes, as one fragment: a gesture reruns this, not the page
    (but "painted" of a first render whose head was deferred reruns the page)."""
    if ws.extra.pop(APP_RERUN, False):
        st.rerun(scope="app")  # e.g. a submit: the page around the workspace changes too
    # first, so every panel shows the rejected state while repair runs, then the repaired one
    busy = repair_if_pending(ws, log, options)
    notice(ws)
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
    if options.show_decision_space:  # the Yes and No states, shown at the key press
        acknowledge(ws)
        carrier(ws, options, hover=log is not no_log,
                on_painted=partial(_head_drawn, ws) if defer_head else None)
    if busy:  # last: its first poll should find this run over
        search_watch(ws)
