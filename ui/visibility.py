"""Report browser tab visibility (``visibilitychange``) to Python as tab.hidden/tab.visible.

A tiny ``st.components.v2`` component (no iframe, no build step) keeps the last transitions in
``window`` with a per-page sequence number and the browser's epoch ms, and sets them as its
state; Python logs each transition with the event id ``<session>:tab:<seq>``, so re-sent
transitions are no-ops. Time with the tab hidden is then excluded by study.timing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from study.limits import tab_events

JS = """
export default function(component) {
  const { setStateValue } = component;
  const w = window;
  if (!w.__pqTab) { w.__pqTab = { seq: 0, events: [] }; }
  const report = () => {
    const s = w.__pqTab;
    s.seq += 1;
    s.events.push({ seq: s.seq, state: document.visibilityState, ts: Date.now() });
    s.events = s.events.slice(-20);
    setStateValue("tab", { events: s.events });
  };
  document.addEventListener("visibilitychange", report);
  return () => document.removeEventListener("visibilitychange", report);
}
"""

_component: Any = None


def _mount() -> Any:
    global _component  # registered once per process; holds no participant data
    if _component is None:
        _component = st.components.v2.component("pleasqlarify_tab_visibility", js=JS)
    return _component


def tab_visibility(log: Callable[[str, int, int | None], None], key: str = "pq_tab") -> None:
    """Mount the listener; call ``log(type, seq, client_ts)`` for every reported transition
    (at most :data:`study.limits.MAX_EVENTS_PER_MESSAGE` per message, malformed ones dropped)."""
    result = _mount()(key=key, on_tab_change=lambda: None)
    for kind, seq, client_ts in tab_events(getattr(result, "tab", None)):
        log(kind, seq, client_ts)
