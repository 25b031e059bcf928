"""The participant's study session: consent → questionnaires → onboarding → tasks → code.

Open ``/participant?study=<id>`` (the study file's ``id``); after consent the pseudonym travels
in ``?p=``, so a refresh or reconnect resumes at the exact step. All logic lives in
study.flow/study.runner and ui.participant_views.
"""

from __future__ import annotations

import streamlit as st

from ui import participant_views as views
from ui import study_cache as data
from ui.components import preload
from ui.router import ensure_router
from ui.withdraw import withdrawn_notice

ensure_router()
name = st.query_params.get("study", "")
entry = data.study(name) if name else None
if not name and not st.query_params.get("p"):
    views.study_index(data.studies(), data.blocking)  # the sidebar entry: the open studies
    st.stop()
if entry is None:
    st.header("This study link does not work")
    st.write("There is no study with this name. Please check the link, or ask the facilitator "
             "for a new one.")
    st.stop()
if data.blocking(entry):
    st.header("This study is not open yet")
    st.write("The study is still being set up. Please ask the facilitator; they can see what "
             "is missing on the Setup page.")
    st.stop()
spec = entry.spec
assert spec is not None  # blocking() is non-empty for an entry without a spec
store = data.store()
pid = st.query_params.get("p")
if withdrawn_notice(store, pid):
    st.stop()
# the workspace's files load now, not when the practice first shows it; Streamlit's component
# chunks from the first page after consent on (consent's own first paint does not pay them)
preload(bridge=pid is not None)
if not pid:  # agreeing puts the new pseudonym in ?p= in its callback, before this line
    views.consent(store, spec)
    st.stop()
runner = views.runner_for(store, spec, pid)
if runner is None:
    st.error("This link is not valid for this study. Please ask the facilitator for a new link.")
    st.stop()
views.render(runner)
