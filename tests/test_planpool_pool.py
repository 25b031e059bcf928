"""PlanPool invariants (hypothesis) and the plain-language question renderer."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.features import Feature
from core.planpool.pool import PoolError, PoolNotEmptyError, QuestionPool
from core.planpool.questions import render_question


def ticking_clock():
    """A deterministic injected clock: 1000, 1001, … ms."""
    counter = itertools.count(1000)
    return lambda: float(next(counter))


OPS = st.lists(st.one_of(
    st.tuples(st.just("init"), st.integers(0, 4)),
    st.tuples(st.just("add"), st.integers(0, 9)),
    st.tuples(st.just("drop"), st.integers(1, 8)),
    st.tuples(st.just("next"), st.just(0)),
    st.tuples(st.just("answer"), st.integers(1, 8)),
    st.tuples(st.just("submit"), st.just(0)),
), max_size=30)


def apply(pool: QuestionPool, ops) -> list[tuple[str, bool]]:
    """Apply random operations; invalid ones raise PoolError and change nothing."""
    log = []
    for op, arg in ops:
        before = pool.snapshot()
        try:
            if op == "init":
                pool.init([{"text": f"plan {i}"} for i in range(arg)])
            elif op == "add":
                pool.add(f"new {arg}", priority=arg)
            elif op == "drop":
                pool.drop(f"q{arg}", "no longer relevant")
            elif op == "next":
                pool.next()
            elif op == "answer":
                pool.answer(f"q{arg}", "yes")
            else:
                pool.submit("SELECT 1")
            log.append((op, True))
        except PoolNotEmptyError:
            assert pool.snapshot() == before
            log.append((op, False))
        except PoolError:
            assert pool.snapshot() == before
            log.append((op, False))
    return log


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_submit_is_impossible_while_a_question_is_open(ops):
    pool = QuestionPool(ticking_clock())
    apply(pool, ops)
    if pool.submitted is None:
        if pool.open:
            with pytest.raises(PoolNotEmptyError) as info:
                pool.submit("SELECT 1")
            assert all(q.id in str(info.value) for q in pool.open)
            assert pool.submitted is None
        else:
            pool.submit("SELECT 2")
            assert pool.submitted == "SELECT 2"
    submits = [e for e in pool.history if e.op == "submit"]
    assert len(submits) <= 1
    if submits:  # at the time of the accepted submit nothing was open
        assert all(q.status in ("answered", "dropped") for q in pool.questions.values())


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_every_asked_or_dropped_question_was_once_pending(ops):
    pool = QuestionPool(ticking_clock())
    apply(pool, ops)
    became_pending: set[str] = set()
    for e in pool.history:
        if e.op == "init":
            became_pending |= set(e.data["ids"])
        if e.op == "add":
            became_pending.add(e.qid)
        if e.op in ("next", "drop"):
            assert e.qid in became_pending, e
    times = [e.t for e in pool.history]
    assert times == sorted(times)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_history_replays_to_the_same_pool(ops):
    pool = QuestionPool(ticking_clock())
    apply(pool, ops)
    again = QuestionPool.from_dict(pool.to_dict())
    assert again.snapshot() == pool.snapshot()
    assert again.history == pool.history
    assert again.stats() == pool.stats()


def test_refused_submit_names_the_pending_questions_and_is_recorded():
    pool = QuestionPool(ticking_clock())
    pool.init([{"text": "Which year?"}, {"text": "Titles or ids?"}])
    with pytest.raises(PoolNotEmptyError, match=r"q1 \[pending\] 'Which year\?'.*q2"):
        pool.submit("SELECT 1")
    q = pool.next()
    assert q.id == "q1"
    pool.answer("q1", "2000")
    pool.drop("q2", "resolved by earlier answers")
    assert pool.submit("SELECT 3") == "SELECT 3"
    assert [e.op for e in pool.history] == ["init", "refused", "next", "answer", "drop",
                                            "submit"]
    assert pool.stats() == {"planned": 2, "added": 0, "dropped": 1, "asked": 1,
                                 "answered": 1, "refused_submits": 1, "modified": True,
                                 "submitted": True}
    assert [e.t for e in pool.history] == [1000.0 + i for i in range(6)]


def test_next_takes_the_highest_priority_and_drop_needs_a_reason():
    pool = QuestionPool(ticking_clock())
    pool.init([{"text": "a", "priority": 0.2}, {"text": "b", "priority": 0.9}])
    pool.add("c", priority=0.5)
    assert [q.text for q in pool.pending] == ["b", "c", "a"]
    with pytest.raises(PoolError, match="state why"):
        pool.drop("q1", "  ")
    with pytest.raises(PoolError, match="no question 'q9'"):
        pool.drop("q9", "x")
    assert pool.next().text == "b"
    with pytest.raises(PoolError, match="awaits its answer"):
        pool.next()


@pytest.mark.parametrize(("features", "expected"), [
    ([Feature("SELECT", "reviews.review_text")], "Should the result include the review's text?"),
    ([Feature("SELECT ONLY", "films.title, reviews.review_text")],
     "Should the result show exactly the film's title and the review's text, and no other "
     "columns?"),
    ([Feature("WHERE", "films.release_year > 2000")],
     "Should only rows where the film's release year is greater than 2000 be kept?"),
    ([Feature("WHERE", "films.title LIKE '%pulp%'")],
     "Should only rows where the film's title contains 'pulp' be kept?"),
    ([Feature("SELECT", "AVG(reviews.score)")], "Should the result include the average review's score?"),
    ([Feature("SELECT", "reviews.review_text"), Feature("SELECT", "reviews.score")],
     "Should the result include the review's text and the review's score?"),
    ([Feature("ORDER BY", "reviews.score DESC"), Feature("LIMIT", "1")],
     "Should the result be sorted by the review's score, largest first, and only the first row "
     "be returned?"),
    ([Feature("JOIN", "people")], "Should the answer use information about people?"),
    ([Feature("DISTINCT")], "Should duplicate rows be removed from the result?"),
])
def test_render_question(features, expected):
    assert render_question(features) == expected


def test_render_question_needs_a_feature():
    with pytest.raises(ValueError, match="at least one feature"):
        render_question([])
