"""Real Chromium against `streamlit run app.py`: lasso, click, Yes/No/Back by mouse and keyboard.

The Action Space is a mounted component: a click on a glyph selects it, and the chart is the
same DOM node before and after a decision (its SVG layers redrawn in place).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from core.engine.display import sql_value
from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.taskbank import load_task_bank
from tests.browser.conftest import ARTIFACTS
from ui.bank_cache import bank_path
from ui.state import default_session

pytestmark = pytest.mark.browser
COUNT = re.compile(r"(\d+) of (\d+) queries remain")


@pytest.fixture(scope="module")
def pool():
    """The pool the app shows first (first task of the built-in bank), read as the app reads it."""
    tasks, _ = load_task_bank(bank_path(), lenient=True)
    return load_prepared(tasks[0], default_pool_dir(bank_path()))


def _key(pool, name: str) -> str:
    """A Streamlit button of the workspace; "dv-yes" / "dv-no" are the Decision Space panel's."""
    if name in ("dv-yes", "dv-no"):
        return ('[data-testid="pq-decision-variable"] button[data-event="answer"]'
                f'[data-yes="{int(name == "dv-yes")}"]')
    return f".st-key-pleasqlarify-{pool.task_id}-{name} button"


def _click(page, selector: str) -> None:
    """Click the visible copy of a keyed button (Streamlit keeps a hidden one for measuring)."""
    page.locator(f"{selector} >> visible=true").first.click()


def _press(page, pool, key: str, button: str) -> None:
    """Press a shortcut once its button has re-rendered enabled (the count can show earlier)."""
    from playwright.sync_api import expect

    expect(page.locator(f"{_key(pool, button)} >> visible=true").first).to_be_enabled()
    # every copy: Streamlit renders a hidden one for measuring, and its shortcut handler may be
    # the one registered; a press while that copy is still disabled is dropped (seen once on CI)
    page.wait_for_function("s => [...document.querySelectorAll(s)].every(b => !b.disabled)",
                           arg=_key(pool, button))
    page.keyboard.press(key)


def _open(page, server: str) -> None:
    page.goto(f"{server}/workspace")
    page.get_by_text("queries remain").wait_for(timeout=120_000)  # a fresh server imports first
    page.locator('[data-testid="pq-action-space"][data-revision] .pq-plot').first.wait_for()


def _count(page) -> int:
    text = page.locator('[data-testid="pq-survivors"]').inner_text()
    return int(COUNT.search(text + " queries remain").group(1)) if "of" in text else -1


