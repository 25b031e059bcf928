"""Issue 24: the Analysis page's first load draws few elements, and none whose component
JavaScript loads late (a metric's did, and the first load waited for it): the Completion tab's
rates, caption and grid are one HTML block, and the Data radio is drawn only with a choice."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from study.analysis.completion import completion_rate
from study.simulate_demo import simulate_participants
from study.store import open_store
from tests.html_tables import read_tables
from tests.study_flow_fixtures import open_tab, study_env
from ui import analysis_cache

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "analysis.py")
FILTERS = {"conditions": None, "stages": None, "include_flagged": False,
           "include_simulated": True}


@pytest.fixture()
def unlocked(tmp_path, monkeypatch):
    """The page on a database of 3 simulated participants, unlocked, simulated ones shown;
    returns (the AppTest after that run, the store)."""
    url = study_env(tmp_path, monkeypatch, "s3cret")
    monkeypatch.setenv("PLEASQLARIFY_DEMO_DB_URL", f"sqlite:///{tmp_path / 'no-demo.sqlite'}")
    store = open_store(url, sqlite_synchronous="OFF")
    simulate_participants(store, 3, seed=2)

    def run() -> AppTest:
        at = AppTest.from_file(PAGE, default_timeout=90)
        at.session_state["researcher"] = True  # unlocked (tests.test_analysis_export: the form)
        at.run()
        at.checkbox(key="an_sim_live").check().run()
        assert not at.exception and len(at.tabs) == 6
        return at
    return run, store, tmp_path


def _elements(node):
    for child in getattr(node, "children", {}).values():
        yield child
        yield from _elements(child)


def test_completion_head_is_one_html_block_with_the_rates(unlocked) -> None:
    """No metric and no caption in the first tab: both rates (as the metrics showed them),
    the caption and the grid are one escaped HTML element."""
    run, store, _ = unlocked
    at = run()
    tab = at.tabs[0]
    assert tab.label == "Completion"
    kinds = [e.type for e in _elements(tab)]
    assert "metric" not in kinds and not at.caption
    (head,) = [h.value for h in at.html if "pq-grid" in h.value]
    comp = analysis_cache.prepare(store, "film", FILTERS).tables["completion"]
    shown = dict(zip(map(unescape, re.findall(r'pq-stat-label">([^<]*)<', head)),
                     map(unescape, re.findall(r'pq-stat-value">([^<]*)<', head)), strict=True))
    assert shown == {"Completion rate (coded cells)": "—",  # nothing coded yet
                     "Completion rate (tool's suggestions)":
                         f"{completion_rate(comp, 'suggested'):.1%}"}
    assert "Task completion per participant" in head
    assert len(read_tables(head)[0][0]) == 3  # the grid: a row per participant
    # the first tab draws its head, the "every cell" toggle and the coding form, no more
    assert kinds.count("html") == 1 and len(kinds) <= 16, kinds


def test_data_radio_only_when_there_is_a_demo_database(unlocked, monkeypatch) -> None:
    """One source is no choice: no radio (its component was loaded for nothing); with a demo
    database beside the study's, the radio offers both."""
    run, _, tmp_path = unlocked
    assert not run().radio
    demo = tmp_path / "demo.sqlite"
    open_store(f"sqlite:///{demo}").close()
    monkeypatch.setenv("PLEASQLARIFY_DEMO_DB_URL", f"sqlite:///{demo}")
    (radio,) = run().radio
    assert radio.key == "an_source" and radio.options == ["Study database", "Demo (simulated)"]


def _drawn_tabs(at: AppTest) -> set[str]:
    """The tabs whose body this run drew (each tab's own widget or text present)."""
    keys = {getattr(w, "key", None) for kind in ("toggle", "selectbox", "slider")
            for w in at.get(kind)}
    marks = {"Completion": "an_comp_show", "Timings": "an_tim_sub", "Workflows": "an_dom"}
    return {name for name, key in marks.items() if key in keys}


def test_another_study_or_filter_draws_only_the_open_tab(unlocked) -> None:
    """Tabs opened in one view are redrawn while it stays (going back is client-side), but a
    study switch, also back to a study whose tabs were opened, or a filter draws the open tab
    alone: the others would be computed and sent for nothing (issue 24)."""
    run, store, tmp_path = unlocked
    film = Path(__file__).resolve().parent.parent / "studies" / "film"
    other = tmp_path / "studies" / "two" / "study.yaml"  # the study dir the page searches
    other.parent.mkdir(parents=True)
    other.write_text((film / "study-two-conditions.yaml").read_text(encoding="utf-8").replace(
        "task_bank: tasks.jsonl", f"task_bank: {film / 'tasks.jsonl'}"), encoding="utf-8")
    simulate_participants(store, 2, study=other, seed=3)
    at = run()
    assert _drawn_tabs(at) == {"Completion"}
    open_tab(at, "Timings")
    open_tab(at, "Workflows")
    open_tab(at, "Completion")
    assert _drawn_tabs(at) == {"Completion", "Timings", "Workflows"}  # kept within the view
    at.selectbox(key="an_study_live").set_value("film-two-conditions").run()
    assert not at.exception and at.session_state["an_tabs"] == "Completion"
    assert _drawn_tabs(at) == {"Completion"}
    at.selectbox(key="an_study_live").set_value("film").run()
    assert not at.exception and _drawn_tabs(at) == {"Completion"}  # not the three opened before
    open_tab(at, "Timings")
    assert _drawn_tabs(at) == {"Completion", "Timings"}
    at.multiselect(key="an_stage").set_value(["main"]).run()
    assert not at.exception and _drawn_tabs(at) == {"Timings"}  # the open one, for the filter



def test_coding_form_is_drawn_on_request(unlocked) -> None:
    """A first load draws no select box in the Completion tab: the coding form (four of them)
    comes when "Code cells" is switched on, and stays while it is."""
    run, _, _ = unlocked
    at = run()
    form = {"an_code_p", "an_code_t", "an_code_s", "an_code_c"}

    def boxes() -> set:
        return {getattr(e, "key", None) for e in _elements(at.tabs[0]) if e.type == "selectbox"}
    assert not boxes()
    at.toggle(key="an_code_on").set_value(True).run()
    assert not at.exception and boxes() == form
    at.toggle(key="an_comp_show").set_value(True).run()  # another widget of the tab
    assert boxes() == form
