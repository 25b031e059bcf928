"""The Action Space as a mounted ``st.components.v2`` component (JS and CSS in this folder).

The component owns one Plotly.js figure that survives reruns (its key never changes) and
applies each new figure with ``Plotly.react``; selections and sampled hovers come back as
one-shot triggers, so a rerun never re-applies them. Plotly.js itself is the copy inside the
plotly Python package: both folders are registered as component asset folders, so Streamlit
serves them at ``/_stcore/bidi-components/<name>/<file>`` (offline, no CDN).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

HERE = Path(__file__).resolve().parent
NAME = "pleasqlarify.action_space"
PLOTLY_ASSETS = "pleasqlarify_plotly.lib"
CONFIG = {"displaylogo": False, "scrollZoom": False, "responsive": True,
          "modeBarButtonsToRemove": ["zoom2d", "pan2d", "zoomIn2d", "zoomOut2d",
                                     "autoScale2d", "resetScale2d", "toImage"]}
_mount: dict[int, Any] = {}  # manager id -> mount callable (AppTest makes a runtime per test)


def _plotly_package() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("plotly")
    if spec is None or spec.origin is None:
        raise RuntimeError("the plotly package is not installed: pip install -r requirements.txt")
    return Path(spec.origin).parent


def _register() -> Any:
    """Register both asset folders on the active runtime's manager, then the component."""
    from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager
    from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest

    manager = get_bidi_component_manager()
    mount = _mount.get(id(manager))
    if mount is not None and manager.get(NAME) is not None:
        return mount
    if manager.get_component_path(PLOTLY_ASSETS) is None:
        manager.register_from_manifest(
            ComponentManifest("pleasqlarify_plotly", "1", [ComponentConfig("lib", "package_data")]),
            _plotly_package())
    if manager.get_component_path(NAME) is None:
        manager.register_from_manifest(
            ComponentManifest("pleasqlarify", "1", [ComponentConfig("action_space", HERE.name)]),
            HERE.parent)
    mount = st.components.v2.component(NAME, js="action_space.js", css="action_space.css",
                                       isolate_styles=False)
    _mount[id(manager)] = mount
    return mount


def action_space_chart(figure: dict[str, Any], *, key: str, revision: str,
                       on_select: Callable[[], None], on_hover: Callable[[], None] | None = None
                       ) -> Any:
    """Mount (or update) the chart; ``on_select``/``on_hover`` run when the browser reports one.

    ``revision`` names the state drawn (the browser stamps it on the chart for tests); hovers
    are only sampled when ``on_hover`` is given.
    """
    return _register()(key=key, data={"figure": figure, "config": CONFIG, "revision": revision,
                                      "hover": on_hover is not None},
                       on_select_change=on_select, on_hover_change=on_hover or (lambda: None))


def trigger(key: str, name: str) -> Any:
    """The value of trigger ``name`` of the component ``key`` in this run (None if not fired)."""
    value = st.session_state.get(key)
    return value.get(name) if isinstance(value, dict) else None
