"""The Analysis page's tabs, each drawn only while it is open and each a fragment.

``st.tabs`` sends every tab's content on every run by default, so the page used to compute and
serialise six tabs (figures, tables, the replay) for each widget anywhere. Here the tabs track
which one is open (``on_change="rerun"``) inside a fragment: switching tabs reruns that
fragment and draws only the tab now open, and each tab's body is a fragment of its own, so a
widget in a tab (the replay's step, a toggle) reruns that tab alone. The sidebar (data source,
study, filters) stays outside: changing it reruns the page. What a tab draws is computed once
per data version (:func:`ui.analysis_cache.memo`) and shared between sessions, so nothing here
mutates a memoised table or figure. Every tab runs inside :func:`ui.analysis_views.isolated`:
an error shows in its panel and the other tabs still open. A fragment's rerun skips the page's researcher gate, so each checks
the session itself (:func:`researcher_fragment`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial, wraps
from typing import Any, TypeVar

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from study.analysis import completion as C
from study.analysis import figures as F
from study.analysis import questionnaires_agg as Q
from study.analysis import workflows as W
from study.analysis.data import StudyData
from study.analysis.pools import study_pools
from study.analysis.specs import SpecLookup
from study.analysis.timings import annotations, timer_intervals, timings_table
from study.export import export_zip, find_spec, manifest
from study.store import Store
from study.withdraw import withdrawals
from ui.access import is_researcher
from ui.analysis_cache import memo
from ui.analysis_views import isolated, replay_panel

DrawT = TypeVar("DrawT", bound=Callable[..., None])
LOCKED = ("The researcher pages were locked (logged out, or a new password); reload the page "
          "to unlock them again.")


def researcher_fragment(draw: DrawT) -> DrawT:
    """``st.fragment(draw)`` that draws only while the session is still a researcher's: a
    fragment reruns without the page's gate, and a logout elsewhere must end it too."""
    @wraps(draw)
    def gated(*args: Any, **kwargs: Any) -> None:
        if not is_researcher():
            st.warning(LOCKED, icon=":material/lock:")
            return
        draw(*args, **kwargs)
    return st.fragment(gated)  # type: ignore[return-value]


@dataclass(frozen=True)
class View:
    """What every tab draws from: the study's loaded and filtered data, its export tables (all
    memoised per data version), and the sidebar's choices."""

    store: Store
    study: str
    raw: StudyData
    data: StudyData
    lookup: SpecLookup
    tables: dict[str, pd.DataFrame]
    coder: str
    filters: dict[str, Any]

    @property
    def labels(self) -> dict[str, str]:
        """'P<number>' → pseudonym of the selected participants (once per data version)."""
        return memo(_labels, self.data)


def _labels(data: StudyData) -> dict[str, str]:
    """The participants' display labels and pseudonyms, in join order."""
    return {data.label(p): p for p in data.ids}


