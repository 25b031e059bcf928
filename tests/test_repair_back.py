"""Regression tests of issue 21: Back after a repair, the replay of such a trace, and the
workflow coding of its gestures (each failed on b320bc6)."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.repair import recompose
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from study.analysis import workflows as W
from study.analysis.data import StudyData
from study.analysis.replay import failure, mismatches, replay
from study.store import REPO_ROOT
from study.trace import Event
from tests.bank_helpers import painted
from ui import actions, panels, speculate
from ui.action_space import space_spec
from ui.state import WorkspaceState
from ui.views import panel_views, space_summary

BANK = REPO_ROOT / "studies" / "film" / "tasks.jsonl"
TASKS = ("film-dicaprio-rating", "film-departed-makers")


@pytest.fixture(scope="module")
def pools() -> dict:
    tasks, _ = load_task_bank(BANK)
    return {t.id: load_prepared(t, default_pool_dir(BANK)) for t in tasks if t.id in TASKS}


def views(session: RepairSession) -> dict:
    """Every derived view the workspace draws, sized to the pool it was drawn on."""
    ws = WorkspaceState(session, session.pool.question)
    spec = space_spec(session, session.next_variable())
    n = session.pool.n
    assert len(session.alive) == n
    assert len(spec["glyphs"]) + len(spec["dead"]) == n
    assert len(session.clusters()) == len(session.survivors)
    panel_views(ws, show_action_space=True, show_decision_space=True, hover=True)
    result, _, _ = session.predicted_output()
    return {"pool": n, "survivors": session.survivors.tolist(),
            "summary": space_summary(session, []), "stars": sum(g["new"] for g in spec["glyphs"]),
            "next": session.next_variable().keys if session.next_variable() else None,
            "query": [(b.feature.key, round(b.probability, 9)) for b in session.predicted_query()],
            "output": None if result is None else (result.columns, result.rows)}


@pytest.mark.parametrize("task", TASKS)
def test_back_after_none_of_these_restores_the_state_before_it(pools, task) -> None:
    """Yes, None of these (recomposition grows the pool), Back: every view is of the old pool;
    one Back takes back the rejection with its repair, as the README promises, and a reload
    (serialise → load) of the repaired state is the repaired state."""
    pool = pools[task]
    session = RepairSession(pool)
    session.answer(session.next_variable().keys, True)
    before = views(session)
    keys = {session.output_key_of(int(i)) for i in session.survivors}
    assert recompose(session, rejected_outputs=keys).added
    assert session.pool.n > pool.n
    repaired = views(session)
    assert repaired["stars"] == session.pool.n - pool.n
    reloaded = RepairSession.from_dict(session.to_dict(), pool)
    assert views(reloaded) == repaired
    session.undo()  # the engine's undo is one decision: the repair, then the rejection
    assert session.pool is pool and views(session)["survivors"] == []
    session.undo()
    assert views(session) == before

    ws = WorkspaceState(RepairSession(pool), pool.question)
    events: list[tuple[str, dict]] = []

    def log(t: str, p: dict) -> None:
        events.append((t, p))
    actions.answer_variable(ws, True, log)
    shown = views(ws.session)
    actions.none_of_these(ws, log)
    actions.run_repair(ws, log, "recompose")
    assert f"of {ws.session.pool.n} queries" in space_summary(ws.session, [])
    assert actions.undo(ws, log)
    assert views(ws.session) == shown and f"of {pool.n} queries" in shown["summary"]
    assert events[-1][0] == "undo" and events[-1][1]["decisions"] == 2
    steps = replay([SimpleNamespace(type=t, payload=p, event_id=str(i))
                    for i, (t, p) in enumerate(events)], pool)
    assert not mismatches(steps) and steps[-1].survivors == tuple(shown["survivors"])


def test_replay_of_back_after_a_repair_reports_instead_of_raising(pools) -> None:
    """A trace recorded on b320bc6 (one undo per decision) replays; a fault is a step."""
    pool = pools["film-dicaprio-rating"]
    s = RepairSession(pool)
    v = s.next_variable()
    s.answer(v.keys, True)
    outputs = sorted({s.output_key_of(int(i)) for i in s.survivors})
    outcome = recompose(RepairSession.from_dict(s.to_dict(), pool), rejected_outputs=outputs)
    trace = [("pool.init", {}), ("dv.accept", {"features": list(v.keys)}),
             ("space.click", {"candidates": [int(s.survivors[0])]}),
             ("output.reject", {"outputs": outputs, "trigger": "none"}),
             ("repair", {"method": "recompose", "sqls": list(outcome.added),
                         "weights": [0.5] * len(outcome.added)}),
             ("undo", {}), ("undo", {}), ("undo", {})]
    events = [Event(f"e{i}", "s", "p", t, p, task=pool.task_id, subtask="3")
              for i, (t, p) in enumerate(trace)]
    steps = replay(events, pool)
    assert failure(steps) is None and not mismatches(steps)
    assert [st.pool_size for st in steps[1:]] == [
        pool.n, pool.n, pool.n, pool.n, pool.n + len(outcome.added), pool.n, pool.n, pool.n]
    assert steps[-1].survivors == steps[2].survivors
    # an event the engine cannot read stops the replay on that step, with the reason
    tampered = [replace(e, payload={**e.payload, "weights": ["heavy"]}) if e.type == "repair"
                else e for e in events]
    steps = replay(tampered, pool)
    stopped = failure(steps)
    assert stopped is steps[-1] and stopped.type == "repair" and stopped.event_id == "e4"
    assert "ValueError" in stopped.failure and stopped.survivors == steps[-2].survivors

def test_workflow_coding_counts_selections_outputs_and_repairs() -> None:
    """space.click ×1 and output.reject ×2 were coded n_select 0, n_output 0 (W1 only)."""
    ev = [("dv.accept", {}), ("space.click", {"candidates": [4], "kept": [4]}),
          ("output.reject", {"outputs": ["a"]}), ("repair", {"sqls": ["x"]}),
          ("output.reject", {"outputs": ["b"]}), ("output.accept", {}),
          ("space.lasso", {"candidates": [1, 2]}), ("space.box", {"candidates": [1]}),
          ("space.cluster", {"candidates": [1], "cluster": 1}), ("space.click", {}),
          ("undo", {"decisions": 2})]
    events = tuple(Event(f"P-{i}", "s-P", "P", t, p, study="film", condition="pleasqlarify",
                         task="film-dicaprio-rating", subtask="3", server_ts=i)
                   for i, (t, p) in enumerate(ev))
    data = StudyData(({"participant": "P", "number": 1, "condition": "pleasqlarify",
                       "condition_order": ["pleasqlarify"], "task_order": [], "stage": "main",
                       "simulated": False, "flagged": False},), events)
    row = W.workflow_table(data).iloc[0]
    assert (row["n_select"], row["n_output"], row["n_repair"], row["n_dv"]) == (4, 3, 1, 1)
    assert (row["n_explore"], row["n_back"]) == (1, 1)
    assert row["rule_label"] == "W3"
    assert np.isclose(float(row["explanation"].split("W3=")[1].split(")")[0]), 4 + 0.5 * 3)


def test_a_submitted_repaired_query_is_coded_by_its_output(pools) -> None:
    """The completion suggestion reads a submission that repair added (index past the pool)."""
    from core.engine.similarity import output_key
    from study.analysis.completion import pool_outputs

    pool = pools["film-departed-makers"]
    ws = WorkspaceState(RepairSession(pool), pool.question)
    events: list[tuple[str, dict]] = []
    actions.none_of_these(ws, lambda t, p: events.append((t, p)))
    actions.run_repair(ws, lambda t, p: events.append((t, p)))
    chosen = actions.submit(ws, lambda t, p: events.append((t, p)))
    assert chosen is not None and chosen >= pool.n
    key_of, _, _ = pool_outputs(pool)
    payload = json.loads(json.dumps(events[-1][1]))
    assert key_of(payload) == output_key(ws.session.pool.results[chosen])
    assert key_of({**payload, "sql": "SELECT 1"}) is None


def _repair_app(bank: str, task_id: str) -> None:
    """The free workspace of one film task, counting the script's runs (AppTest script)."""
    import streamlit as st

    from ui.bank_cache import task_pool
    from ui.workspace import render_workspace

    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    events = st.session_state.setdefault("events", [])
    render_workspace(task_pool(bank, task_id), mode="free",
                     log=lambda t, p: events.append((t, p)))


