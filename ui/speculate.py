"""The next state, computed before the key press: at the end of each workspace render the shown
decision variable is answered Yes and No on two forks of the session, and what the workspace
needs then (clusters, ranking, clause beliefs, predicted output, the Action Space spec) is
built on them. :mod:`ui.optimistic` sends their panels to the browser, which shows one the
moment Yes or No is pressed; the rerun that follows adopts the fork's views instead of computing
them on the click path (at N = 50 that was ~30 ms of the rerun's ~45 ms in the server).

It runs on the script thread after every visible element of the render has been queued, so the
browser draws the render while this is computed. A fork never changes the live session
(:meth:`core.engine.session.RepairSession.adopt` copies only views of an equal state).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ui.action_space import cached_space
from ui.views import labels_of

if TYPE_CHECKING:
    from core.engine.session import RankedVariable, RepairSession
    from ui.state import WorkspaceState

SEARCHING = "repair_search"  # ws.extra key of a running repair (ui.actions.SEARCH): no speculation
KEY = "speculated"  # ws.extra: {"for": (pool, step, survivors, history, keys, chart), "forks": ...}
ENV = "PLEASQLARIFY_SPECULATE"  # 0/off/false: no speculation (benchmarks measure its cost)


def enabled() -> bool:
    """Whether next states are speculated: on unless $PLEASQLARIFY_SPECULATE is 0/off/false/no
    (read per render, so a server started with it off answers from the rerun alone)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def _warm(twin: RepairSession, chart: bool, labels: str = "sql") -> None:
    """Everything a render of ``twin``'s state computes (the first ranked variable shown, and
    with ``chart`` the Action Space coloured by it, its tooltips worded for ``labels``)."""
    twin.cluster_of()
    ranked = twin.variables()
    twin.predicted_query()
    twin.predicted_output()
    if chart:
        cached_space(twin, ranked[0] if ranked else None, labels=labels)


def speculate(ws: WorkspaceState, variable: RankedVariable | None, chart: bool = True
              ) -> dict[bool, RepairSession]:
    """The states a Yes and a No to ``variable`` lead to, computed once per state.

    Only on the prepared pool (a repaired pool is this user's own and changes under repair)
    and never while a repair runs (its result is not speculated: it is computed off the
    script thread and nothing can be answered meanwhile); returns the forks by answer (empty
    when there is nothing to speculate).
    """
    session = ws.session
    if (variable is None or session.pool is not session.base_pool or not enabled()
            or SEARCHING in ws.extra):
        return {}
    mark = (id(session.pool), session.step, session.alive.tobytes(),
            tuple(repr(d) for d in session.history), variable.keys, chart)
    current = ws.extra.get(KEY)
    if isinstance(current, dict) and current.get("for") == mark:
        return current["forks"]
    forks: dict[bool, RepairSession] = {}
    ws.extra[KEY] = {"for": mark, "forks": forks}
    base = session.fork()
    for yes in (True, False):
        twin = base.fork()
        try:
            twin.answer(variable.keys, yes)
            _warm(twin, chart, labels_of(ws))
        except Exception:  # the rerun then computes (and reports) it itself
            continue
        forks[yes] = twin
    return forks


def adopt(ws: WorkspaceState, yes: bool) -> bool:
    """After a Yes/No: take the fork's views if one reached this state; True if one had."""
    current = ws.extra.get(KEY)
    twin = current.get("forks", {}).get(yes) if isinstance(current, dict) else None
    return twin is not None and ws.session.adopt(twin)
