"""Property tests (hypothesis): information gain, mining, filtering, termination, undo, Huffman.

Random Boolean feature matrices with weights and class labels exercise the maths; random answer
sequences over real AMBROSIA dev pools exercise the session the evaluation relies on.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.engine.errors import SessionError
from core.engine.gain import entropy, information_gain, split_entropy
from core.engine.session import RepairSession
from core.engine.strategy import STRATEGIES
from core.engine.variables import mine_decision_variables
from core.evaluation.optimal import expected_questions, huffman_depths
from core.evaluation.simulate import SimulatedUser
from tests.conftest_core import dev_pool, dev_tasks

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
POOLS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw):
    """(masks k × n, weights n, labels n) with positive integer weights."""
    n = draw(st.integers(1, 12))
    k = draw(st.integers(1, 6))
    bits = draw(st.lists(st.booleans(), min_size=n * k, max_size=n * k))
    weights = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return (np.array(bits, dtype=bool).reshape(k, n), np.array(weights, dtype=float),
            np.array(labels))


def _brute_gain(mask, w, labels):
    h = entropy(w, labels)
    total = w.sum()
    rest = 0.0
    for side in (mask, ~mask):
        if w[side].sum() > 0:
            rest += w[side].sum() / total * entropy(w[side], labels[side])
    return h - rest


@FAST
@given(problems())
def test_information_gain_is_between_zero_and_label_entropy(problem):
    masks, w, labels = problem
    h = entropy(w, labels)
    gains = information_gain(masks, w, labels)
    assert gains.shape == (masks.shape[0],)
    assert (gains >= 0).all()
    assert (gains <= h + 1e-9).all()
    for mask, g in zip(masks, gains, strict=True):
        assert abs(g - max(0.0, _brute_gain(mask, w, labels))) < 1e-9
        # IG is symmetric in Yes/No and never exceeds the question's own split entropy
        assert abs(information_gain(~mask, w, labels)[0] - g) < 1e-9
        assert g <= split_entropy(mask, w)[0] + 1e-9


@FAST
@given(problems())
def test_a_mask_that_is_the_labelling_gains_all_of_it(problem):
    _, w, labels = problem
    mask = labels == labels[0]
    binary = np.where(mask, 0, 1)
    gain = information_gain(mask, w, binary)[0]
    assert abs(gain - entropy(w, binary)) < 1e-9
    assert information_gain(np.ones_like(mask), w, labels)[0] == 0.0  # no split, no gain


@FAST
@given(problems(), st.booleans(), st.integers(0, 4))
def test_mined_variables_split_and_are_conjunctions(problem, grouped, pairs):
    x_t, w, labels = problem
    x = x_t.T.copy()  # candidates × features
    variables = mine_decision_variables(x, w, labels, grouped=grouped or pairs > 0,
                                        pairs=pairs)
    seen = set()
    for v in variables:
        assert 0 < v.mask.sum() < len(v.mask)  # every variable splits the survivors
        assert np.array_equal(v.mask, x[:, list(v.features)].all(axis=1))
        assert v.mask.tobytes() not in seen  # one variable per distinct split
        seen.add(v.mask.tobytes())
        assert v.kind == ("group" if len(v.features) > 1 else "atomic")
        assert grouped or pairs or v.kind == "atomic"
        for j in v.implicit:  # implicit features hold wherever the variable holds
            assert x[v.mask, j].all() and j not in v.features
        assert v.mask[v.example]
    # every splitting column is offered (possibly merged with an identical split)
    splitting = [j for j in range(x.shape[1]) if 0 < x[:, j].sum() < len(x)]
    for j in splitting:
        assert x[:, j].tobytes() in seen
    # with pairs, the conjunctions of the most even splits are offered too, when they split
    distinct = {x[:, j].tobytes(): j for j in reversed(splitting)}
    if pairs >= len(distinct):
        for a, b in combinations(distinct.values(), 2):
            both = x[:, a] & x[:, b]
            assert not 0 < both.sum() < len(x) or both.tobytes() in seen


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=24))
def test_huffman_depths_satisfy_kraft_equality(weights):
    depths = huffman_depths(weights)
    assert len(depths) == len(weights)
    if len(weights) == 1:
        assert depths == [0] and expected_questions(weights) == 0.0
        return
    assert sum(Fraction(1, 2**d) for d in depths) == 1
    w = np.array(weights, dtype=float)
    h = entropy(w, np.arange(len(w)))
    e = expected_questions(weights)
    assert h - 1e-9 <= e < h + 1 + 1e-9  # Shannon's bounds for an optimal code
    # heavier symbols never get longer codes
    order = np.argsort(-w, kind="stable")
    assert all(depths[a] <= depths[b] or weights[a] == weights[b]
               for a, b in zip(order, order[1:], strict=False))


N_DEV = len(dev_tasks())


@st.composite
def dev_runs(draw):
    i = draw(st.integers(0, N_DEV - 1))
    pool = dev_pool(i)
    gold = draw(st.integers(0, max(0, len(pool.gold_sqls) - 1)))
    strategy = draw(st.sampled_from(STRATEGIES))
    picks = draw(st.lists(st.integers(0, 30), min_size=pool.n, max_size=pool.n))
    return pool, gold, strategy, picks


@POOLS
@given(dev_runs())
def test_truthful_answers_never_remove_every_gold_realiser(run):
    """Any question order, answered truthfully: a realised gold stays among the survivors."""
    pool, gold, strategy, picks = run
    s = RepairSession(pool, strategy=strategy)
    user = SimulatedUser(s, gold)
    for pick in picks:
        ranked = s.variables()
        if s.is_done or not ranked:
            break
        v = ranked[pick % len(ranked)]
        s.answer(v.keys, user.answer(v))
        assert len(s.survivors) > 0
        if user.realised:
            assert user.realisers[s.survivors].any()
    if user.realised and s.is_done:
        assert user.succeeded()


@POOLS
@given(dev_runs())
def test_simulated_session_terminates_within_n_turns(run):
    pool, gold, strategy, _ = run
    s = RepairSession(pool, strategy=strategy)
    user = SimulatedUser(s, gold)
    for _ in range(pool.n):
        v = s.next_variable()
        if s.is_done or v is None:
            break
        before = len(s.survivors)
        s.answer(v.keys, user.answer(v))
        assert len(s.survivors) < before  # every answered question removes someone
    assert s.is_done or s.is_stuck
    assert s.step <= max(0, pool.n - 1)


@POOLS
@given(dev_runs(), st.data())
def test_undo_restores_the_exact_previous_state(run, data):
    pool, _, strategy, picks = run
    s = RepairSession(pool, strategy=strategy)
    states = [(s.survivors.tolist(), [v.label for v in s.variables()])]
    for pick in picks[:6]:
        ranked = s.variables()
        if not ranked:
            break
        v = ranked[pick % len(ranked)]
        s.answer(v.keys, data.draw(st.booleans()))
        states.append((s.survivors.tolist(), [v.label for v in s.variables()]))
    # an impossible decision changes nothing
    survivors = set(s.survivors.tolist())
    outside = [i for i in range(pool.n) if i not in survivors]
    if outside:
        try:
            s.restrict(outside)
        except SessionError:
            pass
        else:
            raise AssertionError("restricting to non-survivors must be refused")
    assert (s.survivors.tolist(), [v.label for v in s.variables()]) == states[-1]
    while s.step:
        s.undo()
        assert (s.survivors.tolist(), [v.label for v in s.variables()]) == states[s.step]
    assert s.survivors.tolist() == list(range(pool.n))
