"""The Decision Space, Predicted Query and Predicted Output panels of the repair workspace.

Each panel only reads the session and wires its buttons to :mod:`ui.actions` callbacks, so a
click changes the session before the script runs and every panel shows the new state in the
same rerun.
"""

from __future__ import annotations

import hashlib
from functools import partial
from html import escape

import streamlit as st

from core.engine.session import Decision, RankedVariable
from core.generation.keys import has_api_key
from ui import actions
from ui.actions import Log, OnSubmit
from ui.chips import chip, chip_row, legend, output_table, sql_block
from ui.components import clause_panel, trigger
from ui.state import WorkspaceOptions, WorkspaceState
from ui.study_cache import secret

LIKELY = 0.5  # unconfirmed features at or above this probability are bordered
CLAUSE_ROWS = 20  # open clauses drawn with Yes/No rows before "Show all"


def current_variable(ws: WorkspaceState) -> RankedVariable | None:
    """The decision variable the Decision Space shows (browse index clamped to the ranking)."""
    ranked = ws.session.variables()
    if not ranked:
        return None
    ws.browse = min(max(ws.browse, 0), len(ranked) - 1)
    return ranked[ws.browse]


def dismiss_key(keys: tuple[str, ...]) -> str:
    """The widget-key suffix of a variable's Dismiss button (stable across reruns)."""
    return "dv.dismiss." + hashlib.sha1("|".join(keys).encode()).hexdigest()[:10]


def open_decisions(ws: WorkspaceState, log: Log, options: WorkspaceOptions) -> None:
    """Pool accounting: every informative variable not yet answered, each with Dismiss."""
    still_open = actions.blocking(ws, options)
    if not still_open:
        st.caption(f"Open decisions: none above {options.ig_threshold:g} bits — you may submit.")
        return
    st.markdown(f"**Open decisions ({len(still_open)})** — answer each (Yes/No above) or "
                "dismiss it if it does not matter to you:")
    box = st.container(height=min(300, 30 + 58 * len(still_open)), border=True)
    for v in still_open:
        cols = box.columns([5, 2], gap="small", vertical_alignment="center")
        cols[0].html(chip_row(v.features, decision=v.keys)
                     + f"<small>{v.gain:.2f} bits</small>")
        cols[1].button("Dismiss", key=ws.widget_key(dismiss_key(v.keys)), type="tertiary",
                       icon=":material/close:", on_click=partial(actions.dismiss, ws, v.keys, log),
                       help="Leave this decision open on purpose (it is logged)")