def _shown(at) -> str:
    """Everything the AppTest run drew as text (markdown, html, mounted panels' data)."""
    return "".join(m.value for m in at.markdown) + "".join(
        str(getattr(h, "proto", "")) for h in at.get("html")) + "".join(
        str(el.proto) for el in at.get("bidi_component"))


def _search_done(at, key: str) -> None:
    """Wait for the workspace's repair search (its thread) to end."""
    search = at.session_state[key].extra.get(actions.SEARCH)
    assert search is not None and search.done.wait(120)


def test_none_of_these_paints_the_search_then_the_repaired_state(pools, monkeypatch) -> None:
    """Issue 24: the click's run applies the rejection and draws it as "looking for other
    readings" (no question, No / None of these disabled) while repair runs off the script
    thread; the next run draws the repaired pool. The trace is the rejection, then the repair;
    one Back undoes both. A second press during the search changes nothing; Back during the
    search takes back the rejection alone."""
    from streamlit.testing.v1 import AppTest

    task = "film-departed-makers"
    pool = pools[task]
    at = AppTest.from_function(_repair_app, args=(str(BANK), task), default_timeout=180)
    painted(at.run())
    key = f"pleasqlarify.{task}"
    wkey = f"pleasqlarify.workspace.free.{task}"
    runs = at.session_state["runs"]
    at.button(key=f"{key}.po.none").click().run()
    assert not at.exception
    assert at.session_state["runs"] == runs + 1
    ws = at.session_state[wkey]
    if actions.searching(ws) is not None:  # normally; a very fast round is drawn at once
        assert ws.session.pool.n == pool.n and ws.session.history[-1].kind == "reject"
        assert [t for t, _ in at.session_state["events"]][-1] == "output.reject"
        assert "Looking for other readings" in _shown(at)
        assert at.button(key=f"{key}.po.none").disabled and at.button(key=f"{key}.po.no").disabled
        assert at.button(key=f"{key}.dv.down").disabled
        assert not actions.none_of_these(ws, lambda t, p: None)  # a second press: refused
        _search_done(at, wkey)
        at.run()
    ws = at.session_state[wkey]
    assert actions.searching(ws) is None and ws.session.pool.n > pool.n
    assert [t for t, _ in at.session_state["events"]][-2:] == ["output.reject", "repair"]
    assert f"of {ws.session.pool.n} queries" in _shown(at)
    assert "Looking for other readings" not in _shown(at)
    at.button(key=f"{key}.dv.back").click().run()
    ws = at.session_state[wkey]
    assert ws.session.pool.n == pool.n and ws.session.step == 0
    assert at.session_state["events"][-1][1]["decisions"] == 2

    # Back while the search runs: the rejection alone is taken back, the search dropped
    monkeypatch.setattr(panels, "SEARCH_WAIT_S", 0.0)  # the pool's cache is warm now
    monkeypatch.setenv(speculate.ENV, "0")  # and no repair speculated since Back may be done
    at.button(key=f"{key}.po.none").click().run()
    ws = at.session_state[wkey]
    search = actions.searching(ws)
    assert search is not None and ws.session.step == 1
    at.button(key=f"{key}.dv.back").click().run()
    ws = at.session_state[wkey]
    assert ws.session.step == 0 and ws.session.pool.n == pool.n
    assert actions.searching(ws) is None
    assert at.session_state["events"][-1][0] == "undo"
    assert at.session_state["events"][-1][1]["decisions"] == 1
    assert search.done.wait(120)
    at.run()  # a dropped search never lands
    assert at.session_state[wkey].session.step == 0


