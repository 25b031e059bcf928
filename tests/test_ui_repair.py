"""AppTest: "Is this the output you want?", "None of these" and the repair they run."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.bank_helpers import answer, component_html, make_bank, painted, task_ids


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bank(tmp_path_factory.mktemp("bank"), lines=(5,))


def _app(bank: str, task_id: str, repair: str, mode: str = "free") -> None:
    import streamlit as st

    from ui.bank_cache import task_pool
    from ui.state import WorkspaceOptions
    from ui.workspace import render_workspace

    events = st.session_state.setdefault("events", [])
    render_workspace(task_pool(bank, task_id), mode=mode,
                     log=lambda t, p: events.append((t, p)),
                     options=WorkspaceOptions(repair=repair))


def _start(bank: Path, repair: str = "recompose", mode: str = "free") -> tuple[AppTest, str]:
    task = task_ids(bank)[0]
    at = AppTest.from_function(_app, args=(str(bank), task, repair, mode), default_timeout=120)
    painted(at.run())
    assert not at.exception, at.exception
    return at, task


def _key(task: str, name: str) -> str:
    return f"pleasqlarify.{task}.{name}"


def _ws(at: AppTest, task: str):
    state = at.session_state
    key = f"pleasqlarify.workspace.free.{task}"
    return state[key] if key in state else state[f"pleasqlarify.workspace.study.{task}"]


def _landed(at: AppTest, task: str) -> None:
    """Wait for the repair search a click started (off the script thread), then rerun: the
    panels draw the repaired state, as after the browser's poll."""
    from ui.actions import searching

    search = searching(_ws(at, task))
    if search is not None:
        assert search.done.wait(120)
        at.run()
        assert not at.exception, at.exception
        assert searching(_ws(at, task)) is None


def test_the_output_question_is_asked(bank: Path) -> None:
    at, task = _start(bank)
    assert any("Is this the output you want?" in m.value for m in at.markdown)
    for name in ("po.yes", "po.no", "po.none"):
        assert at.button(key=_key(task, name))
    at.button(key=_key(task, "po.yes")).click().run()
    assert [t for t, _ in at.session_state["events"]] == ["output.accept"]
    assert any("You accepted this output" in c.value for c in at.caption)


def test_no_rejects_the_output_and_recomposition_adds_new_candidates(bank: Path) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    n0, rejected = ws.session.pool.n, ws.session.predicted_output_key()
    at.button(key=_key(task, "po.no")).click().run()
    assert not at.exception, at.exception
    _landed(at, task)
    types = [t for t, _ in at.session_state["events"]]
    assert types == ["output.reject", "repair"]
    payload = at.session_state["events"][1][1]
    assert payload["method"] == "recompose" and payload["added"] == ws.session.pool.n - n0 > 0
    assert rejected not in {ws.session.output_key_of(int(i)) for i in ws.session.survivors}
    assert "Repair (recompose)" in component_html(at, _key(task, "pq"))


def test_none_of_these_rules_out_every_surviving_output(bank: Path) -> None:
    at, task = _start(bank)
    ws = _ws(at, task)
    before = {ws.session.output_key_of(int(i)) for i in ws.session.survivors}
    at.button(key=_key(task, "po.none")).click().run()
    assert not at.exception, at.exception
    event, payload = at.session_state["events"][0]
    assert event == "output.reject" and payload["trigger"] == "none"
    assert set(payload["outputs"]) == {k for k in before if k != "error"}
    assert not before & {ws.session.output_key_of(int(i)) for i in ws.session.survivors} - {
        "error"}


def test_repair_none_only_rules_out_and_resample_without_key_says_so(bank: Path,
                                                                    monkeypatch) -> None:
    at, task = _start(bank, "none")
    n0 = _ws(at, task).session.pool.n
    at.button(key=_key(task, "po.no")).click().run()
    assert [t for t, _ in at.session_state["events"]] == ["output.reject"]
    assert _ws(at, task).session.pool.n == n0
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    at, task = _start(bank, "resample")
    assert any("only recomposition is available" in c.value for c in at.caption)
    at.button(key=_key(task, "po.no")).click().run()
    _landed(at, task)
    assert at.session_state["events"][-1][1]["method"] == "recompose"
    assert at.session_state["events"][-1][1]["requested"] == "resample"


