"""AppTest of the researcher pages: facilitator (gate, pause, marker, note, override) and setup."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from study.runner import Runner, join, pending_override
from study.store import open_store
from study.trace import read_events
from tests.study_flow_fixtures import open_page, study_env, write_mini

PASSWORD = "lab-s3cret"


@pytest.fixture()
def env(tmp_path, monkeypatch):
    """The mini study in a tmp studies dir, a tmp store and a known researcher password."""
    write_mini(tmp_path / "studies")
    return tmp_path, open_store(study_env(tmp_path, monkeypatch, PASSWORD))


def _page(name: str) -> AppTest:
    return open_page(name)


def _unlock(at: AppTest, form: str, password: str = PASSWORD) -> AppTest:
    at.text_input(key=f"{form}_pw").input(password)
    at.button[0].click().run()
    return at


def _in_task(store, tmp_path) -> Runner:
    """A participant who consented and has reached the first subtask."""
    from study.spec import load_study

    spec = load_study(tmp_path / "studies" / "mini" / "study.yaml")
    r = join(store, spec)
    for step in ("questionnaire:demographics", "onboarding", "practice"):
        r.advance(step)
    assert r.current().kind == "task"
    return r


def test_facilitator_is_gated(env) -> None:
    at = _page("facilitator")
    assert at.text_input(key="facilitator_login_pw")
    assert not at.dataframe and not at.selectbox
    _unlock(at, "facilitator_login", "wrong")
    assert at.error[0].value == "Wrong password."
    assert not at.selectbox


def test_facilitator_marker_note_pause_advance_override(env) -> None:
    tmp_path, store = env
    r = _in_task(store, tmp_path)
    at = _unlock(_page("facilitator"), "facilitator_login")
    assert not at.exception, at.exception
    assert at.dataframe  # the live session list
    # the current step by name ("Task 1 of 1, part 1 of 4 — Interpret (…)"), not its id
    shown = " ".join(m.value for m in at.markdown)
    assert "Current step: **Task 1 of 1, part 1 of 4 — Interpret (" in shown
    assert "task:film-pulp-review/1" not in shown
    at.button(key="fac_marker_confused").click().run()
    at.text_area(key="fac_note_text").input("asked what a cluster is")
    at.button(key="FormSubmitter:fac_note-Save note").click().run()
    at.button(key="fac_pause").click().run()
    assert r.paused()
    at.button(key="fac_resume").click().run()
    assert not r.paused()
    evs = read_events(store, participant=r.participant)
    marker = next(e for e in evs if e.type == "marker")
    note = next(e for e in evs if e.type == "note")
    assert marker.payload == {"label": "confused", "by": "facilitator"}
    assert note.payload["text"] == "asked what a cluster is"
    assert (marker.task, marker.subtask) == ("film-pulp-review", "1")
    assert marker.session_id.startswith("facilitator-") and marker.server_ts > 0
    assert [e.type for e in evs if e.payload.get("by") == "facilitator"
            and e.type.startswith("timer.")] == ["timer.pause", "timer.resume"]
    at.button(key="fac_advance").click().run()
    assert r.current().id == "task:film-pulp-review/2a"
    at.selectbox(key="fac_ov_t").set_value(0)
    at.button(key="FormSubmitter:fac_override-Set override").click().run()
    assert pending_override(store, "mini").task_sequence == 0


def test_facilitator_enables_the_timer_action_that_applies_and_shows_a_pause(env) -> None:
    """Review #62/#65: Pause and Resume were both enabled whatever the timer did, and the live
    table never said "paused". Now only the action that applies is enabled (the subtask's
    timer runs from the step's start: Pause), and a paused participant reads "paused"."""
    tmp_path, store = env
    r = _in_task(store, tmp_path)
    at = _unlock(_page("facilitator"), "facilitator_login")
    assert not at.exception, at.exception

    def enabled() -> dict[str, bool]:
        return {k: not at.button(key=f"fac_{k}").disabled for k in ("start", "pause", "resume")}

    def status() -> str:
        return str(at.dataframe[0].value["status"].iloc[0])

    assert enabled() == {"start": False, "pause": True, "resume": False}
    assert status() == "active"
    at.button(key="fac_pause").click().run()
    assert not at.exception, at.exception
    assert r.paused()
    assert enabled() == {"start": False, "pause": False, "resume": True}
    assert "paused" in status()
    assert any("paused" in c.value for c in at.caption)
    at.button(key="fac_resume").click().run()
    assert not r.paused()
    assert enabled() == {"start": False, "pause": True, "resume": False}
    assert status() == "active"


def test_setup_shows_validation_errors_with_path_and_fix(env) -> None:
    tmp_path, _ = env
    write_mini(tmp_path / "studies", "broken", "id: broken\ntitle: Broken\nconsent: ok\n"
               "conditions: [pleasqlarfy]\ntasks: []\ncolour: red\n")
    at = _unlock(_page("setup"), "setup_login")
    studies = at.dataframe[0].value
    assert set(studies["id"]) == {"broken", "mini"}
    assert studies.set_index("id").loc["mini", "status"] == "open"
    at.selectbox(key="setup_study").set_value("broken").run()
    assert re.search(r"\b\d+ problems? keep broken closed", at.error[0].value)  # no "(s)"
    text = at.markdown[0].value
    for where in ("conditions[0]", "tasks", "task_bank", "colour"):
        assert f"**{where}**" in text
    assert "`" + str(tmp_path / "studies/broken/study.yaml") + ":4`" in text
    assert "did you mean 'pleasqlarify'?" in text


def test_setup_lists_tasks_with_pool_status(env, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    at = _unlock(_page("setup"), "setup_login")
    at.selectbox(key="setup_study").set_value("mini").run()
    assert "is open" in at.success[0].value
    frame = at.dataframe[1].value
    assert list(frame["task"]) == ["film-practice-tarantino", "film-pulp-review"]
    assert frame["pool prepared"].all()
    assert any("No Anthropic API key" in i.value for i in at.info)
    assert at.button(key="setup_gen_llm").disabled
