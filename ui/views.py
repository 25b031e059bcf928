"""What the workspace's decision-dependent panels show, as data (no Streamlit here).

The Action Space (chart and its footer), the Decision Space variable, the Predicted Query and
the Predicted Output are mounted components (:mod:`ui.components`); each one's data is built
here from a :class:`ui.state.WorkspaceState`. The render uses these builders, and so does the
speculation (:mod:`ui.optimistic`) for the states a Yes and a No lead to, so the browser can
show the next state the moment a key is pressed and the rerun that follows changes nothing.
"""

from __future__ import annotations

import hashlib
import re
from html import escape
from typing import Any

from core.engine.answers import answer_question, excerpt_columns, is_answer
from core.engine.execute import ExecutionResult
from core.engine.features import Feature
from core.engine.session import Decision, RankedVariable, RepairSession
from core.planpool.questions import render_question
from ui.action_space import ClusterInfo, cached_space, clusters, names_of, shade
from ui.chips import (
    chip,
    chip_row,
    counted,
    legend,
    output_table,
    plain_text,
    question_line,
    shape_text,
)
from ui.headers import distinct_headers
from ui.state import WorkspaceState, current_variable

LIKELY = 0.5  # unconfirmed features at or above this probability are bordered
CLAUSE_ROWS = 20  # open clauses drawn with Yes/No rows before "Show all"
ALL_CLAUSES = "pq_all_clauses"  # ws.extra flag: draw every open clause, not the likeliest
EXCERPT_ROWS = 3  # rows of an example answer shown under a question about the answer
KEYS_SEP = "\x1f"  # joins a variable's feature keys in its Yes/No buttons' data-key
LABELS = "labels"  # ws.extra: how clauses read (sql | plain | both), from the study condition
PARTICIPANT = "participant"  # ws.extra flag: a study participant's workspace (no researcher terms)


def labels_of(ws: WorkspaceState) -> str:
    """How this workspace shows clauses: SQL chips, plain-language questions, or both."""
    return str(ws.extra.get(LABELS, "both"))


def for_participant(ws: WorkspaceState) -> bool:
    """Whether a study participant reads this workspace: then no gain, bits, samples or error
    text, whatever the labels (the researcher's free exploration keeps them)."""
    return bool(ws.extra.get(PARTICIPANT))


def position_html(ws: WorkspaceState, variable: RankedVariable, total: int) -> str:
    """The line over a question: which of the ``total`` ranked ones it is; for the researcher
    also its information gain and the questions the planner expects after it."""
    if for_participant(ws):
        # "Question 1 of 60" read as sixty questions to go: the count is of the questions on
        # offer (↑/↓ browse them), and one answer may leave few
        if ws.browse == 0:
            return "<p>The most useful question now</p>"
        return f"<p>Another question: <b>{ws.browse + 1}</b> of the {total} on offer</p>"
    plain = labels_of(ws) == "plain" or all(is_answer(f) for f in variable.features)
    what = "Question" if plain else "Variable"
    line = f"<p>{what} <b>{ws.browse + 1}</b> of {total}"
    ahead = "" if variable.expected_turns is None else \
        f" · about <b>{variable.expected_turns:.1f}</b> more questions expected"
    return line + f" · information gain <b>{variable.gain:.2f} bits</b>{ahead}</p>"


def button_key(ws: WorkspaceState, keys: tuple[str, ...]) -> str:
    """What a Yes/No button carries for the feature keys ``keys``: the keys themselves, or
    under ``plain`` labels an opaque token, so not even the page's attributes hold SQL."""
    joined = KEYS_SEP.join(keys)
    if labels_of(ws) != "plain":
        return joined
    return "k" + hashlib.sha1(joined.encode()).hexdigest()[:16]


def pressed_keys(ws: WorkspaceState, sent: str, *, clause: bool = False) -> tuple[str, ...]:
    """The feature keys a pressed button carried (:func:`button_key`): a decision variable's,
    or with ``clause`` one clause's. An unknown token comes back as it is, so the answer is
    reported as no longer open, never applied to another question."""
    if labels_of(ws) != "plain":
        return tuple(sent.split(KEYS_SEP))
    session = ws.session
    candidates = ([(f.key,) for f in session.pool.vocabulary] if clause
                  else [v.keys for v in session.variables()])
    return next((keys for keys in candidates if button_key(ws, keys) == sent), (sent,))


