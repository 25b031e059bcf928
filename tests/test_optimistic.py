"""AppTest: the speculated Yes and No states the browser shows at once are exactly what the
rerun then draws, and an answer counts only for the variable the user saw."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.bank_helpers import answer, component_data, fire, fire_together, make_bank, task_ids
from ui.actions import searching
from ui.views import KEYS_SEP


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two AMBROSIA tasks (12 and 30 candidates) with precomputed pools."""
    return make_bank(tmp_path_factory.mktemp("bank"), lines=(0, 8))


def _app(bank: str, task_id: str, mode: str) -> None:
    import streamlit as st

    from ui.bank_cache import task_pool
    from ui.state import WorkspaceOptions
    from ui.workspace import render_workspace

    events = st.session_state.setdefault("events", [])
    render_workspace(task_pool(bank, task_id), mode=mode, log=lambda t, p: events.append((t, p)),
                     options=WorkspaceOptions(pool_accounting=mode == "study"))


def _start(bank: Path, index: int, mode: str = "free", painted: bool = True
           ) -> tuple[AppTest, str]:
    """The workspace's first render, then (with ``painted``) the browser's "painted" rerun,
    which brings the next states."""
    task = task_ids(bank)[index]
    at = AppTest.from_function(_app, args=(str(bank), task, mode), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    prefix = f"pleasqlarify.{task}."
    if painted:
        fire(at, f"{prefix}next_views", "painted", {"seq": 1})
        assert not at.exception, at.exception
    return at, prefix


def _next(at: AppTest, prefix: str) -> dict:
    return component_data(at, f"{prefix}next_views")


def _ack(at: AppTest, prefix: str) -> int | None:
    return (component_data(at, f"{prefix}answer_ack")["ack"] or {}).get("seq")


def _shown(at: AppTest, views: dict) -> dict:
    """Each speculated panel's data as the last run drew it."""
    return {key: component_data(at, key) for key in views}


@pytest.mark.parametrize(("index", "mode"), [(0, "free"), (1, "free"), (1, "study")])
def test_the_speculated_yes_and_no_states_are_what_the_rerun_draws(bank: Path, index: int,
                                                                   mode: str) -> None:
    at, prefix = _start(bank, index, mode)
    for step, yes in enumerate((True, False, True, False), 1):
        carried = _next(at, prefix)
        if carried["next"] is None:
            break  # done: nothing left to ask
        shown = component_data(at, f"{prefix}dv.chips")
        assert carried["next"]["for"] == shown["state"]  # speculated from the state on screen
        assert f'data-key="{escape(carried["next"]["key"])}"' in shown["html"]
        views = carried["next"]["y" if yes else "n"]
        assert {k.removeprefix(prefix) for k in views} == {
            "space", "space.footer", "dv.chips", "pq", "output"}
        answer(at, prefix, yes, seq=step)
        assert not at.exception, at.exception
        assert _shown(at, views) == views  # the browser showed this already: nothing changes
        assert _ack(at, prefix) == step
    assert step > 1


def test_the_first_render_defers_the_next_states_until_the_browser_has_painted(
        bank: Path) -> None:
    """A new workspace's first render carries no next states, only what the browser waits
    for before asking; its "painted" rerun brings them, and later renders carry them at once
    (an answer pressed before "painted" is drawn by its rerun, as without speculation)."""
    at, prefix = _start(bank, 1, painted=False)
    first = _next(at, prefix)
    assert first["next"] is None and first["defer"] == ".pq-space[data-revision]"
    shown = component_data(at, f"{prefix}dv.chips")
    fire(at, f"{prefix}next_views", "painted", {"seq": 1})
    assert not at.exception, at.exception
    carried = _next(at, prefix)
    assert "defer" not in carried and carried["next"]["for"] == shown["state"]
    assert component_data(at, f"{prefix}dv.chips") == shown  # nothing else changed

    early, _ = _start(bank, 1, painted=False)
    answer(early, prefix, True, seq=1)  # before the browser said "painted"
    assert not early.exception, early.exception
    ws = early.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"]
    assert ws.session.step == 1 and _ack(early, prefix) == 1
    after = _next(early, prefix)
    assert "defer" not in after and after["next"]["for"] == component_data(
        early, f"{prefix}dv.chips")["state"]


def _keyed_paths(at: AppTest) -> dict[str, tuple[int, ...]]:
    """Where each keyed element of the last run is in the page (its path of block indices)."""
    out: dict[str, tuple[int, ...]] = {}

    def walk(node: object, path: tuple[int, ...]) -> None:
        key = getattr(node, "key", None)
        if isinstance(key, str) and key:
            out[key] = path
        for index, child in (getattr(node, "children", None) or {}).items():
            walk(child, (*path, index))

    walk(at._tree, ())
    return out


def test_the_first_render_leaves_the_secondary_controls_to_the_painted_rerun(
        bank: Path) -> None:
    """Issue 24: the first paint renders fewer elements. Back/Previous/Next, the output's Yes,
    No and None of these and the SQL expander come with the "painted" rerun, in containers the
    first render already drew, so every element of the first render keeps its place."""
    at, prefix = _start(bank, 1, painted=False)
    controls = [f"{prefix}{name}" for name in ("dv.back", "dv.up", "dv.down", "po.yes",
                                               "po.no", "po.none")]
    first = _keyed_paths(at)
    assert f"{prefix}next_views" in first and f"{prefix}answer_ack" in first
    assert not any(key in first for key in controls)
    assert not at.expander and f"{prefix}sql" not in first
    fire(at, f"{prefix}next_views", "painted", {"seq": 1})
    assert not at.exception, at.exception
    after = _keyed_paths(at)
    assert all(key in after for key in controls)
    assert [e.label for e in at.expander] == ["SQL of the predicted query"]
    assert {key: after.get(key) for key in first} == first  # nothing moved


def test_an_answer_for_a_variable_that_is_no_longer_open_changes_nothing(bank: Path) -> None:
    at, prefix = _start(bank, 1)
    ws = at.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"]
    first = ws.session.next_variable()
    answer(at, prefix, True, seq=1)
    assert ws.session.step == 1
    stale = fire(at, f"{prefix}dv.chips", "answer",
                 {"key": KEYS_SEP.join(first.keys), "yes": False, "seq": 2})
    assert not stale.exception
    assert ws.session.step == 1  # the press crossed the rerun: reported, not misapplied
    assert any("no longer open" in w.value for w in stale.warning)
    assert _ack(stale, prefix) == 2  # taken (and refused): the browser stops waiting
    assert component_data(stale, f"{prefix}answer_ack")["ack"]["ok"] is False
    assert [t for t, _ in stale.session_state["events"]].count("dv.accept") == 1


def test_an_answer_to_a_browsed_to_variable_counts_for_that_variable(bank: Path) -> None:
    at, prefix = _start(bank, 1)
    ws = at.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"]
    second = ws.session.variables()[1]
    fire(at, f"{prefix}dv.chips", "answer",
         {"key": KEYS_SEP.join(second.keys), "yes": True, "seq": 1})
    assert ws.session.step == 1 and len(ws.session.survivors) == second.yes_count
    kind, payload = at.session_state["events"][-1]
    assert kind == "dv.accept" and payload["features"] == list(second.keys)
    assert payload["rank"] == 1  # it was the second variable when it was answered


def test_speculated_states_with_every_clause_shown_and_from_a_browsed_to_variable(
        bank: Path) -> None:
    """The clause-list flag and the browse index are part of the state speculated from."""
    at, prefix = _start(bank, 1)
    before = _next(at, prefix)["next"]["for"]
    fire(at, f"{prefix}pq", "all", {"seq": 1})  # show every open clause
    at.button(key=f"{prefix}dv.down").click().run()  # the second variable
    carried = _next(at, prefix)["next"]
    assert carried["for"] != before and carried["for"] == component_data(
        at, f"{prefix}dv.chips")["state"]
    views = carried["n"]
    assert "Show only the most likely clauses" in views[f"{prefix}pq"]["html"]
    answer(at, prefix, False)
    assert _shown(at, views) == views


def test_a_failing_speculation_costs_only_the_speculation(bank: Path, monkeypatch) -> None:
    at, prefix = _start(bank, 1)

    def broken(*args, **kwargs):
        raise RuntimeError("speculation broke")
    monkeypatch.setattr("ui.optimistic.panel_views", broken)
    answer(at, prefix, True)
    assert not at.exception, at.exception
    assert _next(at, prefix)["next"] is None and _ack(at, prefix) == 1
    ws = at.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"]
    assert ws.session.step == 1


def test_after_none_of_these_and_back_the_speculated_state_is_the_rerun_s(bank: Path) -> None:
    """A repaired pool is never speculated; Back returns to the prepared pool, whose Yes/No
    states are speculated again from the state on screen and drawn unchanged by the rerun."""
    at, prefix = _start(bank, 1)
    before = _next(at, prefix)["next"]
    n0 = at.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"].session.pool.n
    at.button(key=f"{prefix}po.none").click().run()
    assert not at.exception, at.exception
    ws = at.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"]
    search = searching(ws)
    if search is not None:  # repair runs off the script thread: nothing is speculated
        assert _next(at, prefix)["next"] is None
        assert search.done.wait(120)
        at.run()
        assert not at.exception, at.exception
    assert ws.session.pool.n > n0 and _next(at, prefix)["next"] is None
    at.button(key=f"{prefix}dv.back").click().run()
    assert not at.exception, at.exception
    assert ws.session.pool.n == n0 and not ws.session.history
    carried = _next(at, prefix)["next"]
    assert carried == before  # the same state as before None of these: the same speculation
    assert carried["for"] == component_data(at, f"{prefix}dv.chips")["state"]
    answer(at, prefix, True, seq=1)
    assert not at.exception, at.exception
    assert _shown(at, carried["y"]) == carried["y"]
    types = [(t, p.get("decisions")) for t, p in at.session_state["events"]]
    assert types == [("output.reject", None), ("repair", None), ("undo", 2),
                     ("dv.accept", None)]


def _press_pair(at: AppTest, prefix: str, ws) -> tuple[dict, dict, object]:
    """A Yes to the question shown (made first) and a Yes to a clause the state after it still
    asks about (made second), as the browser stamps them; and the session they should give."""
    first = ws.session.next_variable()
    expected = ws.session.fork()
    expected.answer(first.keys, True)
    clause = next(b.feature.key for b in expected.predicted_query() if b.probability < 1)
    expected.answer_feature(clause, True)
    yes = {"key": KEYS_SEP.join(first.keys), "yes": True, "seq": 1, "at": 1, "page": "p1"}
    return yes, {"key": clause, "yes": True, "seq": 1, "at": 2, "page": "p1"}, expected


def test_two_presses_delivered_in_one_run_count_in_the_order_they_were_made(
        bank: Path) -> None:
    """A question's Yes, then a clause's Yes sent while the server was busy: Streamlit delivers
    both in one run with the clause's widget state first. Both count, the Yes first."""
    at, prefix = _start(bank, 1)
    ws = at.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"]
    yes, clause, expected = _press_pair(at, prefix, ws)
    both = fire_together(at, [(f"{prefix}pq", "clause", clause),
                              (f"{prefix}dv.chips", "answer", yes)])
    assert not both.exception, both.exception
    assert ws.session.history == expected.history
    assert list(ws.session.survivors) == list(expected.survivors)
    assert _ack(both, prefix) == 1
    assert component_data(both, f"{prefix}answer_ack")["ack"]["ok"] is True
    again = fire_together(at, [(f"{prefix}dv.chips", "answer", yes),
                               (f"{prefix}pq", "clause", clause)])  # delivered twice
    assert not again.exception and ws.session.history == expected.history


def test_presses_of_another_page_load_are_not_taken_for_ones_already_applied(
        bank: Path) -> None:
    """The order counter restarts with each page load: its presses carry the load's id, so
    a reload's first press is not mistaken for one already applied."""
    at, prefix = _start(bank, 1)
    ws = at.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"]
    yes, _, _ = _press_pair(at, prefix, ws)
    fire(at, f"{prefix}dv.chips", "answer", yes)
    assert ws.session.step == 1
    after = ws.session.next_variable()
    reloaded = {"key": KEYS_SEP.join(after.keys), "yes": False, "seq": 1, "at": 1, "page": "p2"}
    fire(at, f"{prefix}dv.chips", "answer", reloaded)
    assert ws.session.step == 2


def test_a_clause_press_repeats_the_ones_not_yet_acknowledged(bank: Path) -> None:
    """Two clause presses in one busy run: Streamlit keeps only the panel's newer trigger, which
    repeats the earlier press (``earlier``); both count, in order, each once, and the ack says
    which press was applied last."""
    at, prefix = _start(bank, 1)
    ws = at.session_state[f"pleasqlarify.workspace.free.{prefix.split('.')[1]}"]
    expected = ws.session.fork()
    first = next(b.feature.key for b in expected.predicted_query() if b.probability < 1)
    expected.answer_feature(first, True)
    second = next(b.feature.key for b in expected.predicted_query() if b.probability < 1)
    expected.answer_feature(second, False)
    one = {"key": first, "yes": True, "seq": 1, "at": 1, "page": "p1"}
    two = {"key": second, "yes": False, "seq": 2, "at": 2, "page": "p1", "earlier": [one]}
    run = fire(at, f"{prefix}pq", "clause", two)
    assert not run.exception, run.exception
    assert ws.session.history == expected.history
    assert component_data(run, f"{prefix}answer_ack")["applied"] == ["p1", 2]
    fire(at, f"{prefix}pq", "clause", two)  # delivered again (e.g. replayed): counts once
    assert ws.session.history == expected.history