def test_a_resampled_round_records_what_it_cost_in_the_trace(bank: Path, tmp_path: Path,
                                                              monkeypatch) -> None:
    """With a key, *No* under ``repair: resample`` asks the model (the real SDK against the
    loopback Messages API) and the ``repair`` event says how many requests it sent and their
    estimated cost; the same state again is read from the pool cache and costs nothing."""
    import core.engine.repair as repair
    from tests.anthropic_stub_server import StubServer

    monkeypatch.setenv("PLEASQLARIFY_DATA_DIR", str(tmp_path))  # a pool cache of its own
    monkeypatch.setattr(repair, "_ROUNDS", {})
    reply = "```sql\nSELECT title, year FROM films ORDER BY year LIMIT 1\n```"
    with StubServer([reply]) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        costs = []
        for _ in range(2):
            at, task = _start(bank, "resample")
            at.button(key=_key(task, "po.no")).click().run()
            _landed(at, task)
            event, payload = at.session_state["events"][-1]
            assert event == "repair" and payload["method"] == "resample", payload
            costs.append((payload["llm_requests"], payload["llm_usd"]))
        sent = server.count
    assert costs[0][0] == sent > 0 and costs[0][1] > 0
    assert costs[1] == (0, 0.0)


def _page_text(at: AppTest) -> str:
    """Every text element of the page (notices, captions, markdown), for what a person reads."""
    return " ".join(str(e.value) for kind in ("caption", "warning", "info", "error", "markdown",
                                              "success", "code")
                    for e in getattr(at, kind))


