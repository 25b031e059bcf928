"""Demo simulation, export round-trip (CSV and Parquet read back) and the analysis page."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from study.analysis.data import filter_data, load_study_data
from study.analysis.figures import GRID_LABELS, SUGGESTED_MARK, part_headers
from study.analysis.workflows import workflow_table
from study.export import CODEBOOK
from study.export import main as export_main
from study.simulate_demo import simulate_participants
from study.store import open_store
from study.trace import EVENT_TYPES
from tests.html_tables import read_tables
from tests.study_flow_fixtures import open_tab
from ui import analysis_tabs

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "analysis.py")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'study.sqlite'}"
    store = open_store(url, sqlite_synchronous="OFF")
    ids = simulate_participants(store, 3, seed=1)
    return url, store, ids


def test_simulated_participants_are_flagged_and_complete(demo_db):
    _, store, ids = demo_db
    data = load_study_data(store, "film")
    assert sorted(data.ids) == sorted(ids)
    assert all(p["simulated"] and p["status"] == "completed" for p in data.participants)
    assert filter_data(data).ids == []
    sim = filter_data(data, include_simulated=True)
    labels = set(workflow_table(sim)["rule_label"])
    assert {"W1", "W2"} <= labels
    # each of the 3 × 5 tasks ends in exactly one submit or a facilitator's "gave up" marker
    # (the demo lets ~10 % of tasks end without a submission, as real sessions do)
    submits = sum(e.type == "submit" for e in sim.events)
    gave_up = sum(e.type == "marker" and (e.payload or {}).get("label") == "gave up"
                  for e in sim.events)
    assert submits + gave_up == 3 * 5 and submits > 0


def test_export_round_trips(demo_db, tmp_path):
    url, store, _ = demo_db
    assert export_main(["--db", url, "--out", str(tmp_path), "--include-simulated"]) == 0
    out = tmp_path / "film"
    ev_csv = pd.read_csv(out / "events.csv", keep_default_na=False)
    ev_pq = pd.read_parquet(out / "events.parquet")
    assert len(ev_csv) == len(ev_pq) == store.count_events(study="film")
    assert list(ev_csv["type"]) == [e["type"] for e in store.events(study="film")]
    assert (ev_pq["server_ts"].to_numpy() == ev_csv["server_ts"].to_numpy()).all()
    sus_csv = pd.read_csv(out / "sus.csv").sort_values("participant")
    sus_pq = pd.read_parquet(out / "sus.parquet").sort_values("participant")
    assert len(sus_csv) == 3
    assert sus_csv["sus"].round(6).tolist() == sus_pq["sus"].round(6).tolist()
    tim = pd.read_parquet(out / "timers.parquet")
    assert (tim["active_s"] > 0).all()
    bundle = json.loads((out / "bundle.json").read_text())
    assert len(bundle["answers"]) == len(pd.read_csv(out / "answers.csv"))
    book = json.loads((out / "codebook.json").read_text())
    assert set(book["event_types"]) == set(EVENT_TYPES)
    for name, spec in CODEBOOK.items():
        assert list(pd.read_parquet(out / f"{name}.parquet").columns) == list(spec["columns"])
    assert "| `dv.accept` |" in (out / "codebook.md").read_text()
    assert export_main(["--db", url, "--out", str(tmp_path / "real")]) == 0
    assert pd.read_csv(tmp_path / "real" / "film" / "participants.csv").empty


def test_analysis_page(demo_db, monkeypatch):
    url, store, _ = demo_db
    monkeypatch.setenv("PLEASQLARIFY_DB_URL", url)
    monkeypatch.setenv("PLEASQLARIFY_RESEARCHER_PASSWORD", "s3cret")
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.tabs
    at.text_input(key="analysis_pw").input("wrong")
    at.button[0].click().run()
    assert at.error and not at.tabs
    at.text_input(key="analysis_pw").input("s3cret")
    at.button[0].click().run()
    assert any("hidden unless included" in i.value for i in at.info)
    at.checkbox(key="an_sim_live").check().run()
    assert not at.exception and len(at.tabs) == 6
    assert not [h for h in at.html if 'aria-label="Every cell' in h.value]  # shown on request
    at.toggle(key="an_comp_show").set_value(True).run()
    _completion_grid_matches_the_table(at)
    at.text_input(key="an_coder").input("ab").run()
    at.toggle(key="an_code_on").set_value(True).run()
    at.selectbox(key="an_code_s").set_value("3")
    at.selectbox(key="an_code_c").set_value("partial-better")
    next(b for b in at.button if b.label == "Store code").click().run()
    assert not at.exception
    codes = store.codes()
    assert [(c["code"], c["coder"], c["subtask"]) for c in codes] == [
        ("completion:partial-better", "ab", "3")]
    _completion_grid_matches_the_table(at)  # the stored code, no longer '(suggested)'
    assert (_completion_tables(at)[0] == GRID_LABELS["partial-better"]).to_numpy().sum() >= 1
    # the per-cell table as the sortable grid component, on request: the same rows
    shown = _completion_tables(at)[1]
    at.toggle(key="an_comp_sort").set_value(True).run()
    grid = at.dataframe[0].value
    assert not at.exception and list(grid.columns) == list(shown.columns)
    assert list(grid["label"]) == list(shown["label"]) and len(grid) == len(shown)
    at.toggle(key="an_comp_sort").set_value(False).run()
    assert not at.dataframe and _completion_tables(at)[1].equals(shown)
    # a per-cell table too long for HTML is the data grid itself, no toggle to ask for it
    monkeypatch.setattr(analysis_tabs, "HTML_ROWS", len(shown) - 1)
    at.run()
    assert len(at.dataframe[0].value) == len(shown)
    assert not [t for t in at.toggle if t.key == "an_comp_sort"]
    assert not at.get("slider")  # only the open tab (Completion) is drawn
    open_tab(at, "Timeline & replay")
    at.slider(key="an_rp_k").set_value(2).run()
    assert not at.exception and not at.error
    assert any("Replay matches" in c.value for c in at.caption)


def _completion_grid_matches_the_table(at: AppTest) -> None:
    """The Completion tab's grid and per-cell table are HTML (no Plotly chart, no data grid: the
    first tab must not load either component), and the grid says for each participant and part
    what the per-cell table says."""
    def elements(node):
        for child in getattr(node, "children", {}).values():
            yield child
            yield from elements(child)
    assert not [e for e in elements(at.main) if e.type in ("plotly_chart", "arrow_data_frame")]
    grid, table = _completion_tables(at)
    assert len(grid) == table["label"].nunique() > 0
    assert {"reason", "coder", "coded_at", "confirmed"} <= set(table.columns)
    parts = list(dict.fromkeys(f"{t} · {s}" for t, s in zip(table["task"], table["subtask"],
                                                             strict=True)))
    header = {p: h for p, (h, _) in zip(parts, part_headers(parts), strict=True)}
    assert list(grid.columns) == [header[p] for p in sorted(parts, key=lambda p: not
                                                            p.endswith(" · 3"))]
    for row in table.itertuples():
        code = row.final or row.suggested
        want = ("uncoded" if not code else GRID_LABELS[code]
                + ("" if row.final else SUGGESTED_MARK))
        assert grid.loc[row.label, header[f"{row.task} · {row.subtask}"]] == want


def _completion_tables(at: AppTest) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Completion tab's grid (participant × part) and its per-cell table, as drawn."""
    bodies = [h.value for h in at.html]
    grid = read_tables(next(b for b in bodies if "pq-grid" in b))[0][0]
    cells = read_tables(next(b for b in bodies if 'aria-label="Every cell' in b))[0][0]
    return grid, cells.reset_index()


