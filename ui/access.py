"""The researcher gate shared by the researcher pages and the router (a session flag)."""

from __future__ import annotations

import streamlit as st

from study.access import check_password, researcher_password
from ui.study_cache import secret

FLAG = "researcher"


def is_researcher() -> bool:
    """Whether this browser session has unlocked the researcher pages."""
    return bool(st.session_state.get(FLAG))


def unlock(given: str) -> bool:
    """Check the password and set the session flag; True when it matched."""
    if check_password(given, researcher_password(secret("researcher_password"))):
        st.session_state[FLAG] = True
        return True
    return False


def lock() -> None:
    """Log out of the researcher pages."""
    st.session_state.pop(FLAG, None)


def require_researcher(form_key: str) -> None:
    """Show the password form and stop the page unless a researcher is logged in."""
    if is_researcher():
        return
    with st.form(form_key):
        given = st.text_input("Researcher password", type="password", key=f"{form_key}_pw")
        if st.form_submit_button("Unlock"):
            if unlock(given):
                st.rerun()
            st.error("Wrong password.")
    st.stop()