def test_a_speculated_repair_is_drawn_in_the_press_s_own_run(pools) -> None:
    """Issue 24: while the person reads the first state the panels compute the repair a "None
    of these" would start; the press adopts it, so its own run draws the repaired state (no
    searching state) with the candidates and events of a round run on the press. Back to the
    first state speculates it again (a new round, never the one already applied)."""
    from streamlit.testing.v1 import AppTest

    task = "film-dicaprio-rating"
    pool = pools[task]
    at = AppTest.from_function(_repair_app, args=(str(BANK), task), default_timeout=180)
    painted(at.run())
    key, wkey = f"pleasqlarify.{task}", f"pleasqlarify.workspace.free.{task}"
    ws = at.session_state[wkey]
    ahead = ws.extra.get(actions.SPEC)
    assert ahead is not None and ahead.history[:-1] == ws.session.history == []
    assert ahead.done.wait(120) and ahead.outcome is not None and ws.session.step == 0
    reference = RepairSession(pool)
    keys = sorted({reference.output_key_of(int(i)) for i in reference.survivors
                   if pool.results[int(i)].ok})
    expected = recompose(reference, rejected_outputs=keys, cached=False)
    runs = at.session_state["runs"]
    at.button(key=f"{key}.po.none").click().run()
    assert not at.exception and at.session_state["runs"] == runs + 1
    ws = at.session_state[wkey]
    assert actions.searching(ws) is None and ws.session is ahead.fork
    assert ws.session.pool.sqls == reference.pool.sqls
    (t1, reject), (t2, repair) = at.session_state["events"][-2:]
    assert (t1, t2) == ("output.reject", "repair") and reject["trigger"] == "none"
    assert repair["sqls"] == list(expected.added) and repair["trigger"] == "none"
    assert "Looking for other readings" not in _shown(at)
    at.button(key=f"{key}.dv.back").click().run()
    ws = at.session_state[wkey]
    again = ws.extra.get(actions.SPEC)
    assert ws.session.step == 0 and again is not None and again is not ahead


