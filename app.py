"""PleaSQLarify Studio entry point: the router only (st.navigation with explicit pages).

Add a page by appending an ``st.Page`` to :data:`PAGES` (or a new section); pages hold no logic.
"""

from __future__ import annotations

import streamlit as st

PAGES: dict[str, list[st.Page]] = {
    "Explore": [
        st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
        st.Page("pages/workspace.py", title="Repair workspace", icon=":material/hub:",
                url_path="workspace"),
    ],
}

st.set_page_config(page_title="PleaSQLarify Studio", page_icon=":material/hub:", layout="wide")
st.navigation(PAGES).run()
