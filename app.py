"""PleaSQLarify Studio entry point: the router only (st.navigation with explicit pages).

Add a page by appending an ``st.Page`` to :data:`PAGES` (or a new section); pages hold no logic.
Researcher pages (:data:`RESEARCH`) are always routable and show the unlock form in place until
this browser has unlocked them (then the token cookie keeps them unlocked for a working day);
participant links (``?study=`` / ``?p=``) get no navigation at all.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import a11y, warmup
from ui.access import is_researcher, sync_cookie

PAGES: dict[str, list[st.Page]] = {
    "Explore": [
        st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
        st.Page("pages/workspace.py", title="Repair workspace", icon=":material/hub:",
                url_path="workspace"),
    ],
    "Study": [
        st.Page("pages/participant.py", title="Participant session", icon=":material/person:",
                url_path="participant"),
        st.Page("pages/researcher.py", title="Researcher access", icon=":material/lock:",
                url_path="researcher"),
    ],
}
RESEARCH: list[st.Page] = [
    st.Page("pages/setup.py", title="Setup", icon=":material/tune:", url_path="setup"),
    st.Page("pages/facilitator.py", title="Facilitator", icon=":material/record_voice_over:",
            url_path="facilitator"),
    st.Page("pages/analysis.py", title="Analysis", icon=":material/analytics:",
            url_path="analysis"),
]

# a local favicon: ":material/...:" page icons make the browser fetch one from a font CDN
ICON = Path(__file__).resolve().parent / "ui" / "assets" / "favicon.png"
st.set_page_config(page_title="PleaSQLarify Studio", page_icon=str(ICON), layout="wide")
researcher = is_researcher()
sync_cookie()
pages = {**PAGES, "Research": RESEARCH}
participant_link = "p" in st.query_params or "study" in st.query_params
a11y.apply()
try:
    page = st.navigation(pages, position="hidden")
    if not (participant_link and not researcher):
        a11y.sidebar_nav(pages, page.url_path)  # Streamlit's own list is invalid markup
    page.run()
finally:
    # once per process, after the first page has been drawn (also when it stopped or reran):
    # the heavy imports in the background, so the first visitor's page never waits on them
    warmup.start()
