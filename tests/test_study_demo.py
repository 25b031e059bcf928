"""The demo simulation: its own database, realistic variety, and what Analysis shows of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.settings import demo_db_url
from study import simulate_demo
from study.analysis import workflows as W
from study.analysis.data import filter_data, load_study_data
from study.export import build_tables, find_spec
from study.store import open_store
from tests.study_flow_fixtures import open_tab

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "analysis.py")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.sqlite'}"
    store = open_store(url, sqlite_synchronous="OFF")
    simulate_demo.simulate_participants(store, 14, seed=3)
    return url, store


def test_default_database_is_the_demo_one_and_the_live_one_is_refused(monkeypatch, tmp_path):
    assert demo_db_url().endswith("logs/demo.sqlite")
    live = f"sqlite:///{tmp_path / 'live.sqlite'}"
    monkeypatch.setenv("PLEASQLARIFY_DB_URL", live)
    with pytest.raises(SystemExit):
        simulate_demo.main(["--participants", "1", "--db", live])
    assert not (tmp_path / "live.sqlite").exists()


def test_unknown_study_is_one_clear_error_and_writes_nothing(tmp_path, capsys):
    db = tmp_path / "demo.sqlite"
    with pytest.raises(SystemExit) as done:
        simulate_demo.main(["--participants", "1", "--study", "nope", "--db", f"sqlite:///{db}"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "--study nope: no such study file" in err
    assert "film-two-conditions" in err and "Traceback" not in err and not db.exists()


def test_study_can_be_named_by_id_whatever_its_file_name():
    assert simulate_demo.resolve_study("film-two-conditions").path.name == \
        "study-two-conditions.yaml"


def test_sessions_vary_in_outcome_workflow_and_sus(demo):
    _, store = demo
    data = filter_data(load_study_data(store, "film"), include_simulated=True)
    tables = build_tables(data, find_spec("film"))
    codes = set(tables["completion"]["suggested"].dropna())
    assert {"solved", "not-solved"} <= codes and codes & {"partial-better",
                                                          "partial-not-original"}
    labels = set(W.workflow_table(data)["rule_label"])
    assert {"W1", "W2", "W3", "mixed"} <= labels
    sus = tables["sus"]["sus"]
    assert sus.max() - sus.min() > 25
    statuses = {p["status"] for p in data.participants}
    assert statuses == {"completed", "abandoned"}


def test_completion_counts_only_tasks_the_participant_reached(demo):
    _, store = demo
    data = filter_data(load_study_data(store, "film"), include_simulated=True)
    comp = build_tables(data, find_spec("film"))["completion"]
    for p in data.participants:
        rows = comp[(comp["participant"] == p["participant"]) & (comp["subtask"] == "3")]
        reached = {e.task for e in data.events_of(p["participant"]) if e.type == "timer.start"}
        assert set(rows["task"]) == reached
        if p["status"] == "abandoned":
            assert len(rows) < len(p["task_order"])


def test_workflow_sessions_and_annotations_are_labelled(demo, monkeypatch):
    url, store = demo
    monkeypatch.setenv("PLEASQLARIFY_DB_URL", url)
    monkeypatch.setenv("PLEASQLARIFY_RESEARCHER_PASSWORD", "s3cret")
    at = AppTest.from_file(PAGE, default_timeout=90).run()
    at.text_input(key="analysis_pw").input("s3cret")
    at.button[0].click().run()
    at.checkbox(key="an_sim_live").check().run()
    assert not at.exception
    open_tab(at, "Workflows")
    picker = at.selectbox(key="an_sess")
    first = picker.options[0]
    assert first.startswith("P") and " actions" in first and "·" in first
    assert int(first.rsplit("· ", 1)[1].split()[0]) > 0
    open_tab(at, "Timings")
    notes = next(d.value for d in at.dataframe if "who" in d.value.columns)
    assert notes["who"].str.match(r"^P\d+$").all()
    assert notes["time"].str.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$").all()
