"""Issue #22, observation 6 in Chromium: under ``asgi.py`` (what ``python -m study.serve``
runs) the researcher cookie is set by the server, HttpOnly and SameSite=Strict, keeps the
browser unlocked across a reload, and Log out revokes and removes it."""

from __future__ import annotations

import subprocess
import sys
import time

from study import access as A
from tests.browser.conftest import ARTIFACTS, ROOT, server_env
from tests.harness import LOOPBACK, free_port, running, stop, wait_healthy

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


def _serve(port: int, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """``python -m study.serve`` on ``port`` and the first line it prints (the password's)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "study.serve", "--server.headless", "true", "--server.port",
         str(port), "--server.address", LOOPBACK, "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    line = proc.stdout.readline()
    wait_healthy(f"http://{LOOPBACK}:{port}", proc, 90, "study.serve did not start")
    return proc, line


def test_a_server_restart_keeps_the_researcher_unlocked(browser, tmp_path) -> None:
    """Every start of ``study.serve`` generated a new password, and the unlock (its token
    bound to the password) died with it: a restart locked the researcher out, although the
    guide promises a working day. A restart now keeps the generated password and says so."""
    env = {k: v for k, v in server_env().items()
           if k not in (A.ENV_PASSWORD, A.ENV_ANNOUNCED, "STREAMLIT_SERVER_PORT")}
    env.update(PLEASQLARIFY_DATA_DIR=str(tmp_path / "data"),
               PLEASQLARIFY_STUDIES_DIR=str(tmp_path / "studies"),
               PLEASQLARIFY_DB_URL=f"sqlite:///{tmp_path / 'study.sqlite'}")
    port = free_port()
    first, line = _serve(port, env)
    context = browser.new_context()
    try:
        assert A.NEW_PASSWORD in line, line
        password = line.split(A.NEW_PASSWORD)[1].split()[0]
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"http://{LOOPBACK}:{port}/researcher")
        page.get_by_label("Researcher password").fill(password)
        page.get_by_role("button", name="Unlock").click()
        page.get_by_text("Researcher pages unlocked").wait_for()
        assert _wait_for(lambda: _cookie(context)) is not None
    finally:
        stop(first)
    second, line = _serve(port, env)
    try:
        page.goto(f"http://{LOOPBACK}:{port}/setup")
        page.get_by_role("heading", name="Study setup").wait_for()
        assert page.get_by_label("Researcher password").count() == 0  # still unlocked
        assert "unchanged" in line and password not in line, line
    finally:
        context.close()
        stop(second)
