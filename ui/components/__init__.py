"""Mounted ``st.components.v2`` components (JS and CSS in this folder): the Action Space chart
and the clause panels (Decision Space chips, Predicted Query clause list).

The component owns one Plotly.js figure that survives reruns (its key never changes) and
applies each new figure with ``Plotly.react``; selections and sampled hovers come back as
one-shot triggers, so a rerun never re-applies them. Plotly.js is the vendored scatter/bar/pie
bundle in ``static/vendor/`` (1.2 MB, not the plotly package's 4.8 MB one), served offline by
Streamlit's app static route (ETag and Last-Modified, so a browser keeps it; see
.streamlit/config.toml), or by the component asset route when static serving is off.
:func:`preload_plotly` starts loading it before the chart mounts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

HERE = Path(__file__).resolve().parent
COMPONENTS = ("action_space", "clauses", "plotly_loader")  # each is <name>.js + <name>.css here
PLOTLY_VERSION = "4.1.1"  # = the plotly package's plotly.js (a test checks it)
STATIC = HERE.parent.parent / "static"  # next to app.py: Streamlit's app static folder
VENDOR = STATIC / "vendor" / f"plotly.js-basic-dist-min-{PLOTLY_VERSION}"
PLOTLY_FILE = "plotly-basic.min.js"
PLOTLY_ASSETS = "pleasqlarify_plotly.lib"  # the fallback route's asset folder (= VENDOR)
PRELOAD_KEY = "pleasqlarify.plotly-preload"  # plotly_loader.css hides its element
CONFIG = {"displaylogo": False, "scrollZoom": False, "responsive": True,
          "modeBarButtonsToRemove": ["zoom2d", "pan2d", "zoomIn2d", "zoomOut2d",
                                     "autoScale2d", "resetScale2d", "toImage"]}
_mount: dict[tuple[int, str], Any] = {}  # (manager id, name) -> mount callable (AppTest makes a runtime per test)


def plotly_url() -> str:
    """Plotly.js's URL relative to a component's JS (``/_stcore/bidi-components/<name>/x.js``).

    The app static route when ``server.enableStaticServing`` is on and this run's main script
    has the vendored bundle in its ``static/`` folder (``streamlit run app.py``), else the
    component asset route (no browser caching, but it works for any main script).
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    main = Path(ctx.main_script_path).resolve() if ctx and ctx.main_script_path else None
    if (st.get_option("server.enableStaticServing") and main is not None
            and (main.parent / "static").resolve() == STATIC.resolve()):
        return f"../../../app/static/{VENDOR.relative_to(STATIC).as_posix()}/{PLOTLY_FILE}"
    return f"../{PLOTLY_ASSETS}/{PLOTLY_FILE}"


def _register(component: str = "action_space") -> Any:
    """Register the asset folders on the active runtime's manager, then mount ``component``."""
    from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager
    from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest

    manager = get_bidi_component_manager()
    name = f"pleasqlarify.{component}"
    mount = _mount.get((id(manager), name))
    if mount is not None and manager.get(name) is not None:
        return mount
    if manager.get_component_path(PLOTLY_ASSETS) is None:
        if not (VENDOR / PLOTLY_FILE).is_file():
            raise RuntimeError(f"Plotly.js is missing: {VENDOR / PLOTLY_FILE} (see NOTE.md in "
                               "that folder to restore it, or git checkout static/)")
        manager.register_from_manifest(
            ComponentManifest("pleasqlarify_plotly", "1", [ComponentConfig("lib", VENDOR.name)]),
            VENDOR.parent)
    if any(manager.get_component_path(f"pleasqlarify.{c}") is None for c in COMPONENTS):
        manager.register_from_manifest(
            ComponentManifest("pleasqlarify", "1",
                              [ComponentConfig(c, HERE.name) for c in COMPONENTS]), HERE.parent)
    mount = st.components.v2.component(name, js=f"{component}.js", css=f"{component}.css",
                                       isolate_styles=False)
    _mount[(id(manager), name)] = mount
    return mount


def action_space_chart(figure: dict[str, Any], *, key: str, revision: str,
                       on_select: Callable[[], None], on_hover: Callable[[], None] | None = None
                       ) -> Any:
    """Mount (or update) the chart; ``on_select``/``on_hover`` run when the browser reports one.

    ``revision`` names the state drawn (the browser stamps it on the chart for tests); hovers
    are only sampled when ``on_hover`` is given.
    """
    return _register()(key=key, data={"figure": figure, "config": CONFIG, "revision": revision,
                                      "hover": on_hover is not None, "plotly": plotly_url()},
                       on_select_change=on_select, on_hover_change=on_hover or (lambda: None))


def preload_plotly() -> None:
    """Start loading Plotly.js in the browser now (a hidden element), before the chart mounts.

    Call it early on a page that draws the Action Space: the download and parse then overlap
    the rest of the script run instead of following it.
    """
    _register("plotly_loader")(key=PRELOAD_KEY, data={"plotly": plotly_url()})


def clause_panel(html: str, *, key: str, testid: str,
                 on: dict[str, Callable[[], None]]) -> Any:
    """Mount (or update) an HTML panel whose ``<button data-event=NAME>`` send trigger NAME.

    One Streamlit element instead of one per chip and button (the clause list was ~140); a
    button's ``data-key``/``data-yes`` come back in the trigger value (see :func:`trigger`).
    ``html`` must be built from escaped text (:mod:`ui.chips`): it is not sanitised again.
    """
    return _register("clauses")(key=key, data={"html": html, "testid": testid},
                                **{f"on_{event}_change": cb for event, cb in on.items()})


def trigger(key: str, name: str) -> Any:
    """The value of trigger ``name`` of the component ``key`` in this run (None if not fired)."""
    value = st.session_state.get(key)
    return value.get(name) if isinstance(value, dict) else None
