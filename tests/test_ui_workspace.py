"""AppTest: every workspace control changes the repair session as it should and logs one event."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.bank_helpers import (
    answer,
    answer_enabled,
    clause_buttons,
    component_data,
    component_html,
    fire,
    make_bank,
    painted,
    select_points,
    selection_value,
    survivors,
    task_ids,
)


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-task AMBROSIA bank with precomputed pools."""
    return make_bank(tmp_path_factory.mktemp("bank"))


def _app(bank: str, task_id: str, mode: str) -> None:
    import streamlit as st

    from ui.bank_cache import task_pool
    from ui.workspace import render_workspace

    events = st.session_state.setdefault("events", [])
    submitted = st.session_state.setdefault("submitted", [])
    render_workspace(task_pool(bank, task_id), mode=mode,
                     log=lambda t, p: events.append((t, p)),
                     on_submit=lambda i, sql: submitted.append((i, sql)))


def _start(bank: Path, index: int = 2, mode: str = "free") -> tuple[AppTest, str]:
    task = task_ids(bank)[index]
    at = AppTest.from_function(_app, args=(str(bank), task, mode), default_timeout=60)
    painted(at.run())
    assert not at.exception, at.exception
    return at, task


def painted_pending(at: AppTest) -> bool:
    """The workspace's carrier still asks the browser for "painted" (a first render)."""
    carriers = [e.key for e in at.get("bidi_component")
                if str(getattr(e, "key", "")).endswith("next_views")]
    return bool(carriers) and "defer" in component_data(at, carriers[0])


def _ws(at: AppTest, task: str, mode: str = "free"):
    return at.session_state[f"pleasqlarify.workspace.{mode}.{task}"]


def _key(task: str, name: str) -> str:
    return f"pleasqlarify.{task}.{name}"


def _survivor_text(at: AppTest, task: str) -> str:
    return survivors(at, _key(task, ""))


def test_yes_keeps_the_queries_with_the_variable_and_logs_dv_accept(bank: Path) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    variable = ws.session.next_variable()
    answer(at, _key(task, ""), True)
    assert not at.exception
    assert ws.session.step == 1
    assert len(ws.session.survivors) == variable.yes_count
    assert f"<b>{variable.yes_count}</b> of" in _survivor_text(at, task)
    kind, payload = at.session_state["events"][-1]
    assert kind == "dv.accept"
    assert payload["features"] == list(variable.keys)
    assert payload["survivors_after"] == variable.yes_count
    assert payload["step"] == 1


def test_no_then_back_restores_every_candidate(bank: Path) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    n = ws.session.pool.n
    variable = ws.session.next_variable()
    answer(at, _key(task, ""), False)
    assert len(ws.session.survivors) == variable.no_count
    assert at.session_state["events"][-1][0] == "dv.reject"
    at.button(key=_key(task, "dv.back")).click().run()
    assert ws.session.step == 0 and len(ws.session.survivors) == n
    kind, payload = at.session_state["events"][-1]
    assert kind == "undo" and payload["undone"]["answer"] is False
    assert at.button(key=_key(task, "dv.back")).disabled


def test_browse_down_and_up_changes_the_shown_variable_without_deciding(bank: Path) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    ranked = ws.session.variables()
    assert len(ranked) > 1
    at.button(key=_key(task, "dv.down")).click().run()
    assert ws.browse == 1 and ws.session.step == 0
    assert at.session_state["events"][-1] == ("dv.browse", at.session_state["events"][-1][1])
    assert at.session_state["events"][-1][1]["features"] == list(ranked[1].keys)
    answer(at, _key(task, ""), True)  # answers the browsed-to variable
    assert at.session_state["events"][-1][1]["features"] == list(ranked[1].keys)
    assert len(ws.session.survivors) == ranked[1].yes_count
    assert ws.browse == 0
    at.button(key=_key(task, "dv.back")).click().run()
    at.button(key=_key(task, "dv.down")).click().run()
    at.button(key=_key(task, "dv.up")).click().run()
    assert ws.browse == 0
    assert at.session_state["events"][-1][1]["direction"] == "up"