def _when(ts: int) -> str:
    """Epoch milliseconds as local 'YYYY-MM-DD HH:MM:SS'."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts / 1000))


def _without(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """A copy of ``frame`` without ``columns`` (what the page shows of a shared table)."""
    return frame.drop(columns=list(columns))


HTML_ROWS = 1000  # longer per-cell tables go into the grid component (it draws only what shows)


def _percent(rate: float) -> str:
    """A rate as the tab shows it: '84.4%', or '—' for none (NaN: no coded cell)."""
    return "—" if rate != rate else f"{rate:.1%}"


def _completion_html(comp: pd.DataFrame) -> str:
    """The Completion tab's head as one HTML block (computed once per data version): both
    completion rates, the grid's caption and the colour-coded grid. One element instead of two
    metrics, a caption and a table: the first load waits for no metric component."""
    return (F.stats_html([
        ("Completion rate (coded cells)", _percent(C.completion_rate(comp)),
         "Share of coded cells that are solved or partial (the paper's 84.4 % measure)."),
        ("Completion rate (tool's suggestions)", _percent(C.completion_rate(comp, "suggested")),
         "The same over the suggested codes of subtask 3; confirm them below.")])
        + F.note_html("Task completion per participant: the researcher's code, else the "
                      "tool's suggestion (marked *), else 'uncoded'. The outcome (subtask 3) "
                      "of every task comes first, then the verbal subtasks 2a and 2b; point "
                      "at a cell or a header for its full wording.")
        + F.completion_html(*F.completion_grid(comp)))


@researcher_fragment
def completion_tab(v: View) -> None:
    """Table 1: completion rates, the colour-coded grid, the per-cell table and the coding
    form."""
    with isolated("The Completion tab"):
        comp = v.tables["completion"]
        if comp.empty:  # joined, not yet at a task: the grid was a lone "participant" header
            n = len(v.data.ids)
            st.info(f"No task reached yet: {n} participant{'' if n == 1 else 's'} of this "
                    "selection joined, none has reached a task part yet (consent, "
                    "questionnaires and the practice task are not coded). The grid fills in "
                    "as they work on the tasks.")
            return
        # plain HTML, no metric, Plotly chart or data grid: the first tab opened loads none of
        # their components in the browser (their JavaScript was most of the first paint)
        st.html(memo(_completion_html, comp))
        cells = memo(_without, comp, "participant")
        # every cell on request: a few hundred rows drawn on each study switch cost ~0.4 s
        # (issue 24: a switch within 0.5 s); then the grid component (sort, search, download)
        # when asked for, or for a table too long for an HTML one
        if st.toggle(f"Show every cell ({len(cells)}): suggestion, reason and code",
                     key="an_comp_show",
                     help="The per-cell table below the grid, to check a suggestion's reason "
                          "before coding it."):
            if len(cells) > HTML_ROWS or st.toggle(
                    "Sort and search the cells", key="an_comp_sort",
                    help="Show the table below as an interactive grid: sort by a column, "
                         "search, download it as CSV."):
                st.dataframe(cells, hide_index=True, key="an_comp_cells")
            else:
                st.html(memo(F.table_html, cells, "Every cell: suggestion, reason and code"))
        # the coding form on request too: its four select boxes were much of what the first
        # load rendered beyond a trivial app's (issue 24; in a popover it measured no better)
        if not st.toggle("Code cells", key="an_code_on",
                         help="A form to store your code for a participant's task and subtask "
                              "(confirm or override the tool's suggestion)."):
            return
        labels = v.labels
        with st.form("an_code"):
            c1, c2, c3, c4 = st.columns(4)
            who = c1.selectbox("Participant", list(labels), key="an_code_p")
            task = c2.selectbox("Task", sorted(set(comp["task"])), key="an_code_t")
            sub = c3.selectbox("Subtask", sorted(set(comp["subtask"])), key="an_code_s")
            code = c4.selectbox("Code", C.CODES, format_func=C.CODE_LABELS.get,
                                key="an_code_c")
            if st.form_submit_button("Store code"):
                try:
                    C.store_code(v.store, labels[who], task, sub, code, v.coder)
                    st.rerun()  # the whole page: the data version changed
                except ValueError as exc:
                    st.error(str(exc))


def _sus_view(sus: pd.DataFrame, points: int) -> tuple[Q.SusSummary, go.Figure]:
    """The SUS summary and its strip plot."""
    summary = Q.sus_summary(sus["sus"], points)
    return summary, F.sus_strip(sus, summary)


def _likert_figure(items: pd.DataFrame, qid: str, lookup: SpecLookup) -> go.Figure:
    """The diverging Likert bars of questionnaire ``qid``, labelled with the items' texts."""
    dist = Q.likert_distribution(items[items["questionnaire"] == qid])
    texts = {i.id: i.text for q in lookup.questionnaires for i in q.items}
    # theme=None at the chart keeps the diverging palette
    return F.likert_diverging(dist, labels=texts)


