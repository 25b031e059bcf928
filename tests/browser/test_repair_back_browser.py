"""Issue 21 in Chromium: None of these → Back → No → Back → submit on two study tasks, then
the researcher's replay and export of that participant.

On b320bc6 the first Back after None of these showed an IndexError traceback (41 vs 44) on
the participant's screen, and the replay of that task raised the same error, leaving the
Export tab with only the traceback. Every step is screenshotted to
test-artifacts/repairback-*.png.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from study.store import open_store
from study.trace import read_events
from tests.browser.conftest import ARTIFACTS, server_env
from tests.harness import running
from tests.study_flow_fixtures import FILM_BANK, PRACTICE, write_mini

pytestmark = pytest.mark.browser
PASSWORD = "repair-back-pw"
TASKS = ("film-dicaprio-rating", "film-departed-makers")
STUDY = f"""\
id: repairback
title: Repair and Back
consent: Please read this and agree to take part.
conditions: [pleasqlarify]
task_bank: {FILM_BANK}
subtasks:
  "3": Navigate to your interpretation and submit it.
tasks:
  - id: {TASKS[0]}
  - id: {TASKS[1]}
onboarding:
  intro: Welcome to the repair study.
  practice_task: {PRACTICE}
questionnaires:
  - id: end
    title: Your opinion
    items:
      - {{id: more, text: "Anything else?", kind: text, required: false}}
"""
COUNT = re.compile(r"(\d+) of (\d+) queries remain")


@pytest.fixture()
def server(tmp_path) -> Iterator[tuple[str, str]]:
    """``streamlit run app.py`` with the two-task study, a tmp store and no API key."""
    write_mini(tmp_path / "studies", "repairback", STUDY)
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    env = server_env(PLEASQLARIFY_DB_URL=url, PLEASQLARIFY_STUDIES_DIR=str(tmp_path / "studies"),
                     PLEASQLARIFY_AUDIO_DIR=str(tmp_path / "audio"),
                     PLEASQLARIFY_RESEARCHER_PASSWORD=PASSWORD)
    env.pop("ANTHROPIC_API_KEY", None)
    with running("app.py", env=env, log=ARTIFACTS / "repairback-server.log", timeout=60) as srv:
        yield srv.url, url


def _idle(page, timeout_ms: int = 120_000) -> None:
    """Wait until Streamlit has finished its rerun (no 'Running…' status widget)."""
    page.wait_for_timeout(200)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms)


def _shot(page, name: str) -> None:
    page.mouse.move(2, 2)  # no tooltip over the screenshot
    _idle(page)
    page.screenshot(path=str(ARTIFACTS / f"repairback-{name}.png"), full_page=True)


def _click(page, name: str) -> None:
    _idle(page)
    page.get_by_role("button", name=name).locator("visible=true").first.click()


def _press(page, task: str, key: str) -> None:
    """Click a workspace button by its widget key (``po.none``, ``po.no``, ``dv.back``…)."""
    _idle(page)
    page.locator(f".st-key-pleasqlarify-{task}-{key.replace('.', '-')} button"
                 " >> visible=true").first.click()


def _counts(page) -> tuple[int, int]:
    """(survivors, pool size) from the Action Space's summary line."""
    text = page.locator('[data-testid="pq-survivors"] >> visible=true').first.inner_text()
    m = COUNT.search(text)
    assert m, text
    return int(m.group(1)), int(m.group(2))


def _wait_counts(page, check, what: str, timeout: float = 120) -> tuple[int, int]:
    deadline = time.monotonic() + timeout
    while True:
        _idle(page)
        _no_traceback(page)
        try:
            counts = _counts(page)
            if check(counts):
                return counts
        except AssertionError:
            pass
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _searched(page, timeout: float = 120) -> None:
    """Wait until repair has stopped looking for other readings (it runs off the script
    thread; the page asks for it without any input, so this needs no click)."""
    page.get_by_text("Looking for other readings").first.wait_for(state="detached",
                                                                   timeout=timeout * 1000)
    _idle(page)


def _no_traceback(page) -> None:
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, errors.first.inner_text()