def decision_space(ws: WorkspaceState, log: Log,
                   options: WorkspaceOptions | None = None) -> None:
    """One grouped decision variable at a time: gain, example query, Up/Down, Yes/No, Back."""
    session = ws.session
    key = ws.widget_key
    ranked = session.variables()
    variable = current_variable(ws)
    st.subheader("Decision Space", anchor=False)
    if session.is_done and session.predicted_output()[0] is None:
        st.warning("**None of the remaining queries runs.** Go Back and keep other queries.")
    elif session.is_done:
        st.success("**Done.** Every remaining query returns the same output — see the "
                   "Predicted Output below.")
    elif variable is None:
        st.warning("**No clause separates the remaining queries.** Select the queries you "
                   "mean in the Action Space, or go Back.")
    else:
        n = len(session.survivors)
        ahead = "" if variable.expected_turns is None else \
            f" · about <b>{variable.expected_turns:.1f}</b> more questions expected"
        example = session.pool
        feats = [example.vocabulary[j] for j in example.x[variable.example].nonzero()[0]]
        clause_panel(
            f"<p>Variable <b>{ws.browse + 1}</b> of {len(ranked)} · information gain "
            f"<b>{variable.gain:.2f} bits</b>{ahead}</p>"
            + chip_row(variable.features, decision=variable.keys)
            + f'<p class="pq-caption">Contained in {variable.yes_count} of {n} remaining '
            "queries. Should your query contain it?</p>"
            f"<p><small>Example query #{variable.example} containing it:</small></p>"
            + chip_row(feats, decision=variable.keys, implicit=[f.key for f in variable.implicit]),
            key=key("dv.chips"), testid="pq-decision-variable", on={})
    has_var = variable is not None
    row = st.container(horizontal=True, gap="small")
    row.button("Yes", key=key("dv.yes"), type="primary", shortcut="Y", disabled=not has_var,
               on_click=partial(actions.answer_variable, ws, True, log),
               help="Keep only the queries that contain the red clause(s)")
    row.button("No", key=key("dv.no"), shortcut="N", disabled=not has_var,
               on_click=partial(actions.answer_variable, ws, False, log),
               help="Keep only the queries that do not contain the red clause(s)")
    row.button("Back", key=key("dv.back"), shortcut="B", icon=":material/undo:",
               disabled=session.step == 0, on_click=partial(actions.undo, ws, log),
               help="Take back the last decision")
    nav = st.container(horizontal=True, gap="small")
    nav.button("Previous", key=key("dv.up"), shortcut="Up", icon=":material/arrow_upward:",
               disabled=not has_var or ws.browse == 0,
               on_click=partial(actions.browse, ws, -1, log),
               help="Show the previous decision variable (skips this one)")
    nav.button("Next", key=key("dv.down"), shortcut="Down", icon=":material/arrow_downward:",
               disabled=not has_var or ws.browse >= len(ranked) - 1,
               on_click=partial(actions.browse, ws, +1, log),
               help="Show the next decision variable (skips this one)")
    if options is not None and options.pool_accounting:
        open_decisions(ws, log, options)
    st.html(legend())


def _describe(decision: Decision) -> str:
    if decision.kind == "reject":
        n = len(decision.outputs)
        return f"No to {'that output' if n == 1 else f'{n} outputs'}"
    if decision.kind == "repair":
        n = len(decision.sqls)
        return f"Repair ({decision.gesture}): added {n} quer{'y' if n == 1 else 'ies'}"
    if decision.kind == "restrict":
        n = len(decision.candidates)
        what = {"lasso": "Lasso", "box": "Box", "click": "Click", "cluster": "Cluster"}.get(
            decision.gesture, decision.gesture.title())
        return f"{what}: kept {n} quer{'y' if n == 1 else 'ies'}"
    answer = "Yes" if decision.answer else "No"
    return f"{answer} to"


def predicted_query(ws: WorkspaceState, log: Log) -> None:
    """Atomic features of the survivors with probabilities and Yes/No, then the decisions."""
    session = ws.session
    key = ws.widget_key
    st.subheader("Predicted Query", anchor=False)
    beliefs = session.predicted_query()
    if not beliefs:
        st.info("No valid query remains.")
    panel = key("pq")
    clause_panel(_clauses_html(ws, beliefs) + _decisions_html(session), key=panel,
                 testid="pq-clauses", on={"clause": partial(_on_clause, ws, log, panel),
                                          "all": partial(_toggle_all_clauses, ws)})


def _decisions_html(session) -> str:
    """The numbered decisions with the survivors left after each (bottom of the panel)."""
    if not session.history:
        return ('<p><b>Decisions</b></p><p class="pq-caption">None yet. Answer in the Decision '
                "Space, say Yes/No to a clause above, or select queries in the Action Space.</p>")
    counts = actions.survivor_counts(session)
    lines = []
    for i, (d, n) in enumerate(zip(session.history, counts, strict=True), 1):
        chips = "" if d.kind in ("restrict", "reject", "repair") else chip_row(
            [_feature(session, k) for k in d.features], inline=True,
            confirmed=d.features if d.answer else ())
        lines.append(f'<div style="margin:2px 0"><small>{i}. {escape(_describe(d))}</small> {chips}'
                     f'<small>→ <b>{n}</b> left</small></div>')
    return f'<p><b>Decisions</b></p><div>{"".join(lines)}</div>'