def _wait_count(page, n: int) -> None:
    """Wait until the line over the chart says ``n`` queries remain; if it never does, fail
    with what the page shows (the line, the decisions taken, the press hub's state)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            """n => { const e = document.querySelector('[data-testid="pq-survivors"]');
                     return e && e.innerText.trim().startsWith(n + ' of'); }""", arg=n)
    except PlaywrightTimeout:
        shown = page.evaluate("""() => {
            const text = (s) => { const e = document.querySelector(s);
                                  return e ? e.innerText : null; };
            const h = window.__pqHub || {};
            return { survivors: text('[data-testid="pq-survivors"]'),
                     clauses: text('[data-testid="pq-clauses"]'),
                     question: text('[data-testid="pq-decision-variable"]'),
                     ack: Object.assign({}, (document.querySelector(
                         '[data-testid="pq-ack"]') || {}).dataset),
                     hub: { pending: Boolean(h.pending), queue: h.queue, order: h.order,
                            applied: h.applied } }; }""")
        raise AssertionError(f"expected {n} queries to remain; the page shows {shown}") from None


def _lasso_region(pool) -> tuple[float, float, float, float]:
    """A rectangle (data coords) holding some but not all candidates, with clear margins."""
    pos = pool.positions
    xs = np.sort(pos[:, 0])
    gaps = np.diff(xs)
    k = int(np.argmax(gaps * (np.arange(len(gaps)) > 0) * (np.arange(len(gaps)) < len(gaps) - 1)))
    split = float((xs[k] + xs[k + 1]) / 2)
    left = int((pos[:, 0] < split).sum())
    if left <= len(xs) - left:
        return 0.005, 0.005, split, 0.995
    return split, 0.005, 0.995, 0.995


def test_real_lasso_keeps_exactly_the_lassoed_glyphs(page, server: str, pool) -> None:
    _open(page, server)
    assert _count(page) == pool.n
    x0, y0, x1, y1 = _lasso_region(pool)
    inside = np.flatnonzero((pool.positions[:, 0] > x0) & (pool.positions[:, 0] < x1)
                            & (pool.positions[:, 1] > y0) & (pool.positions[:, 1] < y1))
    assert 0 < len(inside) < pool.n
    box = page.locator('[data-testid="pq-action-space"] .pq-plot').first.bounding_box()

    def px(x: float, y: float) -> tuple[float, float]:
        return box["x"] + x * box["width"], box["y"] + (1 - y) * box["height"]

    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
    page.mouse.move(*px(*corners[0]))
    page.mouse.down()
    for (ax, ay), (bx, by) in zip(corners, corners[1:], strict=False):
        for t in np.linspace(0, 1, 8)[1:]:
            page.mouse.move(*px(ax + t * (bx - ax), ay + t * (by - ay)))
    page.mouse.up()
    _wait_count(page, len(inside))
    assert _count(page) == len(inside)
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def test_yes_no_back_buttons(page, server: str, pool) -> None:
    session = default_session(pool)
    first = session.next_variable()
    _open(page, server)
    _click(page, _key(pool, "dv-yes"))
    _wait_count(page, first.yes_count)
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)
    _click(page, _key(pool, "dv-no"))
    _wait_count(page, first.no_count)
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def test_keyboard_yes_no_back_and_browse(page, server: str, pool) -> None:
    session = default_session(pool)
    ranked = session.variables()
    _open(page, server)
    page.locator("h3", has_text="Decision Space").click()  # focus the page, not an input
    _press(page, pool, "y", "dv-yes")
    _wait_count(page, ranked[0].yes_count)
    _press(page, pool, "b", "dv-back")
    _wait_count(page, pool.n)
    _press(page, pool, "ArrowDown", "dv-down")
    page.get_by_text(re.compile(r"Variable 2 of")).wait_for()
    _press(page, pool, "n", "dv-no")
    _wait_count(page, ranked[1].no_count)
    _press(page, pool, "b", "dv-back")
    _wait_count(page, pool.n)


def test_finished_view_screenshot(page, server: str, pool) -> None:
    session = default_session(pool)
    _open(page, server)
    for _ in range(10):
        if session.is_done or session.next_variable() is None:
            break
        session.answer(session.next_variable().keys, True)
        _click(page, _key(pool, "dv-yes"))
        _wait_count(page, len(session.survivors))
    page.get_by_text("Every remaining query returns the same output").wait_for()
    page.wait_for_function(  # the rerun has finished: no running indicator, no stale copy
        """() => !document.querySelector('[data-testid="stStatusWidget"] button')
                 && document.querySelector('[data-testid="pq-survivors"]').innerText
                    .startsWith('""" + str(len(session.survivors)) + """ of')""")
    page.wait_for_timeout(800)  # let the layout settle
    path = ARTIFACTS / "workspace-done.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


def _revision(page) -> str:
    return page.locator('[data-testid="pq-action-space"]').get_attribute("data-revision") or ""


def test_click_on_a_glyph_keeps_exactly_that_query(page, server: str, pool) -> None:
    _open(page, server)
    assert _count(page) == pool.n
    valid = np.flatnonzero(pool.valid)
    pos = pool.positions[valid]
    gaps = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(len(pos)) * 9
    cid = int(valid[int(np.argmax(gaps.min(axis=1)))])  # the most isolated valid glyph
    box = page.locator('[data-testid="pq-action-space"] .pq-plot').first.bounding_box()
    x, y = pool.positions[cid]
    page.mouse.move(box["x"] + x * box["width"], box["y"] + (1 - y) * box["height"])
    page.wait_for_timeout(200)
    page.mouse.click(box["x"] + x * box["width"], box["y"] + (1 - y) * box["height"])
    _wait_count(page, 1)
    page.get_by_text("Click: kept 1 query").wait_for()
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def test_chart_stays_the_same_dom_node_across_a_yes(page, server: str, pool) -> None:
    first = default_session(pool).next_variable()
    _open(page, server)
    page.wait_for_function("""() => { const e = document.querySelector(
        '[data-testid="pq-action-space"]'); return e && e.dataset.revision; }""")
    before = _revision(page)
    page.evaluate("""() => { window.__pqChart = document.querySelector(
        '[data-testid="pq-action-space"]'); window.__pqChart.__pqMark = 'before-yes'; }""")
    _click(page, _key(pool, "dv-yes"))
    _wait_count(page, first.yes_count)
    page.wait_for_function("b => document.querySelector('[data-testid=\"pq-action-space\"]')"
                           ".dataset.revision !== b", arg=before)
    same = page.evaluate("""() => { const now = document.querySelector(
        '[data-testid="pq-action-space"]');
        return now === window.__pqChart && now.isConnected && now.__pqMark === 'before-yes'; }""")
    assert same, "the Action Space chart was remounted by the rerun"
    assert page.locator('[data-testid="pq-action-space"]').count() == 1
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def test_a_rerun_with_the_same_figure_leaves_the_chart_undrawn(page, server: str, pool) -> None:
    """Showing all clauses reruns the panels with the same spec: the chart is not redrawn
    (Streamlit does not hand an unchanged component its data again); a Yes, as a control, is."""
    first = default_session(pool).next_variable()
    _open(page, server)
    draws = """() => Number(document.querySelector('[data-testid="pq-action-space"]')
                                  .dataset.draws || 0)"""
    before = page.evaluate(draws)
    assert before >= 1
    page.locator('[data-testid="pq-clauses"] button[data-event="all"]').click()
    page.get_by_text("Show only the most likely clauses").wait_for()
    page.wait_for_timeout(500)  # a redraw would have come with the panel's update
    assert page.evaluate(draws) == before
    _click(page, _key(pool, "dv-yes"))
    _wait_count(page, first.yes_count)
    page.wait_for_function(f"() => ({draws})() > {before}")
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def test_the_chart_draws_table_glyphs_cells_and_a_tooltip_without_a_chart_library(
        page, server: str, pool) -> None:
    """SVG layers from the spec: one glyph per candidate, cells, cluster labels; hovering a
    glyph shows its tooltip (query id, clauses, output preview); no Plotly.js is loaded."""
    _open(page, server)
    chart = page.locator('[data-testid="pq-action-space"]')
    assert chart.locator(".pq-glyph").count() == pool.n
    assert chart.locator(".pq-cell").count() >= 1 and chart.locator(".pq-label").count() >= 1
    valid = np.flatnonzero(pool.valid)
    pos = pool.positions[valid]
    gaps = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(len(pos)) * 9
    cid = int(valid[int(np.argmax(gaps.min(axis=1)))])
    box = chart.locator(".pq-plot").first.bounding_box()
    x, y = pool.positions[cid]
    page.mouse.move(box["x"] + x * box["width"], box["y"] + (1 - y) * box["height"])
    tip = chart.locator(".pq-tip")
    tip.wait_for(state="visible")
    first = pool.vocabulary[int(np.flatnonzero(pool.x[cid])[0])]  # the hovered glyph's clause
    assert f"{first.keyword} {sql_value(first)}" in tip.inner_text()
    assert pool.results[cid].columns[0] in tip.inner_text()
    page.mouse.move(box["x"] - 40, box["y"] - 40)
    tip.wait_for(state="hidden")
    assert page.evaluate("() => typeof window.Plotly") == "undefined"
    chart.locator('.pq-tools button[data-mode="select"]').click()
    assert chart.locator('.pq-tools button[aria-pressed="true"]').inner_text() == "Box"
    x0, y0, x1, y1 = _lasso_region(pool)  # a box drag keeps exactly the glyphs inside it
    inside = np.flatnonzero((pool.positions[:, 0] > x0) & (pool.positions[:, 0] < x1)
                            & (pool.positions[:, 1] > y0) & (pool.positions[:, 1] < y1))
    page.mouse.move(box["x"] + x0 * box["width"], box["y"] + (1 - y0) * box["height"])
    page.mouse.down()
    for t in np.linspace(0, 1, 6)[1:]:
        page.mouse.move(box["x"] + (x0 + t * (x1 - x0)) * box["width"],
                        box["y"] + (1 - (y0 + t * (y1 - y0))) * box["height"])
    page.mouse.up()
    _wait_count(page, len(inside))
    page.get_by_text(f"Box: kept {len(inside)} quer").wait_for()
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def _open_clause(pool) -> tuple[str, int]:
    """The likeliest open clause of the first view and how many candidates contain it."""
    session = default_session(pool)
    belief = max((b for b in session.predicted_query() if not b.determined),
                 key=lambda b: b.probability)
    col = [f.key for f in pool.vocabulary].index(belief.feature.key)
    return belief.feature.key, int(pool.x[:, col].sum())


def test_clause_yes_in_the_clause_panel_keeps_the_queries_with_it(page, server: str,
                                                                   pool) -> None:
    key, with_it = _open_clause(pool)
    _open(page, server)
    panel = page.locator('[data-testid="pq-clauses"]')
    yes = panel.get_by_role("button", name=f"Yes: Keep queries with {key}", exact=True)
    assert yes.evaluate("b => b.tagName") == "BUTTON"
    yes.click()
    _wait_count(page, with_it)
    page.get_by_text(re.compile(r"Yes to")).first.wait_for()
    assert panel.get_by_role("button", name=f"Yes: Keep queries with {key}",
                             exact=True).count() == 0  # determined now
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def test_clause_no_by_keyboard_with_a_visible_focus(page, server: str, pool) -> None:
    key, with_it = _open_clause(pool)
    _open(page, server)
    no = page.locator('[data-testid="pq-clauses"]').get_by_role(
        "button", name=f"No: Remove queries with {key}", exact=True)
    no.focus()
    page.keyboard.press("Shift+Tab")  # keyboard focus (not a click): :focus-visible applies
    page.keyboard.press("Tab")
    outline = no.evaluate("b => b === document.activeElement && b.matches(':focus-visible')"
                          " && getComputedStyle(b).outlineStyle")
    assert outline == "solid"
    page.keyboard.press("Enter")
    _wait_count(page, pool.n - with_it)
    page.screenshot(path=str(ARTIFACTS / "workspace-clause-no.png"), full_page=True)
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def test_the_sql_of_the_predicted_query_is_shown_and_copied(page, server: str, pool) -> None:
    """The expander's SQL block is the candidate's SQL as text; Copy puts it on the clipboard."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    _open(page, server)
    chosen = default_session(pool).best_candidate()
    page.get_by_text("SQL of the predicted query").click()  # no internal id in the label
    block = page.get_by_test_id("pq-sql")
    block.locator("pre").wait_for()
    assert block.locator("pre").inner_text().strip() == pool.sqls[chosen].strip()
    block.get_by_role("button", name="Copy").click()
    block.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("() => navigator.clipboard.readText()").strip() == \
        pool.sqls[chosen].strip()