def _noun(ws: WorkspaceState) -> str:
    """What a clause is called on screen: "question" under plain labels, else "clause"."""
    return "question" if labels_of(ws) == "plain" else "clause"


def button(label: str, event: str, title: str, *, key: str | None = None,
           yes: bool | None = None, disabled: bool = False, extra: str = "",
           shortcut: str | None = None) -> str:
    """A real ``<button>`` of a clause panel; the panel sends ``event`` with its key/yes."""
    data = (f' data-key="{escape(key)}"' if key is not None else "") + (
        f' data-yes="{int(yes)}"' if yes is not None else "") + (
        f' aria-keyshortcuts="{shortcut}"' if shortcut else "")
    hint = f" (key {shortcut})" if shortcut else ""
    kbd = f' <kbd class="pq-kbd">{escape(shortcut)}</kbd>' if shortcut else ""
    return (f'<button type="button" class="pq-btn{extra}" data-event="{event}"{data}'
            f' title="{escape(title + hint)}" aria-label="{escape(label)}: {escape(title)}"'
            f'{" disabled" if disabled else ""}>{escape(label)}{kbd}</button>')


def panel(ws: WorkspaceState, name: str, html: str, testid: str) -> dict[str, Any]:
    """The data of the clause panel ``name`` (its widget key is ``panel``: the browser finds it
    again when it shows a speculated state)."""
    return {"html": html, "testid": testid, "panel": ws.widget_key(name)}


# --- Action Space ------------------------------------------------------------------------

def space_summary(session: RepairSession, infos: list[ClusterInfo], searching: bool = False
                  ) -> str:
    """The line over the chart: survivors of the pool, clusters, distinct outputs; while repair
    runs, that it looks for other readings (the rejected state's count is not what remains)."""
    n, total = len(session.survivors), session.pool.n
    if searching:
        return (f'<span data-testid="pq-survivors">{SEARCHING}</span>'
                f" · {total - n} of {total} queries ruled out so far")
    return (f'<span data-testid="pq-survivors"><b>{n}</b> of {total} queries remain</span>'
            f" · {len(infos)} cluster{'s' if len(infos) != 1 else ''} · "
            f"{session.n_classes} distinct output{'s' if session.n_classes != 1 else ''}")


def space_data(ws: WorkspaceState, colour_by_variable: bool, hover: bool,
               searching: bool = False) -> dict[str, Any]:
    """The chart component's data: the spec, the summary line (``searching``: repair runs)
    and the state's revision."""
    session = ws.session
    variable = current_variable(ws) if colour_by_variable else None
    return {"space": cached_space(session, variable, labels=labels_of(ws)), "summary": space_summary(
        session, clusters(session), searching), "revision": f"{session.step}:{len(session.survivors)}:"
        f"{ws.browse}", "hover": hover, "panel": ws.widget_key("space")}


def space_footer(ws: WorkspaceState, colour_by_variable: bool) -> dict[str, Any]:
    """Caption and Keep-cluster buttons under the chart."""
    infos = clusters(ws.session)
    plain = labels_of(ws) == "plain"
    variable = current_variable(ws) if colour_by_variable else None
    caption = ("Hover a glyph to see what its query does and what it returns." if plain else
               "Hover a glyph to see its clauses and output.")
    caption += " Drag a lasso (or click a glyph) to keep only those queries."
    if variable is not None and (plain or all(is_answer(f) for f in variable.features)):
        # a question about the answer marks no clause in red: say what red means for it
        caption += (" Red, hatched, outlined glyphs: Yes to the question in the Decision "
                    "Space; blue, plain: No.")
    elif variable is not None:
        caption += (" Red, hatched, outlined glyphs: contain the red clause(s) of the "
                    "Decision Space; blue, plain: do not.")
    html = f'<p class="pq-caption">{caption}</p>'
    if len(infos) > 1:
        html += ('<div class="pq-row"><small>Keep cluster:</small>' + "".join(
            button(f"Cluster {c.number} ({len(c.members)})", "cluster",
                   f"Keep only the {counted(len(c.members), 'query', 'queries')} of cluster "
                   f"{c.number}",
                   key=str(c.number), extra=" pq-secondary") for c in infos) + "</div>")
    elif infos:
        html += (f"<p><small style='color:{shade(1, False)}'>All remaining queries form one "
                 "cluster.</small></p>")
    return panel(ws, "space.footer", html, "pq-space-footer")


