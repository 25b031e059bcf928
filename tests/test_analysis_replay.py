"""Replay reproduces the workspace at every step of a recorded session; mismatches are shown."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from study.analysis.replay import mismatches, replay
from study.store import REPO_ROOT, open_store
from study.trace import log_event, read_events

BANK = REPO_ROOT / "studies" / "film" / "tasks.jsonl"


@pytest.fixture(scope="module")
def pool():
    tasks, _ = load_task_bank(BANK)
    task = next(t for t in tasks if t.id == "film-dicaprio-rating")
    return load_prepared(task, default_pool_dir(BANK))


def test_replay_reproduces_every_step(tmp_path, pool):
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}", sqlite_synchronous="OFF")
    s = RepairSession(pool)
    expected: list[tuple[int, ...]] = []

    def log(type: str, **payload) -> None:
        log_event(store, session_id="s1", participant="p1", type=type, payload=payload,
                  study="film", task=pool.task_id, subtask="3")

    def decided(type: str, before: int, **payload) -> None:
        log(type, survivors_before=before, survivors_after=len(s.survivors), **payload)
        expected.append(tuple(int(i) for i in s.survivors))

    log("space.hover", candidate_id=0)  # not a decision: no step
    v = s.next_variable()
    before = len(s.survivors)
    s.answer(v.keys, True)
    decided("dv.accept", before, features=list(v.keys))
    before = len(s.survivors)
    s.undo()
    decided("undo", before)
    before = len(s.survivors)
    s.answer(v.keys, False)
    decided("dv.reject", before, features=list(v.keys))
    key = next(b.feature.key for b in s.predicted_query() if not b.determined)
    before = len(s.survivors)
    s.answer_feature(key, True)
    decided("clause.accept", before, feature=key)
    ids = s.survivors.tolist()[: max(1, len(s.survivors) // 2)]
    before = len(s.survivors)
    s.restrict(ids, "lasso")
    decided("space.lasso", before, candidates=ids)

    events = read_events(store)
    steps = replay(events, pool)
    assert len(steps) == 1 + len(expected)
    assert steps[0].survivors == tuple(range(pool.n))
    assert [st.survivors for st in steps[1:]] == expected
    assert [st.type for st in steps[1:]] == ["dv.accept", "undo", "dv.reject", "clause.accept",
                                             "space.lasso"]
    assert mismatches(steps) == []
    assert steps[-1].history_len == s.step and steps[-1].best_candidate == s.best_candidate()
    assert replay(events, pool) == steps  # deterministic

    i = next(k for k, e in enumerate(events) if e.type == "dv.reject")
    tampered = list(events)
    tampered[i] = replace(events[i], payload={**events[i].payload, "survivors_after": 999})
    bad = mismatches(replay(tampered, pool))
    assert len(bad) == 1 and "recorded 999 survivors after" in bad[0].mismatch


def test_impossible_decision_is_reported(pool):
    from study.trace import Event
    ev = Event("e1", "s", "p", "dv.accept", {"features": ["SELECT no.such_column"]})
    steps = replay([ev], pool)
    assert "cannot apply dv.accept" in steps[-1].mismatch
    assert np.array_equal(np.array(steps[-1].survivors), np.arange(pool.n))


@pytest.fixture()
def broken_trace(tmp_path, monkeypatch, pool):
    """Study 'mini' on the film bank; one participant whose film-pulp-review trace has a
    recorded repair the engine cannot read (its weights are text)."""
    from study.runner import join
    from study.spec import load_study
    from tests.study_flow_fixtures import TASK, study_env, write_mini

    path = write_mini(tmp_path / "studies", "mini")
    url = study_env(tmp_path, monkeypatch, "pw")
    store = open_store(url)
    runner = join(store, load_study(path))
    tasks, _ = load_task_bank(BANK)
    task_pool = load_prepared(next(t for t in tasks if t.id == TASK), default_pool_dir(BANK))
    s = RepairSession(task_pool)
    keys = list(s.next_variable().keys)
    outputs = sorted({s.output_key_of(int(i)) for i in s.survivors})
    for t, payload in [("dv.accept", {"features": keys}), ("space.click", {"candidates": [0]}),
                       ("output.reject", {"outputs": outputs, "trigger": "none"}),
                       ("repair", {"method": "recompose", "sqls": ["SELECT 1"],
                                   "weights": ["heavy"]}),
                       ("undo", {"decisions": 2})]:
        log_event(store, session_id="s1", participant=runner.participant, type=t,
                  payload=payload, study="mini", condition="pleasqlarify", task=TASK,
                  subtask="3")
    return store


def _unlocked():
    from streamlit.testing.v1 import AppTest

    from tests.study_flow_fixtures import ROOT

    at = AppTest.from_file(str(ROOT / "pages" / "analysis.py"), default_timeout=90).run()
    at.text_input(key="analysis_pw").input("pw")
    at.button[0].click().run()
    return at


def _other_tabs_intact(at) -> None:
    """After the replay tab failed, every other tab still opens and draws its content."""
    from tests.study_flow_fixtures import open_tab

    assert not at.exception, at.exception
    assert len(at.tabs) == 6
    open_tab(at, "Export")
    assert at.get("download_button"), "the Export tab lost its download"
    open_tab(at, "Workflows")
    workflows = at.tabs[3].dataframe[0].value
    assert list(workflows["n_select"]) == [1] and list(workflows["n_output"]) == [1]
    assert list(workflows["n_repair"]) == [1]
    open_tab(at, "Questionnaires")
    assert at.tabs[1].info or at.tabs[1].dataframe  # Questionnaires drew its content
    assert not at.exception
    assert not [e for i in (1, 3, 5) for e in at.tabs[i].error if "could not be drawn" in e.value]


def test_a_replay_that_stops_reports_its_step_and_leaves_the_other_tabs(broken_trace) -> None:
    from tests.study_flow_fixtures import open_tab

    at = open_tab(_unlocked(), "Timeline & replay")
    (box,) = [e for e in at.tabs[4].error if "Replay cannot reproduce" in e.value]
    assert "stopped at step 4, event `repair`" in box.value and "Steps 0–3" in box.value
    assert "ValueError" in box.value
    _other_tabs_intact(at)


def test_the_step_slider_says_how_many_steps_there_are(broken_trace) -> None:
    """The slider showed only its value ("0"); its label and a caption now give the range
    and "Step k of n" (found in Chromium on Analysis: one had to drag to learn the count)."""
    from tests.study_flow_fixtures import open_tab

    at = open_tab(_unlocked(), "Timeline & replay")
    slider = at.slider(key="an_rp_k")
    last = int(slider.max)
    assert last >= 4 and slider.label == f"Step (0 to {last})"
    assert any(c.value.startswith(f"Step 0 of {last} (the start") for c in at.tabs[4].caption)
    at = slider.set_value(2).run()
    assert any(c.value.startswith(f"Step 2 of {last}: `") for c in at.tabs[4].caption)


def test_an_engine_fault_in_the_replay_stays_in_its_panel(broken_trace, monkeypatch) -> None:
    import ui.analysis_views

    def fault(*args, **kwargs):
        raise IndexError("boolean index did not match indexed array along axis 0; size of "
                         "axis is 41 but size of corresponding boolean axis is 44")
    monkeypatch.setattr(ui.analysis_views, "replay", fault)
    from tests.study_flow_fixtures import open_tab

    at = open_tab(_unlocked(), "Timeline & replay")
    (box,) = [e for e in at.tabs[4].error if "could not be drawn" in e.value]
    assert "The replay of this task" in box.value and "IndexError" in box.value
    assert at.get("selectbox"), "the tab's pickers stay usable above its error"
    _other_tabs_intact(at)


def test_replay_of_questions_about_the_answer_uses_the_recorded_vocabulary(tmp_path, pool):
    """A condition with ``questions: mixed`` logs it on pool.init; replay asks the same."""
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}", sqlite_synchronous="OFF")
    s = RepairSession(pool, questions="outputs", values=True)

    def log(type: str, **payload) -> None:
        log_event(store, session_id="s1", participant="p1", type=type, payload=payload,
                  study="film", task=pool.task_id, subtask="3")

    log("pool.init", n_candidates=pool.n, key=pool.task_id, questions="outputs", values=True)
    v = s.next_variable()
    assert v.keys[0].startswith("ANSWER ")
    before = len(s.survivors)
    s.answer(v.keys, True)
    log("dv.accept", survivors_before=before, survivors_after=len(s.survivors),
        features=list(v.keys))
    steps = replay(read_events(store), pool)
    assert mismatches(steps) == []
    assert steps[-1].survivors == tuple(int(i) for i in s.survivors)
    assert steps[-1].next_variable == (s.next_variable().label if s.next_variable() else "")


def test_replay_asks_with_the_recorded_strategy(tmp_path, pool):
    """The workspace's strategy goes on pool.init; replay's next question is the one the
    participant saw, not the engine default's (the two strategies differ on this pool)."""
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}", sqlite_synchronous="OFF")
    seen = RepairSession(pool, strategy="cluster-atomic")
    assert seen.next_variable().label != RepairSession(pool).next_variable().label
    log_event(store, session_id="s1", participant="p1", type="pool.init",
              payload={"n_candidates": pool.n, "key": pool.task_id, "strategy": "cluster-atomic"},
              study="film", task=pool.task_id, subtask="3")
    steps = replay(read_events(store), pool)
    assert mismatches(steps) == []
    assert steps[-1].next_variable == seen.next_variable().label
    # the start, before any decision, is what the participant saw too: the Timeline & replay
    # tab's step 0 showed the engine default's question (found in Chromium on Analysis)
    assert steps[0].next_variable == seen.next_variable().label


def test_a_chat_pool_init_is_no_vocabulary_for_replay(tmp_path, pool):
    """The chat condition's pool.init carries its list of questions: replay ignores it."""
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}", sqlite_synchronous="OFF")
    log_event(store, session_id="s1", participant="p1", type="pool.init",
              payload={"questions": [{"qid": "q1", "question": "Which column?"}]},
              study="film", task=pool.task_id, subtask="3")
    steps = replay(read_events(store), pool)
    assert all(step.failure is None for step in steps)
    assert steps[-1].next_variable == RepairSession(pool).next_variable().label