PANELS_JS = """() => {
    const html = (id) => { const e = document.querySelector(`[data-testid="${id}"]`);
                           return e ? e.innerHTML : null; };
    const chart = document.querySelector('[data-testid="pq-action-space"]');
    return { dv: html("pq-decision-variable"), pq: html("pq-clauses"), out: html("pq-output"),
             summary: html("pq-survivors"), draws: Number(chart.dataset.draws || 0),
             revision: chart.dataset.revision,
             ack: document.querySelector('[data-testid="pq-ack"]').dataset.ack,
             pending: window.__pqHub && window.__pqHub.pending ? window.__pqHub.pending.seq
                      : null }; }"""


def _confirmed(page, ack: str) -> None:
    """Wait until the server has taken the answer after ``ack`` and its rerun is over."""
    page.wait_for_function(
        """a => document.querySelector('[data-testid="pq-ack"]').dataset.ack !== a
               && !document.querySelector('[data-testid="stStatusWidget"]')""", arg=ack)
    page.wait_for_timeout(300)


def _hold_server_messages(page) -> dict:
    """Route the app's WebSocket through the test: while ``held["on"]``, what the server sends
    waits in ``held["queue"]`` (``release`` sends it on)."""
    held: dict = {"on": False, "queue": [], "ws": None}

    def route(ws) -> None:
        server = ws.connect_to_server()
        held["ws"] = ws

        def down(message) -> None:
            if held["on"]:
                held["queue"].append(message)
            else:
                ws.send(message)
        server.on_message(down)
        ws.on_message(lambda message: server.send(message))
    page.route_web_socket(re.compile(r".*/_stcore/stream$"), route)

    def release() -> None:
        held["on"] = False
        while held["queue"]:
            held["ws"].send(held["queue"].pop(0))
    held["release"] = release
    return held


