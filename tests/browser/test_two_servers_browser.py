"""Two `streamlit run app.py` servers on one PostgreSQL database, 20 Chromium participants
across them, one server SIGKILLed mid-session and its participants reloading on the other:
assignment balanced, every move and answer stored exactly once. Prints the figures.

20 Chromium pages on a shared 2-core machine take about 5 minutes, so this runs only with
``PLEASQLARIFY_BROWSER_LOAD=1``; tests/test_study_two_servers.py runs the same scenario with the
study runner in real processes in the default run (a few seconds).
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter

import pytest

from study.store import open_store
from study.trace import read_events
from tests.browser.test_participant_browser import _start, _stop
from tests.study_flow_fixtures import FILM_BANK, TASK

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.postgres,
              pytest.mark.skipif(not os.environ.get("PLEASQLARIFY_BROWSER_LOAD"),
                                 reason="20 Chromium pages take minutes; set "
                                        "PLEASQLARIFY_BROWSER_LOAD=1 to run")]
N = 20
STUDY = f"""\
id: duo
title: Two servers
consent: Please agree to take part.
conditions: [pleasqlarify, atomic-only]
task_bank: {FILM_BANK}
subtasks: {{"1": Describe one interpretation.}}
tasks: [{TASK}]
"""
TEXT = "the review text of Pulp Fiction"


def _until(check, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _button(page, name: str):
    return page.get_by_role("button", name=name).locator("visible=true").first


def join_and_start(pages: list, store) -> list[str]:
    """Every page agrees (concurrent joins), then continues past onboarding into the task;
    returns the participants' pseudonyms in page order."""
    for page in pages:
        page.get_by_text("Information and consent").first.wait_for()
    for page in pages:  # all agree at once: concurrent joins on both servers
        _button(page, "I agree").click()
    for page in pages:
        page.wait_for_url("**p=*")
    pids = [page.url.split("p=")[1].split("&")[0] for page in pages]
    _until(lambda: all((store.get_progress(p) or {}).get("step") == "onboarding"
                       for p in pids), "every participant on the onboarding step")
    for page in pages:
        _button(page, "Continue to the tasks").click()
    _until(lambda: all((store.get_progress(p) or {}).get("step", "").startswith("task:")
                       for p in pids), "every participant in the task")
    return pids


def answer_and_finish(pages: list, store, pids: list[str]) -> None:
    """Every page answers the subtask and finishes the task; waits until the store has it."""
    for page in pages:
        page.get_by_text("Describe one interpretation.").first.wait_for()
        box = page.locator("textarea >> visible=true").first
        box.fill(TEXT)
        box.press("Control+Enter")
    _until(lambda: all(store.answers(p).get(f"task:{TASK}/1") == TEXT for p in pids),
           "every answer stored")
    for page in pages:
        _button(page, "Finish this task").click()
    _until(lambda: all(store.participant(p)["status"] == "completed" for p in pids),
           "every participant completed")


def each_event_once(store, pids: list[str]) -> list:
    """The study's events, after checking that each participant's steps, consent, answer and
    timers are stored exactly once (none lost, none duplicated)."""
    events = read_events(store, study="duo")
    ids = [e.event_id for e in events]
    assert len(ids) == len(set(ids))
    for pid in pids:
        mine = [e for e in events if e.participant == pid]
        steps = [e.payload["step"] for e in mine if e.type == "step"]
        assert steps == ["onboarding", f"task:{TASK}/1", "done"], steps
        assert [e.type for e in mine].count("answer") == 1
        assert [e.type for e in mine].count("consent") == 1
        assert [e.type for e in mine if e.type.startswith("timer.")] == [
            "timer.start", "timer.start", "timer.stop", "timer.stop"]
    return events


def test_two_app_servers_one_killed(browser, pg_url, tmp_path) -> None:
    (tmp_path / "studies" / "duo").mkdir(parents=True)
    (tmp_path / "studies" / "duo" / "study.yaml").write_text(STUDY)
    store = open_store(pg_url)
    t0 = time.monotonic()
    (pa, base_a), (pb, base_b) = _start(tmp_path, pg_url), _start(tmp_path, pg_url)
    pages = []
    try:
        for i in range(N):
            page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
            page.set_default_timeout(90_000)
            page.goto(f"{(base_a, base_b)[i % 2]}/participant?study=duo")
            pages.append(page)
        pids = join_and_start(pages, store)
        os.kill(pb.pid, signal.SIGKILL)  # mid-session: B's participants are inside the task
        pb.wait()
        for i, page in enumerate(pages):
            if i % 2:  # B's participants reload their link on server A
                page.goto(f"{base_a}/participant?study=duo&p={pids[i]}")
        answer_and_finish(pages, store, pids)
        for page in pages:
            page.get_by_text("completion code").first.wait_for()
        elapsed = time.monotonic() - t0
    finally:
        for page in pages:
            page.context.close()
        _stop(pa)
        if pb.poll() is None:
            _stop(pb)
    parts = store.participants("duo")
    assert sorted(p["participant"] for p in parts) == sorted(pids)
    cells = Counter(p["cell"] for p in parts)
    assert cells == {0: N // 2, 1: N // 2}
    events = each_event_once(store, pids)
    resumed = sum(1 for e in events if e.type == "session.start" and e.payload["resumed"])
    print(f"\ntwo app servers: {N} Chromium participants, cells {dict(sorted(cells.items()))}, "
          f"{len(events)} events, 0 duplicated, {resumed} resumed sessions after the SIGKILL "
          f"of server B, {elapsed:.1f} s")
