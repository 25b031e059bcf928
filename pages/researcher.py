"""Researcher login/logout: unlocks the Research section of the navigation for this session."""

from __future__ import annotations

import streamlit as st

from ui.access import is_researcher, lock, require_researcher
from ui.router import ensure_router

ensure_router()
st.title("Researcher access")
if not is_researcher():
    st.caption("Setup, facilitator console and analysis need the researcher password: it is "
               "printed on the server console when the server starts (unless "
               "PLEASQLARIFY_RESEARCHER_PASSWORD or secrets set one).")
require_researcher("researcher_login")
st.success("Researcher pages unlocked in this browser for a working day: Setup, Facilitator, "
           "Analysis.")
if st.button("Log out", key="researcher_logout"):
    lock()
    st.rerun()