def test_a_yes_is_drawn_while_the_server_says_nothing_and_its_rerun_redraws_nothing(
        page, server: str, pool) -> None:
    """With every server message held back, a Yes already shows its state in every panel; once
    they arrive the answer is acknowledged (not timed out) and nothing changes or redraws."""
    first = default_session(pool).next_variable()
    held = _hold_server_messages(page)
    _open(page, server)
    # the first render carries no next states: they follow its "painted" rerun
    page.locator('[data-testid="pq-next"][data-speculated]').wait_for(state="attached")
    page.wait_for_timeout(500)
    before = page.evaluate(PANELS_JS)
    held["on"] = True
    _click(page, _key(pool, "dv-yes"))
    _wait_count(page, first.yes_count)  # drawn with no word from the server
    early = page.evaluate(PANELS_JS)
    assert early["pending"] is not None and early["ack"] == before["ack"]
    assert early["dv"] != before["dv"] and early["pq"] != before["pq"]
    assert early["draws"] == before["draws"] + 1
    held["release"]()
    _confirmed(page, before["ack"])
    after = page.evaluate(PANELS_JS)
    assert after["pending"] is None  # settled by the server's acknowledgement
    for part in ("dv", "pq", "out", "summary", "revision", "draws"):
        assert early[part] == after[part], f"the rerun changed the speculated {part}"
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def _pressed_quickly(page, server: str, keys: str, release: bool = True) -> dict:
    """Open the workspace and press ``keys`` faster than any server round (messages held;
    still held after, without ``release``)."""
    held = _hold_server_messages(page)
    _open(page, server)
    # the first render carries no next states: they follow its "painted" rerun
    page.locator('[data-testid="pq-next"][data-speculated]').wait_for(state="attached")
    page.wait_for_timeout(500)
    page.locator("h3", has_text="Decision Space").click()  # focus the page, not an input
    # the server idle (the painted rerun over): the presses below outrun its answers, not a
    # run it was still busy with
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
    held["on"] = True
    for key in keys:
        page.keyboard.press(key)
    if release:
        held["release"]()
    return held


