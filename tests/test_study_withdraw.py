"""Withdrawal (delete or keep-excluded), pilot stage, and flags with a reason, on both backends."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, update

from study import schema as S
from study.analysis.data import filter_data, load_study_data
from study.assignment import slot_counts
from study.audio import save_recording
from study.facilitator import flag, overview
from study.runner import Runner, join
from study.spec import load_study, parse_study
from study.store import open_store
from study.withdraw import WithdrawError, find_participant, withdraw, withdrawals
from tests.pg import run_sql
from tests.study_flow_fixtures import MINI, write_mini


def _spec(tmp_path, extra: str = ""):
    return load_study(write_mini(tmp_path / "studies", text=MINI + extra))


def _rows(store, table, pid) -> int:
    t = S.metadata.tables[table]
    with store.read() as conn:
        return int(conn.execute(select(func.count()).select_from(t).where(
            t.c.participant == pid)).scalar_one())


def _busy(store, spec, tmp_path) -> Runner:
    """A participant with answers, a code, audio and a researcher code."""
    r = join(store, spec)
    r.answer("demographics/sql_expertise", "advanced")
    save_recording(r.participant, "t1", b"RIFF....", root=tmp_path / "audio")
    store.add_code(r.participant, "completion:solved", "AB", 5)
    store.completion_code(r.participant, 6)
    return r


def test_withdraw_deletes_everything_and_keeps_an_anonymous_record(store_url, tmp_path):
    spec = _spec(tmp_path)
    store = open_store(store_url)
    other = join(store, spec)
    r = _busy(store, spec, tmp_path)
    pid, number, cell = r.participant, r.assignment.number, r.assignment.cell
    rec = withdraw(store, spec, pid, by="participant", now=10**6, audio=tmp_path / "audio")
    assert rec["mode"] == "deleted" and rec["number"] == number and rec["cell"] == cell
    assert rec["counts"]["answers"] == 1 and rec["counts"]["audio_files"] == 1
    assert rec["counts"]["events"] >= 4
    for table in ("events", "answers", "progress", "sessions", "completion_codes", "codes",
                  "participants"):
        assert _rows(store, table, pid) == 0, table
    assert not (tmp_path / "audio" / pid).exists()
    (stored,) = withdrawals(store, spec.id)
    assert pid not in str(stored) and stored["by"] == "participant"
    assert store.participant(other.participant) is not None  # nobody else touched
    again = join(store, spec)  # the slot is free again; numbers are never reused
    assert again.assignment.cell == cell and again.assignment.number == number + 1
    with pytest.raises(WithdrawError, match="already withdrawn and deleted"):
        withdraw(store, spec, pid, by="participant", now=10**6)


@pytest.mark.parametrize("keep", [False, True])
def test_an_open_session_writes_nothing_after_a_withdrawal(tmp_path, keep):
    spec = _spec(tmp_path, "withdrawal: keep\n" if keep else "")
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    r = join(store, spec)  # e.g. the participant's tab, still open
    withdraw(store, spec, r.participant, by="researcher", now=1, audio=tmp_path / "audio")
    n_events, n_answers = _rows(store, "events", r.participant), _rows(store, "answers",
                                                                        r.participant)
    assert r.withdrawn()
    assert r.log("space.click", {"candidate_id": 1}).inserted is False
    assert r.answer("demographics/sql_expertise", "advanced") is False
    assert r.advance(r.current().id) is None
    assert _rows(store, "events", r.participant) == n_events
    assert _rows(store, "answers", r.participant) == n_answers


def test_withdraw_keep_mode_excludes_and_releases_the_slot(tmp_path):
    spec = _spec(tmp_path, "withdrawal: keep\n")
    assert spec.withdrawal == "keep"
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    r = _busy(store, spec, tmp_path)
    now = int(r.clock() * 1000)
    assert slot_counts(store, spec, now=now) == [1]
    rec = withdraw(store, spec, r.participant, by="researcher", now=now,
                   audio=tmp_path / "audio")
    assert rec["mode"] == "kept"
    assert store.participant(r.participant)["status"] == "withdrawn"
    assert _rows(store, "answers", r.participant) == 1  # kept...
    assert (tmp_path / "audio" / r.participant).is_dir()
    assert slot_counts(store, spec, now=now) == [0]  # ...but the slot is released
    data = load_study_data(store, spec.id)
    assert filter_data(data, include_flagged=True, include_simulated=True).ids == []
    assert any(e.type == "session.end" and e.payload["status"] == "withdrawn"
               for e in data.events)
    with pytest.raises(WithdrawError, match="already withdrawn"):
        withdraw(store, spec, r.participant, by="researcher", now=now)


def test_find_participant_by_label_or_completion_code(tmp_path):
    spec = _spec(tmp_path)
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    a, b = join(store, spec), join(store, spec)
    code = store.completion_code(b.participant, 1)
    assert find_participant(store, spec.id, "P1") == a.participant
    assert find_participant(store, spec.id, " 2 ") == b.participant
    assert find_participant(store, spec.id, code.lower()) == b.participant
    with pytest.raises(WithdrawError, match="enter a label such as P3"):
        find_participant(store, spec.id, "P9")
    with store.write() as conn:  # a code of digits only is still found as a code
        conn.execute(update(S.completion_codes).values(code="00000001"))
    assert find_participant(store, spec.id, "00000001") == b.participant
    assert find_participant(store, spec.id, "1") == a.participant
    with pytest.raises(WithdrawError, match="completion code"):
        find_participant(store, spec.id, "NOPE")


def test_pilot_stage_and_flags_reach_the_analysis_filters(store_url, tmp_path):
    spec = _spec(tmp_path)
    store = open_store(store_url)
    main = join(store, spec)
    pilot = join(store, spec, stage="pilot")
    flagged = join(store, spec)
    flag(store, spec, flagged.participant, "fac-1", reason="did not follow the instructions")
    assert store.participant(pilot.participant)["stage"] == "pilot"
    row = store.participant(flagged.participant)
    assert row["flagged"] and row["flag_reason"] == "did not follow the instructions"
    ov = {r["participant"]: r for r in overview(store, spec, now=10**13)}
    assert ov[flagged.participant]["flag_reason"] == "did not follow the instructions"
    assert ov[pilot.participant]["stage"] == "pilot"
    data = load_study_data(store, spec.id)
    assert set(filter_data(data).ids) == {main.participant, pilot.participant}
    assert filter_data(data, stages=["pilot"]).ids == [pilot.participant]
    assert set(filter_data(data, stages=["main"], include_flagged=True).ids) == {
        main.participant, flagged.participant}
    with pytest.raises(ValueError, match="say why"):
        flag(store, spec, main.participant, "fac-1", reason=" ")
    flag(store, spec, flagged.participant, "fac-1", reason="", flagged=False)
    assert not store.participant(flagged.participant)["flagged"]
    assert store.participant(flagged.participant)["flag_reason"] is None


def test_study_file_stage_and_bad_values(tmp_path):
    spec = _spec(tmp_path, "stage: pilot\n")
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    assert join(store, spec).assignment.stage == "pilot"
    assert join(store, spec, stage="main").assignment.stage == "main"
    from study.spec_check import StudySpecError
    with pytest.raises(StudySpecError, match="'pilto' is not allowed"):
        parse_study(MINI + "stage: pilto\n", tmp_path / "studies" / "mini" / "study.yaml")
    with pytest.raises(StudySpecError, match="withdrawal"):
        parse_study(MINI + "withdrawal: erase\n", tmp_path / "studies" / "mini" / "study.yaml")


def test_schema_v1_database_is_upgraded_in_place(tmp_path):
    url = f"sqlite:///{tmp_path / 'v1.sqlite'}"
    store = open_store(url)
    store.close()
    run_sql(url, "DROP TABLE withdrawals", "DROP TABLE llm_spend",  # back to a version-1 file
            "ALTER TABLE participants DROP COLUMN flag_reason",
            "UPDATE schema_meta SET value = '1' WHERE key = 'version'")
    spec = _spec(tmp_path)
    store = open_store(url)
    r = join(store, spec)
    flag(store, spec, r.participant, "f", reason="test run")
    assert store.participant(r.participant)["flag_reason"] == "test run"
    assert withdrawals(store, spec.id) == []
