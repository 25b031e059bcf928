"""Real Chromium through the whole participant flow, a reload mid-task, and kill -9 of the server."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from study.store import open_store
from study.trace import read_events
from tests.browser.conftest import ARTIFACTS, server_env
from tests.harness import start
from tests.harness import stop as _stop
from tests.study_flow_fixtures import TASK, write_mini

pytestmark = pytest.mark.browser


def _start(tmp: Path, url: str) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` on a free loopback port with the tmp store and studies."""
    srv = start("app.py", env=server_env(PLEASQLARIFY_DB_URL=url,
                                         PLEASQLARIFY_STUDIES_DIR=str(tmp / "studies"),
                                         PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio")),
                log=tmp, timeout=60)
    return srv.proc, srv.url


@pytest.fixture()
def study(tmp_path):
    """The mini study (film bank, one task) and a tmp SQLite URL."""
    write_mini(tmp_path / "studies")
    return tmp_path, f"sqlite:///{tmp_path / 'study.sqlite'}"


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(400)
    page.screenshot(path=str(ARTIFACTS / f"participant-{name}.png"), full_page=True)


def _click(page, name: str) -> None:
    page.get_by_role("button", name=name).locator("visible=true").first.click()


def _wait(page, text: str) -> None:
    page.get_by_text(text).first.wait_for()


def _pid(page) -> str:
    page.wait_for_url("**p=*")
    return page.url.split("p=")[1].split("&")[0]


def _wait_step(store, pid: str, step: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while (store.get_progress(pid) or {}).get("step") != step:
        assert time.monotonic() < deadline, f"{store.get_progress(pid)} != {step}"
        time.sleep(0.1)


def _wait_event(store, pid: str, type: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while type not in {e.type for e in read_events(store, participant=pid)}:
        assert time.monotonic() < deadline, f"no {type} event"
        time.sleep(0.1)


def _idle(page, timeout_ms: int = 30_000) -> None:
    """Wait until Streamlit has finished its rerun (its 'Running…' status widget is gone)."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms)


def _answer(page, store, pid: str, sub: str, text: str) -> None:
    """Type an answer and wait until the store has it (typing during a rerun is retried)."""
    for _attempt in range(3):
        _idle(page)
        box = page.locator("textarea[aria-label^=Your] >> visible=true").first
        box.fill(text)
        box.press("Control+Enter")  # Streamlit's text area commits on Ctrl+Enter …
        page.get_by_text("Task 1 of 1").click()  # … and on blur
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if store.answers(pid).get(f"task:{TASK}/{sub}") == text:
                return
            time.sleep(0.1)
    raise AssertionError(f"answer to {sub} was not saved after 3 attempts")


def _consent_and_demographics(page, base: str, store, study: str = "mini") -> str:
    page.goto(f"{base}/participant?study={study}")
    _wait(page, "Information and consent")
    _shot(page, "1-consent")
    _click(page, "I agree")
    _wait(page, "About you")
    pid = _pid(page)
    _click(page, "Continue")
    _wait(page, "This question is required.")
    _shot(page, "2-demographics-required")
    for item, choice in (("sql_expertise", "intermediate"), ("llm_code", "weekly")):
        _choose(page, store, pid, f"demographics/{item}", choice)
    _idle(page)  # the radios' reruns are done: Continue is pressed on the page they drew
    _click(page, "Continue")
    _wait_step(store, pid, "onboarding")
    return pid


def _choose(page, store, pid: str, item: str, choice: str) -> None:
    """Pick a questionnaire radio and wait until the store has it (each radio saves on change):
    a click that lands while the previous radio's rerun redraws the page is retried, as a
    person would click again, so Continue never runs on an answer that was not recorded."""
    for _attempt in range(3):
        _idle(page)
        page.get_by_text(choice, exact=True).click()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if store.answers(pid).get(item) == choice:
                return
            time.sleep(0.1)
    raise AssertionError(f"{item} = {choice} was not saved after 3 clicks")


def test_whole_participant_flow_with_reload(browser, study) -> None:
    tmp, url = study
    proc, base = _start(tmp, url)
    store = open_store(url)
    page = browser.new_context(viewport={"width": 1600, "height": 1100}).new_page()
    page.set_default_timeout(60_000)
    try:
        pid = _consent_and_demographics(page, base, store)
        _wait(page, "Welcome to the mini study")
        _shot(page, "3-onboarding")
        _click(page, "Continue to the practice task")
        _wait(page, "queries remain")
        _shot(page, "4-practice")
        _click(page, "I feel comfortable: start the tasks")
        _wait(page, "Describe one interpretation.")
        _shot(page, "5-task-1")
        _answer(page, store, pid, "1", "the text of the review of Pulp Fiction")
        _click(page, "Continue to the next part")
        _wait(page, "Which clusters do you see?")
        page.get_by_text("queries remain").wait_for()
        _answer(page, store, pid, "2a", "two clusters: review text vs rating")
        _shot(page, "6-task-2a")
        glyph = page.locator('[data-testid="pq-action-space"] .pq-glyph').first.bounding_box()
        x, y = glyph["x"] + glyph["width"] / 2, glyph["y"] + glyph["height"] / 2
        page.mouse.move(x, y)  # a glyph hovered for 0.6 s is logged with its candidate id
        hovered = page.evaluate("""([x, y]) => Number(document.elementFromPoint(x, y)
            .closest('.pq-glyph').dataset.id)""", [x, y])
        _wait_event(store, pid, "space.hover")
        event = next(e for e in read_events(store, participant=pid) if e.type == "space.hover")
        assert event.payload["candidate"] == hovered
        page.mouse.move(5, 5)
        for state in ("hidden", "visible"):  # the browser reports the tab hidden, then back
            page.evaluate("""s => { Object.defineProperty(document, 'visibilityState',
                {value: s, configurable: true});
                document.dispatchEvent(new Event('visibilitychange')); }""", state)
            _wait_event(store, pid, f"tab.{state}")
        page.reload()  # mid-task refresh: same step, answer kept
        _wait(page, "Which clusters do you see?")
        expect(page.locator("textarea[aria-label^=Your] >> visible=true").first).to_have_value(
            "two clusters: review text vs rating", timeout=60_000)
        _shot(page, "7-task-2a-after-reload")
        _click(page, "Continue to the next part")
        _wait(page, "Explain the differences")
        _answer(page, store, pid, "2b", "one selects the rating column")
        _click(page, "Continue to the next part")
        _wait(page, "Navigate to your interpretation")
        _click(page, "Finish this task")
        _wait(page, "Submit a query in the workspace")
        _shot(page, "8-task-3-required")
        _click(page, "Submit this query")
        _wait(page, "You submitted the query")
        _click(page, "Finish this task")
        _wait(page, "Your opinion")
        _shot(page, "9-end-questionnaire")
        page.get_by_test_id("stRadioGroup").get_by_text("6", exact=True).click()
        _click(page, "Continue")
        _wait(page, "completion code")
        _shot(page, "10-done")
        code = store.completion_code(pid, 0)
        page.get_by_test_id("pq-completion-code").get_by_text(code).wait_for()
        types = [e.type for e in read_events(store, participant=pid)]
        assert types.count("session.start") == 2 and types.count("submit") == 1
        assert store.participant(pid)["status"] == "completed"
    finally:
        page.context.close()
        _stop(proc)


def test_kill_9_loses_no_committed_event_and_resumes(browser, study) -> None:
    tmp, url = study
    proc, base = _start(tmp, url)
    store = open_store(url)
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(60_000)
    try:
        pid = _consent_and_demographics(page, base, store)
        before = {e.event_id for e in read_events(store, participant=pid)}
        assert {"consent", "answer", "step"} <= {e.type for e in read_events(store)}
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        proc, base = _start(tmp, url)
        page.goto(f"{base}/participant?study=mini&p={pid}")
        _wait(page, "Welcome to the mini study")  # resumed at onboarding
        after = read_events(store, participant=pid)
        assert before <= {e.event_id for e in after}
        assert store.answers(pid)["demographics/sql_expertise"] == "intermediate"
        assert store.get_progress(pid)["step"] == "onboarding"
    finally:
        page.context.close()
        _stop(proc)


MAIN_SCROLL = "() => document.querySelector('[data-testid=\"stMain\"]').scrollTop"


def test_each_step_opens_at_its_top(browser, study) -> None:
    """After Continue at the bottom of a long page, the next step kept that scroll: a task
    part opened on its Predicted Output, a questionnaire on its last items, the heading and
    the part's instruction out of view. A decision in the workspace scrolls nothing."""
    tmp, url = study
    proc, base = _start(tmp, url)
    store = open_store(url)
    page = browser.new_context(viewport={"width": 1600, "height": 700}).new_page()
    page.set_default_timeout(60_000)
    try:
        pid = _consent_and_demographics(page, base, store)
        _wait(page, "Welcome to the mini study")
        walk = (("Continue to the practice task", "queries remain", ""),
                ("I feel comfortable: start the tasks", "Describe one interpretation.", ""),
                ("Continue to the next part", "Which clusters do you see?", "1"))
        scrolled = []
        for button, shown, answer in walk:
            if answer:
                _answer(page, store, pid, answer, "an answer")
            _idle(page)
            page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                          " m.scrollTo(0, m.scrollHeight); }")
            scrolled.append(page.evaluate(MAIN_SCROLL))
            _click(page, button)
            _wait(page, shown)
            _idle(page)
            page.wait_for_timeout(300)  # the script of the new step's first element has run
            assert page.evaluate(MAIN_SCROLL) == 0, f"{shown!r} opened scrolled down"
        assert min(scrolled) > 100  # every page before was scrolled to its end
        page.get_by_text("queries remain").wait_for()
        page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]')"
                      ".scrollTo(0, 400)")
        before = page.evaluate(MAIN_SCROLL)
        page.locator('[data-testid="pq-decision-variable"] button[data-event="answer"]'
                     '[data-yes="1"] >> visible=true').first.click()
        _idle(page)
        page.wait_for_timeout(300)
        assert page.evaluate(MAIN_SCROLL) == before  # a rerun of the same step: not moved
    finally:
        page.context.close()
        _stop(proc)
