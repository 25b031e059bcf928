"""AppTest of the participant flow: decline, the full path, required fields, resume after refresh."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from study import flow
from study.store import open_store
from study.timing import compute_timers
from study.trace import read_events
from tests.bank_helpers import answer, painted, shown_sql
from tests.study_flow_fixtures import (
    PRACTICE,
    TASK,
    open_page,
    participant_id,
    study_env,
    write_mini,
)
from ui.actions import searching


@pytest.fixture()
def env(tmp_path, monkeypatch):
    """A tmp studies dir with the mini study, a tmp SQLite store and audio folder."""
    write_mini(tmp_path / "studies")
    return open_store(study_env(tmp_path, monkeypatch))


def _open(pid: str | None = None) -> AppTest:
    return open_page("participant", study="mini", **({"p": pid} if pid else {}))


def _step(store, pid: str) -> str:
    return store.get_progress(pid)["step"]


def _next(at: AppTest, step: str) -> AppTest:
    at.button(key=f"pq.next.{step}").click().run()
    assert not at.exception, at.exception
    return at


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def _agree(at: AppTest) -> str:
    at.button(key="pq.consent.yes").click().run()
    return participant_id(at)


def _demographics(at: AppTest, pid: str) -> None:
    at.radio(key=f"pq.{pid}.demographics/sql_expertise").set_value("intermediate")
    at.radio(key=f"pq.{pid}.demographics/llm_code").set_value("weekly")
    _next(at, "questionnaire:demographics")


def _text(at: AppTest, pid: str, sub: str, value: str) -> None:
    item = flow.task_step_id(TASK, sub)
    at.text_area(key=f"pq.{pid}.{item}").input(value).run()


def test_decline_ends_politely_and_records_nothing_else(env) -> None:
    at = _open()
    assert "Please read this" in at.markdown[0].value
    at.button(key="pq.consent.no").click().run()
    assert any("Thank you for your interest" in h.value for h in at.header)
    assert "p" not in at.query_params
    assert env.participants("mini") == []
    events = read_events(env)
    assert [(e.type, e.payload) for e in events] == [("consent", {"given": False})]
    assert env.answers(events[0].participant) == {}
    assert env.get_progress(events[0].participant) is None


def test_full_flow_with_required_fields_to_the_completion_code(env) -> None:
    at = _open()
    pid = _agree(at)
    assert _step(env, pid) == "questionnaire:demographics"
    _next(at, "questionnaire:demographics")  # nothing answered: blocked, per-item messages
    assert _step(env, pid) == "questionnaire:demographics"
    assert _errors(at).count("This question is required.") == 2
    _demographics(at, pid)
    assert _step(env, pid) == "onboarding"
    assert any("Welcome to the mini study" in m.value for m in at.markdown)
    _next(at, "onboarding")
    assert _step(env, pid) == "practice"
    answer(at, f"pleasqlarify.{PRACTICE}.", True)
    _next(at, "practice")
    for sub in ("1", "2a", "2b"):
        step = flow.task_step_id(TASK, sub)
        assert _step(env, pid) == step
        _next(at, step)  # empty answer: blocked
        assert _step(env, pid) == step and "Please write your answer" in _errors(at)[0]
        _text(at, pid, sub, f"my answer to {sub}")
        _next(at, step)
    step3 = flow.task_step_id(TASK, "3")
    assert _step(env, pid) == step3
    _next(at, step3)  # not submitted yet: blocked
    assert _step(env, pid) == step3 and "Submit a query" in _errors(at)[0]
    answer(at, f"pleasqlarify.{TASK}.", True)
    at.button(key=f"pleasqlarify.{TASK}.submit").click().run()
    _next(at, step3)
    assert _step(env, pid) == "questionnaire:end"
    at.radio(key=f"pq.{pid}.end/useful").set_value(6)
    _next(at, "questionnaire:end")
    assert _step(env, pid) == "done"
    code = env.completion_code(pid, 0)
    assert shown_sql(at, "pq-completion-code") == [code]
    answers = env.answers(pid)
    assert answers[f"task:{TASK}/2a"] == "my answer to 2a"
    assert answers[f"task:{TASK}/3"]["candidate"] >= 0
    assert answers["demographics/sql_expertise"] == "intermediate"
    assert answers["end/useful"] == 6
    assert env.participant(pid)["status"] == "completed"
    events = read_events(env, participant=pid)
    types = [e.type for e in events]
    assert types.count("submit") == 1 and "dv.accept" in types and "consent" in types
    timers = compute_timers(events)
    assert {k for k in timers if k[0] == TASK} == {(TASK, ""), (TASK, "1"), (TASK, "2a"),
                                                    (TASK, "2b"), (TASK, "3")}
    assert all(t.stopped is not None and not t.anomalies for t in timers.values())


def test_refresh_resumes_at_the_same_step_with_answers_and_decisions(env) -> None:
    at = _open()
    pid = _agree(at)
    _demographics(at, pid)
    _next(at, "onboarding")
    _next(at, "practice")
    _text(at, pid, "1", "the review text")
    _next(at, flow.task_step_id(TASK, "1"))
    answer(at, f"pleasqlarify.{TASK}.", True)
    _text(at, pid, "2a", "half-written answ")
    key = f"pleasqlarify.workspace.study-{pid}.{TASK}"
    before = [d.to_dict() for d in at.session_state[key].session.history]
    assert len(before) == 1

    again = _open(pid)  # a browser refresh: a new Streamlit session, same ?p=
    assert not again.exception
    assert _step(env, pid) == flow.task_step_id(TASK, "2a")
    assert again.text_area(key=f"pq.{pid}.task:{TASK}/2a").value == "half-written answ"
    assert [d.to_dict() for d in again.session_state[key].session.history] == before
    assert again.button(key=f"pq.next.task:{TASK}/2a")
    sessions = {e.session_id for e in read_events(env, participant=pid)
                if e.type == "session.start"}
    assert len(sessions) == 2
    progress = env.get_progress(pid)
    assert json.loads(json.dumps(progress["workspace"][TASK]))["history"] == before


def test_unknown_participant_link_is_refused(env) -> None:
    at = _open("not-a-participant")
    assert "not valid" in _errors(at)[0]
    assert env.participants("mini") == []


def test_refresh_after_none_of_these_and_after_back_restores_what_was_shown(env) -> None:
    """Issue 21: after None of these a refresh shows the repaired pool (stars included); after
    Back it shows the start again — not "0 of 41 queries remain" and "You rejected every
    remaining output", which a saved half-undone repair used to restore."""
    at = _open()
    pid = _agree(at)
    _demographics(at, pid)
    _next(at, "onboarding")
    _next(at, "practice")
    _text(at, pid, "1", "the review text")
    _next(at, flow.task_step_id(TASK, "1"))
    key = f"pleasqlarify.workspace.study-{pid}.{TASK}"
    n0 = at.session_state[key].session.pool.n
    painted(at)  # the first render leaves None of these to the browser's "painted" rerun
    at.button(key=f"pleasqlarify.{TASK}.po.none").click().run()
    assert not at.exception, at.exception
    if searching(at.session_state[key]) is not None:
        # a refresh while repair runs off the script thread: the new page shows the rejection
        # and runs the search again (the old page is gone, its search never lands)
        at = _open(pid)
        assert not at.exception, at.exception
        ws = at.session_state[key]
        assert [d.kind for d in ws.session.history] in (["reject"], ["reject", "repair"])
        search = searching(ws)
        if search is not None:
            assert search.done.wait(120)
            at.run()
            assert not at.exception, at.exception
    repaired = at.session_state[key].session
    assert repaired.pool.n > n0 and [d.kind for d in repaired.history] == ["reject", "repair"]
    types = [e.type for e in read_events(env, participant=pid) if e.task == TASK]
    assert types.count("output.reject") == 1 and types.count("repair") == 1, types

    again = _open(pid)
    assert not again.exception, again.exception
    restored = again.session_state[key].session
    assert restored.pool.sqls == repaired.pool.sqls
    assert restored.survivors.tolist() == repaired.survivors.tolist()
    assert restored.pool.origins[n0:] == repaired.pool.origins[n0:]  # the starred glyphs
    painted(again)
    again.button(key=f"pleasqlarify.{TASK}.dv.back").click().run()
    assert not again.exception, again.exception

    third = _open(pid)
    assert not third.exception, third.exception
    session = third.session_state[key].session
    assert not session.history and session.pool.n == n0 and len(session.survivors) == n0
    assert not any("You rejected every remaining output" in w.value for w in third.warning)


