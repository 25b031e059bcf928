"""The Analysis page's demo data: simulated participants from one button, no command line.

``python -m study.simulate_demo`` stays for scripts; the button runs the same
:func:`study.simulate_demo.simulate_participants` into the demo database (never the live one),
then switches the page to it with simulated participants included.
"""

from __future__ import annotations

import streamlit as st

from core.settings import demo_db_url as demo_url
from study.store import default_url, open_store

SOURCE, SIMULATED = "an_source", "an_sim_demo"  # the Analysis page's Data and filter widgets
MADE = "an_demo_made"  # set when the button made data; show_demo applies it on the next run


def show_demo() -> None:
    """Before the page's Data radio is drawn: switch to the demo database after the button
    made data there, with simulated participants included."""
    if st.session_state.pop(MADE, False):
        st.session_state[SOURCE] = "demo"
        st.session_state[SIMULATED] = True


def demo_button(study: str, *, key: str, participants: int = 12) -> None:
    """A button that simulates ``participants`` of ``study`` into the demo database and shows
    them (refused, with the reason, when the demo database is the live one)."""
    if demo_url() == default_url():
        st.caption("Demo data needs its own database: set PLEASQLARIFY_DEMO_DB_URL to another "
                   "database than the study's.")
        return
    if not st.button(f"Make demo data: {participants} simulated participants of {study}",
                     key=key, icon=":material/science:",
                     help="Simulated sessions (W1/W2/W3 workflows, failures, early leavers, "
                          "varied SUS) in the demo database, flagged as simulated; the same as "
                          f"`python -m study.simulate_demo --study {study}`"):
        return
    from study.simulate_demo import simulate_participants  # the engine: only when pressed

    bar = st.progress(0.0, text="Simulating participants…")
    simulate_participants(open_store(demo_url()), participants, study=study,
                          on_progress=lambda i, n: bar.progress(i / n, text=f"Simulated {i} "
                                                                f"of {n} participants"))
    st.session_state[MADE] = True
    st.rerun()


__all__ = ["demo_button", "show_demo"]
