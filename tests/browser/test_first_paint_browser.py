"""Issue 24 in Chromium: under ``asgi.py`` (what ``python -m study.serve`` runs) a new session's
first load of the workspace asks the server once where it is (no probe of
``/workspace/_stcore/health``), and every script its first render runs was asked for before the
WebSocket opened (page shell, ui.shell), so nothing of it waits for the first deltas. A new
element in the workspace's first render whose code Streamlit loads lazily fails this test until
it is added to ``ui.shell.FIRST_RENDER``."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from benchmarks.paint import workspace_ready, workspace_settled
from tests.browser.conftest import ARTIFACTS, server_env
from tests.harness import running

pytestmark = pytest.mark.browser


def _script(path: str) -> bool:
    return path.startswith("/static/js/") or (path.startswith("/_stcore/bidi-components/")
                                              and path.endswith(".js"))


def test_a_cold_workspace_load_probes_once_and_fetches_its_scripts_before_the_websocket(
        browser, tmp_path) -> None:
    env = server_env(PLEASQLARIFY_DB_URL=f"sqlite:///{tmp_path / 'study.sqlite'}",
                     PLEASQLARIFY_STUDIES_DIR=str(tmp_path / "studies"))
    with running("asgi.py", env=env, log=ARTIFACTS / "streamlit-first-paint.log",
                 timeout=120) as srv:
        for _ in range(2):  # the first visit warms the server; the second is the one checked
            context = browser.new_context(viewport={"width": 1600, "height": 1100})
            page = context.new_page()
            page.set_default_timeout(60_000)
            events: list[str] = []  # request paths, and "WS" where the WebSocket opened
            page.on("request", lambda r, e=events: e.append(urlparse(r.url).path))
            page.on("websocket", lambda _ws, e=events: e.append("WS"))
            page.goto(f"{srv.url}/workspace")
            workspace_ready(page)
            workspace_settled(page)
            context.close()
    assert "/workspace/_stcore/health" not in events
    assert events.count("/_stcore/health") == 1 and events.count("WS") == 1
    late = [p for p in events[events.index("WS"):] if _script(p)]
    assert late == [], f"scripts the first render asked for only after its deltas: {late}"
    assert len([p for p in events if "bidi-components" in p and p.endswith(".js")]) == 4