def test_quick_answers_are_applied_one_after_the_other(page, server: str, pool) -> None:
    """y, n, y pressed before the server has answered any: each counts for the variable shown
    after the one before, as if pressed slowly."""
    session = default_session(pool)
    for yes in (True, False, True):
        session.answer(session.next_variable().keys, yes)
    _pressed_quickly(page, server, "yny")
    clauses = page.get_by_test_id("pq-clauses")
    clauses.get_by_text(re.compile(r"^3\. Yes to")).wait_for()
    _confirmed(page, "")
    page.wait_for_function("() => !window.__pqHub.pending && !window.__pqHub.queue.length")
    assert _count(page) == len(session.survivors)
    assert clauses.get_by_text(re.compile(r"^4\.")).count() == 0
    for _ in range(3):
        _click(page, _key(pool, "dv-back"))
        page.wait_for_timeout(300)
    _wait_count(page, pool.n)


def test_a_quick_back_is_kept_in_order_behind_the_answers(page, server: str, pool) -> None:
    """y, n, b before the server has answered: Back takes back the No, not something else."""
    session = default_session(pool)
    session.answer(session.next_variable().keys, True)
    after_yes = len(session.survivors)
    _pressed_quickly(page, server, "ynb")
    page.wait_for_function("() => !window.__pqHub.pending && !window.__pqHub.queue.length"
                           " && !window.__pqHub.busy")
    _confirmed(page, "")
    _wait_count(page, after_yes)
    clauses = page.get_by_test_id("pq-clauses")
    clauses.get_by_text(re.compile(r"^1\. Yes to")).wait_for()
    assert clauses.get_by_text(re.compile(r"^2\.")).count() == 0
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)


