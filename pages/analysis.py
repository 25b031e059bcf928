"""Researcher-only analysis: completion (Table 1), questionnaires, timings, workflows, timeline
and replay, export. Thin: every computation lives in study.analysis and study.export."""

from __future__ import annotations

import time
from functools import partial

import pandas as pd
import streamlit as st

from core.settings import demo_db_url, has_demo_db
from study.analysis import completion as C
from study.analysis import figures as F
from study.analysis import questionnaires_agg as Q
from study.analysis import workflows as W
from study.analysis.data import filter_data
from study.analysis.pools import study_pools
from study.analysis.specs import find_study_spec
from study.analysis.timings import annotations, timer_intervals, timings_table
from study.export import build_tables, export_zip, find_spec, manifest, study_ids
from study.store import default_url, open_store
from study.withdraw import withdrawals
from ui import study_cache as data_cache
from ui.access import require_researcher
from ui.analysis_cache import memo, study_data
from ui.analysis_views import isolated, replay_panel
from ui.demo import demo_button, show_demo
from ui.router import ensure_router


@st.cache_resource(show_spinner=False)
def _store(url: str):
    """One store handle per process and URL."""
    return open_store(url)


@st.cache_resource(show_spinner="Loading candidate pools…")
def _pools(study: str) -> dict:
    """Prepared pools of a study's tasks (read-only, shared)."""
    spec = find_spec(study)
    return study_pools(spec) if spec else {}


