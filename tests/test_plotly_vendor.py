"""The vendored Plotly.js bundle: the plotly package's plotly.js version, licensed, served from
static/ by the app static route, and enough for every trace the Action Space draws."""

from __future__ import annotations

import tomllib
from pathlib import Path

from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from ui.action_space import figure_spec
from ui.bank_cache import bank_path
from ui.components import PLOTLY_ASSETS, PLOTLY_FILE, PLOTLY_VERSION, STATIC, VENDOR, plotly_url

ROOT = Path(__file__).resolve().parents[1]
BASIC_TRACES = {"scatter", "bar", "pie"}  # the trace modules of plotly.js-basic-dist-min


def test_the_bundle_is_the_plotly_packages_plotly_js_version() -> None:
    from plotly.offline import get_plotlyjs_version

    assert get_plotlyjs_version() == PLOTLY_VERSION
    head = (VENDOR / PLOTLY_FILE).read_text(encoding="utf-8")[:200]
    assert f"plotly.js (basic - minified) v{PLOTLY_VERSION}" in head
    assert 0.8e6 < (VENDOR / PLOTLY_FILE).stat().st_size < 2e6  # the basic bundle, not the 4.8 MB


def test_the_bundle_ships_its_license_and_a_note() -> None:
    assert "MIT License" in (VENDOR / "LICENSE").read_text(encoding="utf-8")
    note = (VENDOR / "NOTE.md").read_text(encoding="utf-8")
    assert f"plotly.js-basic-dist-min@{PLOTLY_VERSION}" in note and "npm pack" in note


def test_static_serving_is_on_for_the_folder_next_to_app_py() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["enableStaticServing"] is True
    assert STATIC == ROOT / "static" and (ROOT / "app.py").is_file()
    assert VENDOR.is_relative_to(STATIC)


def test_outside_app_py_plotly_comes_from_the_component_route() -> None:
    # no script run (or another main script): the same file through the component asset folder
    assert plotly_url() == f"../{PLOTLY_ASSETS}/{PLOTLY_FILE}"


def test_the_action_space_uses_only_traces_in_the_basic_bundle() -> None:
    tasks, _ = load_task_bank(bank_path(), lenient=True)
    pool = load_prepared(tasks[0], default_pool_dir(bank_path()))
    figure = figure_spec(RepairSession(pool))
    types = {trace.get("type", "scatter") for trace in figure["data"]}
    assert types and types <= BASIC_TRACES
    assert figure["layout"]["annotations"]  # layout parts are in every bundle's core