def test_clause_yes_and_no_filter_on_one_feature(bank: Path) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    belief = next(b for b in ws.session.predicted_query() if not b.determined)
    key = belief.feature.key
    panel = _key(task, "pq")
    assert clause_buttons(at, panel)[key, True] and clause_buttons(at, panel)[key, False]
    col = [f.key for f in ws.session.pool.vocabulary].index(key)
    with_it = int(ws.session.pool.x[:, col].sum())
    fire(at, panel, "clause", {"key": key, "yes": True, "seq": 1})
    assert not at.exception
    assert len(ws.session.survivors) == with_it
    assert at.session_state["events"][-1][0] == "clause.accept"
    assert at.session_state["events"][-1][1]["feature"] == key
    assert (key, True) not in clause_buttons(at, panel)  # determined now: no row
    shown = component_html(at, panel)
    determined = shown.split("Still open")[0].replace("<wbr>", "")
    # shown as the schema spells it (Screenwriters.Name), the same identifier as the feature's
    assert "Determined" in shown and escape(key.split(" ", 1)[1]) in determined.lower()
    events = len(at.session_state["events"])
    at.run()  # a plain rerun does not answer again (the trigger is one-shot)
    assert len(at.session_state["events"]) == events and ws.session.step == 1
    at.button(key=_key(task, "dv.back")).click().run()
    fire(at, panel, "clause", {"key": key, "yes": False, "seq": 2})
    assert len(ws.session.survivors) == ws.session.pool.n - with_it
    assert at.session_state["events"][-1][0] == "clause.reject"
    decisions = component_html(at, panel).split("Decisions", 1)[1]
    assert "1. No to" in decisions and "left" in decisions


def test_clause_buttons_are_labelled_buttons_and_chips_escape_html(bank: Path) -> None:
    at, task = _start(bank)
    shown = component_html(at, _key(task, "pq"))
    buttons = re.findall(r"<button [^>]*>[^<]*</button>", shown)
    assert buttons and all('type="button"' in b and "aria-label=" in b for b in buttons)
    assert "<script" not in shown and "&lt;" not in shown.replace("&lt;b&gt;", "")
    chips = component_html(at, _key(task, "dv.chips"))
    ws = _ws(at, task)
    assert f"of {len(ws.session.variables())}" in chips and "pq-chip decision" in chips


def test_keep_cluster_restricts_to_its_members(bank: Path) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    from ui.action_space import clusters

    infos = clusters(ws.session)
    assert len(infos) > 1
    target = infos[1]
    footer = _key(task, "space.footer")
    assert f'data-event="cluster" data-key="{target.number}"' in component_html(at, footer)
    fire(at, footer, "cluster", {"key": str(target.number), "seq": 1})
    assert not at.exception, at.exception
    assert ws.session.survivors.tolist() == list(target.members)
    kind, payload = at.session_state["events"][-1]
    assert kind == "space.cluster" and payload["cluster"] == target.number
    assert payload["kept"] == list(target.members)


@pytest.mark.parametrize("gesture", ["lasso", "box", "click"])
def test_injected_plotly_selection_restricts_once(bank: Path, gesture: str) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    chosen = ws.session.survivors.tolist()[:3] if gesture != "click" else [0]
    select_points(at, _key(task, "space"), selection_value(chosen, gesture))
    assert not at.exception, at.exception
    assert ws.session.survivors.tolist() == chosen
    kind, payload = at.session_state["events"][-1]
    assert kind == f"space.{gesture}" and payload["candidates"] == chosen
    events = len(at.session_state["events"])
    at.run()  # a plain rerun must not re-apply the selection
    assert ws.session.step == 1 and len(at.session_state["events"]) == events
    assert f"<b>{len(chosen)}</b> of" in _survivor_text(at, task)


def test_study_mode_fixes_the_question_and_submit_records_the_query(bank: Path) -> None:
    at, task = _start(bank, mode="study")
    ws = _ws(at, task, "study")
    assert not at.text_input  # the question is not editable in a study task
    assert any(ws.session.pool.question in m.value for m in at.markdown)
    answer(at, _key(task, ""), True)
    at.button(key=_key(task, "submit")).click().run()
    chosen = ws.session.best_candidate()
    assert at.session_state["submitted"] == [(chosen, ws.session.pool.sqls[chosen])]
    kind, payload = at.session_state["events"][-1]
    assert kind == "submit" and payload["candidate"] == chosen and payload["step"] == 1
    assert any("You submitted the query whose output is shown" in s.value for s in at.success)


def test_free_mode_question_is_editable_and_explains_the_shipped_pool(bank: Path) -> None:
    at, task = _start(bank, index=0)
    at.text_input(key=_key(task, "question")).input("Which rooms hold 500 people?").run()
    assert not at.exception
    assert any("shipped pool" in c.value for c in at.caption)