def test_a_speculated_repair_is_dropped_by_a_decision_and_adopted_by_a_no(pools) -> None:
    """The speculation belongs to one state: a decision drops it before it runs (or stops it
    between phases), a converged state gets its own, which a "No" to its one output adopts
    (the same rejection as None of these). Never for resampling, repair off or while it is
    switched off; a stopped round changes nothing."""
    from core.engine.repair import RoundStopped

    pool = pools["film-departed-makers"]
    ws = WorkspaceState(RepairSession(pool), pool.question)
    events: list[tuple[str, dict]] = []

    def log(t: str, p: dict) -> None:
        events.append((t, p))
    assert actions.speculate_repair(ws, "resample") is None
    assert actions.speculate_repair(ws, "none") is None
    ahead = actions.speculate_repair(ws, "recompose", delay=60)
    assert ahead is not None and actions.speculate_repair(ws, "recompose") is ahead
    assert actions.answer_variable(ws, True, log)
    assert ahead.dropped.is_set() and actions.SPEC not in ws.extra
    assert ahead.done.wait(30) and ahead.outcome is None and ahead.error == "dropped"
    while not (ws.session.is_done or ws.session.is_stuck):
        if actions.speculate_repair(ws, "recompose", delay=60) is not None:
            assert ws.session.step == 0  # only the first state and converged ones
        assert actions.answer_variable(ws, True, log)
    ahead = actions.speculate_repair(ws, "recompose", delay=60)
    assert ahead is not None and ahead.history[:-1] == ws.session.history
    step = ws.session.step
    assert actions.reject_output(ws, log) and actions.start_repair(ws, log, "recompose")
    assert actions.searching(ws) is ahead and ahead.adopted.is_set()
    twin = RepairSession.from_dict(ws.session.to_dict(), pool)
    outcome = actions.finish_repair(ws, log, 120)
    assert outcome is not None and outcome.added == recompose(twin, cached=False).added
    assert ws.session.step == step + 1 + bool(outcome.added)
    assert actions.undo(ws, log) and ws.session.step == step
    session = ws.session.fork()
    with pytest.raises(RoundStopped):
        recompose(session, rejected_outputs=[session.predicted_output_key()],
                  stop=lambda: session.step > step, cached=False)
    assert session.step == step + 1 and session.pool is ws.session.pool  # only the rejection


@pytest.mark.parametrize("env", [speculate.ENV, actions.AHEAD_ENV])
def test_repair_ahead_is_off_with_its_switch(pools, monkeypatch, env: str) -> None:
    """``PLEASQLARIFY_SPECULATE=0`` or ``PLEASQLARIFY_REPAIR_AHEAD=0`` (the benchmarks'
    switches) turn the speculated repair and the remembered rounds off: a press computes."""
    import core.engine.repair as repair

    pool = pools["film-departed-makers"]
    ws = WorkspaceState(RepairSession(pool), pool.question)
    monkeypatch.setenv(env, "off")
    assert actions.speculate_repair(ws, "recompose") is None and not actions.ahead_enabled()
    computed = []
    real = repair._recompose
    # A round an earlier test started ahead may still run on its own thread: count only this
    # test's rounds (the script thread's or a worker's started from now on).
    earlier = set(threading.enumerate()) - {threading.current_thread()}

    def counted(*a: object) -> object:
        if threading.current_thread() not in earlier:
            computed.append(1)
        return real(*a)

    monkeypatch.setattr(repair, "_recompose", counted)
    for _ in range(2):  # the second press is in the same state: computed again
        assert actions.none_of_these(ws, actions.no_log)
        assert actions.run_repair(ws, actions.no_log) is not None
        assert actions.undo(ws, actions.no_log)
    assert computed == [1, 1]