def test_export_from_a_missing_or_empty_database_says_so(tmp_path, capsys):
    missing = tmp_path / "typo" / "study.sqlite"
    with pytest.raises(SystemExit) as done:
        export_main(["--db", f"sqlite:///{missing}", "--out", str(tmp_path / "out")])
    assert done.value.code == 2 and f"no study database at {missing}" in capsys.readouterr().err
    assert not missing.parent.exists()  # a mistyped path is not created
    empty = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    open_store(empty).close()
    assert export_main(["--db", empty, "--out", str(tmp_path / "out")]) == 1
    assert "holds no study" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_tab_rerun_in_a_locked_session_draws_nothing(tmp_path, monkeypatch):
    """A tab is a fragment, rerun without the page's gate: it checks the session itself."""
    from tests.study_flow_fixtures import study_env

    study_env(tmp_path, monkeypatch, "s3cret")

    def app() -> None:
        from ui.analysis_tabs import render_tabs

        render_tabs(None)  # never reached past the check: no view is needed
    at = AppTest.from_function(app, default_timeout=60).run()
    assert not at.exception and not at.tabs
    assert any("were locked" in w.value for w in at.warning)


@pytest.fixture(scope="module")
def mixed_db(tmp_path_factory):
    """Three simulated participants, the first of them a pilot (a pilot link's join)."""
    from sqlalchemy import update

    from study import schema as S
    url = f"sqlite:///{tmp_path_factory.mktemp('mixed') / 'study.sqlite'}"
    store = open_store(url, sqlite_synchronous="OFF")
    ids = simulate_participants(store, 3, seed=2)
    with store.engine.begin() as conn:
        conn.execute(update(S.participants).where(S.participants.c.participant == ids[0])
                     .values(stage="pilot"))
    return url, store, ids