def test_done_banner_when_survivors_agree(bank: Path) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    for _ in range(12):
        if ws.session.is_done or ws.session.next_variable() is None:
            break
        answer(at, _key(task, ""), True)
    if not ws.session.is_done:  # stuck: select one glyph, which is always functionally one
        select_points(at, _key(task, "space"), selection_value([ws.session.survivors[0]],
                                                               "click"))
    assert ws.session.is_done
    assert any("Done" in s.value for s in at.success)
    assert "<b>Done.</b>" in component_html(at, _key(task, "dv.chips"))
    assert not answer_enabled(at, _key(task, ""))


def test_app_router_home_lists_tasks_and_opens_the_workspace(bank: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.setenv("PLEASQLARIFY_BANK", str(bank))
    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    tasks = task_ids(bank)
    assert len([b for b in at.button if b.key and b.key.startswith("home.open.")]) == len(tasks)
    at.button(key=f"home.open.{tasks[1]}").click().run()
    assert not at.exception, at.exception
    at.switch_page("pages/workspace.py").run()  # AppTest does not follow st.switch_page
    assert not at.exception, at.exception
    painted(at)  # the select box is drawn once the browser has painted the first render
    assert not at.exception, at.exception
    assert at.selectbox(key="workspace.task").value == tasks[1]
    assert "queries remain" in survivors(at, f"pleasqlarify.{tasks[1]}.")


def _html(at: AppTest) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def test_the_free_pages_first_render_shows_task_and_question_as_text_until_painted(
        bank: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 24: the free page's first render draws neither the task's select box nor the
    question's text input (their chunks are not needed for the first paint): it shows both as
    text in their place, and the browser's "painted" reruns the whole page, which draws the
    widgets after them (the text is hidden then, by CSS) and keeps them for the session."""
    monkeypatch.setenv("PLEASQLARIFY_BANK", str(bank))
    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "pages" / "workspace.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    tasks = task_ids(bank)
    ws = at.session_state[f"pleasqlarify.workspace.free.{tasks[0]}"]
    assert not at.selectbox and not at.text_input
    first = _html(at)
    assert 'class="pq-field-label">Task<' in first and 'class="pq-field-label">Question<' in first
    assert escape(ws.question) in first
    keyed = [k for k in ("pq-task", "pq-question")
             if any(getattr(e, "key", None) == k for e in at.main.children.values())]
    assert keyed == ["pq-task", "pq-question"]  # the containers the widgets will be drawn in

    painted(at)
    assert not at.exception, at.exception
    assert at.selectbox(key="workspace.task").value == tasks[0]
    assert at.text_input(key=f"pleasqlarify.{tasks[0]}.question").value == ws.question
    assert 'class="pq-field-label">Task<' in _html(at)  # still first in its container
    assert not painted_pending(at)  # the carrier asks for nothing more

    at.selectbox(key="workspace.task").set_value(tasks[1]).run()  # a new task's first render
    assert not at.exception, at.exception
    assert at.selectbox(key="workspace.task").value == tasks[1]  # keeps its widgets
    assert at.text_input(key=f"pleasqlarify.{tasks[1]}.question")


def test_only_the_likeliest_open_clauses_get_rows_until_show_all(bank: Path,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    monkeypatch.setattr("ui.views.CLAUSE_ROWS", 3)
    at, task = _start(bank)
    ws = _ws(at, task)
    open_beliefs = [b for b in ws.session.predicted_query() if not b.determined]
    assert len(open_beliefs) > 3

    def rows() -> set[str]:
        return {k for k, yes in clause_buttons(at, _key(task, "pq")) if yes}

    likeliest = sorted(open_beliefs, key=lambda b: -b.probability)[:3]
    assert rows() == {b.feature.key for b in likeliest}
    fire(at, _key(task, "pq"), "all", {"seq": 1})
    assert rows() == {b.feature.key for b in open_beliefs}
    fire(at, _key(task, "pq"), "all", {"seq": 2})
    assert len(rows()) == 3


def test_the_free_workspace_page_opens_with_its_title(bank: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Review #80: the free Repair workspace began with its Task select box, where every other
    page opens with a title. Its first element is now the page's title (its navigation name)."""
    monkeypatch.setenv("PLEASQLARIFY_BANK", str(bank))
    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "pages" / "workspace.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Repair workspace"]
    shown = [e for e in at.main.children.values() if e.type not in ("html", "bidi_component")]
    assert shown[0].type == "title" and shown[0].value == "Repair workspace", shown[0]