@researcher_fragment
def questionnaires_tab(v: View) -> None:
    """SUS (mean, CI, test against 68, grade) and each questionnaire's Likert distribution."""
    with isolated("The Questionnaires tab"):
        sus = v.tables["sus"]
        sus_q = Q.sus_points(v.lookup.questionnaires)
        if sus.empty:
            st.info("No complete SUS answers yet." if sus_q else
                    "No SUS questionnaire: the study file lists none" if v.lookup.spec else
                    "No SUS scores: the study file is missing (see above) and no built-in SUS "
                    "questionnaire was recognised in the answers; the raw answers are below.")
            if not sus_q:
                st.dataframe(memo(_without, v.tables["answers"], "participant"),
                             hide_index=True, key="an_raw_answers")
        else:
            summary, strip = memo(_sus_view, sus, sus_q[1] if sus_q else 5)
            cols = st.columns(4)
            cols[0].metric("SUS mean", f"{summary.mean:.1f}")
            cols[1].metric("95 % CI", summary.ci_text() if summary.n >= 2 else "—")
            cols[2].metric("vs 68: t, p", summary.test_text() if summary.sd > 0 else "—")
            cols[3].metric("Grade / adjective", f"{summary.grade} / {summary.adjective}")
            for line in (summary.needs(), summary.note):
                if line:
                    st.caption(line)
            st.plotly_chart(strip, key="an_sus_fig")
        items = v.tables["questionnaire_items"]
        if not items.empty:
            qid = st.selectbox("Questionnaire", sorted(set(items["questionnaire"])),
                               key="an_q")
            st.plotly_chart(memo(_likert_figure, items, qid, v.lookup), key="an_likert_fig",
                            theme=None)


def _notes(data: StudyData) -> pd.DataFrame:
    """Facilitator markers, notes and recordings with who and when (local time)."""
    notes = annotations(data)
    notes.insert(0, "who", [data.label(p) for p in notes["participant"]])
    notes.insert(1, "time", [_when(ts) for ts in notes["ts"]])
    return notes.drop(columns=["participant", "ts"])


@researcher_fragment
def timings_tab(v: View) -> None:
    """Active time per participant × task (× subtask), and the facilitators' annotations."""
    with isolated("The Timings tab"):
        tim = memo(timings_table, v.data)
        per_sub = st.toggle("Per subtask", value=True, key="an_tim_sub")
        st.plotly_chart(memo(F.timing_box, tim, per_sub), key="an_tim_fig")
        st.dataframe(memo(_without, tim, "participant"), hide_index=True)
        st.markdown("**Facilitator markers, notes and recordings**")
        st.dataframe(memo(_notes, v.data), hide_index=True)


def _sankey(data: StudyData) -> go.Figure:
    """The subtask-3 navigation paths as a Sankey diagram."""
    return F.workflow_sankey(W.path_links(W.task_sequences(data, "3").values()))


@researcher_fragment
def workflows_tab(v: View) -> None:
    """Workflow classes per participant × task, paths, transitions per session, labelling."""
    with isolated("The Workflows tab"):
        c1, c2 = st.columns(2)
        rules = W.WorkflowRules(dominance=c1.slider("Dominance share", 0.5, 1.0, 0.6,
                                                    key="an_dom"),
                                output_weight=c2.slider("Weight of an output view", 0.0, 1.0,
                                                        0.5, key="an_ow"))
        wf = memo(W.workflow_table, v.data, rules)
        st.dataframe(memo(_without, wf, "participant"), hide_index=True)
        st.plotly_chart(memo(_sankey, v.data), key="an_sankey")
        matrices = memo(W.session_matrices, v.data)
        if matrices:
            sess_labels = memo(W.session_labels, v.data)
            sess = st.selectbox("Session (busiest first)", list(matrices), key="an_sess",
                                format_func=sess_labels.get)
            st.plotly_chart(memo(F.transition_heatmap, matrices[sess]), key="an_trans")
        else:
            st.info("No session has navigation actions yet.")
        labels = v.labels
        with st.form("an_wf"):
            c1, c2, c3 = st.columns(3)
            who = c1.selectbox("Participant", list(labels), key="an_wf_p")
            task = c2.selectbox("Task", sorted(set(wf["task"])), key="an_wf_t")
            label = c3.selectbox("Label", W.LABELS, format_func=W.LABEL_TEXT.get,
                                 key="an_wf_l")
            if st.form_submit_button("Store label"):
                try:
                    W.store_label(v.store, labels[who], task, label, v.coder)
                    st.rerun()  # the whole page: the data version changed
                except ValueError as exc:
                    st.error(str(exc))