# --- Decision Space ----------------------------------------------------------------------

def decision_html(ws: WorkspaceState) -> str:
    """The shown variable (gain, chips, example query) with Yes and No, or why there is none."""
    session = ws.session
    variable = current_variable(ws)
    if session.is_done and session.predicted_output()[0] is None:
        body = ('<div class="pq-note pq-warn"><b>None of the remaining queries runs.</b> Go Back'
                " and keep other queries.</div>")
    elif session.is_done:
        body = ('<div class="pq-note pq-ok"><b>Done.</b> Every remaining query returns the same '
                "output — see the Predicted Output below.</div>")
    elif variable is None:
        body = (f'<div class="pq-note pq-warn"><b>No {_noun(ws)} separates the remaining '
                "queries.</b> "
                "Select the queries you mean in the Action Space, or go Back.</div>")
    elif all(is_answer(f) for f in variable.features):
        body = answer_question_html(ws, variable)
    else:
        n = len(session.survivors)
        pool = session.pool
        names, labels = names_of(pool), labels_of(ws)
        # the query itself: its clauses, not what its answer is like (ANSWER … is no SQL)
        feats = [f for j in pool.x[variable.example].nonzero()[0]
                 if not is_answer(f := pool.vocabulary[j])]
        shown = (question_line(variable.features, names) if labels == "plain" else
                 chip_row(variable.features, decision=variable.keys, names=names)
                 + (question_line(variable.features, names) if labels == "both" else ""))
        example = "" if labels == "plain" else (
            "<p><small>One of the remaining queries that contains it, in full:</small></p>"
            + chip_row(feats, decision=variable.keys,
                       implicit=[f.key for f in variable.implicit], names=names))
        plain = labels == "plain"
        share = (f"Yes for {variable.yes_count} of the {n} remaining queries." if plain else
                 f"Contained in {variable.yes_count} of {n} remaining queries. Should your query "
                 "contain it?")
        # the key to the chips' colours goes with the chips (a question about the answer, or
        # one in words only, shows none, and a key under it would explain nothing on screen)
        body = (position_html(ws, variable, len(session.variables())) + shown
                + f'<p class="pq-caption">{share}</p>' + example
                + ("" if plain else legend(labels)))
    keys = button_key(ws, variable.keys) if variable is not None else None
    about_answer = variable is not None and all(is_answer(f) for f in variable.features)
    if about_answer:
        yes_title, no_title = ("Keep only the queries whose answer has it",
                               "Keep only the queries whose answer does not have it")
    elif labels_of(ws) == "plain":
        yes_title, no_title = ("Keep only the queries for which the answer to this question is Yes",
                               "Keep only the queries for which the answer to this question is No")
    else:
        yes_title, no_title = ("Keep only the queries that contain the red clause(s)",
                               "Keep only the queries that do not contain the red clause(s)")
    answers = ('<div class="pq-row pq-answers">'
               + button("Yes", "answer", yes_title, key=keys, yes=True, disabled=variable is None,
                        extra=" pq-secondary pq-primary", shortcut="Y")
               + button("No", "answer", no_title, key=keys, yes=False, disabled=variable is None,
                        extra=" pq-secondary", shortcut="N") + "</div>")
    return body + answers


