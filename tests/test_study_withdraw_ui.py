"""AppTest of withdrawal and flags through the pages: the participant's Withdraw button, a pilot
link, and the Facilitator's withdraw-by-label/code and flag-with-reason forms."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from study.runner import join
from study.spec import load_study
from study.store import open_store
from study.trace import read_events
from study.withdraw import withdrawals
from tests.study_flow_fixtures import open_page, participant_id, study_env, write_mini

PASSWORD = "lab-s3cret"


@pytest.fixture()
def env(tmp_path, monkeypatch):
    write_mini(tmp_path / "studies")
    return tmp_path, open_store(study_env(tmp_path, monkeypatch, PASSWORD))


def _participant(**params: str) -> AppTest:
    return open_page("participant", study="mini", **params)


_pid = participant_id


def test_participant_withdraws_from_a_step_through_the_pilot_link(env):
    _, store = env
    at = _participant(stage="pilot")
    at.button(key="pq.consent.yes").click().run()
    pid = _pid(at)
    assert store.participant(pid)["stage"] == "pilot"
    assert at.button(key="pq.withdraw.go").disabled  # needs the confirmation first
    at.checkbox(key="pq.withdraw.sure").check().run()
    at.button(key="pq.withdraw.go").click().run()
    assert not at.exception, at.exception
    assert at.header[0].value == "You have withdrawn from the study"
    assert "p" not in at.query_params
    assert store.participant(pid) is None and read_events(store, participant=pid) == []
    (rec,) = withdrawals(store, "mini")
    assert rec["by"] == "participant" and rec["stage"] == "pilot" and rec["mode"] == "deleted"


def test_a_second_tab_of_a_withdrawn_participant_stops_logging(env):
    tmp_path, store = env
    at = _participant()
    at.button(key="pq.consent.yes").click().run()
    pid = _pid(at)
    other = _participant(p=pid)  # the same link open in a second tab
    at.checkbox(key="pq.withdraw.sure").check().run()
    at.button(key="pq.withdraw.go").click().run()
    other.run()  # the second tab reruns (e.g. a click) after the withdrawal
    assert not other.exception, other.exception
    assert "not valid" in other.error[0].value
    assert read_events(store, participant=pid) == [] and store.participant(pid) is None


def test_unknown_stage_in_a_link_is_refused(env):
    at = _participant(stage="beta")
    at.button(key="pq.consent.yes").click().run()
    assert "does not work" in at.error[0].value and "stage 'beta' is unknown" in at.caption[0].value


def test_facilitator_flags_with_a_reason_and_withdraws_by_label_and_code(env):
    tmp_path, store = env
    spec = load_study(tmp_path / "studies" / "mini" / "study.yaml")
    a, b = join(store, spec), join(store, spec)
    code = store.completion_code(b.participant, 1)
    at = open_page("facilitator")
    at.text_input(key="facilitator_login_pw").input(PASSWORD)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert any("stage=pilot" in c.value for c in at.caption)

    at.selectbox(key="fac_flag_who").set_value("P1 · active")
    at.text_input(key="fac_flag_reason").input("used a second monitor")
    at.button(key="FormSubmitter:fac_flag-Flag (exclude from analysis)").click().run()
    row = store.participant(a.participant)
    assert row["flagged"] and row["flag_reason"] == "used a second monitor"

    at.text_input(key="fac_wd_who").input("P9")
    at.checkbox(key="fac_wd_sure").check()
    at.button(key="FormSubmitter:fac_withdraw-Withdraw").click().run()
    assert "no participant 'P9'" in at.error[0].value
    at.text_input(key="fac_wd_who").input(code.lower())
    at.checkbox(key="fac_wd_sure").check()
    at.button(key="FormSubmitter:fac_withdraw-Withdraw").click().run()
    assert not at.exception, at.exception
    assert any(s.value.startswith("P2 withdrawn (deleted)") for s in at.success), (
        [e.value for e in at.error], [s.value for s in at.success])
    assert store.participant(b.participant) is None
    at.text_input(key="fac_wd_who").input("P1")
    at.checkbox(key="fac_wd_sure").check()
    at.button(key="FormSubmitter:fac_withdraw-Withdraw").click().run()
    assert [w["number"] for w in withdrawals(store, "mini")] == [2, 1]
    assert all(w["by"] == "researcher" for w in withdrawals(store, "mini"))
