"""The next state on the screen the moment Yes or No is pressed, before the rerun.

At the end of each workspace render the states a Yes and a No to the shown variable lead to
are computed on forks of the session (:mod:`ui.speculate`), and every mounted panel's data for
them (:func:`ui.views.panel_views`) goes to the browser in one hidden carrier element. On a Yes
or No (button or key) the browser shows the speculated panels at once and sends the answer with
the variable's keys; the rerun then adopts the fork and sends the same data, so nothing is
redrawn. Until the server acknowledges the answer (its ``seq``) the panels keep the speculated
state and only remember what the server sent; then they show the server's state (normally
identical), so a refused or lost answer never leaves a wrong state on the screen.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ui.components import clause_panel
from ui.panels import ACK
from ui.speculate import KEY, speculate
from ui.state import WorkspaceOptions, WorkspaceState
from ui.views import ALL_CLAUSES, KEYS_SEP, current_variable, panel_views

CARRIER = "next_views"  # widget-key suffix of the hidden element (CSS hides it by this name)
CSS = '<style>div[class*="-next_views"] {display: none;}</style>'


def next_views(ws: WorkspaceState, options: WorkspaceOptions, hover: bool
               ) -> dict[str, Any] | None:
    """The panels of the Yes and the No state of the shown variable, or None if there is none
    (no variable, or a repaired pool, which is never speculated)."""
    variable = current_variable(ws)
    if variable is None:
        return None
    if not speculate(ws, variable, chart=options.show_action_space):
        return None
    current = ws.extra[KEY]
    flags = (bool(ws.extra.get(ALL_CLAUSES)), hover, options.show_action_space)
    cache = current.setdefault("views", {})
    if flags not in cache:
        out: dict[str, Any] = {"key": KEYS_SEP.join(variable.keys)}
        for yes, twin in current["forks"].items():
            fork = replace(ws, session=twin, browse=0, flash=None)
            out["y" if yes else "n"] = panel_views(
                fork, show_action_space=options.show_action_space, show_decision_space=True,
                hover=hover)
        cache.clear()
        cache[flags] = out
    return cache[flags]


def carrier(ws: WorkspaceState, options: WorkspaceOptions, hover: bool) -> None:
    """The hidden element with the next states and the last acknowledged answer (drawn last:
    the visible panels are on their way to the browser while this is computed)."""
    clause_panel("", key=ws.widget_key(CARRIER), testid="pq-next", on={},
                 extra={"next": next_views(ws, options, hover), "ack": ws.extra.get(ACK)})