def answer_question_html(ws: WorkspaceState, variable: RankedVariable) -> str:
    """A question about the answer as what it is: the question in words, then an excerpt of
    an output that has it (the columns it is about, a few rows) — Yes/No as for clauses."""
    session = ws.session
    result = session.pool.results[variable.example]
    context = session.pool.answers
    cols = excerpt_columns(result, variable.features, context.profile if context else None)
    rows = [tuple(r[j] for j in cols) for r in result.rows[:EXCERPT_ROWS]]
    more = len(result.rows) - len(rows)
    heads = distinct_headers(result.columns, session.pool.sqls[variable.example], labels_of(ws))
    # in words unless the reader asked for SQL only: there are no chips here to carry the SQL
    # names, so under ``both`` "a column of films.release_year values" read as SQL-only
    question = (answer_question(variable.features) if labels_of(ws) == "sql"
                else render_question(variable.features, names=names_of(session.pool)))
    true_of = (f"True of {variable.yes_count} of {len(session.survivors)} remaining queries' "
               "answers. For example, ")
    if not result.rows:  # its table would be column names over nothing: say what it is
        named = ", ".join(heads[j] for j in cols)
        excerpt = (f'<p class="pq-caption">{true_of}this answer has it: it has no rows at all '
                   f'(only {"its column" if len(cols) == 1 else "the columns"} '
                   f"<b>{escape(named)}</b>).</p>")
    else:
        excerpt = (f'<p class="pq-caption">{true_of}this answer has it:</p>'
                   + output_table([result.columns[j] for j in cols], rows,
                                  headers=[heads[j] for j in cols])
                   + (f'<p class="pq-caption">… and {counted(more, "more row")}</p>' if more > 0
                      else ""))
    return (position_html(ws, variable, len(session.variables()))
            + f'<p class="pq-answer-question"><b>{escape(question)}</b>'
            "</p>" + excerpt)


def state_token(ws: WorkspaceState) -> str:
    """Names the state the panels show (decisions, survivors, browse index, clause-list flag):
    the browser uses speculated views only from the state on its screen (a fork that reached
    the same state has the same token)."""
    s = ws.session
    parts = (s.pool.task_id, s.step, s.alive.tobytes(), tuple(repr(d) for d in s.history), ws.browse,
             bool(ws.extra.get(ALL_CLAUSES)))
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:16]


def decision_data(ws: WorkspaceState) -> dict[str, Any]:
    return {**panel(ws, "dv.chips", decision_html(ws), "pq-decision-variable"),
            "state": state_token(ws)}


# --- Predicted Query ---------------------------------------------------------------------

def _describe(decision: Decision, participant: bool = False) -> str:
    """A decision in the Decisions list; a participant reads no repair method's name."""
    if decision.kind == "reject":
        n = len(decision.outputs)  # several at once: the None of these button
        return "No to that output" if n == 1 else f"None of these ({n} outputs)"
    if decision.kind == "repair":
        n = len(decision.sqls)
        how = "Other readings" if participant else f"Repair ({decision.gesture})"
        return f"{how}: added {n} quer{'y' if n == 1 else 'ies'}"
    if decision.kind == "restrict":
        n = len(decision.candidates)
        what = {"lasso": "Lasso", "box": "Box", "click": "Click", "cluster": "Cluster"}.get(
            decision.gesture, decision.gesture.title())
        return f"{what}: kept {n} quer{'y' if n == 1 else 'ies'}"
    answer = "Yes" if decision.answer else "No"
    return f"{answer} to"


def _feature(session: RepairSession, key: str):
    for f in session.pool.vocabulary:
        if f.key == key:
            return f
    raise KeyError(key)


