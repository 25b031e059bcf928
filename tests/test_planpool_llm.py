"""The LLM agent's tool loop with the real anthropic SDK against a loopback tool_use server."""

from __future__ import annotations

import itertools

import pytest

from core.engine.execute import open_database
from core.engine.pool import prepare_pool
from core.engine.session import RepairSession
from core.engine.taskbank import load_tasks
from core.planpool.llm_agent import LLMAgent, tools_for
from core.planpool.simulated import MatchingUser, SimulatedChatUser
from tests.anthropic_tools_server import ToolScriptServer
from tests.conftest_core import FILM_BANK as FILM

KEY = "sk-test-planpool-secret"


def use(name, **args):
    return {"type": "tool_use", "name": name, "input": args}


@pytest.fixture(scope="module")
def task():
    return load_tasks(FILM)[1]  # film-pulp-review


def agent(server):
    clock = itertools.count(0)
    return LLMAgent(model="claude-test", api_key=KEY, base_url=server.base_url, max_turns=10,
                    clock=lambda: float(next(clock)))


def test_early_submit_is_refused_with_pending_questions_then_finishes(task):
    script = [
        [{"type": "text", "text": "Let me look."}, use("get_schema")],
        [use("probe_values", table="films", column="title")],
        [use("init_pool", questions=["Should the result include the review's text?",
                                     "Should the result include the review's score?"])],
        [use("submit", sql="SELECT review_text FROM reviews")],  # too early
        [use("ask_next")],
        [use("drop_question", id="q2", reason="resolved by earlier answers")],
        [use("submit", sql="SELECT review_text FROM reviews WHERE film_id = 1")],
    ]
    answers = []

    def user(q):
        answers.append(q)
        return "yes"

    db = open_database(task.database)
    try:
        with ToolScriptServer(script) as server:
            ep = agent(server).run(task.question, db, user, "planpool")
    finally:
        db.close()
    assert ep.stop == "submitted"
    assert ep.submitted_sql == "SELECT review_text FROM reviews WHERE film_id = 1"
    assert ep.refused == 1
    schema = server.tool_results(1)[0]
    assert "CREATE TABLE films" in schema["content"] and not schema["is_error"]
    assert "Pulp Fiction" in server.tool_results(2)[0]["content"]
    refusal = server.tool_results(4)[0]
    assert refusal["is_error"]
    assert "q1 [pending]" in refusal["content"]
    assert "Should the result include the review's text?" in refusal["content"]
    assert "q2" in refusal["content"] and "drop_question" in refusal["content"]
    assert "user: yes" in server.tool_results(5)[0]["content"]
    assert answers == ["Should the result include the review's text?"]
    assert [e.op for e in ep.pool.history] == ["init", "refused", "next", "answer", "drop",
                                               "submit"]
    assert len(server.bodies) == 7
    names = {t["name"] for t in server.bodies[0]["tools"]}
    assert {"init_pool", "ask_next", "submit"} <= names and "ask" not in names
    assert server.bodies[0]["model"] == "claude-test"
    assert KEY not in repr(agent(server))


def test_naive_variant_asks_freely_and_submits_without_a_pool(task):
    script = [[use("ask", question="Do you want the review text?")],
              [use("run_sql", sql="DELETE FROM reviews")],
              [use("submit", sql="SELECT 1")]]
    db = open_database(task.database)
    try:
        with ToolScriptServer(script) as server:
            ep = agent(server).run(task.question, db, lambda q: "no", "naive")
    finally:
        db.close()
    assert ep.pool is None and ep.submitted_sql == "SELECT 1"
    assert ep.asked == [{"text": "Do you want the review text?", "answer": "no"}]
    assert "error" in server.tool_results(2)[0]["content"].lower()  # read-only: DELETE refused
    names = {t["name"] for t in server.bodies[0]["tools"]}
    assert "ask" in names and "init_pool" not in names
    assert "ranked plan" not in server.bodies[0]["system"]


