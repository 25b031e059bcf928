"""Issue #22, observation 3: what a participant's browser sends is bounded in one place
(study.limits): long answers get a message, oversized or malformed telemetry is dropped and
counted, and nothing raises or grows the study database without limit."""

from __future__ import annotations

import os
from functools import partial

import pytest
import streamlit as st

from core.engine.session import RepairSession
from study import flow, limits
from study.runner import join
from study.spec import load_study
from study.store import open_store
from study.trace import TraceError, log_event, read_events
from tests.conftest_core import make_pool
from tests.study_flow_fixtures import TASK, open_page, participant_id, study_env, write_mini
from ui.action_space import selected_ids
from ui.state import WorkspaceState
from ui.workspace import _on_hover, _on_select

HUGE_ID = "9" * 5000  # int() of it raised ValueError (Python's 4300-digit limit)


@pytest.fixture()
def env(tmp_path, monkeypatch):
    write_mini(tmp_path / "studies")
    return open_store(study_env(tmp_path, monkeypatch))


@pytest.fixture(scope="module")
def ws() -> WorkspaceState:
    pool = make_pool(["SELECT title FROM film", "SELECT title, year FROM film",
                      "SELECT year FROM film"])
    return WorkspaceState(RepairSession(pool), pool.question)


def _dropped(reason: str) -> int:
    return limits.DROPPED.counts().get(reason, 0)


def _disk(db: str) -> int:
    """Bytes of the SQLite database and its WAL."""
    return sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))


def test_a_long_answer_is_cut_at_the_bound_before_it_is_stored(env, tmp_path) -> None:
    """8 x 15 MB answers grew the database by 146 MB. The answer boxes now carry the bound
    (the browser counts characters and stops at it; Streamlit cuts what a client sends past
    it), so 600,000 characters store as 5,000."""
    at = open_page("participant", study="mini")
    at.button(key="pq.consent.yes").click().run()
    pid = participant_id(at)
    at.radio(key=f"pq.{pid}.demographics/sql_expertise").set_value("intermediate")
    at.radio(key=f"pq.{pid}.demographics/llm_code").set_value("weekly")
    for step in ("questionnaire:demographics", "onboarding", "practice"):
        at.button(key=f"pq.next.{step}").click().run()
    item = flow.task_step_id(TASK, "1")
    assert env.get_progress(pid)["step"] == item
    box = at.text_area(key=f"pq.{pid}.{item}")
    assert box.max_chars == limits.MAX_ANSWER_CHARS
    db = str(tmp_path / "study.sqlite")
    size = _disk(db)
    box.set_value("x" * 600_000).run()  # what a client past the box's max_chars sends
    at.button(key=f"pq.next.{item}").click().run()
    assert not at.exception, at.exception
    assert env.answers(pid)[item] == "x" * limits.MAX_ANSWER_CHARS
    assert all(len(str(e.payload)) < 10_000 for e in read_events(env, participant=pid))
    assert _disk(db) - size < 200_000, _disk(db) - size


@pytest.mark.parametrize("ids", [[HUGE_ID], ["abc", 1], [1.5e300], list(range(1_500_000))],
                         ids=["5000-digit", "abc", "1.5e300", "1.5M ids"])
def test_lasso_ids_are_bounded_and_parsed_defensively(ids) -> None:
    """A 5000-digit lasso id raised ValueError; 1.5 M ids made a 12.4 MB event."""
    before = sum(limits.DROPPED.counts().values())
    got, _ = selected_ids({"ids": ids, "gesture": "lasso"}, 3)
    assert got == ([1] if ids == ["abc", 1] else [])
    assert sum(limits.DROPPED.counts().values()) > before


def test_a_bounded_lasso_still_restricts(ws) -> None:
    logged: list[tuple[str, dict]] = []
    st.session_state["sel"] = {"select": {"ids": [0, "1", HUGE_ID, 99], "gesture": "lasso"}}
    _on_select(ws, lambda t, p: logged.append((t, p)), "sel")
    assert [t for t, _ in logged] == ["space.lasso"] and logged[0][1]["candidates"] == [0, 1]


