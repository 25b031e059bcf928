"""Helpers to drive the workspace in tests: a small prepared bank, and chart selections.

``AppTest`` cannot run the Action Space component's JavaScript, so :func:`select_points` sends
the one-shot ``select`` trigger exactly as the component does after a lasso, box or click
(``{"ids": [...], "gesture": ...}``) through the component's trigger widget; :func:`fire` sends
any trigger (a clause panel's Yes/No), :func:`clause_buttons` reads a clause panel's buttons,
:func:`answer` presses the Decision Space's Yes or No as the browser sends it (with the keys
of the variable shown) and :func:`survivors` reads the line over the Action Space.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

AMBROSIA_DEV = Path(__file__).resolve().parents[1] / "data" / "ambrosia" / "dev.jsonl"


def make_bank(dest: Path, lines: tuple[int, ...] = (0, 1, 8),
              source: Path = AMBROSIA_DEV) -> Path:
    """Copy the given lines of an AMBROSIA-format bank to ``dest/tasks.jsonl`` and prepare it."""
    from core.engine.prepare import main as prepare

    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
    dest.mkdir(parents=True, exist_ok=True)
    rows = source.read_text(encoding="utf-8").splitlines()
    bank = dest / "tasks.jsonl"
    bank.write_text("\n".join(rows[i] for i in lines) + "\n", encoding="utf-8")
    shutil.rmtree(dest / "pools", ignore_errors=True)
    prepare([str(bank)])
    return bank


def dev_slice(dest: Path, n: int = 2, source: Path = AMBROSIA_DEV) -> Path:
    """The first ``n`` tasks of an AMBROSIA-format bank as ``dest/bank.jsonl`` (not prepared)."""
    bank = dest / "bank.jsonl"
    rows = source.read_text(encoding="utf-8").splitlines()[:n]
    bank.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return bank


def task_ids(bank: Path) -> list[str]:
    """Ids of the tasks in ``bank``, in file order."""
    return [json.loads(line)["id"] for line in bank.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def selection_value(ids: list[int], gesture: str = "lasso") -> dict[str, Any]:
    """The ``select`` trigger the chart sends when ``ids`` are lassoed/boxed/clicked."""
    return {"ids": list(ids), "gesture": gesture}


def _component(at: Any, key: str) -> Any:
    found = [el for el in at.get("bidi_component") if getattr(el, "key", None) == key]
    if not found:
        raise LookupError(f"no mounted component with key {key!r} in the last run")
    return found[0]


def fire(at: Any, key: str, event: str, value: Any) -> Any:
    """Rerun ``at`` as if the component ``key`` sent the one-shot trigger ``event``."""
    return fire_together(at, [(key, event, value)])


def fire_together(at: Any, presses: list[tuple[str, str, Any]]) -> Any:
    """Rerun ``at`` once with several components' triggers (key, event, value), in this order
    of widget states: as Streamlit delivers presses that reached it during one busy run."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    states = at._tree.get_widget_states()
    for key, event, value in presses:
        state = WidgetState()
        state.id = _make_trigger_id(_component(at, key).proto.id, "events")
        state.json_trigger_value = json.dumps([{"event": event, "value": value}])
        states.widgets.append(state)
    return at._run(states)


def painted(at: Any) -> Any:
    """Rerun ``at`` as the browser does once a workspace's first render is painted: its hidden
    carrier sends "painted" (ui.optimistic), whose rerun brings the next states and the
    controls the first render leaves to it (ui.panels.deferred). No workspace: nothing."""
    carriers = [el.key for el in at.get("bidi_component")
                if str(getattr(el, "key", "")).endswith("next_views")]
    if carriers and "defer" in component_data(at, carriers[0]):
        fire(at, carriers[0], "painted", {"seq": 1})
    return at


def component_data(at: Any, key: str) -> dict[str, Any]:
    """The data the component ``key`` got in the last run."""
    return json.loads(_component(at, key).proto.json)


def answer(at: Any, prefix: str, yes: bool, seq: int = 1) -> Any:
    """Rerun ``at`` as if Yes (or No) of the Decision Space ``prefix + "dv.chips"`` was pressed:
    the trigger carries the keys of the variable its buttons show."""
    key = f"{prefix}dv.chips"
    tag = re.search(rf'<button [^>]*data-event="answer"[^>]*data-yes="{int(yes)}"[^>]*>',
                    component_html(at, key))
    if tag is None or " disabled" in tag.group(0):
        raise AssertionError(f"the Decision Space's {'Yes' if yes else 'No'} is not enabled")
    keys = html.unescape(re.search(r'data-key="([^"]*)"', tag.group(0)).group(1))
    return fire(at, key, "answer", {"key": keys, "yes": yes, "seq": seq})


def answer_enabled(at: Any, prefix: str) -> bool:
    """Whether the Decision Space's Yes button is enabled in the last run."""
    tag = re.search(r'<button [^>]*data-event="answer"[^>]*data-yes="1"[^>]*>',
                    component_html(at, f"{prefix}dv.chips"))
    return tag is not None and " disabled" not in tag.group(0)


def survivors(at: Any, prefix: str | None = None) -> str:
    """The summary line over the Action Space ``prefix + "space"`` (HTML) in the last run (the
    first Action Space drawn, without ``prefix``)."""
    if prefix is not None:
        return component_data(at, f"{prefix}space")["summary"]
    for el in at.get("bidi_component"):
        data = json.loads(el.proto.json) if el.proto.json else {}
        if isinstance(data, dict) and "summary" in data:
            return data["summary"]
    raise LookupError("no Action Space was drawn in the last run")


def component_html(at: Any, key: str) -> str:
    """The HTML a clause panel (:func:`ui.components.clause_panel`) drew in the last run."""
    return component_data(at, key)["html"]


def shown_sql(at: Any, testid: str = "pq-sql") -> list[str]:
    """The text of every ``<pre>`` block (:func:`ui.chips.sql_block`, ``text_block``) drawn in
    the last run in a clause panel with ``testid``."""
    out = []
    for el in at.get("bidi_component"):
        data = json.loads(el.proto.json) if el.proto.json else {}
        if isinstance(data, dict) and data.get("testid") == testid:
            pre = re.search(r"<pre>(.*)</pre>", data["html"], re.S).group(1)
            out.append(html.unescape(re.sub(r"<[^>]+>", "", pre)))
    return out


def clause_buttons(at: Any, key: str) -> dict[tuple[str, bool], bool]:
    """(clause key, yes) -> enabled, for every Yes/No button of the clause panel ``key``."""
    out = {}
    for tag in re.findall(r'<button [^>]*data-event="clause"[^>]*>', component_html(at, key)):
        clause = html.unescape(re.search(r'data-key="([^"]*)"', tag).group(1))
        out[clause, 'data-yes="1"' in tag] = " disabled" not in tag
    return out


def select_points(at: Any, key: str, value: dict[str, Any]) -> Any:
    """Rerun ``at`` as if the user made the selection ``value`` on the chart with ``key``."""
    return fire(at, key, "select", {"ids": list(value["ids"]), "gesture": value["gesture"]})
