"""Researcher-only analysis: completion (Table 1), questionnaires, timings, workflows, timeline
and replay, export. Thin: the page behind the gate is ui.analysis_page (imported in the
background once the password form is drawn, so a fresh server's form waits for none of it
and Unlock finds it loaded), every computation lives in
study.analysis and study.export, the tabs (each drawn only while open, each a fragment) in
ui.analysis_tabs."""

from __future__ import annotations

import streamlit as st

from ui import warmup
from ui.access import require_researcher
from ui.router import ensure_router

BODY = "ui.analysis_page"


def _draw() -> None:
    """The unlocked page; imported here, after the gate (pandas, SciPy, Plotly, the tables)."""
    from ui.analysis_page import draw

    draw()


ensure_router()
st.title("Analysis")
warmup.preload(BODY)  # in the background once the password form is drawn (no-op once loaded)
require_researcher("analysis")
_draw()