def test_a_click_elsewhere_drops_the_queued_presses_and_typing_answers_nothing(
        page, server: str, pool) -> None:
    """y, then n while the Yes is on its way, then a clause's Yes clicked: the n is dropped
    (it no longer follows what was on the screen) and the clause counts; a y typed into the
    question answers nothing."""
    first = default_session(pool).next_variable()
    held = _pressed_quickly(page, server, "yn", release=False)
    _wait_count(page, first.yes_count)  # the Yes's state is on the screen: its clauses too
    # one element, read and clicked (a locator is resolved again at the click: had the panel
    # been redrawn in between, the click would land on another clause than the one read)
    clause = page.locator('[data-testid="pq-clauses"] button[data-event="clause"]'
                          '[data-yes="1"]:not(:disabled)').first.element_handle()
    key = clause.get_attribute("data-key")
    clause.click()
    assert page.evaluate("() => window.__pqHub.queue.length") == 0  # the n is dropped
    held["release"]()
    page.wait_for_function("() => !window.__pqHub.pending && !window.__pqHub.queue.length")
    _confirmed(page, "")
    session = default_session(pool)
    session.answer(session.next_variable().keys, True)
    session.answer((key,), True)
    _wait_count(page, len(session.survivors))
    clauses = page.get_by_test_id("pq-clauses")
    clauses.get_by_text(re.compile(r"^2\. Yes to")).wait_for()
    assert clauses.get_by_text(re.compile(r"^3\.")).count() == 0
    assert clauses.get_by_text(re.compile(r"No to")).count() == 0
    seq = page.evaluate("() => window.__pqHub.seq")
    page.get_by_label("Question").click()
    page.keyboard.press("y")
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__pqHub.seq") == seq
    assert _count(page) == len(session.survivors)
    page.keyboard.press("Backspace")  # the question as it was, so leaving it changes nothing
    page.locator("h3", has_text="Decision Space").click()
    session.undo()
    for survivors in (len(session.survivors), pool.n):
        # the count shows before the Back's rerun is over; click the next Back once it is:
        # Streamlit delivers two clicks of one button that reach it during one busy run as one
        # trigger (a button's trigger is a flag), so the second Back would be one Back
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
        _click(page, _key(pool, "dv-back"))
        _wait_count(page, survivors)


def _glyph_px(page) -> dict[int, tuple[float, float]]:
    """Each drawn glyph's centre in page px (from its transform), by candidate id."""
    return {int(k): tuple(v) for k, v in page.evaluate("""() => Object.fromEntries(
        [...document.querySelectorAll('[data-testid="pq-action-space"] .pq-glyph')].map(g => {
            const r = g.querySelector('.pq-hit').getBoundingClientRect();
            return [g.dataset.id, [r.x + r.width / 2, r.y + r.height / 2]]; }))""").items()}


