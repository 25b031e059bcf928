"""AppTest of the four study conditions through the participant flow, and their spec settings."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from core.planpool.chat_agent import ASKING, CONFIRM
from core.planpool.simulated import SimulatedChatUser
from study import flow
from study.spec import StudySpecError, parse_study
from study.store import open_store
from study.trace import read_events
from tests.bank_helpers import answer, clause_buttons, fire, shown_sql
from tests.study_flow_fixtures import (
    FILM_BANK,
    PRACTICE,
    ROOT,
    TASK,
    open_page,
    participant_id,
    study_env,
    write_mini,
)
from ui.panels import dismiss_key

STEP = flow.task_step_id(TASK, "3")


def study_text(condition: str) -> str:
    """A one-task study (submit subtask only) whose single condition is ``condition``."""
    return f"""\
id: mini
title: Conditions
consent: Please read this and agree to take part.
conditions:
  - {condition}
task_bank: {FILM_BANK}
subtasks:
  "3": Navigate to your interpretation and submit it.
tasks:
  - id: {TASK}
onboarding:
  intro: Welcome.
questionnaires: []
"""


@pytest.fixture()
def studies(tmp_path, monkeypatch):
    """A tmp studies dir and SQLite store; returns a function writing the study text."""
    store = open_store(study_env(tmp_path, monkeypatch))

    def write(condition: str):
        write_mini(tmp_path / "studies", text=study_text(condition))
        return store
    return write


def _open(pid: str | None = None) -> AppTest:
    at = open_page("participant", study="mini", **({"p": pid} if pid else {}))
    assert not at.exception, at.exception
    return at


def _click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    return at


def _past_onboarding(store, step: str = STEP) -> tuple[AppTest, str]:
    """Consent and onboarding: the participant is on ``step``."""
    at = _open()
    _click(at, "pq.consent.yes")
    pid = participant_id(at)
    _click(at, "pq.next.onboarding")
    assert store.get_progress(pid)["step"] == step
    return at, pid


def _to_task(store) -> tuple[AppTest, str]:
    """Consent and onboarding: the participant is on the submit subtask."""
    return _past_onboarding(store)


def _key(name: str) -> str:
    return f"pleasqlarify.{TASK}.{name}"


def _types(store, pid: str) -> list[str]:
    return [e.type for e in read_events(store, participant=pid)]


def _agent(at: AppTest, pid: str):
    return at.session_state[f"pleasqlarify.chat.study-{pid}.{TASK}"]


def _answer_one(at: AppTest, pid: str) -> None:
    agent = _agent(at, pid)
    reply = SimulatedChatUser(agent.session, 0).answer_keys(tuple(agent.question.payload["keys"]))
    _click(at, _key(f"chat.{reply.replace(' ', '-')}"))


def test_pleasqlarify_is_the_full_workspace(studies) -> None:
    store = studies("id: pleasqlarify")
    at, pid = _to_task(store)
    assert {"Action Space", "Decision Space", "Predicted Query"} <= {s.value for s in at.subheader}
    assert not at.button(key=_key("submit")).disabled
    assert not [m for m in at.markdown if "Open decisions" in m.value]


def test_atomic_only_has_no_decision_space_and_submits_via_clauses(studies) -> None:
    store = studies("id: atomic-only")
    at, pid = _to_task(store)
    heads = {s.value for s in at.subheader}
    assert "Decision Space" not in heads and {"Action Space", "Predicted Query"} <= heads
    assert not [c for c in at.get("bidi_component") if c.key and c.key.endswith(".dv.chips")]
    clause = next(k for (k, yes), enabled in clause_buttons(at, _key("pq")).items()
                  if yes and enabled)
    fire(at, _key("pq"), "clause", {"key": clause, "yes": True, "seq": 1})
    assert not at.exception, at.exception
    _click(at, _key("submit"))
    _click(at, f"pq.next.{STEP}")
    assert store.get_progress(pid)["step"] == "done"
    types = _types(store, pid)
    assert "clause.accept" in types and types.count("submit") == 1
    assert not [t for t in types if t.startswith("dv.")]


def test_pool_accounting_blocks_submit_until_answered_or_dismissed(studies) -> None:
    store = studies("{id: pleasqlarify, pool_accounting: true, ig_threshold: 0.1}")
    at, pid = _to_task(store)
    ws = at.session_state[f"pleasqlarify.workspace.study-{pid}.{TASK}"]
    still_open = [v for v in ws.session.variables() if v.gain > 0.1]
    assert len(still_open) >= 2
    assert at.button(key=_key("submit")).disabled
    caption = next(c.value for c in at.caption if "Submit is disabled" in c.value)
    assert still_open[0].label in caption
    assert f"while {len(still_open)} decisions are open" in caption  # words, not "decision(s)"
    _click(at, f"pq.next.{STEP}")  # nothing submitted: blocked
    assert store.get_progress(pid)["step"] == STEP
    _click(at, _key(dismiss_key(still_open[0].keys)))
    assert ws.dismissed == [still_open[0].keys]
    assert store.get_progress(pid)["workspace"][TASK]["dismissed"] == [list(still_open[0].keys)]
    again = _open(pid)  # a refresh keeps the dismissal
    ws2 = again.session_state[f"pleasqlarify.workspace.study-{pid}.{TASK}"]
    assert ws2.dismissed == [still_open[0].keys]
    rounds = 0
    while again.button(key=_key("submit")).disabled:
        rest = [v for v in ws2.session.variables() if v.gain > 0.1 and v.keys not in ws2.dismissed]
        if rounds % 2:  # alternate: answer the shown variable, dismiss the next open one
            answer(again, _key(""), True)
        else:
            _click(again, _key(dismiss_key(rest[0].keys)))
        rounds += 1
        assert rounds < 40
    assert not [c for c in again.caption if "Submit is disabled" in c.value]
    _click(again, _key("submit"))
    _click(again, f"pq.next.{STEP}")
    assert store.get_progress(pid)["step"] == "done"
    events = read_events(store, participant=pid)
    dismissals = [e for e in events if e.type == "dv.dismiss"]
    assert dismissals and dismissals[0].payload["features"] == list(still_open[0].keys)
    assert all(e.condition == "pleasqlarify" for e in dismissals)
    assert [e.type for e in events].count("submit") == 1


def test_planpool_chat_asks_until_the_pool_is_empty_then_confirm_submits(studies) -> None:
    store = studies("{id: planpool-chat, show_pool: true}")
    at, pid = _to_task(store)
    assert any(s.value == "Question pool" for s in at.subheader)
    assert at.chat_message  # the question and the agent's first question
    agent = _agent(at, pid)
    first = agent.question.text
    assert any(first in m.value for m in at.markdown)
    turns = 0
    while _agent(at, pid).status_ == ASKING:
        _answer_one(at, pid)
        turns += 1
        assert turns < 30
    agent = _agent(at, pid)
    assert agent.status_ == CONFIRM and agent.pool_.is_empty
    assert agent.sql in shown_sql(at)
    _click(at, _key("chat.confirm"))
    _click(at, f"pq.next.{STEP}")
    assert store.get_progress(pid)["step"] == "done"
    events = read_events(store, participant=pid)
    types = [e.type for e in events]
    ops = [e.op for e in agent.pool_.history]
    assert types.count("pool.ask") == ops.count("next") == turns
    assert types.count("pool.answer") == ops.count("answer")
    assert types.count("pool.drop") == ops.count("drop")
    assert types.count("pool.add") == ops.count("add")
    inits = [e for e in events if e.type == "pool.init"]
    assert len(inits) == 1 and inits[0].payload["questions"][0]["text"] == first
    messages = [e.payload for e in events if e.type == "chat.message"]
    assert [m["role"] for m in messages[:2]] == ["agent", "agent"]
    assert sum(m["role"] == "user" for m in messages) == turns + 1  # answers + confirmation
    submit = next(e for e in events if e.type == "submit")
    assert submit.payload["sql"] == agent.sql and submit.condition == "planpool-chat"
    assert store.answers(pid)[f"task:{TASK}/3"]["candidate"] == agent.candidate_


def test_planpool_chat_resumes_after_refresh_and_hides_the_pool(studies) -> None:
    store = studies("{id: planpool-chat, show_pool: false, free_text: true}")
    at, pid = _to_task(store)
    assert not any(s.value == "Question pool" for s in at.subheader)
    _answer_one(at, pid)
    agent = _agent(at, pid)
    at.chat_input(key=_key("chat.text")).set_value("which one?").run()
    assert "did not understand" in agent.messages_[-1]["text"]
    again = _open(pid)
    restored = _agent(again, pid)
    assert restored is not agent
    assert restored.messages_ == agent.messages_
    assert restored.pool_.snapshot() == agent.pool_.snapshot()
    assert restored.session.to_dict() == agent.session.to_dict()
    asked_before = restored.pool_.stats()["asked"]
    while _agent(again, pid).status_ == ASKING:
        again.chat_input(key=_key("chat.text")).set_value("not specified").run()
    assert _agent(again, pid).pool_.stats()["asked"] > asked_before
    _click(again, _key("chat.reject"))
    events = read_events(store, participant=pid)
    assert sum(e.type == "pool.init" for e in events) == 1  # the refresh did not re-plan
    assert [e.type for e in events].count("result.reject") == 1
    _click(again, _key("chat.restart"))
    assert _agent(again, pid).attempt_ == 2
    assert sum(e.type == "pool.init" for e in read_events(store, participant=pid)) == 2
    _click(again, f"pq.next.{STEP}")  # a rejected proposal also ends the task
    assert store.get_progress(pid)["step"] == "done"
    assert store.answers(pid)[f"task:{TASK}/3"]["accepted"] is False


def test_single_shot_accept_records_a_submit_of_the_prior_mode(studies) -> None:
    store = studies("single-shot")
    at, pid = _to_task(store)
    assert not at.subheader and not [b for b in at.button if b.key and ".dv." in b.key]
    _click(at, f"pq.next.{STEP}")
    assert "Accept the query" in at.error[0].value
    _click(at, _key("single.accept"))
    assert at.button(key=_key("single.accept")).disabled
    _click(at, f"pq.next.{STEP}")
    assert store.get_progress(pid)["step"] == "done"
    submit = next(e for e in read_events(store, participant=pid) if e.type == "submit")
    task = next(t for t in load_task_bank(FILM_BANK)[0] if t.id == TASK)
    pool = load_prepared(task, default_pool_dir(FILM_BANK))
    mode = RepairSession(pool).best_candidate()
    assert submit.payload["candidate"] == mode and submit.payload["via"] == "single-shot"
    assert submit.payload["prior_share"] == pytest.approx(pool.counts[mode] / pool.counts.sum(),
                                                          abs=1e-4)
    assert store.answers(pid)[f"task:{TASK}/3"]["sql"] == submit.payload["sql"]


def test_single_shot_reject_is_logged_and_ends_the_task(studies) -> None:
    store = studies("{id: single-shot, show_sql: false}")
    at, pid = _to_task(store)
    assert not shown_sql(at)
    _click(at, _key("single.reject"))
    _click(at, f"pq.next.{STEP}")
    assert store.get_progress(pid)["step"] == "done"
    types = _types(store, pid)
    assert "result.reject" in types and "submit" not in types


@pytest.mark.parametrize(("condition", "where", "message"), [
    ("{id: pleasqlarify, show_pool: true}", "conditions[0].show_pool",
     "'show_pool' is a setting of planpool-chat, not of pleasqlarify"),
    ("{id: planpool-chat, show_pol: true}", "conditions[0].show_pol",
     "unknown setting 'show_pol'"),
    ("{id: pleasqlarify, pool_accounting: yes please}", "conditions[0].pool_accounting",
     "must be true or false"),
    ("{id: pleasqlarify, pool_accounting: true, ig_threshold: -1}", "conditions[0].ig_threshold",
     "must be a number of bits"),
    ("{id: planpool-chat, max_questions: 0}", "conditions[0].max_questions",
     "must be an integer 1..20"),
    ("{id: planpool-chat, max_questions: 21}", "conditions[0].max_questions",
     "must be an integer 1..20"),
    ("{id: planpool_chat}", "conditions[0].id", "unknown condition 'planpool_chat'"),
    ("{id: pleasqlarify, repair: recompse}", "conditions[0].repair",
     "must be one of none, recompose, resample, got 'recompse'"),
    ("{id: planpool-chat, agent: llm, fallback: chat}", "conditions[0].fallback",
     "must be 'structured', got 'chat'"),
    ("{id: planpool-chat, agent: gpt}", "conditions[0].agent", "must be one of structured, llm"),
    ("{id: planpool-chat, agent: llm, model: ''}", "conditions[0].model",
     "must be a model name"),
    ("{id: pleasqlarify, agent: llm}", "conditions[0].agent",
     "'agent' is a setting of planpool-chat"),
    ("{id: pleasqlarify, questions: answers}", "conditions[0].questions",
     "must be one of clauses, outputs, mixed, hybrid, got 'answers'"),
])
def test_bad_condition_settings_name_file_path_and_fix(tmp_path, condition, where,
                                                       message) -> None:
    path = tmp_path / "study.yaml"
    with pytest.raises(StudySpecError) as info:
        parse_study(study_text(condition), path)
    (problem,) = info.value.problems
    assert problem.where == where and message in problem.message
    assert problem.file == str(path) and problem.line == 5 and problem.fix
    assert f"{path}:5: {where}: " in str(info.value)


@pytest.mark.parametrize(("condition", "hint"), [
    ("{id: pleasqlarify, repair: recompse}", "did you mean 'recompose'?"),
    ("{id: planpool-chat, agent: lm}", "did you mean 'llm'?"),
    ("{id: pleasqlarfy}", "did you mean 'pleasqlarify'?"),
    ("{id: planpool-chat, show_pol: true}", "did you mean 'show_pool'?"),
])
def test_misspellings_get_a_did_you_mean(tmp_path, condition, hint) -> None:
    with pytest.raises(StudySpecError) as info:
        parse_study(study_text(condition), tmp_path / "study.yaml")
    (problem,) = info.value.problems
    assert problem.fix.startswith(hint), problem.fix


@pytest.mark.parametrize(("setting", "needed"), [
    ("{id: planpool-chat, llm_budget_tokens: 5}", "agent: llm"),
    ("{id: planpool-chat, model: m1}", "agent: llm"),
    ("{id: planpool-chat, fallback: structured}", "agent: llm"),
    ("{id: pleasqlarify, ig_threshold: 0.2}", "pool_accounting: true"),
])
def test_a_setting_without_its_prerequisite_warns_and_with_it_does_not(tmp_path, setting,
                                                                      needed) -> None:
    warned = parse_study(study_text(setting), tmp_path / "study.yaml")
    key = setting.split(", ")[1].split(":")[0]
    (warning,) = warned.warnings
    assert warning.where == f"conditions[0].{key}"
    assert warning.message == f"has no effect without '{needed}'" and key in warning.fix
    fine = parse_study(study_text(setting.replace("}", f", {needed}}}")), tmp_path / "study.yaml")
    assert not fine.warnings


def test_condition_settings_parse_with_defaults(tmp_path) -> None:
    spec = parse_study(study_text("{id: planpool-chat, show_pool: false, max_questions: 3}"),
                       tmp_path / "study.yaml")
    cond = spec.condition("planpool-chat")
    assert (cond.show_pool, cond.max_questions, cond.ig_threshold, cond.free_text) == (
        False, 3, 0.05, False)
    plain = parse_study(study_text("pleasqlarify"), tmp_path / "study.yaml")
    assert plain.condition("pleasqlarify").pool_accounting is False
    warned = parse_study(study_text("{id: pleasqlarify, ig_threshold: 0.2}"),
                         tmp_path / "study.yaml")
    assert any(w.where == "conditions[0].ig_threshold" for w in warned.warnings)
    assert plain.condition("pleasqlarify").session_options() == {}
    outputs = parse_study(study_text("{id: pleasqlarify, questions: outputs, values: true}"),
                          tmp_path / "study.yaml").condition("pleasqlarify")
    assert outputs.session_options() == {"questions": "outputs", "values": True}
    session = RepairSession(load_prepared(load_task_bank(FILM_BANK)[0][0]),
                            **outputs.session_options())
    assert session.questions == "outputs" and session.values


def test_practice_offers_each_condition_of_a_within_study(studies, tmp_path) -> None:
    store = studies("{id: planpool-chat, show_pool: false}\n  - id: single-shot")
    text = (tmp_path / "studies" / "mini" / "study.yaml").read_text(encoding="utf-8")
    text = text.replace("questionnaires: []", "questionnaires: []\nassignment:\n"
                        "  conditions: within\n  condition_order: fixed\n").replace(
        "  intro: Welcome.", f"  intro: Welcome.\n  practice_task: {PRACTICE}")
    (tmp_path / "studies" / "mini" / "study.yaml").write_text(text, encoding="utf-8")
    at, pid = _past_onboarding(store, "practice")
    practice_key = f"pleasqlarify.{PRACTICE}"
    assert at.button(key=f"{practice_key}.chat.yes")  # the first condition: the chat
    at.segmented_control(key=f"pq.practice.{pid}").set_value("single-shot").run()
    assert not at.exception, at.exception
    assert at.button(key=f"{practice_key}.single.accept")
    assert not [b for b in at.button if b.key and ".chat." in b.key]


def test_the_planpool_study_file_compares_chat_and_accounting() -> None:
    from study.spec import load_study

    spec = load_study(ROOT / "studies" / "film" / "study-planpool.yaml")
    chat, ws = spec.condition("planpool-chat"), spec.condition("pleasqlarify")
    assert spec.condition_ids == ["planpool-chat", "pleasqlarify"] and not spec.warnings
    assert chat.show_pool and chat.free_text and ws.pool_accounting and ws.ig_threshold == 0.1
    paper = load_study(ROOT / "studies" / "film" / "study.yaml")
    assert paper.condition_ids == ["pleasqlarify"]
    assert not paper.condition("pleasqlarify").pool_accounting
