"""Accessibility fixes around Streamlit's own elements, applied by app.py on every page.

* Captions: Streamlit draws ``st.caption`` at 60 % opacity (3.9:1 on white, below
  WCAG's 4.5:1 for small text, axe ``color-contrast``); here opaque, #55575f (7:1).
* Navigation: Streamlit's sidebar navigation puts section ``<div>`` s directly in its ``<ul>``
  (axe ``list``/``listitem``, serious). The router hides it and :func:`sidebar_nav` draws the
  same sections as one ``<nav>`` of lists of real links, the current page marked, that switch
  pages in the same session as Streamlit's own links do (see :func:`nav_html`).
* Focus: every focusable control shows a 2 px outline when reached by keyboard. Streamlit's
  main region is focusable too (``tabindex="0"``, so the keyboard can scroll it): a click on
  the page focuses it, and Chromium then shows ``:focus-visible`` at the next key press (the
  workspace's Y, N, B, arrows), which drew a frame around the whole page. The region keeps its
  outline when reached with Tab and draws none when a pointer focused it (:data:`FOCUS_JS`
  marks it ``data-pq-pointer`` on a pointer press inside, and unmarks it on Tab).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import streamlit as st

CSS = """<style>
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p {
  color: #55575f !important;  /* 7:1 on white; Streamlit fades captions by opacity */
  opacity: 1 !important;
}
:is(button, a, input, textarea, select, [role="radio"], [role="checkbox"], [role="tab"],
    [role="option"], [role="combobox"], [tabindex="0"]):focus-visible {
  outline: 2px solid #1a5fb4 !important;
  outline-offset: 2px;
}
[data-testid="stMain"][data-pq-pointer]:focus-visible { outline: none !important; }
[data-testid="stMain"][data-pq-pointer]:focus-visible::before { box-shadow: none !important; }
[data-testid="stElementContainer"]:has(#pq-focus-mark) { display: none; }
</style>"""

# the look of Streamlit's st.page_link (1.67) and of the section heads drawn before this, so the
# sidebar is pixel for pixel what it was with ten elements (three heads and seven page links)
NAV_CSS = """<style>
nav.pq-nav { display: flex; flex-direction: column; }
nav.pq-nav .pq-nav-head { font-size: 0.8rem; font-weight: 600; line-height: 1.6;
  color: rgba(49, 51, 63, 0.8); margin: 0.75rem 0 0.1rem 0.5rem; }
nav.pq-nav ul { list-style: none; margin: 10px 0; padding: 0; display: flex;
  flex-direction: column; gap: 4px; }
nav.pq-nav li { margin: 0; padding: 0; height: 32px; display: flex; flex-direction: column; }
nav.pq-nav a { display: flex; flex-direction: row; align-items: center; gap: 0.5rem;
  height: 28px; margin: 2px 0; padding: 0 0.5rem; border-radius: 0.5rem; line-height: 2rem;
  text-decoration: none; color: rgb(47, 45, 43); }
nav.pq-nav a:hover, nav.pq-nav a:focus-visible { background-color: rgba(169, 169, 162, 0.15);
  text-decoration: none; }
nav.pq-nav a[aria-current="page"] { background-color: rgba(169, 169, 162, 0.15); }
nav.pq-nav a[aria-current="page"]:hover { background-color: rgba(169, 169, 162, 0.25); }
nav.pq-nav .pq-nav-icon { display: flex; align-items: center; justify-content: center;
  width: 1rem; height: 1rem; font-family: "Material Symbols Rounded"; font-size: 1rem;
  line-height: 1rem; font-weight: 400; white-space: nowrap; user-select: none;
  -webkit-font-smoothing: antialiased; overflow-wrap: normal; }
nav.pq-nav .pq-nav-label { display: block; overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; font-size: 14px; line-height: 28px; }
nav.pq-nav a[aria-current="page"] .pq-nav-label { font-weight: 600; }
</style>"""

# a click on one of the links switches the page as Streamlit's own links do: in this session
# (its state, e.g. an unlocked researcher, is kept), by the frontend's handler for the browser's
# Back and Forward (it reads the address and reruns the app for that page); a click with a
# modifier (new tab or window) is left to the browser
NAV_SCRIPT = """<script>(() => {
  if (window.__pqNav) return;
  window.__pqNav = true;
  document.addEventListener("click", (ev) => {
    const link = ev.target.closest && ev.target.closest("a[data-pq-page]");
    if (!link || ev.defaultPrevented || ev.button !== 0
        || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    ev.preventDefault();
    if (link.href !== location.href) history.pushState({}, "", link.href);
    window.dispatchEvent(new PopStateEvent("popstate", { state: history.state }));
  });
})();</script>"""


FOCUS_JS = """<span id="pq-focus-mark"></span><script>
if (!window.pqMainFocus) {
  window.pqMainFocus = true;
  const main = () => document.querySelector('[data-testid="stMain"]');
  window.addEventListener("pointerdown", (ev) => {
    const m = main();
    if (m && m.contains(ev.target)) m.setAttribute("data-pq-pointer", "");
  }, true);
  window.addEventListener("keydown", (ev) => {
    if (ev.key === "Tab") main()?.removeAttribute("data-pq-pointer");
  }, true);
}
</script>"""


def apply() -> None:
    """Inject the page-wide accessibility CSS and the main region's pointer-focus mark
    (nothing visible is added)."""
    st.html(CSS)
    st.html(FOCUS_JS, unsafe_allow_javascript=True)


def nav_html(sections: Mapping[str, Sequence[st.Page]], current: str | None) -> str:
    """The navigation's markup: per section a head and a list of links, ``current`` (a page's
    url_path) marked ``aria-current``. Links are relative to the page's address (pages are one
    segment deep), so a base path or a proxy's prefix is kept."""
    parts = ['<nav class="pq-nav" aria-label="Pages">']
    for title, pages in sections.items():
        parts.append(f'<p class="pq-nav-head">{escape(title)}</p><ul>')
        for page in pages:
            icon = page.icon.removeprefix(":material/").removesuffix(":")
            mark = ' aria-current="page"' if page.url_path == current else ""
            parts.append(
                f'<li><a href="./{escape(page.url_path)}" data-pq-page{mark}>'
                f'<span class="pq-nav-icon" aria-hidden="true" translate="no">{escape(icon)}'
                f'</span><span class="pq-nav-label">{escape(page.title)}</span></a></li>')
        parts.append("</ul>")
    parts.append("</nav>")
    return "".join(parts)


def sidebar_nav(sections: Mapping[str, Sequence[st.Page]], current: str | None = None) -> None:
    """The navigation as one element in the sidebar (sections of links, valid list markup).

    One ``st.html`` instead of three heads and seven ``st.page_link`` s: every page's first run
    renders nine elements fewer and needs no page-link chunk (a markdown label, an icon and a
    tooltip per link), which a new session's first paint waited for."""
    st.sidebar.html(NAV_CSS + nav_html(sections, current) + NAV_SCRIPT,
                    unsafe_allow_javascript=True)


__all__ = ["apply", "nav_html", "sidebar_nav"]
