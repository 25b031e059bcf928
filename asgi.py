"""The studio as an ASGI app: ``app.py`` served by ``st.App`` with the one route a Streamlit
script cannot provide, the response that sets the researcher cookie HttpOnly and SameSite
(ui.access). ``python -m study.serve`` runs this file; ``streamlit run app.py`` still works,
with the cookie written by JavaScript instead."""

from __future__ import annotations

import streamlit as st

from ui.access import routes

app = st.App("app.py", routes=routes())
