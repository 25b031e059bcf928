"""Accessibility fixes around Streamlit's own elements, applied by app.py on every page.

* Captions: Streamlit draws ``st.caption`` at 60 % opacity (3.9:1 on white, below
  WCAG's 4.5:1 for small text, axe ``color-contrast``); here opaque, #55575f (7:1).
* Navigation: Streamlit's sidebar navigation puts section ``<div>`` s directly in its ``<ul>``
  (axe ``list``/``listitem``, serious). The router hides it and :func:`sidebar_nav` draws the
  same sections with ``st.page_link`` (real links, the current page marked).
* Focus: every focusable control shows a 2 px outline when reached by keyboard. Streamlit's
  main region is focusable too (``tabindex="0"``, so the keyboard can scroll it): a click on
  the page focuses it, and Chromium then shows ``:focus-visible`` at the next key press (the
  workspace's Y, N, B, arrows), which drew a frame around the whole page. The region keeps its
  outline when reached with Tab and draws none when a pointer focused it (:data:`FOCUS_JS`
  marks it ``data-pq-pointer`` on a pointer press inside, and unmarks it on Tab).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
.pq-nav-head { font-size: 0.8rem; font-weight: 600; color: rgba(49, 51, 63, 0.8);
  margin: 0.75rem 0 0.1rem 0.5rem; }
</style>"""


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


def sidebar_nav(sections: Mapping[str, Sequence[st.Page]]) -> None:
    """The navigation as sections of page links in the sidebar (valid list markup)."""
    with st.sidebar:
        for title, pages in sections.items():
            st.html(f'<p class="pq-nav-head">{title}</p>')
            for page in pages:
                st.page_link(page)


__all__ = ["apply", "sidebar_nav"]