def test_an_accepted_output_is_still_accepted_after_a_refresh(env) -> None:
    """Review #16/#18: "You accepted this output." was only in the browser session's state,
    so a refresh dropped it while the rest of the workspace resumed. The trace records the
    accept (``output.accept`` with its step and output); the restored workspace reads it, and
    it shows for that state only (a later decision leaves it behind, as before the refresh)."""
    accepted = "You accepted this output."
    at = _open()
    pid = _agree(at)
    _demographics(at, pid)
    _next(at, "onboarding")
    _next(at, "practice")
    _text(at, pid, "1", "the review text")
    _next(at, flow.task_step_id(TASK, "1"))
    painted(at)  # the output's Yes/No row comes with the browser's "painted" rerun
    at.button(key=f"pleasqlarify.{TASK}.po.yes").click().run()
    assert not at.exception, at.exception
    assert any(accepted in c.value for c in at.caption)

    again = painted(_open(pid))
    assert not again.exception, again.exception
    assert any(accepted in c.value for c in again.caption)
    answer(again, f"pleasqlarify.{TASK}.", True)  # a new state: its output is not accepted
    assert not any(accepted in c.value for c in again.caption)
    third = painted(_open(pid))
    assert third.button(key=f"pleasqlarify.{TASK}.po.yes")  # the row is drawn, not accepted
    assert not any(accepted in c.value for c in third.caption)


