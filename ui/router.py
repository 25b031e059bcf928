"""Keep app.py the single entry point even when a fresh server's first request is a deep link.

Streamlit decides once per process whether an app "uses the pages/ directory" (legacy
multipage mode) from the mere existence of ``pages/`` beside the entry script; until
``st.navigation`` has been called once, a first request for ``/workspace`` runs
``pages/workspace.py`` directly, skipping app.py (its page config, its page list, any role gate)
and showing an auto-generated sidebar. Pages call :func:`ensure_router` first: it switches the
process to ``st.navigation`` mode and reruns, so the request goes through app.py.
"""

from __future__ import annotations

import streamlit as st


def ensure_router() -> None:
    """Rerun through app.py if this page was started by Streamlit's legacy pages/ mode."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - Streamlit moved it; nothing to fix then
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
