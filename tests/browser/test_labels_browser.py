"""Real Chromium: a study condition with `labels: plain` shows no SQL in the workspace — not in
the Action Space tooltip of a hovered glyph, not in any text, title or aria label — while
`labels: both` keeps its SQL. Screenshots: test-artifacts/labels-{plain,both}-*.png."""

from __future__ import annotations

import pytest

from study.store import open_store
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_participant_browser import (
    _click,
    _consent_and_demographics,
    _idle,
    _start,
    _wait,
)
from tests.harness import stop
from tests.study_flow_fixtures import MINI, write_mini
from tests.test_ui_labels import SQL_TEXT

pytestmark = pytest.mark.browser

# Everything a participant reads in the workspace: its text and every title / aria label
# (the chart's tooltip included while it is shown).
READ = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const attrs = [...main.querySelectorAll('[title], [aria-label], [alt]')].flatMap(
    e => ['title', 'aria-label', 'alt'].map(a => e.getAttribute(a)).filter(Boolean));
  return [main.innerText, ...attrs];
}"""


@pytest.fixture(scope="module")
def studies(browser, tmp_path_factory):
    """One server with two copies of the mini study: condition labels plain and both."""
    tmp = tmp_path_factory.mktemp("labels")
    for labels in ("plain", "both"):
        write_mini(tmp / "studies", f"mini-{labels}", MINI.replace(
            "conditions: [pleasqlarify]",
            f"conditions:\n  - {{id: pleasqlarify, labels: {labels}}}"))
    url = f"sqlite:///{tmp / 'study.sqlite'}"
    proc, base = _start(tmp, url)
    try:
        yield base, open_store(url)
    finally:
        stop(proc)


def _practice_workspace(browser, base: str, store, labels: str):
    """A participant of ``mini-<labels>`` on the practice task's workspace (chart drawn)."""
    page = browser.new_context(viewport={"width": 1600, "height": 1100}).new_page()
    page.set_default_timeout(60_000)
    _consent_and_demographics(page, base, store, f"mini-{labels}")
    _wait(page, "Welcome to the mini study")
    _click(page, "Continue to the practice task")
    _wait(page, "queries remain")
    page.locator('[data-testid="pq-action-space"][data-revision] .pq-glyph').first.wait_for()
    return page


def _hover_tip(page, shot: str) -> str:
    """Hover the first glyph, screenshot the page as test-artifacts/labels-``shot``.png and
    return the tooltip the chart shows for the glyph."""
    glyph = page.locator('[data-testid="pq-action-space"] .pq-glyph').first.bounding_box()
    page.mouse.move(glyph["x"] + glyph["width"] / 2, glyph["y"] + glyph["height"] / 2)
    tip = page.locator('[data-testid="pq-action-space"] .pq-tip')
    tip.wait_for(state="visible")
    page.screenshot(path=str(ARTIFACTS / f"labels-{shot}.png"), full_page=True)
    return tip.inner_text()


def _shoot_output(page, labels: str) -> None:
    """Screenshot the Predicted Output and what follows it (the page scrolls inside)."""
    page.get_by_role("heading", name="Predicted Output").evaluate(
        "e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / f"labels-{labels}-output.png"), full_page=True)


def _sql(pieces: list[str]) -> list[str]:
    """The lines of ``pieces`` that hold SQL."""
    return [line for p in pieces for line in p.splitlines() if SQL_TEXT.search(line)]


def test_plain_labels_hover_and_workspace_show_no_sql(browser, studies) -> None:
    base, store = studies
    page = _practice_workspace(browser, base, store, "plain")
    try:
        tip = _hover_tip(page, "plain-hover")
        assert "Answers Yes to" in tip and "Should " in tip, tip
        assert "answer Yes/No to single questions" in page.evaluate(READ)[0]  # practice hint
        assert _sql([tip]) == [], tip
        read = page.evaluate(READ)
        assert "Predicted Query" in read[0] and len(read) > 20
        assert _sql(read) == [], _sql(read)[:5]
        page.mouse.move(2, 2)
        _shoot_output(page, "plain")
        page.locator('[data-testid="pq-decision-variable"] button[data-yes="1"]').first.click()
        page.get_by_text("1. Yes to").first.wait_for()
        _idle(page)
        tip = _hover_tip(page, "plain-after-yes")
        assert _sql([tip, *page.evaluate(READ)]) == []
        keys = page.evaluate("() => [...document.querySelectorAll('[data-key]')]"
                             ".map(b => b.dataset.key)")
        assert len(keys) > 4 and _sql(keys) == [], keys[:5]  # not even attributes hold SQL
        page.mouse.move(2, 2)  # a clause's Yes in the Predicted Query (its button's token)
        page.locator('[data-testid="pq-clauses"] button[data-event="clause"][data-yes="1"]'
                     ':not([disabled])').first.click()
        page.get_by_text("2. Yes to").first.wait_for()
    finally:
        page.context.close()


def test_both_labels_keep_sql_in_the_hover(browser, studies) -> None:
    base, store = studies
    page = _practice_workspace(browser, base, store, "both")
    try:
        tip = _hover_tip(page, "both-hover")
        assert "SELECT " in tip and _sql([tip]), tip
        assert any("Should " in p for p in page.evaluate(READ))  # and its questions in words
        page.mouse.move(2, 2)
        _shoot_output(page, "both")
    finally:
        page.context.close()