def test_a_participant_reads_nothing_about_keys_when_resample_has_none(bank: Path,
                                                                      monkeypatch) -> None:
    """In a study, resample without a key repairs by recomposition and says nothing about
    API keys (a researcher's matter: the trace records it, Setup and Facilitator say it)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    at, task = _start(bank, "resample", mode="study")
    assert "API" not in _page_text(at) and "key" not in _page_text(at).lower()
    at.button(key=_key(task, "po.no")).click().run()
    _landed(at, task)
    assert "API" not in _page_text(at) and "key" not in _page_text(at).lower()
    event, payload = at.session_state["events"][-1]
    assert event == "repair" and (payload["requested"], payload["method"]) == ("resample",
                                                                               "recompose")


def test_trace_of_a_repair_replays_to_the_same_workspace(bank: Path) -> None:
    from types import SimpleNamespace

    from study.analysis.replay import mismatches, replay
    from ui.bank_cache import task_pool

    at, task = _start(bank)
    ws = _ws(at, task)
    v = ws.session.next_variable()
    if v is not None:
        answer(at, _key(task, ""), False)
    at.button(key=_key(task, "po.none")).click().run()
    assert not at.exception, at.exception
    _landed(at, task)
    events = [SimpleNamespace(type=t, payload=p, event_id=str(i))
              for i, (t, p) in enumerate(at.session_state["events"])]
    assert [e.type for e in events][-2:] == ["output.reject", "repair"]
    steps = replay(events, task_pool(str(bank), task))
    assert not mismatches(steps)
    assert steps[-1].survivors == tuple(int(i) for i in ws.session.survivors)


@pytest.mark.parametrize(("text", "expected"), [
    ("pleasqlarify", "recompose"),
    ("{id: pleasqlarify, repair: none}", "none"),
    ("{id: atomic-only, repair: resample}", "resample"),
])
def test_conditions_choose_the_repair(tmp_path: Path, text: str, expected: str) -> None:
    from study.spec import parse_study
    from tests.test_study_conditions import study_text
    from ui.condition_views import workspace_options

    spec = parse_study(study_text(text), tmp_path / "study.yaml")
    cond = spec.conditions[0]
    assert cond.repair == expected and workspace_options(cond).repair == expected


def test_an_unknown_repair_names_the_choices(tmp_path: Path) -> None:
    from study.spec import StudySpecError, parse_study
    from tests.test_study_conditions import study_text

    with pytest.raises(StudySpecError) as info:
        parse_study(study_text("{id: pleasqlarify, repair: llm}"), tmp_path / "study.yaml")
    (problem,) = info.value.problems
    assert problem.where == "conditions[0].repair"
    assert "none, recompose, resample" in problem.message


def _fragile_app(bank: str, task_id: str, repair: str, labels: str, db: str,
                 mode: str = "free") -> None:
    """The workspace over a copy of the task's database (``db``), which a test may remove; in
    ``mode`` "free" (the researcher's exploration) or "study" (a participant's)."""
    import streamlit as st

    from core.engine.taskbank import DatabaseSpec
    from ui.bank_cache import task_pool
    from ui.state import WorkspaceOptions, default_session, workspace_state
    from ui.workspace import render_workspace

    pool = task_pool(bank, task_id)
    workspace_state(pool, mode, factory=lambda p: default_session(
        p, database=DatabaseSpec("sqlite", db)))
    events = st.session_state.setdefault("events", [])
    render_workspace(pool, mode=mode, log=lambda t, p: events.append((t, p)),
                     options=WorkspaceOptions(repair=repair, labels=labels))


def _shown_text(at: AppTest) -> str:
    """Every text the page shows (notices, captions, markdown, code and the panels' data)."""
    parts = [e.value for kind in ("warning", "error", "info", "success", "caption", "markdown",
                                  "code", "text") for e in at.get(kind)]
    return "\n".join([*map(str, parts), *(el.proto.json for el in at.get("bidi_component"))])


@pytest.mark.parametrize(("failure", "labels", "mode"), [
    ("database", "plain", "free"), ("model", "plain", "free"), ("model", "sql", "free"),
    ("model", "sql", "study"), ("model", "both", "study")])
def test_a_failed_repair_reads_plainly_and_its_error_goes_to_the_trace(
        bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, labels: str,
        failure: str, mode: str) -> None:
    """Under `labels: plain` a repair that fails (the task database went missing; the model's
    API refused a request quoting SQL) says what happened and what to do in plain words, with
    no SQL and no error text; the error itself is in the trace (``repair.fail``). The error's
    own words are quoted only to a researcher (free exploration) shown SQL: a participant never
    reads API error text, whatever the labels."""
    import shutil

    import core.engine.repair as repair
    from core.engine.execute import sqlite_path
    from tests.anthropic_stub_server import Reply, StubServer
    from ui.actions import REPAIR_FAILED
    from ui.bank_cache import task_pool

    task = task_ids(bank)[0]
    monkeypatch.setenv("PLEASQLARIFY_DATA_DIR", str(tmp_path))  # no cached repair pool
    # a round known without the database (remembered from an earlier test's session of this
    # pool, or stored with the prepared pool) would be applied: forget them, so it is computed
    monkeypatch.setattr(repair, "_ROUNDS", {})
    monkeypatch.setattr(repair, "REPAIR_VERSION", repair.REPAIR_VERSION + 1)
    db = tmp_path / "task.sqlite"
    shutil.copy(sqlite_path(task_pool(str(bank), task).database), db)
    leaked = "SELECT title FROM films WHERE year > 2000" if failure == "model" else str(db)
    with StubServer() as server:
        server.default = lambda _i, _body: Reply(status=400, message=f"bad prompt: {leaked}")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        at = AppTest.from_function(_fragile_app, args=(
            str(bank), task, "resample" if failure == "model" else "recompose", labels, str(db),
            mode), default_timeout=120)
        painted(at.run())
        assert not at.exception, at.exception
        if failure == "database":
            db.unlink()  # e.g. the study's database file was moved while a participant worked
        at.button(key=_key(task, "po.no")).click().run()
        assert not at.exception, at.exception
        _landed(at, task)
    shown, warnings = _shown_text(at), [w.value for w in at.warning]
    # the detail only to a researcher shown SQL
    assert (leaked in shown) == (labels == "sql" and mode == "free"), warnings
    if mode == "study":
        assert "bad prompt" not in shown, shown
    assert any(w.startswith(REPAIR_FAILED) and "Go Back" in w for w in warnings), warnings
    if labels == "plain":
        assert "Repair failed" not in shown and "SELECT" not in "\n".join(warnings)
    (_, fail), = [(t, p) for t, p in at.session_state["events"] if t == "repair.fail"]
    assert leaked in fail["error"] and fail["trigger"] == "reject"
    assert fail["requested"] == ("resample" if failure == "model" else "recompose")


def _shifting_app(bank: str, task_id: str) -> None:
    """The workspace (resample repair) under an optional caption: drawn, it moves every
    container of the page down by one, as the provisional-layout caption does when it goes."""
    import streamlit as st

    from ui.bank_cache import task_pool
    from ui.state import WorkspaceOptions
    from ui.workspace import render_workspace

    if st.session_state.get("shift"):
        st.caption("Something above the workspace.")
    events = st.session_state.setdefault("events", [])
    render_workspace(task_pool(bank, task_id), mode="free",
                     log=lambda t, p: events.append((t, p)),
                     options=WorkspaceOptions(repair="resample"))


def _watch_fragment(messages: list) -> tuple[str, set[str]]:
    """The fragment id the repair watch was drawn in (what the browser's poll names as its
    rerun target) and the fragment ids of the panels' other elements in the same run."""
    from streamlit.elements.lib.utils import user_key_from_element_id

    watch, panels = [], set()
    for msg in messages:
        if not msg.HasField("delta") or msg.delta.WhichOneof("type") != "new_element":
            continue
        element = msg.delta.new_element
        if element.WhichOneof("type") == "bidi_component":
            key = user_key_from_element_id(element.bidi_component.id) or ""
            if key.endswith(".search"):
                watch.append(msg.delta.fragment_id)
            elif key.endswith((".output", ".pq", ".dv.chips")):  # the panels beside it
                panels.add(msg.delta.fragment_id)
    assert len(watch) == 1, watch
    return watch[0], panels


def test_the_repair_poll_targets_the_live_panels_fragment_after_a_rerun(
        bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression test of 1125961, without timing: the model's server holds the search until
    the test lets it go. In every run that draws the repair watch — the one after No, and a
    full rerun that moves every container of the page (as the provisional-layout caption does
    when it goes) — the watch is drawn in the panels fragment of that run, whose id is live at
    the end of it, so the browser's next poll names a fragment Streamlit still has. (Drawn as
    a fragment of its own, its id would follow its position; polls naming a replaced id were
    dropped and the page stayed on "Looking for other readings".) Then the search lands and
    a poll applies it."""
    import threading

    from streamlit.testing.v1 import local_script_runner

    from tests.anthropic_stub_server import Reply, StubServer
    from tests.bank_helpers import fire
    from ui.actions import searching

    runs: list[list] = []
    parse = local_script_runner.parse_tree_from_messages

    def recording(messages: list):
        runs.append(list(messages))  # the deltas a browser would get, with fragment ids
        return parse(messages)

    monkeypatch.setattr(local_script_runner, "parse_tree_from_messages", recording)
    gate = threading.Event()

    def held(_i: int, _body: dict) -> Reply:
        gate.wait(120)
        return Reply("```sql\nSELECT 1\n```")

    task = task_ids(bank)[0]
    monkeypatch.setenv("PLEASQLARIFY_DATA_DIR", str(tmp_path))  # no cached repair pool
    with StubServer() as server:
        server.default = held
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        at = AppTest.from_function(_shifting_app, args=(str(bank), task), default_timeout=120)
        try:
            painted(at.run())
            at.button(key=_key(task, "po.no")).click().run()
            assert not at.exception, at.exception
            assert searching(_ws(at, task)) is not None  # held: the page shows the watch
            ids = []
            for shift in (False, True):
                if shift:
                    at.session_state["shift"] = True
                    at.run()  # a full rerun while the search is pending
                    assert not at.exception, at.exception
                watch, panels = _watch_fragment(runs[-1])
                assert panels == {watch}  # drawn in the panels fragment, not one of its own
                assert at._fragment_storage.contains(watch)  # the next poll lands
                ids.append(watch)
            assert ids[0] != ids[1]  # the rerun moved the panels: the ids really changed
        finally:
            gate.set()
        assert searching(_ws(at, task)).done.wait(120)
        fire(at, _key(task, "search"), "poll", True)  # the browser's next poll
    assert not at.exception, at.exception
    assert searching(_ws(at, task)) is None
    assert [t for t, _ in at.session_state["events"]][-2:] == ["output.reject", "repair"]


def test_while_repair_runs_the_panels_say_so_not_that_nothing_remains(
        bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review #13: after None of these, while the round is held off the script thread, the
    Action Space's line and the Predicted Query say that other readings are looked for; they
    do not claim "N of M queries remain" nor "No valid query remains" for the rejected state
    (only its failing candidates alive). Once the round lands, the counts are back."""
    import threading

    from tests.anthropic_stub_server import Reply, StubServer
    from tests.bank_helpers import survivors
    from ui.actions import searching
    from ui.views import SEARCHING

    gate = threading.Event()

    def held(_i: int, _body: dict) -> Reply:
        gate.wait(120)
        return Reply("```sql\nSELECT 1\n```")

    monkeypatch.setenv("PLEASQLARIFY_DATA_DIR", str(tmp_path))  # no cached repair pool
    with StubServer() as server:
        server.default = held
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        at, task = _start(bank, "resample")
        try:
            at.button(key=_key(task, "po.none")).click().run()
            assert not at.exception, at.exception
            assert searching(_ws(at, task)) is not None
            line, pq = survivors(at), component_html(at, _key(task, "pq"))
            assert SEARCHING in line and "remain" not in line, line
            assert SEARCHING in pq and "No valid query remains" not in pq, pq
            assert "looking for other readings" in pq and " left</small></div></div>" not in pq
            assert 'role="status"' not in pq  # announced once, by the panels that had it
        finally:
            gate.set()
        _landed(at, task)
    assert "queries remain" in survivors(at)
    assert SEARCHING not in component_html(at, _key(task, "pq"))
