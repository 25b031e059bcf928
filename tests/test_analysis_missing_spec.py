"""Analysis never drops data silently: a study in $PLEASQLARIFY_STUDIES_DIR is found, a missing
study file is reported (SUS still scored from the built-in questionnaire), and every export
writes a manifest with counts per table and what was excluded."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from study.analysis.data import load_study_data
from study.analysis.specs import find_study_spec
from study.export import main as export_main
from study.runner import join
from study.spec import load_study
from study.store import open_store
from study.withdraw import withdraw
from tests.study_flow_fixtures import MINI, ROOT, open_tab, study_env, write_mini

LAB = MINI.replace("  - use: demographics\n", "  - use: demographics\n  - use: sus7\n")


@pytest.fixture()
def lab(tmp_path, monkeypatch):
    """Study 'lab' (with SUS) in a tmp studies dir; two participants with SUS, one withdrawn."""
    path = write_mini(tmp_path / "studies", "lab", LAB)
    url = study_env(tmp_path, monkeypatch, "pw")
    store = open_store(url)
    spec = load_study(path)
    for k in range(3):
        r = join(store, spec)
        for i in range(1, 11):
            r.answer(f"sus7/sus{i}", 2 + (i + k) % 5)
    withdraw(store, spec, r.participant, by="researcher", now=1)
    return tmp_path, url, store, path


def test_study_file_in_the_studies_dir_is_found(lab):
    _, _, store, path = lab
    look = find_study_spec("lab", load_study_data(store, "lab"))
    assert look.spec is not None and look.spec.path == path and look.problems == ()


def test_missing_study_file_is_reported_and_sus_still_scored(lab, capsys):
    tmp_path, url, store, path = lab
    path.rename(path.with_name("moved.txt"))
    look = find_study_spec("lab", load_study_data(store, "lab"))
    assert look.spec is None and [q.id for q in look.questionnaires] == ["sus7"]
    assert "study file of 'lab' was not found" in look.problems[0]
    assert "All 20 stored answers" in look.problems[0]
    assert export_main(["--db", url, "--out", str(tmp_path / "out"), "--study", "lab"]) == 0
    assert "warning: The study file of 'lab' was not found" in capsys.readouterr().out
    meta = json.loads((tmp_path / "out" / "lab" / "manifest.json").read_text())
    assert meta["counts"]["sus"] == 2 and meta["counts"]["answers"] == 20
    assert meta["counts"]["participants"] == 2 and meta["withdrawals"] == 1
    assert meta["study_file"] is None and meta["problems"] == list(look.problems)
    assert meta["answers_stored"] == 20 and meta["participants_stored"] == 2
    events = len(load_study_data(store, "lab").events)
    assert meta["counts"]["events"] == meta["events_stored"] == events


def test_manifest_counts_exclusions(lab):
    tmp_path, url, store, _ = lab
    (p1, _p2) = store.participants("lab")
    store.set_flagged(p1["participant"], True, "test")
    assert export_main(["--db", url, "--out", str(tmp_path / "o2"), "--study", "lab"]) == 0
    meta = json.loads((tmp_path / "o2" / "lab" / "manifest.json").read_text())
    assert meta["excluded"] == {"flagged": 1} and meta["counts"]["participants"] == 1
    assert meta["study_file"].endswith("lab/study.yaml") and meta["problems"] == []


def test_analysis_page_says_what_is_missing_and_shows_sus(lab):
    _, _, _, path = lab
    path.rename(path.with_name("moved.txt"))
    at = AppTest.from_file(str(ROOT / "pages" / "analysis.py"), default_timeout=90).run()
    at.text_input(key="analysis_pw").input("pw")
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert any("study file of 'lab' was not found" in w.value for w in at.warning)
    open_tab(at, "Questionnaires")
    assert not any("No complete SUS answers" in i.value for i in at.info)
    assert any(m.label == "SUS mean" for m in at.metric)
    open_tab(at, "Export")
    manifest = next(d.value for d in at.dataframe if list(d.value.columns) == ["table", "rows"])
    assert dict(zip(manifest["table"], manifest["rows"], strict=True))["sus"] == 2
