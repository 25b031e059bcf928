"""Real Chromium: the workspace loads the vendored basic Plotly.js bundle from the app static
route (not the plotly package's 4.8 MB one), a browser may keep it, and the chart draws with it."""

from __future__ import annotations

import urllib.request

import pytest

from ui.components import PLOTLY_FILE, PLOTLY_VERSION, STATIC, VENDOR

pytestmark = pytest.mark.browser
PLOTLY_RESOURCES = """() => performance.getEntriesByType("resource").map((e) => e.name)
                                .filter((n) => /plotly[^/]*\\.min\\.js$/.test(n))"""


def test_the_workspace_draws_its_chart_with_the_vendored_bundle(page, server: str) -> None:
    page.goto(f"{server}/workspace")
    page.get_by_text("queries remain").wait_for(timeout=120_000)  # a fresh server imports first
    chart = page.locator('[data-testid="pq-action-space"]')
    chart.locator(".nsewdrag").first.wait_for()
    path = f"/app/static/{VENDOR.relative_to(STATIC).as_posix()}/{PLOTLY_FILE}"
    assert page.evaluate(PLOTLY_RESOURCES) == [f"{server}{path}"]  # once, and only this one
    assert page.evaluate("() => window.Plotly.version") == PLOTLY_VERSION
    # Plotly drew the figure: its scatter traces (glyphs, candidates, ...) and the annotations
    assert chart.locator(".scatterlayer .trace").count() >= 3
    assert chart.locator(".annotation").count() >= 1
    assert chart.get_attribute("data-revision")
    # the preload element is mounted, and takes no room
    preload = page.locator(".st-key-pleasqlarify-plotly-preload")
    assert preload.count() == 1 and not preload.is_visible()
    with urllib.request.urlopen(f"{server}{path}", timeout=30) as response:
        assert response.headers["ETag"] and response.headers["Last-Modified"]
        assert response.read() == (VENDOR / PLOTLY_FILE).read_bytes()
