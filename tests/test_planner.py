"""The planner behind the default ``planned`` strategy: exact where it says so, the same plan
whatever was asked before, realised by the session, and out of the way for big pools."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from core.engine import planner as planner_module
from core.engine.planner import Planner, modal_targets, pool_planner
from core.engine.prepare import prepare_pool
from core.engine.session import RepairSession
from core.engine.taskbank import load_tasks
from core.evaluation import evaluate
from core.evaluation.optimal import tree_floor
from tests.conftest_core import FILM_BANK, dev_pool
from tests.test_strategy_lookahead import random_cases


def brute_force(masks: np.ndarray, intents: np.ndarray, labels: np.ndarray,
                sizes: np.ndarray) -> float:
    """The planner's objective by plain recursion over every question at every set."""

    def cost(alive: tuple[int, ...]) -> float:
        total = intents[list(alive)].sum()
        if len({int(labels[i]) for i in alive}) <= 1 or total <= 0:
            return 0.0
        best = None
        for row in masks:
            yes = tuple(i for i in alive if row[i])
            no = tuple(i for i in alive if not row[i])
            if yes and no:
                value = 1 + (intents[list(yes)].sum() * cost(yes)
                             + intents[list(no)].sum() * cost(no)) / total
                best = value if best is None else min(best, value)
        if best is not None:
            return best
        target: dict[int, float] = {}
        shown: dict[int, float] = {}
        for i in alive:
            target[int(labels[i])] = target.get(int(labels[i]), 0.0) + intents[i]
            shown[int(labels[i])] = shown.get(int(labels[i]), 0.0) + sizes[i]
        order = sorted(target, key=lambda c: (-shown[c], -target[c], c))
        return sum(k * target[c] for k, c in enumerate(order)) / total

    return cost(tuple(range(len(intents))))


def exact(masks, intents, labels, sizes) -> Planner:
    n = len(intents)
    return Planner(masks, intents, labels, np.ones(n, dtype=bool), sizes,
                   max_states=10**6, beam=10**6)


def test_planner_is_the_tree_floor_when_every_output_has_one_spelling():
    for answers, weights in random_cases(5, 120, classes=(1, 7), questions=(0, 6), yes=0.5):
        n = len(weights)
        planner = exact(answers.reshape(-1, n), weights, np.arange(n), weights)
        assert planner.root_exact
        plan = planner.plan(np.ones(n, dtype=bool))
        assert plan.expected == pytest.approx(tree_floor(answers, weights).expected, abs=1e-9)


def test_planner_equals_brute_force_with_other_spellings_to_rule_out():
    rng = np.random.default_rng(11)
    for _ in range(150):
        n, q = int(rng.integers(2, 7)), int(rng.integers(0, 6))
        masks = rng.random((q, n)) < 0.5
        labels = rng.integers(0, 3, n)
        counts = rng.integers(1, 9, n).astype(float)
        intents = modal_targets(counts, labels, np.ones(n, dtype=bool))
        plan = exact(masks, intents, labels, counts).plan(np.ones(n, dtype=bool))
        assert plan.expected == pytest.approx(brute_force(masks, intents, labels, counts),
                                              abs=1e-9)


def test_a_minority_spelling_costs_the_question_that_rules_it_out():
    # output A is spelled a1 (count 5) and a2 (4); B once (3). q0 separates a1 from B, but a2
    # answers it like B; with q0 alone a user meaning B is then shown A first (a2 outnumbers
    # b) and rejects it: one more turn. q1 separates both spellings of A from B at once.
    masks = np.array([[1, 0, 0], [1, 1, 0]], dtype=bool)
    labels, counts = np.array([0, 0, 1]), np.array([5.0, 4.0, 3.0])
    intents = modal_targets(counts, labels, np.ones(3, dtype=bool))
    assert intents.tolist() == [9.0, 0.0, 3.0]
    plan = exact(masks, intents, labels, counts).plan(np.ones(3, dtype=bool))
    assert plan.best == 1 and plan.expected == pytest.approx(1.0)
    no_q1 = exact(masks[:1], intents, labels, counts).plan(np.ones(3, dtype=bool))
    assert no_q1.best == 0 and no_q1.expected == pytest.approx(1 + 3 / 12)


def test_a_plan_depends_on_the_survivors_alone():
    pool = dev_pool(3)
    shared, _ = pool_planner(pool, max_clusters=8, min_support=0.5)
    fresh = Planner(shared.masks, shared.intents, shared.labels, shared.counted, shared.sizes)
    rng = np.random.default_rng(2)
    states = [rng.random(pool.n) < 0.7 for _ in range(12)]
    for alive in states:  # asked in one order here, the reverse order there
        shared.plan(alive)
    for alive in reversed(states):
        assert fresh.plan(alive) == shared.plan(alive)


