"""The repair session: tiny and degenerate pools, decisions, undo, replay, strategies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.engine.errors import SessionError
from core.engine.pool import PreparedPool
from core.engine.session import Decision, RepairSession
from core.engine.strategy import GROUPED, STRATEGIES
from core.evaluation.simulate import SimulatedUser
from tests.conftest_core import dev_pool, make_pool

TINY = {
    "empty": [],
    "one": ["SELECT title FROM film"],
    "two": ["SELECT title FROM film", "SELECT title FROM film WHERE year > 1996"],
    "three": ["SELECT title FROM film", "SELECT title FROM film WHERE year > 1996",
              ("SELECT title, year FROM film", 2)],
    "all-invalid": ["SELECT nope FROM film", "SELEC title FROM film", "DROP TABLE film"],
    "all-identical": ["SELECT title FROM film", ("SELECT f.title FROM film f", 2),
                      "SELECT title AS t FROM film ORDER BY year DESC"],
}

# a pool with four functional classes and one invalid candidate, used by most tests below
FIVE = [
    ("SELECT title FROM film WHERE genre = 'action'", 3),
    ("SELECT f.title FROM film f WHERE f.genre = 'action'", 2),
    ("SELECT title FROM film WHERE genre = 'action' AND year > 2000", 2),
    ("SELECT title, year FROM film WHERE genre = 'action'", 1),
    ("SELECT title FROM film WHERE genre = 'crime'", 1),
    ("SELECT nope FROM film", 1),
]


@pytest.fixture(scope="module")
def five() -> PreparedPool:
    return make_pool(FIVE)


def _state(s: RepairSession):
    return (s.survivors.tolist(), [(v.label, round(v.gain, 12), v.kind) for v in s.variables()],
            [(b.feature.key, b.probability, b.confirmed) for b in s.predicted_query()],
            s.clusters().tolist(), s.best_candidate())


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(TINY))
def test_tiny_and_degenerate_pools(name, strategy):
    pool = make_pool(TINY[name])
    s = RepairSession(pool, strategy=strategy)
    out, share, count = s.predicted_output()
    assert len(s.clusters()) == pool.n
    assert not s.is_stuck
    if name in ("two", "three"):
        assert not s.is_done
        assert s.variables() and s.next_variable() is s.variables()[0]
        assert out is not None and out.ok and 0 < share < 1
        return
    assert s.is_done, name
    assert s.variables() == [] and s.next_variable() is None
    if name in ("empty", "all-invalid"):
        assert (out, share, count) == (None, 0.0, 0)
        assert s.predicted_query() == []
        assert s.best_candidate() == (None if name == "empty" else 0)
    else:  # one output: it is the predicted output, with the whole weight
        assert out == pool.results[0] and share == 1.0 and count == pool.n
        assert out.rows and out.ok
        assert s.best_candidate() == (0 if name == "one" else 1)  # the heaviest candidate
        determined = {b.feature.key for b in s.predicted_query() if b.determined}
        assert {"SELECT film.title", "FROM film"} <= determined


def test_three_candidates_resolve_in_at_most_two_answers():
    for gold in ("SELECT title FROM film", "SELECT title FROM film WHERE year > 1996",
                 "SELECT year, title FROM film"):
        pool = make_pool(TINY["three"], gold=[gold])
        s = RepairSession(pool)
        user = SimulatedUser(s, 0)
        while not s.is_done:
            v = s.next_variable()
            s.answer(v.keys, user.answer(v))
        assert s.step <= 2 and user.succeeded()
        assert s.predicted_output()[0].rows


def test_answer_undo_back_to(five):
    s = RepairSession(five)
    assert s.survivors.tolist() == [0, 1, 2, 3, 4, 5]
    assert s.n_classes == 5 and s.survivor_weight == 10
    start = _state(s)
    s.answer_feature("WHERE film.genre = 'action'", True)
    assert s.survivors.tolist() == [0, 1, 3]
    after_one = _state(s)
    s.answer(["SELECT film.year"], False)
    assert s.survivors.tolist() == [0, 1] and s.is_done and s.step == 2
    assert s.predicted_output()[1] == 1.0
    confirmed = {b.feature.key for b in s.predicted_query() if b.confirmed}
    assert confirmed == {"WHERE film.genre = 'action'"}
    assert s.undo() == Decision("variable", ("SELECT film.year",), False)
    assert _state(s) == after_one
    s.answer(["SELECT film.year"], True)
    assert s.survivors.tolist() == [3]
    s.back_to(0)
    assert s.step == 0 and s.history == [] and _state(s) == start
    assert s.undo() is None
    with pytest.raises(SessionError):
        s.back_to(1)


def test_restrict_keeps_only_surviving_selection(five):
    s = RepairSession(five)
    s.answer_feature("WHERE film.genre = 'crime'", False)
    assert 4 not in s.survivors
    s.restrict([4, 2, 3, 99], gesture="lasso")  # 4 is filtered out, 99 does not exist
    assert s.survivors.tolist() == [2, 3]
    assert s.history[-1] == Decision("restrict", candidates=(2, 3), gesture="lasso")
    with pytest.raises(SessionError, match="no surviving"):
        s.restrict([0, 4])
    assert s.survivors.tolist() == [2, 3]


def test_decision_that_empties_survivors_is_refused_and_changes_nothing(five):
    s = RepairSession(five)
    s.answer_feature("WHERE film.genre = 'action'", True)
    before = (list(s.history), _state(s), s.step)
    with pytest.raises(SessionError, match="no candidate"):
        s.answer_feature("WHERE film.genre = 'action'", False)
    with pytest.raises(SessionError, match="no candidate"):
        s.answer(["WHERE film.genre = 'crime'"], True)
    with pytest.raises(SessionError, match="not in this pool"):
        s.answer(["SELECT film.budget"], True)
    with pytest.raises(SessionError):
        s.decide(Decision("shrug", ("FROM film",), True))
    with pytest.raises(SessionError):
        s.decide(Decision("variable", (), True))
    assert (list(s.history), _state(s), s.step) == before


def test_unknown_strategy_is_refused(five):
    with pytest.raises(SessionError, match="unknown strategy"):
        RepairSession(five, strategy="psychic")


def test_invalid_candidates_survive_but_carry_no_features(five):
    s = RepairSession(five)
    assert not five.valid[5] and not five.x[5].any()
    assert 5 in s.survivors
    s.answer_feature("WHERE film.genre = 'action'", False)  # invalid one has no WHERE
    assert s.survivors.tolist() == [2, 4, 5]
    s.answer_feature("WHERE film.genre = 'action' AND film.year > 2000", False)
    assert s.survivors.tolist() == [4, 5]
    assert not s.is_done  # the error class is still a reading: "FROM film" tells them apart
    assert [v.keys for v in s.variables()][0] in {("FROM film",), ("SELECT film.title",)}
    assert s.predicted_output()[0].rows == [("Pulp Fiction",)]
    # probabilities count valid survivors only
    assert all(b.probability == 1.0 for b in s.predicted_query())


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_replay_reproduces_state_exactly(strategy):
    pool = dev_pool(9)
    s = RepairSession(pool, strategy=strategy, random_state=3)
    user = SimulatedUser(s, 0)
    v = s.next_variable()
    s.answer(v.keys, user.answer(v))
    s.restrict(s.survivors[: max(2, len(s.survivors) - 1)].tolist(), gesture="box")
    if s.next_variable() is not None:
        v = s.next_variable()
        if len(v.keys) == 1:
            s.answer_feature(v.keys[0], user.answer(v))
        else:
            s.answer(v.keys, user.answer(v))
    data = json.loads(json.dumps(s.to_dict()))  # survives JSON, as in the trace
    again = RepairSession.from_dict(data, pool)
    assert again.history == s.history
    assert _state(again) == _state(s)
    assert again.predicted_output()[0] == s.predicted_output()[0]
    # also through a serialised pool
    pool2 = PreparedPool.from_dict(json.loads(json.dumps(pool.to_dict())))
    assert RepairSession.from_dict(data, pool2).survivors.tolist() == s.survivors.tolist()
    with pytest.raises(SessionError, match="belongs to task"):
        RepairSession.from_dict({**data, "task_id": "other"}, pool)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_runs_to_the_end(strategy):
    pool = dev_pool(9)
    for gold in range(len(pool.gold_sqls)):
        s = RepairSession(pool, strategy=strategy)
        user = SimulatedUser(s, gold)
        while not s.is_done and s.next_variable() is not None:
            v = s.next_variable()
            assert 0 < v.yes_count < len(s.survivors) and v.yes_count + v.no_count == len(
                s.survivors)
            assert v.example in s.survivors
            assert set(v.keys) <= set(pool.feature_keys(v.example))
            s.answer(v.keys, user.answer(v))
        assert s.step < pool.n
        assert s.is_done or s.is_stuck
        if user.realised:
            assert user.realisers[s.survivors].any()


def test_grouped_variables_only_for_cluster_grouped():
    pool = dev_pool(9)
    kinds = {st: {v.kind for v in RepairSession(pool, strategy=st).variables()}
             for st in STRATEGIES}
    assert kinds["cluster-grouped"] == kinds["expected-depth"] == kinds["planned"] \
        == {"atomic", "group"}
    for st in STRATEGIES:
        if st not in GROUPED:
            assert kinds[st] == {"atomic"}, st
    groups = [v for v in RepairSession(pool).variables() if v.kind == "group"]
    for g in groups:
        assert len(g.features) >= 2 and g.cluster is not None
        assert not set(g.implicit) & set(g.features)
        # a group splits by the conjunction of its features
        mask = np.array([set(g.keys) <= set(pool.feature_keys(i)) for i in range(pool.n)])
        assert g.yes_count == int(mask.sum())


def test_ranking_is_by_gain_and_random_is_seeded():
    pool = dev_pool(9)
    ranked = RepairSession(pool, strategy="cluster-grouped").variables()
    gains = [v.gain for v in ranked]
    assert all(a >= b - 1e-9 for a, b in zip(gains, gains[1:], strict=False)) and gains[0] > 0
    a = [v.label for v in RepairSession(pool, strategy="random", random_state=1).variables()]
    b = [v.label for v in RepairSession(pool, strategy="random", random_state=1).variables()]
    c = [v.label for v in RepairSession(pool, strategy="random", random_state=2).variables()]
    assert a == b and sorted(a) == sorted(c) and a != c