@st.cache_resource(show_spinner="Loading candidate pools…")
def _pools(study: str) -> dict[str, Any]:
    """Prepared pools of a study's tasks (read-only, shared; only the replay needs them, so
    they load when its tab first opens, not with the page)."""
    spec = find_spec(study)
    return study_pools(spec) if spec else {}


@researcher_fragment
def replay_tab(v: View) -> None:
    """One participant × task's timeline and replay, step by step."""
    with isolated("The Timeline & replay tab"):
        pools = _pools(v.study) if v.lookup.spec else {}
        labels = v.labels
        who = st.selectbox("Participant", list(labels), key="an_rp_p")
        pid = labels[who]
        tasks = [t for t in dict.fromkeys(e.task for e in v.data.events_of(pid))
                 if t in pools]
        if not pools:
            st.info("Replay needs the study's candidate pools, which come from its study file "
                    "(missing, see above); the timeline is in the Timings tab and the export.")
        task = st.selectbox("Task", tasks, key="an_rp_t")
        if task:
            with isolated("The replay of this task"):
                replay_panel(v.data.events_of(pid, task), pools[task],
                             memo(timer_intervals, v.data), pid)


@researcher_fragment
def export_tab(v: View) -> None:
    """What the export holds (rows per table) and the zip, built when it is downloaded."""
    with isolated("The Export tab"):
        meta = memo(manifest, v.raw, v.data, v.tables, v.lookup, v.filters,
                    len(withdrawals(v.store, v.study)))
        by_stage = meta["participants_by_stage"]
        st.markdown("Participants in this export: " + ", ".join(
            f"**{n}** {stage}" for stage, n in by_stage.items()))
        if len(by_stage) > 1:
            st.warning("This export mixes main and pilot participants. To export one stage, "
                       "choose it under Stage in the sidebar (the command line: `python -m "
                       "study.export … --stage main`).", icon=":material/warning:")
        st.dataframe(pd.DataFrame(list(meta["counts"].items()), columns=["table", "rows"]),
                     hide_index=True, key="an_manifest")
        st.download_button("Download export (zip)", partial(export_zip, v.tables, meta),
                           file_name=f"{v.study}-{time.strftime('%Y%m%d-%H%M')}.zip",
                           mime="application/zip", key="an_export")  # the zip: on click
        st.caption("CSV and Parquet per table, bundle.json, codebook.md/json and manifest.json "
                   "(rows per table, exclusions, withdrawals, the study file); pseudonyms only.")


OPENED = "an_tabs_opened"  # session state: (the view, the tabs opened in it)
TABS: dict[str, Callable[[View], None]] = {
    "Completion": completion_tab, "Questionnaires": questionnaires_tab,
    "Timings": timings_tab, "Workflows": workflows_tab, "Timeline & replay": replay_tab,
    "Export": export_tab}


def view_key(v: View) -> tuple[str, str, str]:
    """What the tabs show: the database, the study and the sidebar's filters (not the coder,
    which changes no tab's content)."""
    return v.store.url, v.study, repr(sorted(v.filters.items()))


def opened_tabs(v: View) -> set[str]:
    """The tabs opened in this session since the view (:func:`view_key`) last changed. Another
    study, database or filter starts again from the open tab alone: a study switch back to one
    whose six tabs were opened used to redraw all six (Plotly charts, tables, the replay) for
    the one on screen, a second where the open tab alone takes a fraction (issue 24)."""
    key = view_key(v)
    kept = st.session_state.get(OPENED)
    if kept is None or kept[0] != key:
        kept = st.session_state[OPENED] = (key, set())
    return kept[1]


@researcher_fragment
def render_tabs(v: View) -> None:
    """The tab bar, the open tab's body and those opened before in this view (so going back to
    one shows it at once while it is redrawn); tabs never opened are not computed."""
    # keyed: a rerun (a replay step, a task picked, a filter) keeps the tab the researcher is on
    tabs = st.tabs(list(TABS), key="an_tabs", on_change="rerun")
    opened = opened_tabs(v)
    for tab, (name, draw) in zip(tabs, TABS.items(), strict=True):
        if tab.open is not False:  # None would mean "not tracked": draw every tab
            opened.add(name)
        if name in opened:
            with tab:
                draw(v)