@cache
def _film() -> list:
    return [prepare_pool(t, layout=False) for t in load_tasks(FILM_BANK)]


def test_the_session_realises_the_plan_for_the_modal_spelling_user():
    # the prior population's honest user wants each output and answers as its most frequent
    # spelling: exactly the planner's model, so where the plan is exact its value is the mean
    # number of turns the simulation measures (a check of both, not of how good either is)
    checked = 0
    for pool in _film():
        planner, _ = pool_planner(pool, max_clusters=8, min_support=0.5)
        plan = planner.plan(np.ones(pool.n, dtype=bool))
        if not plan.exact:
            continue
        runs, _ = evaluate.evaluate([(pool, "")], ("planned",), users=("gold-features",),
                                    populations=("prior",))
        assert all(r.success for r in runs)
        assert sum(r.weight * r.turns for r in runs) == pytest.approx(plan.expected, abs=1e-9)
        checked += 1
    assert checked >= 5


def test_big_pools_are_ranked_by_the_lookahead(monkeypatch):
    pool = dev_pool(3)
    planned = RepairSession(pool, strategy="planned").next_variable()
    monkeypatch.setattr(planner_module, "PLAN_MAX_CANDIDATES", 1)
    planner_module._PLANNERS.clear()
    try:
        assert pool_planner(pool, max_clusters=8, min_support=0.5)[0] is None
        big = RepairSession(pool, strategy="planned").next_variable()
        lookahead = RepairSession(pool, strategy="expected-depth").next_variable()
        assert big.keys == lookahead.keys
        assert planned is not None
    finally:
        planner_module._PLANNERS.clear()  # later tests get the real planner of this pool


def test_after_a_rejection_and_a_repair_the_plan_is_made_again():
    """A rejected output refutes the plan for that output only: the plan goes on over the
    survivors, and after repair over the extended pool (its own planner), never the
    lookahead's fallback."""
    from core.engine.repair import recompose

    pool = _film()[1]
    session = RepairSession(pool, strategy="planned", database=pool.database)
    assert session._plan() is not None
    rejected = session.predicted_output_key()
    session.reject_output(rejected)
    plan = session._plan()
    assert plan is not None and session.next_variable().expected_turns == pytest.approx(plan[1])
    outcome = recompose(session, rejected_outputs=(rejected,))
    if outcome.added:
        assert session.pool is not session.base_pool
        extended, _ = pool_planner(session.pool)
        assert extended is not None and session._plan() is not None


def test_a_costlier_question_is_planned_only_when_it_pays():
    labels = np.array([0, 1, 2, 3])
    intents = np.ones(4)
    # question 0 and question 1 split alike; question 1 costs half a question more
    masks = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]], dtype=bool)
    for costs, best in (([1.0, 1.0, 1.0, 1.0], 0), ([1.5, 1.0, 1.0, 1.0], 1)):
        planner = Planner(masks, intents, labels, np.ones(4, dtype=bool), intents,
                          costs=np.array(costs))
        assert planner.plan(np.ones(4, dtype=bool)).best == best


def test_a_warmed_planner_is_the_one_sessions_get():
    pool = prepare_pool(load_tasks(FILM_BANK)[1], layout=False)  # a fresh pool object
    thread = planner_module.warm_planner(pool)
    got, vocab = pool_planner(pool)  # waits for the warming thread, never builds twice
    thread.join()
    assert got is pool_planner(pool)[0] and got is not None and vocab
    session = RepairSession(pool)
    assert session.next_variable().expected_turns == pytest.approx(
        got.plan(np.ones(pool.n, dtype=bool)).expected)


def test_a_failed_build_is_not_remembered(monkeypatch):
    """A build that raised (here interrupted, as a test timeout did mid-search in the session
    machine) left (None, []) cached for the pool: every later session planned nothing and
    asked another question than a replay in a fresh process. The next call builds again."""
    pool = prepare_pool(load_tasks(FILM_BANK)[1], layout=False)  # a fresh pool object
    real = planner_module._build

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(planner_module, "_build", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pool_planner(pool)
    monkeypatch.setattr(planner_module, "_build", real)
    got, vocab = pool_planner(pool)
    assert got is not None and vocab and pool_planner(pool)[0] is got


def test_the_pages_warm_up_builds_the_plan_and_repairs_atoms():
    """Issue 24: warm_pool (what the pages call on loading a pool) leaves the plan built and
    every valid candidate decomposed for repair, so the first None of these waits for neither."""
    from core.engine.recombine import warm_pool

    pool = prepare_pool(load_tasks(FILM_BANK)[2], layout=False)  # a fresh pool object
    warm_pool(pool, plan=True).join()
    assert pool_planner(pool)[0] is not None
    assert {sql for sql, ok in zip(pool.sqls, pool.valid, strict=True) if ok} <= set(
        pool.atom_cache)