def test_a_searching_workspace_offers_nothing_to_answer(pools) -> None:
    """While repair runs the clause and cluster buttons are disabled (Copy still works) and the
    Decision Space and the Predicted Output say it is looking, with no question or output."""
    from ui.chips import sql_block
    from ui.views import SEARCHING, button, frozen, searching_views

    html = (button("Yes", "clause", "Require it", key="WHERE x", yes=True)
            + button("Keep", "cluster", "Keep cluster 1", key="1") + sql_block("SELECT 1"))
    out = frozen({"html": html, "panel": "p"})["html"]
    assert out.count("<button disabled ") == 2 and 'data-copy' in out
    assert out.count("disabled") == 2  # the Copy button is not
    pool = pools["film-dicaprio-rating"]
    ws = WorkspaceState(RepairSession(pool), pool.question)
    views = searching_views(ws)
    assert all(SEARCHING in v["html"] and "data-event" not in v["html"] for v in views.values())


def test_no_repair_is_speculated_in_a_crowded_process(pools, monkeypatch) -> None:
    """Issue 24 (capacity): with more connected sessions than
    $PLEASQLARIFY_REPAIR_AHEAD_MAX_SESSIONS a speculated round would slow the other
    participants' reruns, so none starts and one already queued is dropped before it runs;
    at or under the limit (a lab study) and outside a server it is speculated as before."""
    pool = pools["film-departed-makers"]
    ws = WorkspaceState(RepairSession(pool), pool.question)
    assert actions._active_sessions() is None and not actions.crowded()  # no server here
    monkeypatch.setattr(actions, "_active_sessions", lambda: actions.CROWD_SESSIONS)
    ahead = actions.speculate_repair(ws, "recompose", delay=0.2)
    assert ahead is not None  # a lab study: participant, facilitator, researcher
    monkeypatch.setattr(actions, "_active_sessions", lambda: actions.CROWD_SESSIONS + 1)
    assert ahead.done.wait(30) and ahead.outcome is None and ahead.error == "dropped"
    assert actions.speculate_repair(ws, "recompose", delay=60) is None
    assert actions.SPEC not in ws.extra
    monkeypatch.setenv(actions.CROWD_ENV, str(actions.CROWD_SESSIONS + 1))
    assert not actions.crowded()
    monkeypatch.setenv(actions.CROWD_ENV, "many")  # unreadable: the default limit
    assert actions.crowded()


def test_a_speculated_repair_is_dropped_when_its_session_is_gone_or_superseded(
        pools, monkeypatch) -> None:
    """After a reload (or a closed tab) the browser session that asked for a speculated round
    is gone and nobody can press for it: the round is dropped, not run to its end unused. A
    second speculation of the same session (another workspace) supersedes the first; another
    session's round is left alone. The owners' table empties as rounds end."""
    pool = pools["film-departed-makers"]
    fresh = [WorkspaceState(RepairSession(pool), pool.question) for _ in range(3)]
    assert actions.owner_gone("s1") is False  # outside a server nobody leaves
    first = actions.speculate_repair(fresh[0], "recompose", delay=60, owner="s1")
    other = actions.speculate_repair(fresh[1], "recompose", delay=60, owner="s2")
    second = actions.speculate_repair(fresh[2], "recompose", delay=60, owner="s1")
    assert first is not None and other is not None and second is not None
    assert first.done.wait(30) and first.outcome is None and first.error == "dropped"
    assert not other.settled.is_set() and not second.settled.is_set()
    for ws in fresh[1:]:
        actions.drop_speculation(ws)
    assert other.done.wait(30) and second.done.wait(30)
    monkeypatch.setattr(actions, "_session_active", lambda owner: owner != "left")
    assert actions.owner_gone("left") and not actions.owner_gone("here")
    ws = WorkspaceState(RepairSession(pool), pool.question)
    orphan = actions.speculate_repair(ws, "recompose", delay=0.0, owner="left")
    assert orphan is not None and orphan.done.wait(30)
    assert orphan.outcome is None and orphan.error == "dropped" and orphan.dropped.is_set()
    kept = actions.speculate_repair(WorkspaceState(RepairSession(pool), pool.question),
                                    "recompose", delay=0.0, owner="here")
    assert kept is not None and kept.done.wait(120) and kept.outcome is not None
    assert actions._OWNED == {}
