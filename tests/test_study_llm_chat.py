"""The planpool-chat condition with ``agent: llm``: an AppTest against the loopback LLM server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.taskbank import load_task_bank
from core.planpool.chat_agent import ASKING, CONFIRM, ChatAgent
from core.planpool.llm_chat import LLMChatAgent
from study.spec import parse_study
from study.trace import read_events
from tests.anthropic_tools_server import ToolScriptServer
from tests.bank_helpers import shown_sql
from tests.study_flow_fixtures import FILM_BANK, TASK
from tests.test_study_conditions import STEP, _agent, _click, _key, _open, _to_task, study_text
from tests.test_study_conditions import studies as studies  # a fixture

KEY = "sk-fake-llm-chat-key"
QA, QB = "Do you want the review's text?", "Do you want the review's score too?"


def _script(sql: str) -> list[list[dict]]:
    def use(name: str, **args: object) -> dict:
        return {"type": "tool_use", "name": name, "input": args}
    return [[{"type": "text", "text": "Let me look at the database."}, use("get_schema")],
            [use("init_pool", questions=[QA, QB])],
            [use("submit", sql="SELECT 1")],  # refused: two questions are pending
            [use("ask_next")], [use("ask_next")], [use("submit", sql=sql)]]


@contextmanager
def scripted_llm(studies: Callable, monkeypatch: pytest.MonkeyPatch,
                 condition: str) -> Iterator[tuple[ToolScriptServer, object, str]]:
    """The study with ``condition`` written and the loopback LLM serving ``_script`` with the
    key set; yields the server, the store and the film task's SQL the script submits."""
    task = next(t for t in load_task_bank(FILM_BANK)[0] if t.id == TASK)
    sql = load_prepared(task, default_pool_dir(FILM_BANK)).sqls[0]
    store = studies(condition)
    with ToolScriptServer(_script(sql)) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        yield server, store, sql


def test_llm_chat_asks_resumes_after_refresh_submits_and_logs(studies, monkeypatch) -> None:
    with scripted_llm(studies, monkeypatch, "{id: planpool-chat, agent: llm, model: claude-test, "
                      "free_text: true}") as (server, store, sql):
        at, pid = _to_task(store)
        agent = _agent(at, pid)
        assert isinstance(agent, LLMChatAgent) and agent.status_ == ASKING
        assert agent.question.text == QA and any(QA in m.value for m in at.markdown)
        assert any("Let me look at the database." in m.value for m in at.markdown)
        _click(at, _key("chat.yes"))
        assert _agent(at, pid).question.text == QB
        again = _open(pid)  # a refresh resumes mid-chat from the saved state
        restored = _agent(again, pid)
        assert isinstance(restored, LLMChatAgent) and restored is not agent
        assert restored.state_ == agent.state_ and restored.messages_ == agent.messages_
        again.chat_input(key=_key("chat.text")).set_value("I don't know").run()
        done = _agent(again, pid)
        assert done.status_ == CONFIRM and done.sql == sql and done.candidate_ == 0
        assert sql in shown_sql(again)
        _click(again, _key("chat.confirm"))
        _click(again, f"pq.next.{STEP}")
        assert server.bodies[0]["model"] == "claude-test" and len(server.bodies) == 6
    assert store.get_progress(pid)["step"] == "done"
    events = read_events(store, participant=pid)
    types = [e.type for e in events]
    assert types.count("pool.init") == 1 and types.count("pool.ask") == 2
    assert types.count("pool.answer") == 1 and types.count("pool.drop") == 1
    assert types.count("pool.refused") == 1 and "llm.step" in types
    init = next(e for e in events if e.type == "pool.init")
    assert [q["text"] for q in init.payload["questions"]] == [QA, QB]
    drop = next(e for e in events if e.type == "pool.drop")
    assert drop.payload["reason"] == "not specified by the user"
    messages = [e.payload for e in events if e.type == "chat.message"]
    assert [m["text"] for m in messages if m["kind"] == "question"] == [QA, QB]
    assert [m["role"] for m in messages].count("user") == 3  # two answers and the confirmation
    submit = next(e for e in events if e.type == "submit")
    assert submit.payload["sql"] == sql and submit.payload["agent"] == "llm"
    assert submit.payload["model"] == "claude-test" and submit.payload["turns"] == 6
    assert store.answers(pid)[f"task:{TASK}/3"] == {"candidate": 0, "sql": sql}
    assert KEY not in str([e.payload for e in events]) and KEY not in str(
        store.get_progress(pid))