@pytest.mark.parametrize("value", [{"id": "abc"}, {"id": HUGE_ID}, {"id": 7}, ["x"]],
                         ids=["abc", "5000-digit", "not-in-pool", "not-an-object"])
def test_a_malformed_hover_is_dropped_and_counted(ws, value) -> None:
    """Hover id "abc" raised ValueError in the chart callback."""
    logged: list[tuple[str, dict]] = []
    st.session_state["hov"] = {"hover": value}
    before = sum(limits.DROPPED.counts().values())
    _on_hover(ws, lambda t, p: logged.append((t, p)), "hov")
    assert logged == [] and sum(limits.DROPPED.counts().values()) == before + 1


def test_a_hover_timestamp_is_a_number_or_nothing(ws) -> None:
    """A 10 MB hover ``ts`` was stored as it came."""
    logged: list[tuple[str, dict]] = []
    before = _dropped("hover: bad timestamp")
    for ts in ("y" * 10_000_000, 1_700_000_000_000):
        st.session_state["hov"] = {"hover": {"id": 1, "ts": ts}}
        _on_hover(ws, lambda t, p: logged.append((t, p)), "hov")
    assert [p["client_ts"] for _, p in logged] == [None, 1_700_000_000_000]
    assert _dropped("hover: bad timestamp") == before + 1


def test_tab_visibility_batches_are_capped_and_checked() -> None:
    """3000 tab rows in one message were all stored; malformed seq values raised."""
    before = _dropped("tab: over the events per message")
    rows = [{"seq": i, "state": "hidden" if i % 2 else "visible", "ts": 1000 + i}
            for i in range(1, 3001)]
    got = limits.tab_events({"events": rows})
    assert len(got) == limits.MAX_EVENTS_PER_MESSAGE and got[-1] == ("tab.visible", 3000, 4000)
    assert _dropped("tab: over the events per message") == before + 3000 - 20
    odd = limits.tab_events({"events": [{"seq": "abc"}, {"seq": HUGE_ID}, "x",
                                        {"seq": 3, "ts": HUGE_ID, "state": "hidden"}]})
    assert odd == [("tab.hidden", 3, None)]
    assert limits.tab_events({"events": "nope"}) == [] and limits.tab_events(None) == []


@pytest.mark.parametrize("raw,expected", [
    ("12", 12), (12, 12), (HUGE_ID, None), ("abc", None), ("²", None), (True, None),
    (1e300, None), (12.0, 12), (-1, None), ("-5", None), (None, None)])
def test_parse_int_never_raises(raw, expected) -> None:
    assert limits.parse_int(raw) == expected


def test_an_oversized_payload_is_refused_before_the_store(env) -> None:
    with pytest.raises(TraceError, match="at most 256,000 are stored"):
        log_event(env, session_id="s", participant="p", type="space.hover",
                  payload={"candidate": 1, "client_ts": "z" * 10_000_000})
    assert read_events(env) == []


def test_a_runner_refuses_a_long_answer_without_raising(env, tmp_path) -> None:
    """Runner.answer, which every page saves through, keeps the bound too."""
    runner = join(env, load_study(tmp_path / "studies" / "mini" / "study.yaml"))
    answer = partial(runner.answer, "demographics/notes")
    assert answer("y" * (limits.MAX_ANSWER_CHARS + 1)) is False
    assert "demographics/notes" not in env.answers(runner.participant)
    assert answer("fine") is True


def test_a_yes_no_press_with_an_oversized_key_or_seq_is_dropped(ws) -> None:
    from ui.panels import ACK, on_answer

    logged: list[tuple[str, dict]] = []
    before = _dropped("answer: key too long")
    st.session_state["dec"] = {"answer": {"key": "k" * 10_000_000, "yes": True, "seq": 1}}
    on_answer(ws, lambda t, p: logged.append((t, p)), "dec")
    assert logged == [] and _dropped("answer: key too long") == before + 1
    st.session_state["dec"] = {"answer": {"key": "nope", "yes": True, "seq": HUGE_ID}}
    on_answer(ws, lambda t, p: logged.append((t, p)), "dec")
    assert ws.extra[ACK] == {"seq": None, "ok": False}  # echoed back to the page: a number