def decisions_html(session: RepairSession, labels: str = "sql", participant: bool = False,
                   searching: bool = False) -> str:
    """The numbered decisions with the survivors left after each (bottom of the panel): chips,
    or plain-language questions when ``labels`` is plain; ``participant``: no method names;
    ``searching``: the last one's repair runs, so its count is not yet what is left."""
    if not session.history:
        noun = "question" if labels == "plain" else "clause"
        return ('<p><b>Decisions</b></p><p class="pq-caption">None yet. Answer in the Decision '
                f"Space, say Yes/No to a {noun} above, or select queries in the Action Space.</p>")
    counts = session.survivors_per_step()
    lines = []
    names = names_of(session.pool)
    for i, (d, n) in enumerate(zip(session.history, counts, strict=True), 1):
        feats = [] if d.kind in ("restrict", "reject", "repair") else [
            _feature(session, k) for k in d.features]
        if feats and labels != "sql" and all(is_answer(f) for f in feats):
            # a question about the answer in words, as it was asked: its features' keywords
            # (ANSWER COLUMN, ANSWER SHAPE …) are the engine's, not SQL anyone wrote
            chips = f"<small>“{escape(render_question(feats, names=names))}”</small> "
        else:
            chips = "" if not feats else chip_row(
                feats, inline=True, confirmed=d.features if d.answer else (), names=names,
                labels="plain" if labels == "plain" else "sql")
        left = ("→ looking for other readings" if searching and i == len(counts) else
                f"→ <b>{n}</b> left")
        lines.append(f'<div style="margin:2px 0"><small>{i}. {escape(_describe(d, participant))}</small> {chips}'
                     f'<small>{left}</small></div>')
    return f'<p><b>Decisions</b></p><div>{"".join(lines)}</div>'


def shown_clauses(ws: WorkspaceState, open_beliefs: list) -> list:
    """The open clauses drawn as rows: the CLAUSE_ROWS likeliest (in display order) or all.

    At N = 200 there are ~200 open clauses, and their rows were most of a rerun's time.
    """
    if ws.extra.get(ALL_CLAUSES) or len(open_beliefs) <= CLAUSE_ROWS:
        return open_beliefs
    keep = {id(b) for b in sorted(open_beliefs, key=lambda b: -b.probability)[:CLAUSE_ROWS]}
    return [b for b in open_beliefs if id(b) in keep]


def clause_titles(feature: Feature, names: dict[str, str], labels: str) -> tuple[str, str]:
    """The titles (and aria labels) of a clause's Yes and No buttons: the clause as SQL, or
    under ``plain`` labels as its question (no SQL reaches the participant)."""
    if labels == "plain":
        question = plain_text(feature, names)
        return (f"Keep the queries for which the answer is Yes: {question}",
                f"Keep the queries for which the answer is No: {question}")
    return f"Keep queries with {feature.key}", f"Remove queries with {feature.key}"


def clauses_html(ws: WorkspaceState, beliefs: list) -> str:
    """The Predicted Query's chips and open-clause rows (with Yes/No) as one panel's HTML."""
    parts = []
    names, labels = names_of(ws.session.pool), labels_of(ws)
    if not beliefs:
        parts.append('<div class="pq-note pq-info">No valid query remains.</div>')
    fixed = [b for b in beliefs if b.determined]
    if fixed:
        parts.append("<p><small>Determined (in every remaining query):</small></p>" + chip_row(
            [b.feature for b in fixed], confirmed=[b.feature.key for b in fixed if b.confirmed],
            bordered=[b.feature.key for b in fixed if not b.confirmed], names=names,
            labels=labels))
    open_beliefs = [] if ws.session.is_done else [b for b in beliefs if not b.determined]
    if not open_beliefs:
        return "".join(parts)
    shown = shown_clauses(ws, open_beliefs)
    rows = []
    for b in shown:
        k = b.feature.key
        shown_chip = chip(b.feature, "confirmed" if b.confirmed else "plain",
                          bordered=not b.confirmed and b.probability >= LIKELY,
                          badge=f"{b.probability:.0%}", names=names, labels=labels)
        yes_title, no_title = clause_titles(b.feature, names, labels)
        rows.append(f"<div>{shown_chip}</div>"
                    + button("Yes", "clause", yes_title, key=button_key(ws, (k,)), yes=True,
                             disabled=b.confirmed)
                    + button("No", "clause", no_title, key=button_key(ws, (k,)), yes=False,
                             disabled=b.confirmed))
    noun = _noun(ws)
    parts.append(f"<p><small>Still open (bordered: likely). Answer any {noun}:</small></p>"
                 f'<div class="pq-box" data-scroll="open"><div class="pq-rows">{"".join(rows)}'
                 "</div></div>")
    if len(shown) < len(open_beliefs) or ws.extra.get(ALL_CLAUSES):
        more = len(open_beliefs) - len(shown)
        label = (f"Show all {len(open_beliefs)} open {noun}s ({more} less likely hidden)"
                 if more else f"Show only the most likely {noun}s")
        parts.append(button(label, "all", f"Show every open {noun}" if more else
                            f"Show only the most likely open {noun}s", extra=" pq-more"))
    return "".join(parts)


