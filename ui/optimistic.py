"""The next state on the screen the moment Yes or No is pressed, before the rerun.

At the end of each workspace render the states a Yes and a No to the shown variable lead to
are computed on forks of the session (:mod:`ui.speculate`), and every mounted panel's data for
them (:func:`ui.views.panel_views`) goes to the browser in one hidden carrier element. On a Yes
or No (button or key) the browser shows the speculated panels at once and sends the answer with
the variable's keys; the rerun then adopts the fork and sends the same data, so nothing is
redrawn. Until the server acknowledges the answer (its ``seq``, in a second hidden element drawn
right after the panels) the panels keep the speculated state and only remember what the server
sent; then they show the server's state (normally identical), so a refused or lost answer never
leaves a wrong state on the screen. Speculated views are used only from the state they were
computed for (:func:`ui.views.state_token`).

A workspace's first render sends no next states: its carrier asks the browser to say when the
page is painted (the trigger ``painted``, sent once the chart has drawn), and that rerun of the
panels brings them. So a new session's first paint never waits for the speculation (half the
server's first run, ~94 KB of the first page's data), and Yes/No are speculated from then on.
The same rerun draws the controls the first render leaves out (:func:`ui.panels.deferred`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ui.components import clause_panel
from ui.panels import ACK, DRAWN, applied_press
from ui.speculate import KEY, speculate
from ui.state import WorkspaceOptions, WorkspaceState
from ui.views import ALL_CLAUSES, button_key, current_variable, panel_views, state_token

CARRIER = "next_views"  # widget-key suffixes of the hidden elements (CSS hides them by these)
ACKNOWLEDGE = "answer_ack"
PAINTED_WHEN = ".pq-space[data-revision]"  # what the browser waits for before "painted"
CSS = ('<style>div[class*="-next_views"], div[class*="-answer_ack"] {display: none;}</style>')
LOG = logging.getLogger(__name__)


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
        out: dict[str, Any] = {"key": button_key(ws, variable.keys), "for": state_token(ws)}
        for yes, twin in current["forks"].items():
            fork = replace(ws, session=twin, browse=0, flash=None)
            out["y" if yes else "n"] = panel_views(
                fork, show_action_space=options.show_action_space, show_decision_space=True,
                hover=hover)
        cache.clear()
        cache[flags] = out
    return cache[flags]


def acknowledge(ws: WorkspaceState) -> None:
    """The hidden element with the seq of the last answer the server took, drawn right after
    the visible panels: the browser then shows the server's state instead of its speculation
    (and stops repeating the clause presses up to the last one applied)."""
    clause_panel("", key=ws.widget_key(ACKNOWLEDGE), testid="pq-ack", on={},
                 extra={"ack": ws.extra.get(ACK), "applied": applied_press(ws)})


def carrier(ws: WorkspaceState, options: WorkspaceOptions, hover: bool,
            on_painted: Callable[[], None] | None = None) -> None:
    """The hidden element with the next states (drawn last: the visible panels are on their way
    to the browser while this is computed). A failure here costs only the speculation.

    On the workspace's first render it carries none: it asks the browser for the trigger
    ``painted`` once the page (and the chart, when shown) is painted, whose rerun of the
    panels sends them, so the first paint does not wait for them. ``on_painted`` runs then
    (before that rerun), e.g. to make it a rerun of the whole page.
    """
    first = not ws.extra.get(DRAWN)
    ws.extra[DRAWN] = True
    views = None
    if not first:
        try:
            views = next_views(ws, options, hover)
        except Exception:  # the answer is then drawn by its rerun, as without
            LOG.exception("speculating the next workspace states failed")
    defer = {"defer": PAINTED_WHEN if options.show_action_space else ""} if first else {}
    clause_panel("", key=ws.widget_key(CARRIER), testid="pq-next",
                 on={"painted": on_painted or _painted},
                 extra={"next": views, **defer})


def _painted() -> None:
    """The browser painted the workspace's first render: the trigger's rerun of the panels
    (not this callback) computes and sends the next states."""
