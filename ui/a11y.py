"""Accessibility fixes around Streamlit's own elements, applied by app.py on every page.

* Captions: Streamlit draws ``st.caption`` at 60 % opacity (3.9:1 on white, below
  WCAG's 4.5:1 for small text, axe ``color-contrast``); here opaque, #55575f (7:1).
* Navigation: Streamlit's sidebar navigation puts section ``<div>`` s directly in its ``<ul>``
  (axe ``list``/``listitem``, serious). The router hides it and :func:`sidebar_nav` draws the
  same sections with ``st.page_link`` (real links, the current page marked).
* Focus: every focusable control shows a 2 px outline when reached by keyboard.
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
.pq-nav-head { font-size: 0.8rem; font-weight: 600; color: rgba(49, 51, 63, 0.8);
  margin: 0.75rem 0 0.1rem 0.5rem; }
</style>"""


def apply() -> None:
    """Inject the page-wide accessibility CSS (style only: nothing visible is added)."""
    st.html(CSS)


def sidebar_nav(sections: Mapping[str, Sequence[st.Page]]) -> None:
    """The navigation as sections of page links in the sidebar (valid list markup)."""
    with st.sidebar:
        for title, pages in sections.items():
            st.html(f'<p class="pq-nav-head">{title}</p>')
            for page in pages:
                st.page_link(page)


__all__ = ["apply", "sidebar_nav"]