def test_database_preview_sends_only_the_table_shown(env) -> None:
    """The task database's preview sends one table, and only while its expander is open: on
    part 1 (open) the first table, on part 2a (closed) none; opening it, or another tab,
    sends that table (a hidden table costs the server and the browser on every part)."""
    at = _open()
    pid = _agree(at)
    _demographics(at, pid)
    _next(at, "onboarding")
    _next(at, "practice")
    tabs = at.tabs
    assert len(tabs) == 11 and len(at.dataframe) == 1
    assert tabs[0].label == "casting" and "role" in at.dataframe[0].value.columns
    at.session_state[f"pq.{pid}.db.{TASK}.1.tab"] = "films"  # the participant opens its tab
    at.run()
    assert len(at.dataframe) == 1 and "title" in at.dataframe[0].value.columns
    _text(at, pid, "1", "the review text")
    _next(at, flow.task_step_id(TASK, "1"))
    assert _step(env, pid) == flow.task_step_id(TASK, "2a")
    assert len(at.dataframe) == 0 and len(at.tabs) == 0
    at.session_state[f"pq.{pid}.db.{TASK}.2a"] = True  # the participant opens it
    at.run()
    assert not at.exception, at.exception
    assert len(at.dataframe) == 1


def test_pool_init_is_committed_after_the_workspace_is_drawn(env, monkeypatch) -> None:
    """The first workspace of a part is drawn before its pool.init event is committed (the
    commit's fsync is then off the new part's paint), and the event is still logged once."""
    import ui.condition_views as views
    from ui.workspace import render_workspace

    seen: list[list[str]] = []  # per workspace render: the tasks whose pool.init was in

    def drawing(*args, **kwargs):  # the real workspace; notes what was committed before it
        seen.append([e.task for e in read_events(env, participant=pid) if e.type == "pool.init"])
        return render_workspace(*args, **kwargs)

    monkeypatch.setattr(views, "render_workspace", drawing)
    at = _open()
    pid = _agree(at)
    _demographics(at, pid)
    _next(at, "onboarding")
    assert seen == [[]]
    _next(at, "practice")
    _text(at, pid, "1", "the review text")
    _next(at, flow.task_step_id(TASK, "1"))
    assert seen == [[], [PRACTICE]]
    events = [e for e in read_events(env, participant=pid) if e.type == "pool.init"]
    assert [(e.task, e.payload["key"]) for e in events] == [(PRACTICE, PRACTICE), (TASK, TASK)]
    assert all(e.payload["n_candidates"] > 0 and e.payload["strategy"] for e in events)


def test_the_practice_shows_the_task_database_the_introduction_presents(env) -> None:
    """The introduction lists "The task's database (an expander above the workspace)" among
    the things to try on the practice task, but the practice had no such box: a participant
    met it first in task 1. Found walking the participant flow in Chromium."""
    at = _open()
    pid = _agree(at)
    _demographics(at, pid)
    _next(at, "onboarding")
    assert _step(env, pid) == "practice"
    boxes = [e for e in at.expander if "task's database" in e.label]
    assert len(boxes) == 1
    assert not at.dataframe  # closed on the practice (as on parts after 1): nothing drawn
