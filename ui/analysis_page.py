"""The Analysis page behind its researcher gate (pages/analysis.py imports this module only
once the session is a researcher's): its imports (pandas, SciPy, Plotly, the export tables)
are not paid for by the password form a fresh server shows first."""

from __future__ import annotations

import streamlit as st

from core.settings import demo_db_url, has_demo_db
from study.export import study_ids
from study.store import default_url, open_store
from ui import study_cache as data_cache
from ui.analysis_cache import prepare, study_data, warm
from ui.analysis_tabs import View, render_tabs
from ui.demo import demo_button, show_demo


@st.cache_resource(show_spinner=False)
def _store(url: str):
    """One store handle per process and URL."""
    return open_store(url)


def draw() -> None:
    """The sidebar (data source, study, filters) and the tabs of the chosen study."""
    show_demo()  # after the demo button: the demo database, simulated participants included
    sources = {"live": default_url()}
    if has_demo_db() and demo_db_url() != default_url():
        sources["demo"] = demo_db_url()
    source = "live"
    if len(sources) > 1:  # no choice, no widget: a one-option radio cost the first load its chunk
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
    filters = {"conditions": chosen or None, "stages": stages or None,
               "include_flagged": flagged, "include_simulated": simulated}
    shown = prepare(store, study, filters, raw)  # filtered data, study file, tables: memoised
    data, lookup = shown.data, shown.lookup
    if not data.ids:
        st.info(f"No participants of {study} pass the filters ({len(raw.ids)} in total; simulated "
                "ones are hidden unless included).")
        st.stop()
    for problem in lookup.problems:
        st.warning(problem, icon=":material/warning:")

    render_tabs(View(store, study, raw, data, lookup, shown.tables, coder,
                     {"conditions": chosen, "stages": stages, "include_flagged": flagged,
                      "include_simulated": simulated}))
    warm(store, [s for s in with_data if s != study], filters)  # so a study switch finds them