def test_turn_budget_bounds_the_loop(task):
    db = open_database(task.database)
    try:
        with ToolScriptServer([[use("show_pool")]] * 20) as server:
            a = agent(server)
            a.max_turns = 3
            ep = a.run(task.question, db, lambda q: "yes", "planpool")
    finally:
        db.close()
    assert ep.stop == "turn budget" and ep.submitted_sql is None and len(server.bodies) == 3


def test_matching_user_answers_only_matched_questions(task):
    session = RepairSession(prepare_pool(task, layout=False))
    user = MatchingUser(SimulatedChatUser(session, 0))
    assert user("What is the weather like on Mars today?") == "not specified"
    top = session.next_variable()
    from core.planpool.questions import render_question

    reply = user(render_question(top.features))
    assert reply in ("yes", "no", "not specified")
    assert user.matched == [None, top.keys]


def test_tools_per_variant():
    assert "ask" in {t["name"] for t in tools_for("plan-prompt")}
    with pytest.raises(ValueError, match="unknown variant"):
        tools_for("reflect")


class FlakyServer(ToolScriptServer):
    """Answers the first ``fails`` requests with HTTP ``status`` (retry-after 1 ms), then scripts."""

    def __init__(self, turns, fails: int, status: int = 429):
        self.fails, self.status, self.seen = fails, status, 0
        super().__init__(turns)

    def respond(self, path, headers, body):
        with self._lock:
            self.seen += 1
            failing = self.seen <= self.fails
        if failing:
            return self.status, {"retry-after-ms": "1"}, {
                "type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
        return super().respond(path, headers, body)


@pytest.mark.parametrize("status", [429, 529])
def test_transient_failures_are_retried_by_the_sdk(task, status):
    script = [[use("submit", sql="SELECT review_text FROM reviews WHERE film_id = 1")]]
    db = open_database(task.database)
    try:
        with FlakyServer(script, fails=2, status=status) as server:
            ep = LLMAgent(model="claude-test", api_key=KEY, base_url=server.base_url,
                          max_retries=2).run(task.question, db, lambda q: "yes", "naive")
    finally:
        db.close()
    assert server.seen == 3 and ep.submitted_sql is not None


def test_a_failure_past_the_retries_is_one_clear_error(task):
    from core.engine.errors import GenerationError

    db = open_database(task.database)
    try:
        with FlakyServer([], fails=10) as server, pytest.raises(GenerationError) as err:
            LLMAgent(model="claude-test", api_key=KEY, base_url=server.base_url,
                     max_retries=1).run(task.question, db, lambda q: "yes", "naive")
    finally:
        db.close()
    assert server.seen == 2
    assert "kept failing (RateLimitError) after 2 attempts" in str(err.value)
    assert KEY not in str(err.value)


def test_tool_calls_off_their_schema_are_tool_errors_not_exceptions(task):
    """The API does not enforce a tool's input schema: arguments of the wrong type (a number
    for the question list, an object for a priority) come back to the model as that call's
    error, and the episode goes on, instead of a TypeError on the participant's page."""
    script = [
        [use("init_pool", questions=5)],
        [use("init_pool", questions=None)],
        [use("init_pool", questions=["Should the result include the review's text?"])],
        [use("add_question", question="Only reviews of films from 1994?", priority={"a": 1})],
        [use("drop_question", id="q1", reason="resolved")],
        [use("submit", sql="SELECT review_text FROM reviews")],
    ]
    db = open_database(task.database)
    try:
        with ToolScriptServer(script) as server:
            ep = agent(server).run(task.question, db, lambda q: "yes", "planpool")
    finally:
        db.close()
    assert ep.stop == "submitted"
    errors = [c for c in ep.calls if c["error"]]
    assert [c["name"] for c in errors] == ["init_pool", "init_pool", "add_question"]
    assert all("not iterable" in c["result"] or "float()" in c["result"] for c in errors)
