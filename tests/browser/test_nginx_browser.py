"""Two `streamlit run app.py` servers behind nginx (the shipped deploy/nginx.conf.example,
sticky by a route cookie) on one PostgreSQL database: Chromium participants all use the one
nginx address, one upstream is SIGKILLed mid-session and its participants continue through
nginx on the other (the scenario of test_two_servers_browser.py, through the load balancer;
20 participants with PLEASQLARIFY_BROWSER_LOAD=1, else 6). Checks that every request of a browser (page, assets, websocket) reached
one process before the kill, and that no event was lost or duplicated. Prints the figures."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter, defaultdict

import pytest

from study.store import open_store
from tests.browser.test_participant_browser import _start, _stop
from tests.browser.test_two_servers_browser import (
    STUDY,
    answer_and_finish,
    each_event_once,
    join_and_start,
)
from tests.harness import start_nginx

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.postgres]
# participants per upstream: six Chromium pages keep the default run near a minute; with
# PLEASQLARIFY_BROWSER_LOAD=1 it is the 20-participant scenario of test_two_servers_browser
PER_SERVER = 10 if os.environ.get("PLEASQLARIFY_BROWSER_LOAD") else 3


def _log(text: str) -> list[tuple[str, str, list[str], str]]:
    """nginx access log lines as (route, status, upstreams tried in order, request)."""
    rows = []
    for line in text.splitlines():
        _, route, status, rest = line.split(" ", 3)
        upstreams, request = rest[1:].split('" "', 1)
        rows.append((route, status, [u for u in upstreams.split(", ") if u != "-"],
                     request.rstrip('"')))
    return rows


def _routes(text: str) -> dict[str, set[str]]:
    """Route cookie → the upstream addresses that answered its requests."""
    seen: dict[str, set[str]] = defaultdict(set)
    for route, _status, upstreams, _request in _log(text):
        seen[route].update(upstreams[-1:])
    return seen


def test_two_app_servers_behind_nginx_one_killed(browser, pg_url, tmp_path) -> None:
    if not any(os.path.exists(p) for p in ("/usr/sbin/nginx", "/usr/bin/nginx")):
        pytest.skip("nginx is absent (Debian: apt-get install nginx; .ci/run installs it)")
    (tmp_path / "studies" / "duo").mkdir(parents=True)
    (tmp_path / "studies" / "duo" / "study.yaml").write_text(STUDY)
    store = open_store(pg_url)
    t0 = time.monotonic()
    (pa, base_a), (pb, base_b) = _start(tmp_path, pg_url), _start(tmp_path, pg_url)
    lb = start_nginx([base_a, base_b], tmp_path / "nginx")
    addr = {base_a.removeprefix("http://"): "A", base_b.removeprefix("http://"): "B"}
    pages, on = [], []
    try:
        tries = 0
        while min(on.count("A"), on.count("B")) < PER_SERVER:  # new browsers until 3 + 3
            tries += 1
            assert tries < 60, f"the route cookie never reached both servers: {on}"
            context = browser.new_context(viewport={"width": 1200, "height": 900})
            page = context.new_page()
            page.set_default_timeout(90_000)
            server = addr[page.goto(f"{lb.url}/participant?study=duo").headers["x-upstream"]]
            if on.count(server) >= PER_SERVER:
                context.close()  # not consented: leaves nothing in the study
                continue
            pages.append(page)
            on.append(server)
        pids = join_and_start(pages, store)
        before = _routes(lb.access_log.read_text())
        os.kill(pb.pid, signal.SIGKILL)  # mid-session: B's participants are inside the task
        pb.wait()
        killed_at = lb.access_log.stat().st_size
        for page, server in zip(pages, on, strict=True):
            if server == "B":  # their page lost its server: they reload the same address
                page.reload()
        answer_and_finish(pages, store, pids)
        elapsed = time.monotonic() - t0
        after = lb.access_log.read_text()[killed_at:]
    finally:
        for page in pages:
            page.context.close()
        lb.stop()
        _stop(pa)
        if pb.poll() is None:
            _stop(pb)
    # sticky: every route (browser) reached exactly one process before the kill
    sticky = {route: ups for route, ups in before.items() if ups}
    assert sticky and all(len(ups) == 1 for ups in sticky.values()), sticky
    assert "/_stcore/stream" in lb.access_log.read_text()  # the websockets went through nginx
    # after the kill every request was answered by A (B's websockets, closed by the kill, are
    # logged when they close; a request that tried B first failed over to A)
    a_addr = base_a.removeprefix("http://")
    answered = [(ups[-1], status) for _, status, ups, _ in _log(after) if ups]
    failovers = sum(1 for _, _, ups, _ in _log(after) if len(ups) > 1)
    assert all(up == a_addr for up, status in answered if status != "101"), answered
    parts = store.participants("duo")
    assert sorted(p["participant"] for p in parts) == sorted(pids)
    cells = Counter(p["cell"] for p in parts)
    events = each_event_once(store, pids)  # fails on any lost or duplicated event
    ids = [e.event_id for e in events]
    duplicated = len(ids) - len(set(ids))
    kinds = Counter((e.participant, e.type) for e in events)
    lost = sum(max(0, want - kinds[(p, kind)]) for p in pids
               for kind, want in (("consent", 1), ("answer", 1), ("step", 3)))
    resumed = sum(1 for e in events if e.type == "session.start" and e.payload["resumed"])
    print(f"\nnginx, two app servers: {len(pids)} Chromium participants through one address "
          f"({on.count('A')} on A, {on.count('B')} on B, {len(sticky)} route cookies each on "
          f"one process; {failovers} requests failed over to A), cells {dict(sorted(cells.items()))}, {len(events)} events, lost "
          f"{lost}, duplicated {duplicated}, {resumed} resumed sessions after the SIGKILL of "
          f"B, {elapsed:.1f} s")