def test_llm_chat_without_a_key_keeps_the_study_closed(studies, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    studies("{id: planpool-chat, agent: llm}")
    at = _open()
    assert at.header[0].value == "This study is not open yet"
    assert not at.button and "agent" not in str([m.value for m in at.markdown])


def test_llm_chat_without_a_key_and_a_stated_fallback_uses_the_structured_agent_quietly(
        studies, monkeypatch) -> None:
    """The participant reads nothing about keys; the trace and the researcher's pages do."""
    from study.registry import key_notices

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    store = studies("{id: planpool-chat, agent: llm, fallback: structured}")
    at, pid = _to_task(store)
    shown = " ".join(str(e.value) for kind in ("warning", "error", "info", "caption", "markdown")
                     for e in getattr(at, kind))
    assert "API" not in shown and " key" not in shown
    spec = at.session_state["pq.runner"].spec
    (note,) = key_notices(spec, api_key=False)
    assert "API key" in note and "chat.agent_fallback" in note
    assert key_notices(spec, api_key=True) == []
    agent = _agent(at, pid)
    assert type(agent) is ChatAgent and agent.status_ == ASKING
    _click(at, _key("chat.yes"))
    fallbacks = [e for e in read_events(store, participant=pid) if e.type == "chat.agent_fallback"]
    assert len(fallbacks) == 1 and fallbacks[0].payload["using"] == "structured"


def test_agent_setting_defaults_to_structured(tmp_path) -> None:
    plain = parse_study(study_text("planpool-chat"), tmp_path / "study.yaml")
    assert (plain.condition("planpool-chat").agent, plain.condition("planpool-chat").model) == (
        "structured", "")
    llm = parse_study(study_text("{id: planpool-chat, agent: llm, model: m1}"),
                      tmp_path / "study.yaml")
    assert (llm.condition("planpool-chat").agent, llm.condition("planpool-chat").model) == (
        "llm", "m1")
    warned = parse_study(study_text("{id: planpool-chat, model: m1}"), tmp_path / "study.yaml")
    assert any(w.where == "conditions[0].model" for w in warned.warnings)


class _RefusingServer(ToolScriptServer):
    """Serves the script's first turns, then refuses every request (HTTP 400, not retried)
    with an error text that names SQL and the API, as a real refusal may."""

    def __init__(self, turns: list[list[dict]], good: int):
        self.good = good
        super().__init__(turns)

    def respond(self, path: str, headers: dict[str, str],
                body: dict) -> tuple[int, dict[str, str], dict]:
        with self._lock:
            refuse = len(self.bodies) >= self.good
        if refuse:
            with self._lock:
                self.bodies.append(body)
            return 400, {}, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "prompt is too long: SELECT 1"}}
        return super().respond(path, headers, body)


def test_a_failed_llm_step_is_a_plain_notice_with_the_error_in_the_trace(
        studies, monkeypatch) -> None:
    """The participant reads a plain sentence and Try again, never the API's words; the error
    goes to the trace as chat.fail (and the log)."""
    store = studies("{id: planpool-chat, agent: llm}")
    with _RefusingServer(_script("SELECT 1"), good=4) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        at, pid = _to_task(store)
        assert _agent(at, pid).status_ == ASKING
        _click(at, _key("chat.yes"))
    agent = _agent(at, pid)
    assert isinstance(agent, LLMChatAgent) and agent.error_ and "SELECT" in agent.error_
    shown = " ".join(str(e.value) for kind in ("warning", "error", "info", "code", "markdown")
                     for e in getattr(at, kind))
    assert "The assistant could not continue." in shown
    assert "SELECT" not in shown and "API" not in shown and "HTTP" not in shown
    assert at.button(key=_key("chat.retry"))
    (fail,) = [e for e in read_events(store, participant=pid) if e.type == "chat.fail"]
    assert "prompt is too long" in fail.payload["error"] and fail.payload["attempt"] == 1