def query_data(ws: WorkspaceState, searching: bool = False) -> dict[str, Any]:
    """The Predicted Query's clauses and decisions; ``searching`` (repair runs): the status on
    top, and no "No valid query remains" for the rejected state repair is about to extend."""
    beliefs = ws.session.predicted_query()
    html = ((searching_html(live=False) if searching else "")
            + (clauses_html(ws, beliefs) if beliefs or not searching else "")
            + decisions_html(ws.session, labels_of(ws), for_participant(ws), searching))
    return panel(ws, "pq", html, "pq-clauses")


# --- Predicted Output --------------------------------------------------------------------

def _sql_of(session: RepairSession, result: ExecutionResult) -> str | None:
    """The SQL of a surviving query whose output is ``result`` (its headers' tables)."""
    return next((session.pool.sqls[i] for i in session.survivors
                 if session.pool.results[i] is result), None)


def output_data(ws: WorkspaceState) -> dict[str, Any]:
    """The predicted output: its share of the samples and the table (or why there is none)."""
    session = ws.session
    result, share, count = session.predicted_output()
    if result is None:
        html = ('<div class="pq-note pq-info">None of the remaining queries runs without an '
                "error.</div>")
    else:
        samples = "" if for_participant(ws) else f" ({share:.0%} of the samples)"
        html = (f'<p class="pq-caption">{count} of {len(session.survivors)} remaining queries'
                f"{samples} return this output · "
                f"{shape_text(len(result.rows), len(result.columns))}</p>"
                + output_table(result.columns, result.rows, labels=labels_of(ws),
                               sql=_sql_of(session, result)))
    return panel(ws, "output", html, "pq-output")


def panel_views(ws: WorkspaceState, *, show_action_space: bool, show_decision_space: bool,
                hover: bool) -> dict[str, dict[str, Any]]:
    """Every optimistic panel's data for ``ws``'s state, by panel key (see :mod:`ui.optimistic`)."""
    views = [query_data(ws), output_data(ws)]
    if show_decision_space:
        views.append(decision_data(ws))
    if show_action_space:
        views += [space_data(ws, show_decision_space, hover),
                  space_footer(ws, show_decision_space)]
    return {v["panel"]: v for v in views}


# --- While repair looks for other readings ------------------------------------------------

SEARCHING = "Looking for other readings of the question…"
_ACTIVE = re.compile(r"<button (?![^>]*data-copy)")


def searching_html(seconds: float | None = None, live: bool = True) -> str:
    """The status shown while repair runs off the script thread (with the time it has taken);
    ``live=False``: not announced again (another panel's status already is)."""
    took = "" if seconds is None else f' <span class="pq-caption">{seconds:.1f} s</span>'
    role = ' role="status" aria-live="polite"' if live else ""
    return (f'<div class="pq-note pq-info pq-searching"{role}>'
            f'<span class="pq-spin" aria-hidden="true"></span> {SEARCHING}{took}</div>')


def frozen(view: dict[str, Any]) -> dict[str, Any]:
    """A panel's data with every button but Copy disabled: nothing in it can be answered
    while repair runs (the rejected state stays readable)."""
    return {**view, "html": _ACTIVE.sub("<button disabled ", view["html"])}


def searching_views(ws: WorkspaceState) -> dict[str, dict[str, Any]]:
    """The Decision Space and Predicted Output while repair runs: the status instead of a
    question or an output (the rejection is applied; what repair finds replaces it)."""
    status = searching_html()
    return {"dv": {**panel(ws, "dv.chips", status, "pq-decision-variable"),
                   "state": state_token(ws)},
            "output": panel(ws, "output", status, "pq-output")}
