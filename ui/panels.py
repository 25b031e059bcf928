"""The Decision Space, Predicted Query and Predicted Output panels of the repair workspace.

Each panel only reads the session and wires its buttons to :mod:`ui.actions` callbacks, so a
click changes the session before the script runs and every panel shows the new state in the
same rerun. What the mounted panels show is built in :mod:`ui.views` (also for the speculated
next states); the Streamlit widgets around them are drawn here.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from functools import partial
from html import escape
from typing import ParamSpec

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.engine.answers import answer_question, is_answer
from core.engine.session import RankedVariable
from core.generation.keys import has_api_key
from core.planpool.questions import render_question
from study import limits
from ui import actions
from ui.action_space import names_of
from ui.actions import Log, OnSubmit
from ui.chips import chip_row, counted, sql_block
from ui.components import clause_panel, trigger, view_panel
from ui.result import notice as show_notice
from ui.state import WorkspaceOptions, WorkspaceState
from ui.study_cache import secret
from ui.views import (
    ALL_CLAUSES,
    current_variable,
    decision_data,
    for_participant,
    frozen,
    labels_of,
    output_data,
    pressed_keys,
    query_data,
    searching_html,
    searching_views,
)

_P = ParamSpec("_P")

ACK = "answer_ack"  # ws.extra: {seq, ok} of the last answer the server took (ui.optimistic)
PRESSES = "presses"  # ws.extra: [page, at] of the last Yes/No press applied (in order per page)
PRESSES_KEPT = 16
PAGE_ID_CHARS = 16
DRAWN = "drawn"  # ws.extra: the workspace was rendered once (its next states are then sent)
PANELS = "pleasqlarify-panels"  # fragment key of the workspace's panels (ui.workspace)
SEARCH_WAIT_S = 0.08  # a repair done this soon (e.g. speculated, or cached) is drawn at once
POLL_MS = 30  # while repair runs, the browser asks this long after each answer, and
POLL_WAIT_S = 0.25  # the poll's rerun waits this long for the round before drawing it again
# (a poll reruns the panels: a rerun every ~0.3 s does not slow the search it waits for, and
# the round is drawn as soon as it lands rather than at the next poll)


def deferred(ws: WorkspaceState, options: WorkspaceOptions | None) -> bool:
    """True on a workspace's first render when the browser will say it has painted (the
    Decision Space's hidden carrier asks it, :mod:`ui.optimistic`): the secondary controls
    (Back / Previous / Next, the output's Yes / No / None of these, the SQL expander) are then
    left to that "painted" rerun, in containers already in place, so the first paint renders
    ~10 elements and their chunks fewer and the chart is drawn sooner."""
    return options is not None and options.show_decision_space and not ws.extra.get(DRAWN)


def dismiss_key(keys: tuple[str, ...]) -> str:
    """The widget-key suffix of a variable's Dismiss button (stable across reruns)."""
    return "dv.dismiss." + hashlib.sha1("|".join(keys).encode()).hexdigest()[:10]


def open_decisions(ws: WorkspaceState, log: Log, options: WorkspaceOptions) -> None:
    """Pool accounting: every informative variable not yet answered, each with Dismiss."""
    still_open = actions.blocking(ws, options)
    participant = for_participant(ws)  # reads no bits: the threshold and gains are the study's
    if not still_open:
        st.caption("Open decisions: none left — you may submit." if participant else
                   f"Open decisions: none above {options.ig_threshold:g} bits — you may submit.")
        return
    st.markdown(f"**Open decisions ({len(still_open)})** — answer each (Yes/No above) or "
                "dismiss it if it does not matter to you:")
    box = st.container(height=min(300, 30 + 58 * len(still_open)), border=True)
    for v in still_open:
        cols = box.columns([5, 2], gap="small", vertical_alignment="center")
        words = (f"<p>{escape(answer_question(v.features))}</p>"  # about the answer: in words
                 if labels_of(ws) != "plain" and all(is_answer(f) for f in v.features) else
                 chip_row(v.features, decision=v.keys, names=names_of(ws.session.pool),
                          labels=labels_of(ws)))
        cols[0].html(words + ("" if participant else f"<small>{v.gain:.2f} bits</small>"))
        cols[1].button("Dismiss", key=ws.widget_key(dismiss_key(v.keys)), type="tertiary",
                       icon=":material/close:",
                       on_click=callback(actions.dismiss, ws, v.keys, log),
                       help="Leave this decision open on purpose (it is logged)")


def notice(ws: WorkspaceState) -> None:
    """The one-rerun notice, then cleared: its plain sentence, and the error's own words (which
    may quote SQL, the database or the model's API) only to a researcher whose labels show SQL:
    a participant never reads them (they are in the log and the trace, e.g. ``repair.fail``)."""
    if ws.flash:
        show_notice(ws.flash, ws.flash_detail,
                    quote=labels_of(ws) != "plain" and not for_participant(ws))
    ws.flash = ws.flash_detail = None


def variable_words(ws: WorkspaceState, variable: RankedVariable) -> str:
    """A decision variable as the condition shows clauses: its SQL label, or under ``plain``
    labels its plain-language question."""
    if labels_of(ws) == "plain":
        return render_question(variable.features, names=names_of(ws.session.pool))
    if all(is_answer(f) for f in variable.features):  # a question about the answer, in words
        return answer_question(variable.features)
    return variable.label


def decision_space(ws: WorkspaceState, log: Log,
                   options: WorkspaceOptions | None = None) -> None:
    """One grouped decision variable at a time (gain, example query, Yes/No), then Back and
    Previous/Next; Yes and No are in the mounted panel (:mod:`ui.optimistic`)."""
    ranked = ws.session.variables()
    variable = current_variable(ws)
    st.subheader("Decision Space", anchor=False)
    busy = actions.searching(ws) is not None  # repair runs: no question to answer yet
    data = searching_views(ws)["dv"] if busy else decision_data(ws)
    view_panel(data, on={"answer": partial(on_answer, ws, log, data["panel"])})
    has_var = variable is not None and not busy
    row = st.container(horizontal=True, gap="small")
    if not deferred(ws, options):
        _browse_buttons(ws, log, row, has_var, len(ranked))
    if options is not None and options.pool_accounting:
        open_decisions(ws, log, options)


def _browse_buttons(ws: WorkspaceState, log: Log, row: DeltaGenerator, has_var: bool,
                    count: int) -> None:
    """Back, Previous and Next under the Decision Space's question, in ``row``."""
    session, key = ws.session, ws.widget_key
    row.button("Back", key=key("dv.back"), shortcut="B", icon=":material/undo:",
               disabled=session.step == 0, on_click=callback(actions.undo, ws, log),
               help="Take back the last decision")
    row.button("Previous", key=key("dv.up"), shortcut="Up",
               disabled=not has_var or ws.browse == 0,
               on_click=callback(actions.browse, ws, -1, log),
               help="Show the previous question (skips this one)")
    row.button("Next", key=key("dv.down"), shortcut="Down",
               disabled=not has_var or ws.browse >= count - 1,
               on_click=callback(actions.browse, ws, +1, log),
               help="Show the next question (skips this one)")


def callback(fn: Callable[_P, object], *args: _P.args, **kwargs: _P.kwargs
             ) -> Callable[[], None]:
    """``fn(*args, **kwargs)`` as a widget callback (Streamlit ignores what one returns)."""
    def run() -> None:
        fn(*args, **kwargs)
    return run


def predicted_query(ws: WorkspaceState, log: Log) -> None:
    """Atomic features of the survivors with probabilities and Yes/No, then the decisions."""
    st.subheader("Predicted Query", anchor=False)
    busy = actions.searching(ws) is not None  # repair runs: say so, answer nothing
    data = frozen(query_data(ws, searching=True)) if busy else query_data(ws)
    view_panel(data, on={"clause": partial(_on_clause, ws, log, data["panel"]),
                         "all": partial(_toggle_all_clauses, ws)})


def _output_question(ws: WorkspaceState, log: Log, has_output: bool, method: str,
                     busy: bool = False, mode: str = "free", defer: bool = False) -> None:
    """Yes / No on the predicted output, and "None of these" (available unless repair runs).
    Outside a study the researcher reads why resampling is off; a participant reads nothing
    about keys (their repair runs, by recomposition; the Setup and Facilitator pages say why)."""
    key = ws.widget_key
    accepted = ws.extra.get(actions.ACCEPTED)
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    if defer:  # the first render: drawn by the "painted" rerun (see deferred)
        return
    row.markdown("**Is this the output you want?**")
    row.button("Yes", key=key("po.yes"), disabled=not has_output, icon=":material/check:",
               on_click=callback(actions.accept_output, ws, log),
               help="This table is what you asked for")
    row.button("No", key=key("po.no"), disabled=not has_output, icon=":material/close:",
               on_click=callback(actions.reject_output, ws, log),
               help="Rule this output out and look for other readings")
    row.button("None of these", key=key("po.none"), shortcut="X", icon=":material/block:",
               disabled=busy,
               on_click=callback(actions.none_of_these, ws, log),
               help="None of the remaining queries is what you mean: rule out all their "
                    "outputs and look for other readings (key X)")
    if accepted is not None and accepted == (ws.session.step, ws.session.predicted_output_key()):
        st.caption("You accepted this output.")
    if (mode != "study" and method == "resample"
            and not has_api_key(secret("ANTHROPIC_API_KEY"))):
        st.caption(actions.NO_KEY_REPAIR)


def _toggle_all_clauses(ws: WorkspaceState) -> None:
    ws.extra[ALL_CLAUSES] = not ws.extra.get(ALL_CLAUSES)


def on_answer(ws: WorkspaceState, log: Log, panel: str) -> None:
    """Decision Space callback: Yes/No to the variable whose buttons were pressed.

    The buttons carry the variable's keys, so an answer counts only for the question the user
    saw (a press that crossed a rerun showing another one is reported, not misapplied).
    """
    _presses_in_order(ws, log, "answer", panel)


def _on_clause(ws: WorkspaceState, log: Log, panel: str) -> None:
    """Clause panel callback: Yes/No on the clause whose button was pressed."""
    _presses_in_order(ws, log, "clause", panel)


def _apply_press(ws: WorkspaceState, log: Log, event: str, value: dict) -> None:
    """One Yes/No press: the Decision Space's (acknowledged to the browser) or a clause's."""
    if event == "answer":
        applied = actions.answer_variable(ws, bool(value.get("yes")), log,
                                          keys=pressed_keys(ws, value["key"]))
        ws.extra[ACK] = {"seq": limits.parse_int(value.get("seq")), "ok": applied}
    else:
        key = pressed_keys(ws, value["key"], clause=True)[0]
        actions.answer_clause(ws, key, bool(value.get("yes")), log)


def _press_id(value: dict) -> tuple[str, int] | None:
    """A press's page load and its order on that page (``ui/components/logic.js`` stamps
    both), or None for a press without them."""
    page, at = value.get("page"), limits.parse_int(value.get("at"))
    if isinstance(page, str) and 0 < len(page) <= PAGE_ID_CHARS and at:
        return page, at
    return None


def applied_press(ws: WorkspaceState) -> list | None:
    """[page, at] of the last press applied (the browser stops repeating those up to it)."""
    return ws.extra.get(PRESSES)


def _presses_in_order(ws: WorkspaceState, log: Log, own: str, panel: str) -> None:
    """Apply this run's Yes/No presses, the Decision Space's and the clauses', in the order
    they were made; a callback's press another callback of the same run applied is skipped.

    Streamlit runs the callbacks of one run in the order of its widget states, and where a
    press reached the server while the run before was still busy (a question's Yes, then a
    clause clicked) both arrive in one run with the later one first: applied in that order,
    the Yes counted for a question no longer shown and was refused (a browser test saw it).
    Of two presses of one component in one busy run Streamlit keeps only the newer, so a
    clause press repeats the earlier ones the server has not acknowledged (``earlier``;
    :func:`applied_press` tells the browser which were).
    """
    presses = []
    keys = {"answer": ws.widget_key("dv.chips"), "clause": ws.widget_key("pq"), own: panel}
    for event, key in keys.items():
        value = trigger(key, event)
        if not isinstance(value, dict):
            continue
        # a clause press also carries the clause presses of this page the server has not
        # acknowledged: Streamlit keeps only a component's newest trigger of one busy run
        earlier = value.get("earlier") if event == "clause" else None
        for press in [*(earlier if isinstance(earlier, list) else [])[-PRESSES_KEPT:], value]:
            if limits.feature_key(press) and (press is value or _press_id(press)):
                presses.append((_press_id(press), event, press))
    for ident, event, value in sorted(presses, key=lambda p: p[0] or ("", 0)):
        if ident is None:
            if event == own:  # unstamped: applied by its own callback, as before
                _apply_press(ws, log, event, value)
            continue
        last = ws.extra.get(PRESSES)
        if last and last[0] == ident[0] and ident[1] <= last[1]:
            continue  # applied already (by the other callback, or repeated in ``earlier``)
        ws.extra[PRESSES] = list(ident)
        _apply_press(ws, log, event, value)


def repair_if_pending(ws: WorkspaceState, log: Log, options: WorkspaceOptions | None) -> bool:
    """Start the repair a "No" / "None of these" queued, off the script thread, and apply one
    that has finished, before any panel is drawn; True while one runs (the panels then show
    the rejected state, looking for other readings, and :func:`search_watch` asks again).

    The press's own run waits ``SEARCH_WAIT_S`` (the searching state is drawn at once); a later
    run (the watch's poll) waits up to ``POLL_WAIT_S``, so the round is drawn when it lands.
    Otherwise the repair a press here would start is speculated (:func:`actions.speculate_repair`).
    """
    method = options.repair if options is not None else "recompose"
    started = actions.repair_pending(ws) and actions.start_repair(
        ws, log, method, actions.resampler_for(method, secret("ANTHROPIC_API_KEY")))
    actions.finish_repair(ws, log, SEARCH_WAIT_S if started else POLL_WAIT_S)
    if actions.searching(ws) is not None:
        return True
    actions.speculate_repair(ws, method)
    return False


def _on_poll(ws: WorkspaceState) -> None:
    """The poll's callback. The poll itself is the work: it reruns the panels fragment, whose
    :func:`repair_if_pending` applies the round once it is done (else draws the watch again)."""


def search_watch(ws: WorkspaceState) -> None:
    """While repair runs: the time it has taken, asked again ``POLL_MS`` after each drawing by
    the browser. Part of the panels fragment, not a fragment of its own: a nested fragment's id
    follows its position, and a poll sent to an id a rerun had replaced was dropped by the
    server, so the page stayed on "Looking for other readings" (seen in CI)."""
    search = actions.searching(ws)
    took = None if search is None else time.perf_counter() - search.started
    clause_panel(searching_html(took), key=ws.widget_key("search"), testid="pq-search",
                 on={"poll": partial(_on_poll, ws)}, extra={"poll": POLL_MS})


def predicted_output(ws: WorkspaceState, log: Log, mode: str,
                     on_submit: OnSubmit | None, options: WorkspaceOptions | None = None
                     ) -> None:
    """Output of the most probable functional class, agreement, done/stuck notices, Submit;
    "Is this the output you want?" and "None of these", whose rejection queues repair
    (:func:`repair_if_pending` runs it at the start of the next run)."""
    session = ws.session
    st.subheader("Predicted Output", anchor=False)
    result = session.predicted_output()[0]
    n = len(session.survivors)
    busy = actions.searching(ws) is not None
    if busy:
        pass  # the panel below says repair is looking for other readings
    elif session.is_exhausted:
        st.warning("You rejected every remaining output. Go Back to take a rejection back.")
    elif session.is_done and result is not None:
        st.success("**Done:** " + ("the one remaining query returns this output." if n == 1
                                   else f"all {n} remaining queries return this output."))
    elif session.is_stuck:
        st.warning("No clause separates the remaining queries: pick the queries you mean in "
                   "the Action Space.")
    view_panel(searching_views(ws)["output"] if busy else output_data(ws), on={})
    defer = deferred(ws, options)
    _output_question(ws, log, result is not None and not busy,
                     options.repair if options is not None else "recompose", busy, mode, defer)
    chosen = session.best_candidate()
    if mode == "study" and (options is None or options.submit):
        if ws.submitted is not None:
            st.success("You submitted the query whose output is shown above."
                       if ws.submitted == chosen else "You submitted a query for this task. "
                       "To submit the one shown now instead, press Submit again.")
        still_open = actions.blocking(ws, options)
        st.button("Submit this query", key=ws.widget_key("submit"),
                  type="primary" if ws.submitted is None and (
                      options is None or options.submit_primary) else "secondary",
                  disabled=chosen is None or bool(still_open) or busy,
                  on_click=callback(actions.submit, ws, log, on_submit, options),
                  help="Record the predicted query as your answer to this task")
        if still_open:
            names = "; ".join(variable_words(ws, v) for v in still_open[:5])
            more = f" and {len(still_open) - 5} more" if len(still_open) > 5 else ""
            st.caption(f"Submit is disabled while {counted(len(still_open), 'decision')} "
                       f"{'is' if len(still_open) == 1 else 'are'} open: "
                       f"{names}{more}. Answer or dismiss each in the Decision Space.")
    elif chosen is not None and labels_of(ws) != "plain":  # plain: no SQL for the reader
        slot = st.container()  # in place on the first render, filled by the "painted" rerun
        if defer:
            return
        with slot.expander("SQL of the predicted query"):
            clause_panel(sql_block(session.pool.sqls[chosen]), key=ws.widget_key("sql"),
                         testid="pq-sql", on={})

