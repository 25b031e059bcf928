"""The studio as an ASGI app: ``app.py`` served by ``st.App`` with what a Streamlit script cannot
provide: the response that sets the researcher cookie HttpOnly and SameSite (ui.access); the
page shell that tells the frontend where the server is, so a page's first load does not probe a
wrong base path first, and that fetches what the workspace's first run will need while the
server runs it; Streamlit's frontend files served from memory, gzipped (ui.shell).
``python -m study.serve`` runs this file; ``streamlit run app.py`` still works, with the cookie
written by JavaScript instead (and the extra probe, no hints, Streamlit's own file serving)."""

from __future__ import annotations

import streamlit as st
from starlette.middleware import Middleware

from ui import components
from ui.access import routes
from ui.shell import PageShell, StaticCache

# what the free workspace's first run draws: Streamlit's lazily loaded elements (HTML: the
# sidebar's navigation, the styles, the task and the question as text; the mounted components;
# the buttons the painted rerun adds, one small file, so they never wait for it) and the
# components' own modules and stylesheets; then what the rerun after its first paint adds (the
# task's select box and the question's text input, ~25 files: ui.workspace.head_deferred),
# hinted once the chart is drawn
WORKSPACE = (("Html", "BidiComponent", "Button"), tuple(components.files()))
WORKSPACE_LATER = (("Selectbox", "TextInput"), ".pq-space[data-revision]")

BASE = st.get_option("server.baseUrlPath") or ""
app = st.App("app.py", routes=routes(),
             middleware=[Middleware(PageShell, base_url=BASE, preload={"workspace": WORKSPACE},
                                    later={"workspace": WORKSPACE_LATER},
                                    prepare=components.serve),
                         Middleware(StaticCache, base_url=BASE)])
