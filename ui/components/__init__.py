"""Mounted ``st.components.v2`` components (JS and CSS in this folder): the Action Space chart
and the clause panels (Decision Space chips, Predicted Query clause list).

The Action Space component owns one SVG that survives reruns (its key never changes) and
redraws only the layers whose part of the spec changed; selections and sampled hovers come back
as one-shot triggers, so a rerun never re-applies them. It needs no chart library: nothing to
download before the first paint, nothing to vendor.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import streamlit as st

HERE = Path(__file__).resolve().parent
COMPONENTS = ("action_space", "clauses")  # each is <name>.js + <name>.css here
_mount: dict[tuple[int, str], Any] = {}  # (manager id, name) -> mount callable (AppTest makes a runtime per test)


def _register(component: str = "action_space") -> Any:
    """Register the asset folders on the active runtime's manager, then mount ``component``."""
    from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager
    from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest

    manager = get_bidi_component_manager()
    name = f"pleasqlarify.{component}"
    mount = _mount.get((id(manager), name))
    if mount is not None and manager.get(name) is not None:
        return mount
    if any(manager.get_component_path(f"pleasqlarify.{c}") is None for c in COMPONENTS):
        manager.register_from_manifest(
            ComponentManifest("pleasqlarify", "1",
                              [ComponentConfig(c, HERE.name) for c in COMPONENTS]), HERE.parent)
    mount = st.components.v2.component(name, js=f"{component}.js", css=f"{component}.css",
                                       isolate_styles=False)
    _mount[(id(manager), name)] = mount
    return mount


# Hidden element whose script asks the browser for the components' modules at once (kept in the
# page's module map), so a first paint does not wait for the first chart or panel to be
# rendered before fetching them, then for logic.js after them. (Their small stylesheets are
# left to Streamlit: a preloaded one was fetched again by its <link>.) Its rule also hides the
# empty clause panel :func:`preload` mounts with ``bridge``.
BRIDGE = "pleasqlarify_preload"  # the key of that panel
PRELOAD = """<style>[data-testid="stElementContainer"]:has(#pq-preload),
.st-key-pleasqlarify_preload {{ display: none; }}</style>
<span id="pq-preload" hidden></span><script>
for (const href of {files}) {{
  if (document.head.querySelector(`link[href="${{href}}"]`)) continue;
  const link = document.createElement("link");
  link.rel = "modulepreload";
  link.href = href;
  document.head.appendChild(link);
}}
</script>"""


def serve() -> None:
    """Register the components on the running server, so their files are served before any
    page has run (asgi.py's page shell asks the browser for them before the script runs)."""
    for component in COMPONENTS:
        _register(component)


@lru_cache(maxsize=1)
def stylesheets() -> str:
    """The components' stylesheets as one ``<style>`` for the page, comments and indentation
    dropped: each component's own ``<link>`` applies only once parsed, a frame or more after the
    component first drew its HTML, so the Decision Space's first frame was unstyled and its legend
    then moved 14 px down. Drawn before the components, in the order their links come."""
    text = "".join((HERE / f"{c}.css").read_text(encoding="utf-8") for c in COMPONENTS)
    text = re.sub(r"\s+", " ", re.sub(r"/\*.*?\*/", "", text, flags=re.S)).strip()
    return f"<style>{text}</style>"


def files(base: str = "") -> list[str]:
    """The components' files as the server serves them (under ``base``, its baseUrlPath): each
    component's module and the logic module it imports, then their stylesheets."""
    base = "/".join(p for p in base.split("/") if p)
    root = f"{base}/_stcore/bidi-components" if base else "_stcore/bidi-components"
    return [f"{root}/pleasqlarify.{c}/{name}" for c in COMPONENTS
            for name in (f"{c}.js", "logic.js")] + [
        f"{root}/pleasqlarify.{c}/{c}.css" for c in COMPONENTS]


def preload(bridge: bool = True) -> None:
    """Fetch the components' scripts in the browser now, while the page's script
    runs (pages that will show a workspace call it first: the free page, the study session).

    With ``bridge`` it also mounts an empty, hidden clause panel, so Streamlit's own chunks for
    these components (its component bridge with Arrow, ~190 KB) are fetched from the page's
    first element on, in parallel with the script, instead of once the chart's data arrives.
    """
    for component in COMPONENTS:
        _register(component)  # their files are served once registered
    modules = ["/" + f for f in files(str(st.get_option("server.baseUrlPath") or ""))
               if f.endswith(".js")]
    st.html(PRELOAD.format(files=json.dumps(modules)), unsafe_allow_javascript=True)
    if bridge:
        clause_panel("", key=BRIDGE, testid="pq-preload-bridge", on={})


def action_space_chart(data: dict[str, Any], *, key: str, on_select: Callable[[], None],
                       on_hover: Callable[[], None] | None = None) -> Any:
    """Mount (or update) the chart drawing ``data`` (:func:`ui.views.space_data`: the spec,
    the summary line over it, the revision the browser stamps on it for tests).

    ``on_select``/``on_hover`` run when the browser reports one; hovers are only sampled when
    ``data["hover"]`` is set.
    """
    return _register()(key=key, data=data, on_select_change=on_select,
                       on_hover_change=on_hover or (lambda: None))


def clause_panel(html: str, *, key: str, testid: str,
                 on: dict[str, Callable[[], None]], panel: bool = False,
                 extra: dict[str, Any] | None = None) -> Any:
    """Mount (or update) an HTML panel whose ``<button data-event=NAME>`` send trigger NAME.

    One Streamlit element instead of one per chip and button (the clause list was ~140); a
    button's ``data-key``/``data-yes`` come back in the trigger value (see :func:`trigger`).
    ``html`` must be built from escaped text (:mod:`ui.chips`): it is not sanitised again.
    With ``panel`` the browser registers it under ``key`` so a speculated state can be shown in
    it before the rerun (:mod:`ui.optimistic`); ``extra`` is more data for the script.
    """
    data = {"html": html, "testid": testid, **({"panel": key} if panel else {}), **(extra or {})}
    return _register("clauses")(key=key, data=data,
                                **{f"on_{event}_change": cb for event, cb in on.items()})


def view_panel(view: dict[str, Any], *, on: dict[str, Callable[[], None]]) -> Any:
    """Mount the panel a :mod:`ui.views` builder described, registered under its ``panel`` key
    and given exactly that data (what a speculated state of it shows is then the same dict)."""
    extra = {k: v for k, v in view.items() if k not in ("html", "testid", "panel")}
    return clause_panel(view["html"], key=view["panel"], testid=view["testid"], on=on,
                        panel=True, extra=extra)


def trigger(key: str, name: str) -> Any:
    """The value of trigger ``name`` of the component ``key`` in this run (None if not fired)."""
    value = st.session_state.get(key)
    return value.get(name) if isinstance(value, dict) else None
