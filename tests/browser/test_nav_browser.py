"""The sidebar's navigation (ui.a11y.sidebar_nav, one HTML element) in real Chromium: its links
switch pages inside the same Streamlit session, as st.page_link did (one WebSocket, no page
load), the current page is marked, the browser's Back returns to the previous page, and a link
is a real link (its address opens the page in a new tab)."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

pytestmark = pytest.mark.browser


def _nav(page):
    return page.get_by_role("navigation", name="Pages")


def test_sidebar_links_switch_pages_in_the_same_session(page, server: str) -> None:
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    page.goto(f"{server}/workspace")
    page.get_by_text("queries remain").first.wait_for()
    current = _nav(page).locator('a[aria-current="page"]')
    assert current.inner_text().strip().endswith("Repair workspace")
    loads = page.evaluate("() => performance.getEntriesByType('navigation').length")
    page.evaluate("() => { window.__pqSamePage = true; }")

    _nav(page).get_by_role("link", name="Researcher access").click()
    page.get_by_role("heading", name="Researcher access").wait_for()
    assert urlparse(page.url).path == "/researcher"
    assert _nav(page).locator('a[aria-current="page"]').inner_text().strip().endswith(
        "Researcher access")

    _nav(page).get_by_role("link", name="Home").click()
    page.wait_for_function("() => location.pathname === '/'")
    page.get_by_role("heading", name="PleaSQLarify Studio").first.wait_for()
    assert _nav(page).locator('a[aria-current="page"]').inner_text().strip().endswith("Home")

    page.go_back()  # the browser's Back: the page before, still in this session
    page.get_by_role("heading", name="Researcher access").wait_for()
    assert urlparse(page.url).path == "/researcher"

    assert page.evaluate("() => window.__pqSamePage === true")  # never reloaded
    assert page.evaluate("() => performance.getEntriesByType('navigation').length") == loads
    assert len(sockets) == 1


def test_a_sidebar_link_is_a_real_link_to_its_page(page, server: str) -> None:
    page.goto(f"{server}/researcher")
    link = _nav(page).get_by_role("link", name="Repair workspace")
    href = link.get_attribute("href")
    assert href == "./workspace"
    page.goto(page.evaluate("(h) => new URL(h, location.href).href", href))
    page.get_by_text("queries remain").first.wait_for()
    assert _nav(page).locator('a[aria-current="page"]').inner_text().strip().endswith(
        "Repair workspace")
