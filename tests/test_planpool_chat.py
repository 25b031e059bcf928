"""The interactive PlanPool chat agent and workspace pool accounting (pure, no Streamlit)."""

from __future__ import annotations

import pytest

from core.engine.errors import SessionError
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.planpool.accounting import open_variables
from core.planpool.agents import NOT_SPECIFIED, RESOLVED
from core.planpool.chat_agent import ASKING, CONFIRM, CONFIRMED, REJECTED, ChatAgent, parse_reply
from core.planpool.simulated import SimulatedChatUser


def _ticks():
    t = iter(range(1_000, 10**9, 10))
    return lambda: float(next(t))


def _chat(agent: ChatAgent, user: SimulatedChatUser) -> None:
    agent.start()
    while agent.status_ == ASKING:
        agent.reply(user.answer_keys(tuple(agent.question.payload["keys"])))


def test_chat_with_the_simulated_user_reaches_the_gold_and_accounts_for_every_question(
        film_pools):
    correct = total = 0
    for pool in film_pools:
        for g in range(len(pool.gold_sqls)):
            session = RepairSession(pool)
            agent = ChatAgent(session, clock=_ticks())
            _chat(agent, SimulatedChatUser(session, g))
            assert agent.status_ == CONFIRM and agent.pool_.is_empty
            assert agent.pool_.submitted == agent.sql
            total += 1
            correct += output_key(pool.results[agent.candidate_]) == output_key(
                pool.gold_results[g])
            asked = [m for m in agent.messages_ if m["kind"] == "question"]
            assert len(asked) == agent.pool_.stats()["asked"]
    assert correct / total >= 0.85


def test_events_cover_every_pool_operation_and_message(film_pools):
    session = RepairSession(film_pools[0])
    agent = ChatAgent(session, clock=_ticks())
    mark = agent.mark()
    _chat(agent, SimulatedChatUser(session, 0))
    events = agent.events_since(mark)
    types = [t for t, _ in events]
    ops = [e.op for e in agent.pool_.history]
    assert types.count("pool.init") == 1
    assert types.count("pool.ask") == ops.count("next")
    assert types.count("pool.answer") == ops.count("answer")
    assert types.count("pool.drop") == ops.count("drop")
    assert types.count("pool.add") == ops.count("add")
    assert types.count("chat.message") == len(agent.messages_)
    drops = [p for t, p in events if t == "pool.drop"]
    assert all(p["reason"] and p["question"] for p in drops)


def test_not_specified_drops_the_question_without_filtering(film_pools):
    session = RepairSession(film_pools[1])
    agent = ChatAgent(session)
    agent.start()
    q = agent.question
    before = len(session.survivors)
    agent.reply(NOT_SPECIFIED)
    assert agent.pool_.get(q.id).status == "dropped"
    assert agent.pool_.get(q.id).reason == "not specified by the user"
    assert len(session.survivors) == before


def test_resolved_questions_are_dropped_with_the_reason(film_pools):
    reasons = []
    for pool in film_pools:
        for g in range(len(pool.gold_sqls)):
            session = RepairSession(pool)
            agent = ChatAgent(session)
            _chat(agent, SimulatedChatUser(session, g))
            reasons += [q.reason for q in agent.pool_.questions.values() if q.reason]
    assert RESOLVED in reasons


def test_roundtrip_resumes_mid_chat_and_reject_restarts(film_pools):
    pool = film_pools[0]
    session = RepairSession(pool)
    agent = ChatAgent(session, clock=_ticks())
    agent.start()
    user = SimulatedChatUser(session, 0)
    agent.reply(user.answer_keys(tuple(agent.question.payload["keys"])))
    saved, saved_session = agent.to_dict(), session.to_dict()
    again = ChatAgent.from_dict(saved, RepairSession.from_dict(saved_session, pool))
    assert again.pool_.snapshot() == agent.pool_.snapshot()
    assert again.messages_ == agent.messages_ and again.status_ == agent.status_
    while again.status_ == ASKING:
        again.reply(SimulatedChatUser(again.session, 0).answer_keys(
            tuple(again.question.payload["keys"])))
    with pytest.raises(SessionError, match="after 'Not what I meant'"):
        again.restart()
    again.reject()
    assert again.status_ == REJECTED
    again.restart()
    assert again.attempt_ == 2 and again.session.step == 0
    assert again.status_ in (ASKING, CONFIRM) and again.pool_.initialised
    mark = (1, 0, 0)
    assert [t for t, _ in again.events_since(mark)].count("pool.init") == 1
    if again.status_ == ASKING:
        with pytest.raises(SessionError):
            again.confirm()
    else:
        again.confirm()
        assert again.status_ == CONFIRMED


@pytest.mark.parametrize(("text", "want"), [
    ("Yes", "yes"), ("yes please", "yes"), ("y", "yes"), ("No.", "no"), ("nope", "no"),
    ("I don't know", NOT_SPECIFIED), ("doesn't matter", NOT_SPECIFIED),
    ("not specified", NOT_SPECIFIED), ("the title", None), ("", None)])
def test_parse_reply(text, want):
    assert parse_reply(text) == want


def test_open_variables_respect_threshold_dismissals_and_answers(film_pools):
    session = RepairSession(film_pools[0])
    ranked = session.variables()
    high = [v for v in ranked if v.gain > 0.1]
    assert open_variables(session, [], 0.1) == high and high
    assert open_variables(session, [high[0].keys], 0.1) == high[1:]
    assert open_variables(session, [], 100.0) == []
    session.answer(high[0].keys, True)
    assert high[0].keys not in {v.keys for v in open_variables(session, [], 0.1)}
