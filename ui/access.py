"""The researcher gate of the researcher pages and the router.

Unlocking sets a session flag and a signed, day-long token in the ``pq_researcher`` cookie, so
a reload or a new tab of the same browser stays unlocked; a gated page shows the unlock form
in place and then itself. Served by ``asgi.py`` (``st.App``, what ``python -m study.serve``
runs), the cookie is set by the server's response to :data:`ROUTE` (HttpOnly, SameSite=Strict)
for a one-time code the page posts; under plain ``streamlit run app.py`` a script cannot set
response headers, so a line of JavaScript writes it (not HttpOnly). The token is checked on
every run against the current password and the server's revocation list, so logging out
(anywhere) or a new password ends every session that used it. Wrong passwords are rate-limited per client address (``study.access.RateLimit``).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
from typing import Any

import streamlit as st

from study import access as A
from study.serve import holder
from ui.study_cache import secret

FLAG, COOKIE_JS, TOKEN = "researcher", "pq.researcher.cookie", "pq.researcher.token"
COOKIE = "pq_researcher"


@st.cache_resource(show_spinner=False)
def _announced(configured_digest: str) -> str:
    """Once per server process (and configured password): print it or its source; the hash.

    Beside a ``study.serve`` server already running on this data folder, a plain ``streamlit
    run`` keeps that server's password instead of printing a new one over it."""
    other = holder()
    if (other is not None and other.get("pid") != os.getpid() and A.stored_hash()
            and not A.configured_password(secret("researcher_password"))):
        print(f"PleaSQLarify Studio: the server running on this data folder (pid "
              f"{other.get('pid', '?')}) set the researcher password; it applies here too")
        return A.stored_hash()
    return A.announce(secret("researcher_password"))


def _configured_hash() -> str:
    chosen = A.configured_password(secret("researcher_password")) or ""
    return _announced(hashlib.sha256(chosen.encode()).hexdigest())


@st.cache_resource(show_spinner=False)
def _attempts() -> A.RateLimit:
    """The process's per-client rate limit on wrong passwords."""
    return A.RateLimit()


@st.cache_resource(show_spinner=False)
def _revocations() -> A.Revocations:
    """The server-side list of revoked tokens (logs/researcher_revoked)."""
    return A.Revocations()


def _token_key() -> bytes:
    """The token key under the current password: the configured password itself (stable
    across restarts, never stored) or the stored hash of the generated one."""
    configured = A.configured_password(secret("researcher_password"))
    return A.token_key(A.signing_key(), configured or _expected())


def _valid(token: object) -> bool:
    """Whether ``token`` unlocks now (signature, expiry, password, not revoked)."""
    return isinstance(token, str) and A.token_valid(token, _token_key(), time.time(),
                                                    _revocations().ids())


def _client() -> str:
    """The rate limit's client: the connection's IP address (one key for local visitors)."""
    try:
        return st.context.ip_address or "local"
    except Exception:
        return "local"


def _expected() -> str:
    configured = A.configured_password(secret("researcher_password"))
    announced = _configured_hash()
    return announced if configured else (A.stored_hash() or announced)


def is_researcher() -> bool:
    """Whether this browser session has unlocked the researcher pages (flag or valid cookie)."""
    _configured_hash()
    token = st.session_state.get(TOKEN)
    if st.session_state.get(FLAG):
        if token is None or _valid(token):
            return True
        st.session_state.pop(FLAG, None)  # revoked, expired or from an older password
        st.session_state.pop(TOKEN, None)
        return False
    cookie = st.context.cookies.get(COOKIE)
    if _valid(cookie):
        st.session_state[FLAG], st.session_state[TOKEN] = True, cookie
        return True
    return False


ROUTE = "/_pq/researcher-cookie"  # served by asgi.py (st.App): sets the cookie HttpOnly
HANDOFF_TTL_S = 60.0
_handoff: dict[str, tuple[str, float]] = {}  # one-time code -> (token or "" to delete, expiry)
_handoff_lock = threading.Lock()
_served = threading.Event()  # set by routes(): this process serves ROUTE


def _cookie(value: str, max_age: int) -> None:
    """Set (or with max_age 0 delete) the token cookie in the browser: through :data:`ROUTE`
    (an HttpOnly cookie in the server's response) when this process serves it, else with a
    line of JavaScript (plain ``streamlit run app.py``: not HttpOnly)."""
    if _served.is_set():
        code = secrets.token_urlsafe(24)
        with _handoff_lock:
            now = time.time()
            for old in [c for c, (_, exp) in _handoff.items() if exp < now]:
                del _handoff[old]
            _handoff[code] = (value, now + HANDOFF_TTL_S)
        st.html(f"<script>fetch({json.dumps(ROUTE)}, {{method: 'POST', body: "
                f"{json.dumps(code)}, credentials: 'same-origin'}});</script>",
                unsafe_allow_javascript=True)
        return
    st.html(f"<script>document.cookie = {json.dumps(f'{COOKIE}={value}')} + "
            f"'; max-age={max_age}; path=/; SameSite=Strict';</script>",
            unsafe_allow_javascript=True)


def take_handoff(code: str, now: float) -> str | None:
    """The token a one-time code stands for ("" = delete the cookie), once, within
    :data:`HANDOFF_TTL_S`; None for an unknown, used or expired code."""
    with _handoff_lock:
        value, expiry = _handoff.pop(code, (None, 0.0))
    return value if value is not None and expiry >= now else None


def routes() -> list[Any]:
    """The Starlette route that sets the researcher cookie as HttpOnly, SameSite=Strict (for
    ``st.App`` in asgi.py); from now on :func:`_cookie` uses it."""
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def set_cookie(request: Request) -> Response:
        code = (await request.body())[:100].decode("ascii", errors="replace")
        value = take_handoff(code, time.time())
        if value is None:
            return Response("unknown or expired code", status_code=403)
        response = Response(status_code=204)
        secure = request.url.scheme == "https"
        if value:
            response.set_cookie(COOKIE, value, max_age=A.TOKEN_TTL_S, path="/", httponly=True,
                                samesite="strict", secure=secure)
        else:
            response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict",
                                   secure=secure)
        return response

    _served.set()
    return [Route(ROUTE, set_cookie, methods=["POST"])]


def unlock(given: str) -> str | None:
    """Check the password (rate-limited); None on success, else the message to show."""
    expected = _expected()
    ok, wait = _attempts().attempt(_client(), lambda: A.verify_password(given, expected))
    if wait > 0:
        return f"Too many wrong passwords from this address. Try again in {wait:.0f} s."
    if not ok:
        return "Wrong password."
    token = A.make_token(_token_key(), time.time())
    st.session_state[FLAG], st.session_state[TOKEN] = True, token
    st.session_state[COOKIE_JS] = token
    return None


def lock() -> None:
    """Log out: revoke this session's token on the server (every tab and copy of it stops
    working), then forget it here and delete the cookie."""
    for token in {st.session_state.pop(TOKEN, None), st.context.cookies.get(COOKIE)}:
        if _valid(token):
            _revocations().revoke(token)
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
