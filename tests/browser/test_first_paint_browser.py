"""Issue 24 in Chromium: under ``asgi.py`` (what ``python -m study.serve`` runs) a new session's
first load of a page asks the server once where it is: no probe of
``/workspace/_stcore/health`` (a 404, then a 100 ms wait before ``/_stcore/health``), the
page shell (ui.shell) having told the frontend the base address; the page works as before. The
workspace's lazy chunks and component modules are asked for once the WebSocket has opened, each
once."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest

from benchmarks.paint import workspace_ready, workspace_settled
from tests.browser.conftest import ARTIFACTS, server_env
from tests.harness import running

pytestmark = pytest.mark.browser


def test_a_workspace_load_probes_the_server_once_at_its_root(browser, tmp_path) -> None:
    env = server_env(PLEASQLARIFY_DB_URL=f"sqlite:///{tmp_path / 'study.sqlite'}",
                     PLEASQLARIFY_STUDIES_DIR=str(tmp_path / "studies"))
    with running("asgi.py", env=env, log=ARTIFACTS / "streamlit-first-paint.log",
                 timeout=120) as srv:
        context = browser.new_context(viewport={"width": 1600, "height": 1100})
        page = context.new_page()
        page.set_default_timeout(120_000)
        events: list[str] = []  # request paths, and "WS" where the WebSocket opened
        page.on("request", lambda r: events.append(urlparse(r.url).path))
        page.on("websocket", lambda ws: events.append(urlparse(ws.url).path))
        page.goto(f"{srv.url}/workspace")
        workspace_ready(page)  # the page itself is drawn as before, its chart included
        workspace_settled(page)
        assert page.url == f"{srv.url}/workspace"
        context.close()
    probes = [p for p in events if p.endswith(("_stcore/health", "_stcore/host-config"))]
    assert probes == ["/_stcore/health", "/_stcore/host-config"]
    assert events.count("/_stcore/stream") == 1
    opened = events.index("/_stcore/stream")
    chunks = [p for p in events if p.startswith("/static/js/") and not p.startswith(
        "/static/js/index.")]
    modules = [p for p in events if p.startswith("/_stcore/bidi-components/") and p.endswith(".js")]
    assert len(chunks) > 30 and len(modules) == 4  # the select box's, the components' logic.js
    for path in chunks + modules:  # fetched once: the frontend's own import used the hint
        assert events.count(path) == 1, path
    lazy = [p for p in chunks if "/Selectbox." in p or "/BidiComponent." in p] + modules
    assert all(events.index(p) > opened for p in lazy)


# every frame from navigation: where the chart, the headings, the legend under the Decision
# Space and the task's and question's fields are, and whether the widgets have rendered
TRACK_JS = """(() => {
  window.__pqFrames = [];
  const y = (e) => e ? Math.round(e.getBoundingClientRect().top) : null;
  const shown = (s) => [...document.querySelectorAll(s)].filter((e) => e.offsetParent !== null);
  const tick = () => {
    const legend = document.querySelector('[data-testid="pq-decision-variable"] .pq-legend');
    window.__pqFrames.push({
      chart: y(document.querySelector(".pq-space[data-revision]")),
      headings: [...document.querySelectorAll("h1, h3")].map(y),
      legend: y(legend),
      fields: shown(".pq-field-label").map((e) => [e.textContent, y(e.parentElement)]),
      widgets: shown('[data-testid="stSelectbox"], [data-testid="stTextInput"]').map(y),
    });
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();"""


def test_the_free_workspace_settles_without_moving_after_its_chart_is_drawn(browser,
                                                                           server: str) -> None:
    """Issue 24, sixth round: the first render shows the task and the question as text in the
    widgets' place; the "painted" rerun then draws the select box and the text input (and the
    secondary controls). From the frame the chart is first drawn to the settled page, nothing
    above or beside the panels moves, and each text is where its widget then is."""
    # the pool's UMAP layout computed first: until then the chart is the provisional (MDS)
    # one under a caption, and the swap moves it (a fresh checkout has no layout cached)
    warm = browser.new_context(viewport={"width": 1600, "height": 1100})
    first = warm.new_page()
    first.set_default_timeout(180_000)
    first.goto(f"{server}/workspace")
    workspace_ready(first)
    first.get_by_text("Provisional layout").wait_for(state="detached")
    warm.close()
    context = browser.new_context(viewport={"width": 1600, "height": 1100})
    context.add_init_script(TRACK_JS)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{server}/workspace")
    workspace_ready(page)
    workspace_settled(page)
    page.get_by_role("combobox", name="Task").wait_for()
    page.get_by_label("Question").wait_for()
    page.wait_for_timeout(500)  # a few frames of the settled page
    frames = page.evaluate("() => window.__pqFrames")
    context.close()
    drawn = [f for f in frames if f["chart"] is not None]
    assert drawn and drawn[0]["fields"], "the first paint shows the task and question as text"
    assert [name for name, _ in drawn[0]["fields"]] == ["Task", "Question"]
    settled = drawn[-1]
    assert not settled["fields"] and len(settled["widgets"]) == 2
    assert [top for _, top in drawn[0]["fields"]] == settled["widgets"]
    top = [y for y in settled["headings"] if y is not None and y <= settled["chart"]]
    assert settled["legend"] is not None
    for frame in drawn:  # nothing at the top moved once the chart was there: the chart and
        # the headings over it (a heading under a panel, e.g. Predicted Output under the
        # Predicted Query's clauses, moves as that panel fills), nor the legend inside the
        # Decision Space (it moved 14 px while the panel's stylesheet was still on its way)
        assert (frame["chart"], frame["headings"][:len(top)]) == (settled["chart"], top), frame
        assert frame["legend"] in (None, settled["legend"]), frame


STYLED_JS = """() => {
  const top = (s) => Math.round(document.querySelector(s).getBoundingClientRect().top);
  return { legend: top('[data-testid="pq-decision-variable"] .pq-legend'),
           caption: getComputedStyle(document.querySelector(
             '[data-testid="pq-decision-variable"] .pq-caption')).fontSize,
           toolbar: getComputedStyle(document.querySelector(
             '[data-testid="pq-action-space"] .pq-tools')).position }; }"""


def test_the_panels_are_styled_without_their_stylesheets_links(browser, server: str) -> None:
    """Each component's stylesheet comes by a <link> of its own, parsed a frame or more after
    the component first drew: the Decision Space's first frame was unstyled and its legend then
    moved down 14 px. The page carries those rules itself, so with the links' files empty (a
    failed one stops the component from mounting) the panels look as they do with them."""
    seen = []
    for blocked in (True, False):
        context = browser.new_context(viewport={"width": 1600, "height": 1100})
        if blocked:
            context.route(re.compile(r".*/_stcore/bidi-components/.*\.css(\?.*)?$"),
                          lambda route: route.fulfill(status=200, content_type="text/css",
                                                      body=""))
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(f"{server}/workspace")
        workspace_ready(page)
        workspace_settled(page)
        page.get_by_text("Provisional layout").wait_for(state="detached")  # the UMAP one
        page.locator('[data-testid="pq-decision-variable"] .pq-legend').wait_for()
        seen.append(page.evaluate(STYLED_JS))
        context.close()
    assert seen[0] == seen[1]
    assert seen[1]["caption"] == "14px" and seen[1]["toolbar"] == "absolute"
