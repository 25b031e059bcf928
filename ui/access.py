"""The researcher gate of the researcher pages and the router.

Unlocking sets a session flag and a signed, day-long token in the ``pq_researcher`` cookie
(written by a line of JavaScript, since ``st.context.cookies`` is read-only), so a reload or a
new tab of the same browser stays unlocked; a gated page shows the unlock form in place and then
itself. Wrong passwords are rate-limited per server process.
"""

from __future__ import annotations

import hashlib
import json
import time

import streamlit as st

from study import access as A
from ui.study_cache import secret

FLAG, COOKIE_JS = "researcher", "pq.researcher.cookie"
COOKIE = "pq_researcher"


@st.cache_resource(show_spinner=False)
def _announced(configured_digest: str) -> str:
    """Once per server process (and configured password): print it or its source; the hash."""
    return A.announce(secret("researcher_password"))


def _configured_hash() -> str:
    chosen = A.configured_password(secret("researcher_password")) or ""
    return _announced(hashlib.sha256(chosen.encode()).hexdigest())


@st.cache_resource(show_spinner=False)
def _attempts() -> A.Attempts:
    return A.Attempts()


def _expected() -> str:
    configured = A.configured_password(secret("researcher_password"))
    announced = _configured_hash()
    return announced if configured else (A.stored_hash() or announced)


def is_researcher() -> bool:
    """Whether this browser session has unlocked the researcher pages (flag or valid cookie)."""
    _configured_hash()
    if st.session_state.get(FLAG):
        return True
    if A.token_valid(st.context.cookies.get(COOKIE), A.signing_key(), time.time()):
        st.session_state[FLAG] = True
        return True
    return False


def _cookie(value: str, max_age: int) -> None:
    """Set (or with max_age 0 delete) the token cookie in the browser."""
    st.html(f"<script>document.cookie = {json.dumps(f'{COOKIE}={value}')} + "
            f"'; max-age={max_age}; path=/; SameSite=Strict';</script>",
            unsafe_allow_javascript=True)


def unlock(given: str) -> str | None:
    """Check the password (rate-limited); None on success, else the message to show."""
    attempts = _attempts()
    wait = attempts.wait_s()
    if wait > 0:
        return f"Too many wrong passwords. Try again in {wait:.0f} s."
    if not A.verify_password(given, _expected()):
        attempts.failed()
        return "Wrong password."
    attempts.succeeded()
    st.session_state[FLAG] = True
    st.session_state[COOKIE_JS] = A.make_token(A.signing_key(), time.time())
    return None


def lock() -> None:
    """Log out of the researcher pages (this session and the cookie)."""
    st.session_state.pop(FLAG, None)
    st.session_state[COOKIE_JS] = ""


def sync_cookie() -> None:
    """Write a pending token (or its deletion) to the browser; call once per run."""
    token = st.session_state.pop(COOKIE_JS, None)
    if token is not None:
        _cookie(token, A.TOKEN_TTL_S if token else 0)


def require_researcher(form_key: str) -> None:
    """Show the password form in place and stop the page unless a researcher is logged in."""
    if is_researcher():
        return
    st.info("This page is for researchers. The password is printed on the server console "
            "when the server starts (or set with PLEASQLARIFY_RESEARCHER_PASSWORD).",
            icon=":material/lock:")
    with st.form(form_key):
        given = st.text_input("Researcher password", type="password", key=f"{form_key}_pw")
        if st.form_submit_button("Unlock", type="primary"):
            problem = unlock(given)
            if problem is None:
                st.rerun()
            st.error(problem)
    st.stop()