def test_export_filters_by_stage_and_says_what_it_mixes(mixed_db, tmp_path, capsys):
    """The export had no stage filter: pilot participants went out with the real ones, and
    nothing said so (the command line, the manifest, the Export tab)."""
    url, _, ids = mixed_db
    sim = ["--db", url, "--include-simulated"]
    assert export_main([*sim, "--out", str(tmp_path / "all")]) == 0
    out = capsys.readouterr().out
    assert "3 participants (2 main, 1 pilot)" in out and "--stage main" in out
    meta = json.loads((tmp_path / "all" / "film" / "manifest.json").read_text())
    assert meta["participants_by_stage"] == {"main": 2, "pilot": 1}
    assert export_main([*sim, "--out", str(tmp_path / "main"), "--stage", "main"]) == 0
    main = pd.read_csv(tmp_path / "main" / "film" / "participants.csv")
    assert ids[0] not in set(main["participant"]) and len(main) == 2
    meta = json.loads((tmp_path / "main" / "film" / "manifest.json").read_text())
    assert meta["filters"]["stages"] == ["main"] and meta["participants_by_stage"] == {"main": 2}
    assert meta["excluded"] == {"filtered (condition or stage)": 1}
    assert export_main([*sim, "--out", str(tmp_path / "pilot"), "--stage", "pilot"]) == 0
    pilot = pd.read_csv(tmp_path / "pilot" / "film" / "participants.csv")
    assert list(pilot["participant"]) == [ids[0]]


def test_the_export_tab_warns_when_main_and_pilot_are_mixed(mixed_db, monkeypatch):
    url, _, _ = mixed_db
    monkeypatch.setenv("PLEASQLARIFY_DB_URL", url)
    monkeypatch.setenv("PLEASQLARIFY_RESEARCHER_PASSWORD", "s3cret")
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="analysis_pw").input("s3cret")
    at.button[0].click().run()
    at.checkbox(key="an_sim_live").check().run()
    open_tab(at, "Export")
    assert not at.exception
    assert any("**2** main, **1** pilot" in m.value for m in at.markdown)
    assert any("mixes main and pilot" in w.value for w in at.warning)
    at.multiselect(key="an_stage").set_value(["main"]).run()
    open_tab(at, "Export")
    assert any(m.value.endswith("**2** main") for m in at.markdown)
    assert not any("mixes main and pilot" in w.value for w in at.warning)


def test_the_completion_tab_says_no_task_was_reached_yet(tmp_path, monkeypatch):
    """A live study whose only participant is still before the first task showed an empty
    grid headed 'participant', a toggle 'Show every cell (0)' and an empty coding form."""
    from study.runner import join
    from study.spec import load_study

    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    root = Path(__file__).resolve().parent.parent
    join(open_store(url), load_study(root / "studies" / "film" / "study.yaml"))
    monkeypatch.setenv("PLEASQLARIFY_DB_URL", url)
    monkeypatch.setenv("PLEASQLARIFY_RESEARCHER_PASSWORD", "s3cret")
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="analysis_pw").input("s3cret")
    at.button[0].click().run()
    assert not at.exception and len(at.tabs) == 6
    assert any(i.value.startswith("No task reached yet: 1 participant of") for i in at.info)
    assert not [t for t in at.toggle if t.key in ("an_comp_show", "an_code_on")]