def _when(ts: int) -> str:
    """Epoch milliseconds as local 'YYYY-MM-DD HH:MM:SS'."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts / 1000))


ensure_router()
st.title("Analysis")
require_researcher("analysis")

show_demo()  # after the demo button: the demo database, simulated participants included
sources = {"live": default_url()}
if has_demo_db() and demo_db_url() != default_url():
    sources["demo"] = demo_db_url()
with st.sidebar:
    source = st.radio("Data", list(sources), horizontal=True, key="an_source",
                      format_func={"live": "Study database", "demo": "Demo (simulated)"}.get)
store = _store(sources[source])
with_data = study_ids(store)
studies = list(dict.fromkeys([*with_data, *(k for k, e in data_cache.studies().items()
                                            if e.spec is not None)]))
if not studies:
    st.info("No study yet. Add one on the Setup page, or make demo data of the built-in film "
            "study (the command for scripts: `python -m study.simulate_demo`).")
    demo_button("film", key="an_demo_none")
    st.stop()
with st.sidebar:
    # per source: the options' "(no data yet)" labels differ, and a kept widget kept the old ones
    study = st.selectbox("Study", studies, key=f"an_study_{source}",
                         format_func=lambda s: s if s in with_data else f"{s} (no data yet)")
if study not in with_data:
    st.info(f"No participant of {study} in this database yet. Share its link from Setup, or "
            "make demo data (the command for scripts: `python -m study.simulate_demo --study "
            f"{study}`).")
    demo_button(study, key="an_demo_empty")
    st.stop()
with st.sidebar:
    raw = study_data(store, study)  # loaded once per data version (ui.analysis_cache)
    conds = sorted({p["condition"] for p in raw.participants})
    chosen = st.multiselect("Condition", conds, key="an_cond")
    stages = st.multiselect("Stage", ["main", "pilot"], key="an_stage")
    flagged = st.checkbox("Include flagged participants", key="an_flagged")
    simulated = st.checkbox("Include simulated participants", value=source == "demo",
                            key=f"an_sim_{source}")  # per source: the demo's are simulated
    coder = st.text_input("Coder (initials)", key="an_coder")
    if source == "live":
        demo_button(study, key="an_demo")
data = memo(filter_data, raw, conditions=chosen or None, stages=stages or None,
                include_flagged=flagged, include_simulated=simulated)
if not data.ids:
    st.info(f"No participants of {study} pass the filters ({len(raw.ids)} in total; simulated "
            "ones are hidden unless included).")
    st.stop()
lookup = find_study_spec(study, raw)
spec = lookup.spec
for problem in lookup.problems:
    st.warning(problem, icon=":material/warning:")
pools = _pools(study) if spec else {}
tables = memo(build_tables, data, spec, lookup)
labels = {data.label(p): p for p in data.ids}

# keyed: a rerun (a replay step, a task picked) keeps the tab the researcher is on
tabs = st.tabs(["Completion", "Questionnaires", "Timings", "Workflows", "Timeline & replay",
                "Export"], key="an_tabs")
with tabs[0], isolated("The Completion tab"):
    comp = tables["completion"]
    rate, suggested = C.completion_rate(comp), C.completion_rate(comp, "suggested")
    left, right = st.columns(2)
    left.metric("Completion rate (coded cells)", "—" if rate != rate else f"{rate:.1%}",
                help="Share of coded cells that are solved or partial (the paper's 84.4 % "
                     "measure).")
    right.metric("Completion rate (tool's suggestions)",
                 "—" if suggested != suggested else f"{suggested:.1%}",
                 help="The same over the suggested codes of subtask 3; confirm them below.")
    # theme=None: Streamlit's theme would replace the code colours of the heatmap
    st.plotly_chart(F.completion_heatmap(comp), key="an_comp_fig", theme=None)
    st.dataframe(comp.drop(columns=["participant"]), hide_index=True)
    with st.form("an_code"):
        c1, c2, c3, c4 = st.columns(4)
        who = c1.selectbox("Participant", list(labels), key="an_code_p")
        task = c2.selectbox("Task", sorted(set(comp["task"])), key="an_code_t")
        sub = c3.selectbox("Subtask", sorted(set(comp["subtask"])), key="an_code_s")
        code = c4.selectbox("Code", C.CODES, format_func=C.CODE_LABELS.get, key="an_code_c")
        if st.form_submit_button("Store code"):
            try:
                C.store_code(store, labels[who], task, sub, code, coder)
                st.rerun()
            except ValueError as exc:
                st.error(str(exc))
with tabs[1], isolated("The Questionnaires tab"):
    sus = tables["sus"]
    sus_q = Q.sus_points(lookup.questionnaires)
    if sus.empty:
        st.info("No complete SUS answers yet." if sus_q else
                "No SUS questionnaire: the study file lists none" if spec else
                "No SUS scores: the study file is missing (see above) and no built-in SUS "
                "questionnaire was recognised in the answers; the raw answers are below.")
        if not sus_q:
            st.dataframe(tables["answers"].drop(columns=["participant"]), hide_index=True,
                         key="an_raw_answers")
    else:
        points = sus_q[1] if sus_q else 5
        summary = Q.sus_summary(sus["sus"], points)
        cols = st.columns(4)
        cols[0].metric("SUS mean", f"{summary.mean:.1f}")
        cols[1].metric("95 % CI", summary.ci_text() if summary.n >= 2 else "—")
        cols[2].metric("vs 68: t, p", summary.test_text() if summary.sd > 0 else "—")
        cols[3].metric("Grade / adjective", f"{summary.grade} / {summary.adjective}")
        for line in (summary.needs(), summary.note):
            if line:
                st.caption(line)
        st.plotly_chart(F.sus_strip(sus, summary), key="an_sus_fig")
    items = tables["questionnaire_items"]
    if not items.empty:
        qid = st.selectbox("Questionnaire", sorted(set(items["questionnaire"])), key="an_q")
        dist = Q.likert_distribution(items[items["questionnaire"] == qid])
        texts = {i.id: i.text for q in lookup.questionnaires for i in q.items}
        # theme=None keeps the diverging palette (Streamlit's theme would recolour the bars)
        st.plotly_chart(F.likert_diverging(dist, labels=texts), key="an_likert_fig",
                        theme=None)
with tabs[2], isolated("The Timings tab"):
    tim = memo(timings_table, data)
    per_sub = st.toggle("Per subtask", value=True, key="an_tim_sub")
    st.plotly_chart(F.timing_box(tim, per_sub), key="an_tim_fig")
    st.dataframe(tim.drop(columns=["participant"]), hide_index=True)
    notes = annotations(data)
    notes.insert(0, "who", [data.label(p) for p in notes["participant"]])
    notes.insert(1, "time", [_when(ts) for ts in notes["ts"]])
    st.markdown("**Facilitator markers, notes and recordings**")
    st.dataframe(notes.drop(columns=["participant", "ts"]), hide_index=True)
with tabs[3], isolated("The Workflows tab"):
    c1, c2 = st.columns(2)
    rules = W.WorkflowRules(dominance=c1.slider("Dominance share", 0.5, 1.0, 0.6,
                                                key="an_dom"),
                            output_weight=c2.slider("Weight of an output view", 0.0, 1.0, 0.5,
                                                    key="an_ow"))
    wf = W.workflow_table(data, rules)
    st.dataframe(wf.drop(columns=["participant"]), hide_index=True)
    st.plotly_chart(F.workflow_sankey(W.path_links(W.task_sequences(data, "3").values())),
                    key="an_sankey")
    matrices, sess_labels = memo(W.session_matrices, data), W.session_labels(data)
    if matrices:
        sess = st.selectbox("Session (busiest first)", list(matrices), key="an_sess",
                            format_func=sess_labels.get)
        st.plotly_chart(F.transition_heatmap(matrices[sess]), key="an_trans")
    else:
        st.info("No session has navigation actions yet.")
    with st.form("an_wf"):
        c1, c2, c3 = st.columns(3)
        who = c1.selectbox("Participant", list(labels), key="an_wf_p")
        task = c2.selectbox("Task", sorted(set(wf["task"])), key="an_wf_t")
        label = c3.selectbox("Label", W.LABELS, format_func=W.LABEL_TEXT.get, key="an_wf_l")
        if st.form_submit_button("Store label"):
            try:
                W.store_label(store, labels[who], task, label, coder)
                st.rerun()
            except ValueError as exc:
                st.error(str(exc))
with tabs[4], isolated("The Timeline & replay tab"):
    who = st.selectbox("Participant", list(labels), key="an_rp_p")
    pid = labels[who]
    tasks = [t for t in dict.fromkeys(e.task for e in data.events_of(pid)) if t in pools]
    if not pools:
        st.info("Replay needs the study's candidate pools, which come from its study file "
                "(missing, see above); the timeline is in the Timings tab and the export.")
    task = st.selectbox("Task", tasks, key="an_rp_t")
    if task:
        with isolated("The replay of this task"):
            replay_panel(data.events_of(pid, task), pools[task], timer_intervals(data), pid)
with tabs[5], isolated("The Export tab"):
    meta = manifest(raw, data, tables, lookup, {"conditions": chosen, "stages": stages,
                                                "include_flagged": flagged,
                                                "include_simulated": simulated},
                    len(withdrawals(store, study)))
    st.dataframe(pd.DataFrame(list(meta["counts"].items()), columns=["table", "rows"]),
                 hide_index=True, key="an_manifest")
    st.download_button("Download export (zip)", partial(export_zip, tables, meta),  # on click
                       file_name=f"{study}-{time.strftime('%Y%m%d-%H%M')}.zip",
                       mime="application/zip", key="an_export")
    st.caption("CSV and Parquet per table, bundle.json, codebook.md/json and manifest.json "
               "(rows per table, exclusions, withdrawals, the study file); pseudonyms only.")
