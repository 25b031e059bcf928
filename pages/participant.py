"""The participant's study session: consent → questionnaires → onboarding → tasks → code.

Open ``/participant?study=film``; after consent the pseudonym travels in ``?p=``, so a refresh
or reconnect resumes at the exact step. All logic lives in study.flow/study.runner and
ui.participant_views.
"""

from __future__ import annotations

import streamlit as st

from study.runner import study_file
from study.spec import StudySpecError
from ui import participant_views as views
from ui import study_cache as data
from ui.router import ensure_router
from ui.withdraw import withdrawn_notice

ensure_router()
name = st.query_params.get("study", "film")
try:
    spec = data.spec(study_file(name))
except (ValueError, StudySpecError) as exc:
    st.error("This study link does not work. Please ask the facilitator for a new link.")
    st.caption(f"({name}: {str(exc).splitlines()[0]})")
    st.stop()
store = data.store()
pid = st.query_params.get("p")
if withdrawn_notice(store, pid):
    st.stop()
if not pid:
    new = views.consent(store, spec)
    if new is None:
        st.stop()
    st.query_params["p"] = new
    st.rerun()
runner = views.runner_for(store, spec, pid)
if runner is None:
    st.error("This link is not valid for this study. Please ask the facilitator for a new link.")
    st.stop()
views.render(runner)
