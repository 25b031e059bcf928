"""Issue #22, observation 6 in Chromium: under ``asgi.py`` (what ``python -m study.serve``
runs) the researcher cookie is set by the server, HttpOnly and SameSite=Strict, keeps the
browser unlocked across a reload, and Log out revokes and removes it."""

from __future__ import annotations

import time

from study import access as A
from tests.browser.conftest import ARTIFACTS, server_env
from tests.harness import running

PASSWORD = "cookie-s3cret"


def _cookie(context) -> dict | None:
    return next((c for c in context.cookies() if c["name"] == "pq_researcher"), None)


def _wait_for(fn, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while (value := fn()) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    return value


def test_the_server_sets_an_httponly_cookie_and_logout_revokes_it(browser, tmp_path) -> None:
    env = server_env(PLEASQLARIFY_RESEARCHER_PASSWORD=PASSWORD,
                     PLEASQLARIFY_STUDIES_DIR=str(tmp_path / "studies"),
                     PLEASQLARIFY_DB_URL=f"sqlite:///{tmp_path / 'study.sqlite'}")
    with running("asgi.py", env=env, log=ARTIFACTS / "streamlit-asgi.log", timeout=90) as srv:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{srv.url}/researcher")
        page.get_by_label("Researcher password").fill(PASSWORD)
        page.get_by_role("button", name="Unlock").click()
        page.get_by_text("Researcher pages unlocked").wait_for()
        cookie = _wait_for(lambda: _cookie(context))
        assert cookie is not None, "no researcher cookie was set"
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert "pq_researcher" not in page.evaluate("document.cookie")  # not readable by JS
        token = cookie["value"]
        page.goto(f"{srv.url}/setup")  # a new session: unlocked by the cookie alone
        page.get_by_role("heading", name="Study setup").wait_for()
        assert page.get_by_label("Researcher password").count() == 0
        page.goto(f"{srv.url}/researcher")
        page.get_by_role("button", name="Log out").click()
        assert _wait_for(lambda: None if _cookie(context) else True) is True
        assert token.split(".")[1] in A.Revocations().ids()
        context.close()
