"""The LLM condition spends the researcher's key only for enrolled participants, within the
study's token budget (recorded in llm_spend across processes)."""

from __future__ import annotations

import pytest

from core.planpool.chat_agent import ChatAgent
from core.planpool.llm_chat import LLMChatAgent
from study import budget
from study.conditions import Condition
from study.runner import join
from study.spec import StudySpecError, load_study, parse_study
from study.store import open_store
from study.trace import read_events
from study.withdraw import withdraw
from tests.study_flow_fixtures import write_mini
from tests.test_study_conditions import _agent, _to_task, study_text
from tests.test_study_conditions import studies as studies  # a fixture
from tests.test_study_llm_chat import scripted_llm


def test_spend_is_recorded_per_attempt_and_refused_past_the_budget(store_url, tmp_path):
    spec = load_study(write_mini(tmp_path / "studies"))
    store = open_store(store_url)
    a, b = join(store, spec), join(store, spec)
    cond = Condition("planpool-chat", agent="llm", llm_budget_tokens=1000)
    assert budget.refusal(store, spec.id, a.participant, cond) is None
    budget.record(store, spec.id, a.participant, "t", 1, {"input_tokens": 300}, 1)
    budget.record(store, spec.id, a.participant, "t", 1,  # cumulative: replaces, not adds
                  {"input_tokens": 500, "output_tokens": 100}, 2)
    budget.record(store, spec.id, b.participant, "t", 1, {"input_tokens": 200}, 3)
    assert budget.spent(store, spec.id) == 800
    budget.record(store, spec.id, b.participant, "t", 2, {"output_tokens": 200}, 4)
    assert "budget is spent (1,000 of 1,000 tokens" in budget.refusal(
        store, spec.id, a.participant, cond)
    assert budget.refusal(store, spec.id, "nobody", cond).startswith("the LLM is used only")
    withdraw(store, spec, b.participant, by="participant", now=5)
    assert budget.spent(store, spec.id) == 1000  # a withdrawal keeps the (anonymous) spend
    roomy = Condition("planpool-chat", agent="llm", llm_budget_tokens=10**6)
    assert budget.refusal(store, spec.id, a.participant, roomy) is None
    store.set_status(a.participant, "completed", 6)
    assert budget.refusal(store, spec.id, a.participant, roomy) is not None


def test_budget_setting_is_validated(tmp_path):
    with pytest.raises(StudySpecError, match="must be a whole number of tokens"):
        parse_study(study_text("{id: planpool-chat, agent: llm, llm_budget_tokens: -5}"),
                    tmp_path / "study.yaml")
    spec = parse_study(study_text("{id: planpool-chat, llm_budget_tokens: 5}"),
                       tmp_path / "study.yaml")
    assert any("llm_budget_tokens" in w.where for w in spec.warnings)


def test_spent_budget_falls_back_without_calling_the_model(studies, monkeypatch):
    with scripted_llm(studies, monkeypatch, "{id: planpool-chat, agent: llm, llm_budget_tokens: 0}"
                      ) as (server, store, _):
        at, pid = _to_task(store)
        assert type(_agent(at, pid)) is ChatAgent and not isinstance(_agent(at, pid),
                                                                      LLMChatAgent)
        assert not any("budget" in w.value for w in at.warning)  # the researcher's matter
        assert server.bodies == []
    (fb,) = [e for e in read_events(store, participant=pid) if e.type == "chat.agent_fallback"]
    assert "budget is spent" in fb.payload["reason"]


def test_llm_chat_records_its_spend(studies, monkeypatch):
    with scripted_llm(studies, monkeypatch, "{id: planpool-chat, agent: llm}") as (
            server, store, _):
        at, pid = _to_task(store)
        assert isinstance(_agent(at, pid), LLMChatAgent) and server.bodies
    steps = [e for e in read_events(store, participant=pid) if e.type == "llm.step"]
    usage = steps[-1].payload["usage"]
    assert budget.spent(store, "mini") == usage["input_tokens"] + usage["output_tokens"] > 0
