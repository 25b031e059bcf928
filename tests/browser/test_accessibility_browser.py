"""Accessibility in real Chromium: axe-core on every participant page (consent → done) and the
workspace, keyboard reach with a visible focus, and the "contains / does not contain" encoding
read without colour (a greyscale-simulated screenshot).

axe-core comes from the npm registry (a devDependency in package.json, installed by the README's
test command with ``npm ci``) and is injected into each page by Playwright.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from benchmarks.paint import workspace_settled
from tests.browser.conftest import ARTIFACTS, server_env
from tests.harness import start
from tests.harness import stop as _stop
from tests.study_flow_fixtures import write_mini

pytestmark = pytest.mark.browser
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
if not AXE.is_file():
    pytest.skip(f"axe-core is not installed at {AXE}: run `npm ci` at the repository root",
                allow_module_level=True)
BLOCKING = ("serious", "critical")
GREY = "0.299 0.587 0.114 0 0  0.299 0.587 0.114 0 0  0.299 0.587 0.114 0 0  0 0 0 1 0"


def _idle(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    page.wait_for_timeout(300)


def _axe(page, name: str) -> list[dict]:
    """axe-core's serious and critical violations on the page as shown (its name in the
    artifacts); every violation is written to test-artifacts/axe-<name>.json."""
    _idle(page)
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']}))
        .violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                               nodes: v.nodes.map(n => n.target.join(' '))}))""")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"axe-{name}.json").write_text(json.dumps(found, indent=1))
    return [v for v in found if v["impact"] in BLOCKING]