def test_wheel_zoom_pan_reset_and_a_lasso_in_the_zoomed_view(page, server: str, pool) -> None:
    """The wheel zooms at the pointer (the point under it stays), Pan drags the view, Reset
    returns to the whole space, and a lasso in a zoomed view keeps what it encloses there."""
    _open(page, server)
    chart = page.locator('[data-testid="pq-action-space"]')
    reset = chart.locator('.pq-tools button[data-action="reset"]')
    assert reset.is_disabled()
    box = chart.locator(".pq-plot").first.bounding_box()
    before = _glyph_px(page)
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.wheel(0, -400)  # zoom in at the centre: exp(0.8) ≈ 2.2×
    page.wait_for_function("() => Number(document.querySelector("
                           "'[data-testid=\"pq-action-space\"]').dataset.zoom) > 2")
    zoom = float(chart.get_attribute("data-zoom"))
    after = _glyph_px(page)
    a, b = sorted(before)[:2]
    d0 = np.hypot(before[a][0] - before[b][0], before[a][1] - before[b][1])
    d1 = np.hypot(after[a][0] - after[b][0], after[a][1] - after[b][1])
    assert d1 == pytest.approx(zoom * d0, rel=0.02)  # distances scale with the zoom
    for cid in before:  # the centre stays where it was: offsets from it scale too
        assert after[cid][0] - cx == pytest.approx(zoom * (before[cid][0] - cx), abs=1.0)
    assert reset.is_enabled()

    chart.locator('.pq-tools button[data-mode="pan"]').click()
    page.mouse.move(cx, cy)
    page.mouse.down()
    for t in np.linspace(0, 1, 6)[1:]:
        page.mouse.move(cx + 60 * t, cy + 30 * t)
    page.mouse.up()
    panned = _glyph_px(page)
    assert _count(page) == pool.n  # panning selects nothing
    moved = [(panned[c][0] - after[c][0], panned[c][1] - after[c][1]) for c in after]
    assert all(dx == pytest.approx(60, abs=1.5) and dy == pytest.approx(30, abs=1.5)
               for dx, dy in moved)

    chart.locator('.pq-tools button[data-mode="select"]').click()
    x0, x1 = box["x"] + 0.3 * box["width"], box["x"] + 0.7 * box["width"]
    y0, y1 = box["y"] + 0.3 * box["height"], box["y"] + 0.7 * box["height"]
    inside = sorted(c for c, (x, y) in panned.items() if x0 < x < x1 and y0 < y < y1)
    assert 0 < len(inside) < pool.n
    page.mouse.move(x0, y0)
    page.mouse.down()
    for t in np.linspace(0, 1, 6)[1:]:
        page.mouse.move(x0 + t * (x1 - x0), y0 + t * (y1 - y0))
    page.mouse.up()
    _wait_count(page, len(inside))
    _click(page, _key(pool, "dv-back"))
    _wait_count(page, pool.n)

    reset.click()
    page.wait_for_function("() => document.querySelector("
                           "'[data-testid=\"pq-action-space\"]').dataset.zoom === '1'")
    back = _glyph_px(page)
    assert all(back[c] == pytest.approx(before[c], abs=0.5) for c in before)
    assert reset.is_disabled()


