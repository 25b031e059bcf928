"""The next state, computed before the key press: after each workspace render, a background
thread answers the shown decision variable Yes and No on two forks of the session and builds
what the workspace will need then (clusters, ranking, clause beliefs, predicted output, the
Action Space spec). A Yes or No then adopts the fork's views instead of computing them on the
click path (at N = 50 that was ~30 ms of the rerun's ~45 ms in the server).

The thread waits :data:`DELAY_S` first, so it never competes for the GIL with sending the
render that just finished; nothing here touches Streamlit, and a fork never changes the live
session (:meth:`core.engine.session.RepairSession.adopt` copies only views of an equal state).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from ui.action_space import cached_space

if TYPE_CHECKING:
    from core.engine.session import RankedVariable, RepairSession
    from ui.state import WorkspaceState

KEY = "speculated"  # ws.extra: {"for": (pool, step, survivors, keys, chart), "forks": {yes: session}}
DELAY_S = 0.15  # after the render's messages have gone out; people take longer than that


def _warm(twin: RepairSession, chart: bool) -> None:
    """Everything a render of ``twin``'s state computes (the first ranked variable shown, and
    with ``chart`` the Action Space coloured by it)."""
    twin.cluster_of()
    ranked = twin.variables()
    twin.predicted_query()
    twin.predicted_output()
    if chart:
        cached_space(twin, ranked[0] if ranked else None)


def speculate(ws: WorkspaceState, variable: RankedVariable | None, chart: bool = True, *,
              background: bool = True
              ) -> threading.Thread | None:
    """Start computing the states a Yes and a No to ``variable`` lead to (once per state).

    Only on the prepared pool (a repaired pool is this user's own and changes under repair).
    Returns the thread (None if there is nothing new to compute, or when run in place).
    """
    session = ws.session
    if variable is None or session.pool is not session.base_pool:
        return None
    mark = (id(session.pool), session.step, session.alive.tobytes(), variable.keys, chart)
    current = ws.extra.get(KEY)
    if isinstance(current, dict) and current.get("for") == mark:
        return None
    forks: dict[bool, RepairSession] = {}
    ws.extra[KEY] = {"for": mark, "forks": forks}
    base = session.fork()  # here, on the script thread: the live session is not shared

    def stale() -> bool:  # the user has moved on: a newer state is being speculated
        latest = ws.extra.get(KEY)
        return not isinstance(latest, dict) or latest.get("forks") is not forks

    def run() -> None:
        if background:
            time.sleep(DELAY_S)
        for yes in (True, False):
            if stale():
                return  # do not compete with the rerun computing that state itself
            twin = base.fork()
            try:
                twin.answer(variable.keys, yes)
                _warm(twin, chart)
            except Exception:  # noqa: BLE001 - the rerun then computes (and reports) it itself
                continue
            forks[yes] = twin
    if not background:
        run()
        return None
    thread = threading.Thread(target=run, name="pleasqlarify-speculate", daemon=True)
    thread.start()
    return thread


def adopt(ws: WorkspaceState, yes: bool) -> bool:
    """After a Yes/No: take the fork's views if one reached this state; True if one had."""
    current = ws.extra.get(KEY)
    twin = current.get("forks", {}).get(yes) if isinstance(current, dict) else None
    return twin is not None and ws.session.adopt(twin)