def _output_question(ws: WorkspaceState, log: Log, has_output: bool, method: str) -> None:
    """Yes / No on the predicted output, and "None of these" (always available)."""
    key = ws.widget_key
    accepted = ws.extra.get("accepted")
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    row.markdown("**Is this the output you want?**")
    row.button("Yes", key=key("po.yes"), disabled=not has_output, icon=":material/check:",
               on_click=partial(actions.accept_output, ws, log),
               help="This table is what you asked for")
    row.button("No", key=key("po.no"), disabled=not has_output, icon=":material/close:",
               on_click=partial(actions.reject_output, ws, log),
               help="Rule this output out and look for other readings")
    row.button("None of these", key=key("po.none"), shortcut="X", icon=":material/block:",
               on_click=partial(actions.none_of_these, ws, log),
               help="None of the remaining queries is what you mean: rule out all their "
                    "outputs and look for other readings (key X)")
    if accepted is not None and accepted == (ws.session.step, ws.session.predicted_output_key()):
        st.caption("You accepted this output.")
    if method == "resample" and not has_api_key(secret("ANTHROPIC_API_KEY")):
        st.caption("No API key is configured: only recomposition is available.")


ALL_CLAUSES = "pq_all_clauses"  # ws.extra flag: draw every open clause, not the likeliest


def _shown_clauses(ws: WorkspaceState, open_beliefs: list) -> list:
    """The open clauses drawn as rows: the CLAUSE_ROWS likeliest (in display order) or all.

    At N = 200 there are ~200 open clauses, and their rows were most of a rerun's time.
    """
    if ws.extra.get(ALL_CLAUSES) or len(open_beliefs) <= CLAUSE_ROWS:
        return open_beliefs
    keep = {id(b) for b in sorted(open_beliefs, key=lambda b: -b.probability)[:CLAUSE_ROWS]}
    return [b for b in open_beliefs if id(b) in keep]


def _toggle_all_clauses(ws: WorkspaceState) -> None:
    ws.extra[ALL_CLAUSES] = not ws.extra.get(ALL_CLAUSES)


def _on_clause(ws: WorkspaceState, log: Log, panel: str) -> None:
    """Clause panel callback: Yes/No on the clause whose button was pressed."""
    value = trigger(panel, "clause")
    if isinstance(value, dict) and isinstance(value.get("key"), str):
        actions.answer_clause(ws, value["key"], bool(value.get("yes")), log)


def button(label: str, event: str, title: str, *, key: str | None = None,
            yes: bool | None = None, disabled: bool = False, extra: str = "") -> str:
    """A real ``<button>`` of a clause panel; the panel sends ``event`` with its key/yes."""
    data = (f' data-key="{escape(key)}"' if key is not None else "") + (
        f' data-yes="{int(yes)}"' if yes is not None else "")
    return (f'<button type="button" class="pq-btn{extra}" data-event="{event}"{data}'
            f' title="{escape(title)}" aria-label="{escape(label)}: {escape(title)}"'
            f'{" disabled" if disabled else ""}>{escape(label)}</button>')