def test_the_chart_downloads_as_svg_and_png(page, server: str, pool, tmp_path) -> None:
    """SVG: a standalone document with every glyph and its colours inlined; PNG: an image of
    twice the chart's size."""
    import struct
    import xml.etree.ElementTree as ET

    _open(page, server)
    chart = page.locator('[data-testid="pq-action-space"]')
    with page.expect_download() as got:
        chart.locator('.pq-tools button[data-action="svg"]').click()
    svg_path = tmp_path / got.value.suggested_filename
    got.value.save_as(svg_path)
    assert svg_path.name == f"action-space-{pool.task_id}.svg"
    root = ET.parse(svg_path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    glyphs = [g for g in root.iter(f"{ns}g") if g.get("class") == "pq-glyph"]
    assert len(glyphs) == pool.n
    bodies = [r for r in root.iter(f"{ns}rect") if r.get("class") == "pq-body"]
    assert bodies and all("fill:rgb(" in r.get("style", "") for r in bodies)
    assert not [r for r in root.iter(f"{ns}rect") if r.get("class") == "pq-hit"]
    width = float(root.get("width"))

    with page.expect_download() as got:
        chart.locator('.pq-tools button[data-action="png"]').click()
    png = (tmp_path / "chart.png")
    got.value.save_as(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    assert w == pytest.approx(2 * width, abs=2) and h > 400


def test_the_components_modules_are_fetched_once_before_the_chart_needs_them(
        page, server: str) -> None:
    """The page asks for the chart's and panels' modules at its start (issue 24: the first
    paint waited for the first chart to render, then for its logic.js), each is fetched once,
    and the elements doing it (with the hidden panel that loads Streamlit's component chunks
    first) take no room."""
    _open(page, server)
    got = page.evaluate("""() => ({
      links: [...document.querySelectorAll('link[rel=modulepreload]')]
        .map(l => new URL(l.href).pathname).filter(p => p.includes('bidi-components')).sort(),
      fetched: performance.getEntriesByType('resource').map(r => new URL(r.name).pathname)
        .filter(p => p.includes('bidi-components') && p.endsWith('.js')),
      hidden: [...document.querySelectorAll('[data-testid="stElementContainer"]')]
        .filter(e => e.querySelector('#pq-preload'))
        .map(e => getComputedStyle(e).display),
      bridge: [...document.querySelectorAll('.st-key-pleasqlarify_preload')]
        .map(e => [getComputedStyle(e).display, !!e.querySelector('[data-testid="pq-preload-bridge"]')]),
    })""")
    want = sorted(f"/_stcore/bidi-components/pleasqlarify.{c}/{f}"
                  for c in ("action_space", "clauses") for f in (f"{c}.js", "logic.js"))
    assert got["links"] == want
    assert sorted(got["fetched"]) == want  # once each: the components reuse the preloaded ones
    assert got["hidden"] == ["none"]
    assert got["bridge"] == [["none", True]]  # mounted (its chunks loaded), not shown
    assert page.locator("#pq-preload").bounding_box() is None


LABEL_OVERLAPS = """() => {
  const bar = document.querySelector('[data-testid="pq-action-space"] .pq-tools')
    .getBoundingClientRect();
  return [...document.querySelectorAll('[data-testid="pq-action-space"] .pq-label')]
    .map(l => [l.textContent, l.getBoundingClientRect()])
    .filter(([, r]) => r.right > bar.left && r.left < bar.right && r.bottom > bar.top
                       && r.top < bar.bottom)
    .map(([t]) => t); }"""


def test_no_cluster_number_is_drawn_under_the_toolbar(page, server: str) -> None:
    """The script and editor task's cluster 8 sits just under the chart's top edge: its
    number, drawn 30 px above its glyphs, was hidden under Lasso / Box / Pan / Reset."""
    _open(page, server)
    page.get_by_role("combobox", name="Task").locator("visible=true").first.click()
    page.get_by_role("option", name="Scripts and editors due 21.04.03").click()
    page.wait_for_function(
        """() => document.querySelectorAll('[data-testid="pq-action-space"] .pq-label')
                   .length === 8""", timeout=60_000)
    labels = page.evaluate("""() => [...document.querySelectorAll(
        '[data-testid="pq-action-space"] .pq-label')].map(l => l.textContent)""")
    assert sorted(labels, key=int) == [str(k) for k in range(1, 9)]
    # the toolbar in its corner (the component's CSS applied), then two frames for the
    # ResizeObserver that places the numbers again
    page.wait_for_function("""() => getComputedStyle(document.querySelector(
        '[data-testid="pq-action-space"] .pq-tools')).position === 'absolute'""")
    page.evaluate("""() => new Promise(done => requestAnimationFrame(
        () => requestAnimationFrame(done)))""")
    assert page.evaluate(LABEL_OVERLAPS) == []


LABELS_OVERLAPPING = """() => {
  const boxes = [...document.querySelectorAll('[data-testid="pq-action-space"] .pq-label')]
    .map(l => [l.textContent, l.getBoundingClientRect()]);
  const out = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, r] = boxes[i], [b, s] = boxes[j];
      if (r.right > s.left && r.left < s.right && r.bottom > s.top && r.top < s.bottom) {
        out.push(a + "/" + b);
      }
    }
  }
  return out; }"""


def test_cluster_numbers_do_not_overlap_after_a_repair(page, server: str) -> None:
    """After None of these on the Pulp Fiction task the repaired clusters crowd together,
    and their numbers were drawn over each other ("4" and "7" read as "47")."""
    _open(page, server)
    page.get_by_role("combobox", name="Task").locator("visible=true").first.click()
    page.get_by_role("option", name="Review of Pulp Fiction").click()
    page.wait_for_function("""() => document.querySelector('[data-testid="pq-survivors"]')
                              ?.innerText.includes('of 41 ')""", timeout=60_000)
    _click(page, ".st-key-pleasqlarify-film-pulp-review-po-none button")
    page.locator('[data-testid="pq-action-space"] .pq-new').first.wait_for(timeout=120_000)
    page.wait_for_function("""() => getComputedStyle(document.querySelector(
        '[data-testid="pq-action-space"] .pq-tools')).position === 'absolute'""")
    page.evaluate("""() => new Promise(done => requestAnimationFrame(
        () => requestAnimationFrame(done)))""")
    assert page.locator('[data-testid="pq-action-space"] .pq-label').count() >= 6
    assert page.evaluate(LABELS_OVERLAPPING) == []
    assert page.evaluate(LABEL_OVERLAPS) == []
