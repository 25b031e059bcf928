"""The LLM agent's step API (ask -> stop, resume, refusal, submit) with the real SDK offline."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.engine.execute import open_database
from core.engine.taskbank import load_tasks
from core.planpool.llm_agent import ASKING, BUDGET, SUBMITTED, LLMAgent, episode
from tests.anthropic_tools_server import ToolScriptServer
from tests.conftest_core import FILM_BANK as FILM

KEY = "sk-test-steps-secret"
QA, QB = "Should the result include the review's text?", "Should it include the score?"
SQL = "SELECT review_text FROM reviews WHERE film_id = 1"
SCRIPT = [
    [{"type": "text", "text": "Let me look."}, {"type": "tool_use", "name": "get_schema"}],
    [{"type": "tool_use", "name": "init_pool", "input": {"questions": [QA, QB]}}],
    [{"type": "tool_use", "name": "submit", "input": {"sql": "SELECT 1"}}],  # too early
    [{"type": "tool_use", "name": "ask_next"}],
    [{"type": "tool_use", "name": "ask_next"}],
    [{"type": "tool_use", "name": "submit", "input": {"sql": SQL}}],
]


class OffsetServer(ToolScriptServer):
    """Serves the script from turn ``offset`` on, with the ids the full script would use."""

    def __init__(self, turns: list[list[dict[str, Any]]], offset: int):
        super().__init__(turns)
        self.offset = offset

    def _payload(self, index: int, body: dict[str, Any]) -> dict[str, Any]:
        return super()._payload(index + self.offset, body)


@pytest.fixture()
def db():
    database = open_database(load_tasks(FILM)[1].database)  # film-pulp-review
    yield database
    database.close()


def _agent(url: str) -> LLMAgent:
    return LLMAgent(model="claude-test", api_key=KEY, base_url=url, max_turns=10,
                    clock=lambda: 5.0)


def test_ask_stops_resume_answers_early_submit_is_refused_then_submits(db) -> None:
    with ToolScriptServer(SCRIPT) as server:
        agent = _agent(server.base_url)
        start = agent.start("Show the review of Pulp Fiction.", "planpool", db.dialect)
        state = agent.advance(start, db)
        assert start["status"] == "new" and start["turns"] == 0  # the input is not mutated
        assert state["status"] == ASKING and state["pending"]["question"] == QA
        assert state["pending"]["qid"] == "q1" and len(server.bodies) == 4
        refusal = server.tool_results(3)[0]
        assert refusal["is_error"] and "q1 [pending]" in refusal["content"]
        assert QB in refusal["content"] and "drop_question" in refusal["content"]
        with pytest.raises(ValueError, match="waiting for the user's answer"):
            agent.advance(state, db)
        state = agent.advance(state, db, "yes")
        assert state["status"] == ASKING and state["pending"]["question"] == QB
        assert server.tool_results(4)[0]["content"] == "q1: " + QA + "\nuser: yes"
        state = agent.advance(state, db, "not specified")
        assert state["status"] == SUBMITTED and state["submitted_sql"] == SQL
        assert len(server.bodies) == 6 and state["turns"] == 6
    assert state["usage"] == {"input_tokens": 300, "output_tokens": 60}
    assert state["refused"] == 1 and state["pending"] is None
    ep = episode(state)
    assert ep.stop == "submitted" and ep.asked == [{"text": QA, "answer": "yes"},
                                                   {"text": QB, "answer": "not specified"}]
    assert [e.op for e in ep.pool.history] == ["init", "refused", "next", "answer", "next",
                                               "drop", "submit"]
    assert ep.pool.get("q2").reason == "not specified by the user"
    assert KEY not in json.dumps(state)
    with pytest.raises(ValueError, match="no question is waiting"):
        agent.advance(state, db, "yes")


def test_state_round_trips_through_json_mid_conversation_and_resumes_identically(db) -> None:
    with ToolScriptServer(SCRIPT) as server:
        agent = _agent(server.base_url)
        paused = agent.advance(agent.start("Pulp Fiction review", "planpool", db.dialect), db)
        saved = json.dumps(paused)
        done = agent.advance(agent.advance(paused, db, "no"), db, "yes")
        sent_after = server.bodies[4:]
    with OffsetServer(SCRIPT, offset=4) as resumed_server:
        again = _agent(resumed_server.base_url)
        restored = json.loads(saved)
        assert restored == paused
        redone = again.advance(again.advance(restored, db, "no"), db, "yes")
    assert redone == done and redone["status"] == SUBMITTED
    assert resumed_server.bodies == sent_after  # the same requests after the resume


def test_turn_budget_and_naive_ask_without_a_pool(db) -> None:
    script = [[{"type": "tool_use", "name": "ask", "input": {"question": "Which score?"}}],
              [{"type": "text", "text": "Thinking."}], [{"type": "text", "text": "Still."}]]
    with ToolScriptServer(script) as server:
        agent = _agent(server.base_url)
        agent.max_turns = 3
        state = agent.advance(agent.start("q", "naive", db.dialect), db)
        assert state["pool"] is None and state["pending"] == {
            "tool_use_id": "toolu_0_0", "question": "Which score?", "qid": None}
        state = agent.advance(state, db, "the average")
        assert state["status"] == BUDGET and state["turns"] == 3
        assert server.tool_results(1)[0]["content"] == "the average"
        nudge = server.bodies[2]["messages"][-1]["content"]
        assert "finish by calling submit" in nudge