def _task(page, store, pid: str, task: str, n: int) -> None:
    """None of these → Back → No → Back → submit on the task shown, screenshotting each."""
    page.get_by_text("queries remain").first.wait_for(timeout=120_000)
    start = _wait_counts(page, lambda c: True, "the first state")
    _shot(page, f"{n}-1-start")
    _press(page, task, "po.none")
    grown = _wait_counts(page, lambda c: c[1] > start[1], "repair to add queries")
    _searched(page)
    _shot(page, f"{n}-2-none-of-these")
    _press(page, task, "dv.back")
    _wait_counts(page, lambda c: c == start, f"Back to {start}")
    _shot(page, f"{n}-3-back")
    _press(page, task, "po.no")
    _wait_counts(page, lambda c: c != start, "No to the output")
    _searched(page)
    _shot(page, f"{n}-4-no")
    _press(page, task, "dv.back")
    _wait_counts(page, lambda c: c == start, f"Back to {start} again")
    _shot(page, f"{n}-5-back-again")
    _click(page, "Submit this query")
    page.get_by_text("You submitted the query").first.wait_for()
    _no_traceback(page)
    _shot(page, f"{n}-6-submitted")
    types = [e.type for e in read_events(store, participant=pid) if e.task == task]
    assert types.count("repair") == 2 and types.count("undo") == 2, types
    assert grown[1] > start[1] and "submit" in types
    _click(page, "Finish this task")


def test_none_of_these_then_back_on_two_tasks_replays_and_exports(browser, server) -> None:
    base, url = server
    store = open_store(url)
    page = browser.new_context(viewport={"width": 1500, "height": 2200}).new_page()
    page.set_default_timeout(120_000)
    researcher = browser.new_context(viewport={"width": 1500, "height": 1400}).new_page()
    researcher.set_default_timeout(120_000)
    try:
        page.goto(f"{base}/participant?study=repairback")
        page.get_by_text("Information and consent").first.wait_for()
        _click(page, "I agree")
        page.get_by_text("Welcome to the repair study").first.wait_for()
        page.wait_for_url("**p=*")
        pid = page.url.split("p=")[1].split("&")[0]
        _click(page, "Continue to the practice task")
        page.get_by_text("queries remain").first.wait_for()
        _click(page, "I feel comfortable: start the tasks")
        order = store.participant(pid)["task_order"]
        for n, task in enumerate(order, 1):
            page.get_by_text(f"Task {n} of 2").first.wait_for()
            _task(page, store, pid, task, n)
        page.get_by_text("Your opinion").first.wait_for()
        _shot(page, "7-end")

        researcher.goto(f"{base}/analysis")
        researcher.get_by_label("Researcher password").fill(PASSWORD)
        _click(researcher, "Unlock")
        researcher.get_by_text("Completion rate").first.wait_for()
        researcher.get_by_role("tab", name="Timeline & replay").click()
        for i, task in enumerate(order):
            if i:
                _idle(researcher)
                researcher.get_by_role("combobox", name="Task").locator(
                    "visible=true").first.click()
                researcher.get_by_role("option", name=task).click()
                _idle(researcher)
            researcher.get_by_text("Replay matches the recorded trace.").first.wait_for()
            researcher.get_by_role("slider").first.focus()
            researcher.keyboard.press("End")  # the last step: after the second Back
            _idle(researcher)
            selected = researcher.get_by_role("tab", selected=True)
            assert selected.inner_text().strip() == "Timeline & replay"  # the rerun kept it
            box = researcher.locator(".st-key-an_rp_t input").first
            assert task in (box.input_value() + (box.get_attribute("aria-label") or ""))
            researcher.get_by_text("Replay matches the recorded trace.").first.wait_for()
            _no_traceback(researcher)
            assert researcher.get_by_text("Replay cannot reproduce").count() == 0
            assert researcher.get_by_text("Replay mismatch").count() == 0
            _shot(researcher, f"8-replay-{i + 1}")
        researcher.get_by_role("tab", name="Export").click()
        researcher.get_by_role("button", name="Download export (zip)").wait_for()
        _no_traceback(researcher)
        _shot(researcher, "9-export")
    finally:
        page.context.close()
        researcher.context.close()
