"""The studio as an ASGI app: ``app.py`` served by ``st.App`` with what a Streamlit script cannot
provide: the response that sets the researcher cookie HttpOnly and SameSite (ui.access), and the
page shell that tells the frontend where the server is, so a page's first load does not probe a
wrong base path first (ui.shell). ``python -m study.serve`` runs this file; ``streamlit run
app.py`` still works, with the cookie written by JavaScript instead (and the extra probe)."""

from __future__ import annotations

import streamlit as st
from starlette.middleware import Middleware

from ui.access import routes
from ui.shell import PageShell

app = st.App("app.py", routes=routes(),
             middleware=[Middleware(PageShell,
                                    base_url=st.get_option("server.baseUrlPath") or "")])