def _new_page(browser):
    """A page of its own browser context (its own Streamlit session), lab-monitor sized."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(60_000)
    return page


def _open_workspace(page, url: str) -> None:
    """The free workspace with its chart drawn, its "painted" rerun over (the one the first
    paint asks for: it draws the next states and may replace controls a Tab walk counts) and
    the server idle."""
    page.goto(f"{url}/workspace")
    page.locator('[data-testid="pq-action-space"] .pq-glyph').first.wait_for()
    workspace_settled(page)
    _idle(page)


def _click(page, name: str) -> None:
    page.get_by_role("button", name=name).locator("visible=true").first.click()


def _answer(page, text: str) -> None:
    _idle(page)
    box = page.locator("textarea[aria-label^=Your] >> visible=true").first
    box.fill(text)
    box.press("Control+Enter")
    _idle(page)


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """A server on the one-task mini study (its own store), stopped after the module."""
    tmp = tmp_path_factory.mktemp("a11y")
    write_mini(tmp / "studies")
    srv = start("app.py", env=server_env(
        PLEASQLARIFY_DB_URL=f"sqlite:///{tmp / 'study.sqlite'}",
        PLEASQLARIFY_STUDIES_DIR=str(tmp / "studies"),
        PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio")), log=tmp, timeout=60)
    yield srv.url
    _stop(srv.proc)


WALK = (  # (text to answer first, button, text that shows the next page, its name to check)
    ("", "Continue", "Introduction", "introduction"),
    ("", "Continue to the practice task", "queries remain", "practice"),
    ("", "I feel comfortable: start the tasks", "Describe one interpretation.", "task-1"),
    ("the text of the review", "Continue to the next part", "queries remain", "task-2a"),
    ("two clusters", "Continue to the next part", "Explain the differences", "task-2b"),
    ("one selects the rating", "Continue to the next part", "queries remain", ""),
    ("", "Finish this task", "Submit a query in the workspace", "task-3-message"),
    ("", "Submit this query", "You submitted the query", "task-3"),
    ("", "Finish this task", "Your opinion", "end-questionnaire"),
)


def test_every_participant_page_and_the_workspace_pass_axe(browser, mini: str) -> None:
    page = _new_page(browser)
    problems: dict[str, list[dict]] = {}
    try:
        page.goto(f"{mini}/participant?study=mini")
        page.get_by_role("heading", name="Information and consent").wait_for()
        problems["consent"] = _axe(page, "consent")
        _click(page, "I agree")
        page.get_by_role("heading", name="About you").wait_for()
        page.get_by_text("self-described", exact=True).click()
        _idle(page)
        problems["about-you"] = _axe(page, "about-you")
        for choice in ("intermediate", "weekly"):
            page.get_by_text(choice, exact=True).first.click()
            _idle(page)
        for answer, button, shown, name in WALK:  # answer (if any), press, wait, check
            if answer:
                _answer(page, answer)
            _click(page, button)
            page.get_by_text(shown).first.wait_for()
            if name:
                problems[name] = _axe(page, name)
        page.get_by_test_id("stRadioGroup").get_by_text("6", exact=True).click()
        _idle(page)
        _click(page, "Continue")
        page.get_by_text("completion code").first.wait_for()
        problems["done"] = _axe(page, "done")
        page.goto(f"{mini}/workspace")
        page.get_by_text("queries remain").first.wait_for()
        problems["workspace"] = _axe(page, "workspace")
        page.goto(f"{mini}/participant")
        page.get_by_role("heading", name="Participant sessions").wait_for()
        problems["participant-index"] = _axe(page, "participant-index")
    finally:
        page.context.close()
    assert {k: v for k, v in problems.items() if v} == {}
    assert len(problems) == 13  # every page was checked


FOCUS = """() => { const e = document.activeElement; if (!e || e === document.body) return null;
  const cs = getComputedStyle(e);
  const ring = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 1)
               || (cs.boxShadow && cs.boxShadow !== 'none');
  if (!e.dataset.pqSeen) e.dataset.pqSeen = String(Math.random()).slice(2);
  return {id: e.dataset.pqSeen, ring, name: (e.getAttribute('aria-label') || e.innerText
          || e.getAttribute('placeholder') || e.tagName).trim().slice(0, 60)}; }"""
CONTROLS = """() => [...document.querySelectorAll(
    '[data-testid="stMain"] :is(button:not([disabled]), a[href], input, textarea)')]
  .filter(e => e.offsetParent !== null && e.closest('[data-testid="pq-next"]') === null
               && e.closest('details:not([open])') === null  // a closed expander's content
               && e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden'
               && e.type !== 'hidden' && e.tabIndex >= 0)
  .map(e => { if (!e.dataset.pqSeen) e.dataset.pqSeen = String(Math.random()).slice(2);
              return {id: e.dataset.pqSeen, name: (e.getAttribute('aria-label') || e.innerText
                      || e.title || e.outerHTML).trim().slice(0, 90)}; })"""


def test_every_workspace_control_is_reached_by_tab_with_a_visible_focus(browser,
                                                                         mini: str) -> None:
    page = _new_page(browser)
    try:
        _open_workspace(page, mini)
        controls = {c["id"]: c["name"] for c in page.evaluate(CONTROLS)}
        page.locator("body").focus()  # from the top: skip link, navigation, then the page
        reached: dict[str, dict] = {}
        for _ in range(len(controls) + 60):
            page.keyboard.press("Tab")
            now = page.evaluate(FOCUS)
            if now is not None:
                reached.setdefault(now["id"], now)
            if set(controls) <= set(reached):
                break
    finally:
        page.context.close()
    assert len(controls) >= 15  # question, Lasso/Box, clusters, Yes/No, clauses, output …
    missing = {controls[i] for i in set(controls) - set(reached)}
    assert not missing, f"not reachable with Tab: {sorted(missing)}"
    invisible = sorted(r["name"] for r in reached.values() if not r["ring"])
    assert not invisible, f"focused without a visible focus indicator: {invisible}"


MAIN_RING = """() => { const m = document.querySelector('[data-testid="stMain"]');
  const cs = getComputedStyle(m), before = getComputedStyle(m, '::before');
  return {focused: document.activeElement === m, visible: m.matches(':focus-visible'),
          ring: (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 1)
                || before.boxShadow !== 'none',  // Streamlit's own frame: an inset shadow
          top: document.querySelector('[data-testid="stMainBlockContainer"]')
                 .getBoundingClientRect().top}; }"""


def test_a_click_on_the_page_then_a_shortcut_draws_no_frame_around_it(browser,
                                                                        mini: str) -> None:
    """A click on the page's background focuses Streamlit's main region; the next key press
    (a workspace shortcut) made Chromium draw the focus outline around the whole page. Reached
    with Tab, the region keeps its outline."""
    page = _new_page(browser)
    try:
        _open_workspace(page, mini)
        mark = page.evaluate("""() => getComputedStyle(document.querySelector('#pq-focus-mark')
            .closest('[data-testid="stElementContainer"]')).display""")
        box = page.get_by_test_id("stMain").bounding_box()
        page.mouse.click(box["x"] + box["width"] - 8, box["y"] + 120)  # blank margin
        page.keyboard.press("ArrowDown")  # Next question: a shortcut, handled by the page
        _idle(page)
        after_click = page.evaluate(MAIN_RING)
        page.evaluate("() => document.body.focus()")
        reached = None
        for _ in range(80):  # Tab until the main region itself has the focus (if ever)
            page.keyboard.press("Tab")
            now = page.evaluate(MAIN_RING)
            if now["focused"]:
                reached = now
                break
    finally:
        page.context.close()
    assert mark == "none"  # the script's element takes no room on the page
    assert after_click["focused"] and after_click["visible"]  # the situation of the frame
    assert not after_click["ring"]
    assert reached is None or reached["ring"]


CELL_SQUARE = """(tone) => {
  // a 14 px square fully inside one cell of this tone, in page coordinates (or null)
  const svg = document.querySelector('[data-testid="pq-action-space"] svg');
  const ctm = svg.getScreenCTM();
  for (const cell of svg.querySelectorAll(`.pq-cell[data-tone="${tone}"]`)) {
    const b = cell.getBBox();
    for (let x = b.x + 2; x < b.x + b.width - 16; x += 4) {
      for (let y = b.y + 2; y < b.y + b.height - 16; y += 4) {
        const corners = [[x, y], [x + 14, y], [x, y + 14], [x + 14, y + 14], [x + 7, y + 7]];
        const inside = corners.every(([cx, cy]) => {
          const p = svg.createSVGPoint(); p.x = cx; p.y = cy;
          if (!cell.isPointInFill(p)) return false;
          const q = p.matrixTransform(ctm);
          const hit = document.elementFromPoint(q.x, q.y);
          return hit && !hit.closest('.pq-glyph') && !hit.closest('.pq-label')
                 && !hit.closest('.pq-tools');
        });
        if (inside) { const p = svg.createSVGPoint(); p.x = x; p.y = y;
                      const q = p.matrixTransform(ctm); return {x: q.x, y: q.y}; }
      }
    }
  }
  return null; }"""


def test_contains_and_does_not_contain_differ_without_colour(browser, mini: str) -> None:
    """Under a greyscale filter (no hue at all), a 'contains' cell is striped and a 'does not
    contain' cell plain: the pixel spread inside one is far above the other's."""
    from PIL import Image

    page = _new_page(browser)
    try:
        _open_workspace(page, mini)
        chart = page.locator('[data-testid="pq-action-space"]')
        assert chart.locator(".pq-hatch").count() == chart.locator(
            '.pq-cell[data-tone="red"]').count() > 0
        assert chart.locator(".pq-contains").count() > 0
        page.evaluate("""(m) => { const s = document.createElementNS(
            'http://www.w3.org/2000/svg', 'svg'); s.setAttribute('style', 'position:absolute');
            s.innerHTML = `<filter id="pq-grey"><feColorMatrix type="matrix" values="${m}"/>`
                          + '</filter>';
            document.body.appendChild(s);
            document.documentElement.style.filter = 'url(#pq-grey)'; }""", GREY)
        page.wait_for_timeout(300)
        box = chart.bounding_box()
        shot = page.screenshot(clip={"x": box["x"], "y": box["y"], "width": box["width"],
                                     "height": box["height"]})
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "a11y-greyscale-action-space.png").write_bytes(shot)
        spread = {}
        for tone in ("red", "blue"):
            at = page.evaluate(CELL_SQUARE, tone)
            assert at is not None, f"no glyph-free square inside a {tone} cell"
            square = Image.open(io.BytesIO(page.screenshot(
                clip={"x": at["x"], "y": at["y"], "width": 14, "height": 14}))).convert("L")
            values = list(square.tobytes())  # one byte per pixel ("L")
            mean = sum(values) / len(values)
            spread[tone] = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    finally:
        page.context.close()
    assert spread["red"] > 4 * max(spread["blue"], 1.0), spread
