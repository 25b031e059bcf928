"""The studio as an ASGI app: ``app.py`` served by ``st.App`` with what a Streamlit script cannot
provide: the response that sets the researcher cookie HttpOnly and SameSite (ui.access), and the
page shell that spares a new session's first paint the frontend's probe of a wrong base path and
its late fetches of element code (ui.shell). ``python -m study.serve`` runs this file;
``streamlit run app.py`` still works, with the cookie written by JavaScript instead."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import streamlit as st
from starlette.middleware import Middleware

from ui.access import routes
from ui.components import register_all
from ui.shell import PageShell


@asynccontextmanager
async def _started(_app: Any) -> AsyncIterator[None]:
    """Once the runtime runs: register the components, so their files are served (and the page
    shell preloads them) before any page has mounted one."""
    register_all()
    yield


app = st.App("app.py", routes=routes(), lifespan=_started,
             middleware=[Middleware(PageShell,
                                    base_url=st.get_option("server.baseUrlPath") or "")])
