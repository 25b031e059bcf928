"""Researcher login/logout: unlocks the Research section of the navigation for this session."""

from __future__ import annotations

import streamlit as st

from ui.access import is_researcher, lock, require_researcher
from ui.router import ensure_router

ensure_router()
st.title("Researcher access")
if not is_researcher():
    st.caption("Setup, facilitator console and analysis need the researcher password (from "
               "PLEASQLARIFY_RESEARCHER_PASSWORD, secrets, or printed to the server console on "
               "first start).")
require_researcher("researcher_login")
st.success("Researcher pages unlocked for this browser session: Setup, Facilitator, Analysis.")
if st.button("Log out", key="researcher_logout"):
    lock()
    st.rerun()