def _clauses_html(ws: WorkspaceState, beliefs: list) -> str:
    """The Predicted Query's chips and open-clause rows (with Yes/No) as one panel's HTML."""
    parts = []
    fixed = [b for b in beliefs if b.determined]
    if fixed:
        parts.append("<p><small>Determined (in every remaining query):</small></p>" + chip_row(
            [b.feature for b in fixed], confirmed=[b.feature.key for b in fixed if b.confirmed],
            bordered=[b.feature.key for b in fixed if not b.confirmed]))
    open_beliefs = [] if ws.session.is_done else [b for b in beliefs if not b.determined]
    if not open_beliefs:
        return "".join(parts)
    shown = _shown_clauses(ws, open_beliefs)
    rows = []
    for b in shown:
        k = b.feature.key
        shown_chip = chip(b.feature, "confirmed" if b.confirmed else "plain",
                          bordered=not b.confirmed and b.probability >= LIKELY,
                          badge=f"{b.probability:.0%}")
        rows.append(f"<div>{shown_chip}</div>"
                    + button("Yes", "clause", f"Keep queries with {k}", key=k, yes=True,
                              disabled=b.confirmed)
                    + button("No", "clause", f"Remove queries with {k}", key=k, yes=False,
                              disabled=b.confirmed))
    parts.append("<p><small>Still open (bordered: likely). Answer any clause:</small></p>"
                 f'<div class="pq-box" data-scroll="open"><div class="pq-rows">{"".join(rows)}'
                 "</div></div>")
    if len(shown) < len(open_beliefs) or ws.extra.get(ALL_CLAUSES):
        more = len(open_beliefs) - len(shown)
        label = (f"Show all {len(open_beliefs)} open clauses ({more} less likely hidden)"
                 if more else "Show only the most likely clauses")
        parts.append(button(label, "all", "Show every open clause" if more else
                             "Show only the most likely open clauses", extra=" pq-more"))
    return "".join(parts)


def _feature(session, key: str):
    for f in session.pool.vocabulary:
        if f.key == key:
            return f
    raise KeyError(key)


def predicted_output(ws: WorkspaceState, log: Log, mode: str,
                     on_submit: OnSubmit | None, options: WorkspaceOptions | None = None
                     ) -> None:
    """Output of the most probable functional class, agreement, done/stuck notices, Submit;
    "Is this the output you want?" and "None of these", whose rejection runs repair."""
    session = ws.session
    st.subheader("Predicted Output", anchor=False)
    if actions.repair_pending(ws):
        method = options.repair if options is not None else "recompose"
        with st.spinner("Looking for other readings of the question…"):
            actions.run_repair(ws, log, method,
                              actions.resampler_for(method, secret("ANTHROPIC_API_KEY")))
        st.rerun()
    result, share, count = session.predicted_output()
    n = len(session.survivors)
    if session.is_exhausted:
        st.warning("You rejected every remaining output. Go Back to take a rejection back.")
    elif session.is_done and result is not None:
        st.success("**Done:** " + ("the one remaining query returns this output." if n == 1
                                   else f"all {n} remaining queries return this output."))
    elif session.is_stuck:
        st.warning("No clause separates the remaining queries: pick the queries you mean in "
                   "the Action Space.")
    if result is None:
        st.info("None of the remaining queries runs without an error.")
    else:
        st.caption(f"{count} of {n} remaining queries ({share:.0%} of the samples) return "
                   f"this output · {len(result.rows)} rows × {len(result.columns)} columns")
        clause_panel(output_table(result.columns, result.rows), key=ws.widget_key("output"),
                     testid="pq-output", on={})
    _output_question(ws, log, result is not None,
                     options.repair if options is not None else "recompose")
    chosen = session.best_candidate()
    if mode == "study" and (options is None or options.submit):
        if ws.submitted is not None:
            st.success(f"Submitted query #{ws.submitted}.")
        still_open = actions.blocking(ws, options)
        st.button("Submit this query", key=ws.widget_key("submit"),
                  type="primary" if ws.submitted is None else "secondary",
                  disabled=chosen is None or bool(still_open),
                  on_click=partial(actions.submit, ws, log, on_submit, options),
                  help="Record the predicted query as your answer to this task")
        if still_open:
            names = "; ".join(v.label for v in still_open[:5])
            more = f" and {len(still_open) - 5} more" if len(still_open) > 5 else ""
            st.caption(f"Submit is disabled while {len(still_open)} decision(s) are open: "
                       f"{names}{more}. Answer or dismiss each in the Decision Space.")
    elif chosen is not None:
        with st.expander(f"SQL of the predicted query (#{chosen})"):
            clause_panel(sql_block(session.pool.sqls[chosen]), key=ws.widget_key("sql"),
                         testid="pq-sql", on={})

