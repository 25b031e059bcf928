"""Prefetch of the participant flow: a session warmed a step ahead equals the on-click one."""

from __future__ import annotations

import numpy as np
import pytest

from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from study import flow
from tests.study_flow_fixtures import FILM_BANK, PRACTICE, TASK, open_page, participant_id
from ui.state import (
    PREPARED,
    default_session,
    prepare_session,
    started_session,
    take_prepared,
    warm_session,
    workspace_state,
)


@pytest.fixture(scope="module")
def pool():
    """The shipped practice task's prepared pool (as the study pages load it)."""
    tasks, _ = load_task_bank(FILM_BANK, lenient=True)
    task = next(t for t in tasks if t.id == PRACTICE)
    return load_prepared(task, default_pool_dir(FILM_BANK))


def _same_start(a: RepairSession, b: RepairSession) -> None:
    assert a.to_dict() == b.to_dict()
    assert np.array_equal(a.clusters(), b.clusters())
    assert a.variables() == b.variables()
    assert a.predicted_query() == b.predicted_query()


def test_warm_session_is_a_fresh_session_with_its_first_state_computed(pool) -> None:
    warm = warm_session(pool)
    assert warm.origin_pool is pool and warm.history == []
    _same_start(warm, default_session(pool))


def test_started_sessions_share_the_first_state_and_nothing_else(pool) -> None:
    """New sessions fork one first state computed once per pool: each equals a fresh session,
    and a decision in one changes neither the other nor the next one started."""
    a, b = started_session(pool), started_session(pool)
    assert a is not b and a.origin_pool is pool and not a.history
    assert a.variables() is b.variables()  # computed once, shared read-only
    _same_start(a, default_session(pool))
    first = a.next_variable()
    assert first is not None
    a.answer(first.keys, True)
    assert a.step == 1 and b.step == 0 and not b.history
    c = started_session(pool)
    _same_start(c, default_session(pool))
    _same_start(b, c)
    b.answer(first.keys, True)
    assert b.variables() == a.variables() and b.survivors.tolist() == a.survivors.tolist()


def test_background_preparation_gives_the_on_click_session_once(pool) -> None:
    store: dict = {}
    thread = prepare_session(lambda: pool, pool.task_id, store=store)
    assert thread is not None
    assert prepare_session(lambda: pool, pool.task_id, store=store) is None  # one at a time
    warm = take_prepared(pool, store=store)  # waits for the thread
    assert isinstance(warm, RepairSession)
    _same_start(warm, default_session(pool))
    assert take_prepared(pool, store=store) is None  # used once


def test_workspace_state_takes_the_prepared_session_only_for_its_own_pool(pool) -> None:
    store: dict = {}
    prepare_session(lambda: pool, pool.task_id, store=store, background=False)
    warm = store[PREPARED][pool.task_id]
    other = load_prepared(next(t for t in load_task_bank(FILM_BANK, lenient=True)[0]
                               if t.id == PRACTICE), default_pool_dir(FILM_BANK))
    assert take_prepared(other, store=store) is None  # a reloaded pool object: not this one
    ws = workspace_state(pool, "practice", store=store)
    assert ws.session is warm
    # a custom factory (e.g. another strategy) never receives a session prepared for the default
    prepare_session(lambda: pool, pool.task_id, store=store, background=False)
    custom = workspace_state(pool, "custom", store=store,
                             factory=lambda p: RepairSession(p, random_state=7))
    assert custom.session is not store[PREPARED][pool.task_id]


def test_failed_preparation_leaves_the_on_click_path(pool) -> None:
    store: dict = {}

    def broken():
        raise OSError("pool folder missing")
    prepare_session(broken, pool.task_id, store=store).join()
    assert pool.task_id not in store[PREPARED]
    assert take_prepared(pool, store=store) is None


def test_onboarding_prepares_the_practice_workspace_it_then_shows(tmp_path, monkeypatch) -> None:
    from tests.study_flow_fixtures import study_env, write_mini

    write_mini(tmp_path / "studies")
    study_env(tmp_path, monkeypatch)
    at = open_page("participant", study="mini")
    at.button(key="pq.consent.yes").click().run()
    pid = participant_id(at)
    at.radio(key=f"pq.{pid}.demographics/sql_expertise").set_value("intermediate")
    at.radio(key=f"pq.{pid}.demographics/llm_code").set_value("weekly")
    at.button(key="pq.next.questionnaire:demographics").click().run()
    assert any(h.value == "Introduction" for h in at.header)
    prepared = at.session_state[PREPARED]
    entry = prepared[PRACTICE]
    if not isinstance(entry, RepairSession):
        entry.join()
        entry = prepared[PRACTICE]
    assert isinstance(entry, RepairSession)
    at.button(key="pq.next.onboarding").click().run()
    assert not at.exception, at.exception
    assert any(h.value == "Practice task" for h in at.header)
    ws = at.session_state[f"pleasqlarify.workspace.practice-pleasqlarify.{PRACTICE}"]
    assert ws.session is entry
    assert PRACTICE not in prepared
    # on part 1 the next part's workspace (2a) is prepared in turn
    at.button(key="pq.next.practice").click().run()
    assert any("Describe one interpretation." in i.value for i in at.info)
    nxt = at.session_state[PREPARED][TASK]
    if not isinstance(nxt, RepairSession):
        nxt.join()
        nxt = at.session_state[PREPARED][TASK]
    _same_start(nxt, default_session(nxt.origin_pool))
    at.text_area(key=f"pq.{pid}.{flow.task_step_id(TASK, '1')}").input("the review text").run()
    at.button(key=f"pq.next.{flow.task_step_id(TASK, '1')}").click().run()
    assert not at.exception, at.exception
    ws = at.session_state[f"pleasqlarify.workspace.study-{pid}.{TASK}"]
    assert ws.session is nxt
