"""The tree floor (optimal decision tree over the pool's own questions) and the lookahead strategy."""

from __future__ import annotations

import json
from functools import cache
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from core.engine.gain import (
    HUFFMAN_LABELS,
    _rows_entropy,
    depth_bounds,
    expected_depth_bound,
    huffman_costs,
    information_gain,
    label_masses,
)
from core.engine.session import RepairSession
from core.engine.strategy import DEFAULT_STRATEGY, STRATEGIES, lookahead_scores, rank_variables
from core.engine.variables import DecisionVariable
from core.evaluation import evaluate
from core.evaluation.optimal import expected_questions, guess_cost, tree_floor
from core.evaluation.populations import huffman_floor, vocabulary_answers, vocabulary_floor
from tests.conftest_core import dev_pool

ROOT = Path(__file__).resolve().parent.parent
FILM = ROOT / "studies" / "film" / "tasks.jsonl"

# Five intents, five questions: information gain's first question is not the optimal tree's
# (found by search over small random instances; the numbers below are computed, not stored).
GREEDY_TRAP_WEIGHTS = np.array([1.0, 9.0, 4.0, 1.0, 4.0])
GREEDY_TRAP = np.array([[0, 0, 1, 1, 1], [0, 1, 0, 0, 0], [1, 1, 0, 0, 1], [0, 1, 1, 1, 1],
                        [0, 0, 1, 0, 0]], dtype=bool)


def brute_force(answers: np.ndarray, weights: np.ndarray) -> float:
    """Optimal expected questions by plain recursion over every question at every node."""

    def cost(alive: tuple[int, ...]) -> float:
        if len(alive) <= 1:
            return 0.0
        best = None
        for row in answers:
            yes = tuple(c for c in alive if row[c])
            no = tuple(c for c in alive if not row[c])
            if yes and no:
                w = weights[list(alive)].sum()
                value = 1 + (weights[list(yes)].sum() * cost(yes)
                             + weights[list(no)].sum() * cost(no)) / w
                best = value if best is None else min(best, value)
        return guess_cost(weights[list(alive)]) if best is None else best

    return cost(tuple(range(len(weights))))


def play(strategy: str, answers: np.ndarray, weights: np.ndarray) -> float:
    """Expected turns of ``strategy`` when every intent answers ``answers`` (one candidate per
    intent, every splitting question offered at every step; when none splits, outputs are
    shown heaviest first and each rejection is a turn, as in a session)."""
    n = len(weights)
    total = 0.0
    for target in range(n):
        alive = np.ones(n, dtype=bool)
        turns = 0
        while alive.sum() > 1:
            idx = np.flatnonzero(alive)
            offered = [DecisionVariable((q,), answers[q, idx].copy()) for q in range(len(answers))
                       if 0 < answers[q, idx].sum() < len(idx)]
            if not offered:
                shown = sorted(idx, key=lambda c: (-weights[c], c))
                turns += shown.index(target)
                break
            chosen = rank_variables(strategy, offered, weights[idx], idx, idx)[0].features[0]
            alive &= answers[chosen] == answers[chosen, target]
            turns += 1
        total += weights[target] * turns
    return total / weights.sum()


def random_cases(seed: int, count: int, *, classes: tuple[int, int], questions: tuple[int, int],
                 yes: float):
    """``count`` random tiny pools: a questions × classes Yes matrix and integer class weights."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n, q = int(rng.integers(*classes)), int(rng.integers(*questions))
        yield rng.random((q, n)) < yes, rng.integers(1, 9, n).astype(float)


def test_tree_floor_equals_brute_force_on_tiny_pools():
    for answers, weights in random_cases(7, 150, classes=(1, 6), questions=(0, 5), yes=0.5):
        floor = tree_floor(answers, weights)
        assert floor.exact
        assert floor.expected == pytest.approx(brute_force(answers, weights), abs=1e-9)


def test_tree_floor_by_hand():
    # nothing tells two equally likely outputs apart: the first shown is accepted half the time
    assert tree_floor(np.zeros((0, 2), dtype=bool), [1, 1]).expected == pytest.approx(0.5)
    # one question per class: ask the heaviest first
    assert tree_floor(np.eye(3, dtype=bool), [2, 1, 1]).expected == pytest.approx(1.5)
    # every subset can be asked: the tree floor is the Huffman floor
    every = np.array(list(product([0, 1], repeat=4)), dtype=bool)  # questions × classes
    for weights in ([4, 2, 1, 1], [1, 1, 1, 1], [5, 3, 1, 1]):
        assert tree_floor(every, weights).expected == pytest.approx(expected_questions(weights))


def test_capped_search_is_still_a_lower_bound():
    rng = np.random.default_rng(3)
    answers = rng.random((12, 10)) < 0.4
    weights = rng.integers(1, 9, 10).astype(float)
    exact = tree_floor(answers, weights)
    capped = tree_floor(answers, weights, max_states=2)
    assert exact.exact and not capped.exact
    assert capped.expected <= exact.expected + 1e-9


def test_huffman_costs_match_the_heap_construction():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(1, 12))
        mass = rng.random((4, k)) * (rng.random((4, k)) < 0.6)
        want = [expected_questions(r[r > 0]) if (r > 0).sum() > 1 else 0.0 for r in mass]
        assert huffman_costs(mass) == pytest.approx(want)
    wide = rng.random((3, HUFFMAN_LABELS + 5))
    assert np.array_equal(depth_bounds(wide), _rows_entropy(wide))  # Shannon's bound there
    assert np.all(_rows_entropy(wide) <= huffman_costs(wide) + 1e-9)


def test_label_masses_and_gain_agree_with_a_dense_product():
    rng = np.random.default_rng(5)
    masks = rng.random((6, 9)) < 0.5
    w = rng.integers(1, 5, 9).astype(float)
    labels = rng.integers(0, 4, 9)
    _, inv = np.unique(labels, return_inverse=True)
    onehot = np.zeros((9, inv.max() + 1))
    onehot[np.arange(9), inv] = w
    assert label_masses(masks, w, labels) == pytest.approx(masks.astype(float) @ onehot)
    yes, no = masks.astype(float) @ onehot, (~masks).astype(float) @ onehot
    p = yes.sum(axis=1) / w.sum()
    ent = _rows_entropy(onehot.sum(axis=0, keepdims=True))[0]
    want = ent - p * _rows_entropy(yes) - (1 - p) * _rows_entropy(no)
    assert information_gain(masks, w, labels) == pytest.approx(np.clip(want, 0, None))
    # the one-question bound is 1 + Σ P(answer) · Huffman(answer)
    hy, hn = huffman_costs(yes), huffman_costs(no)
    assert expected_depth_bound(masks, w, labels) == pytest.approx(
        1 + (yes.sum(1) * hy + no.sum(1) * hn) / w.sum())


def test_lookahead_reaches_the_optimum_where_information_gain_does_not():
    optimum = tree_floor(GREEDY_TRAP, GREEDY_TRAP_WEIGHTS).expected
    greedy = play("cluster-grouped", GREEDY_TRAP, GREEDY_TRAP_WEIGHTS)
    ahead = play("expected-depth", GREEDY_TRAP, GREEDY_TRAP_WEIGHTS)
    assert greedy > optimum + 0.1  # information gain is myopic here
    assert ahead == pytest.approx(optimum)
    assert ahead <= greedy


def test_lookahead_is_never_worse_than_the_floor_and_scores_its_beam():
    for answers, weights in random_cases(11, 40, classes=(2, 7), questions=(1, 7), yes=0.4):
        assert play("expected-depth", answers, weights) >= tree_floor(
            answers, weights).expected - 1e-9
    scores, deep = lookahead_scores(GREEDY_TRAP, GREEDY_TRAP_WEIGHTS, np.arange(5), beam=2)
    one = expected_depth_bound(GREEDY_TRAP, GREEDY_TRAP_WEIGHTS, np.arange(5))
    assert deep.sum() == 2 and np.all(scores[deep] >= one[deep] - 1e-9)
    assert np.array_equal(scores[~deep], one[~deep])


def test_lookahead_searched_to_the_end_is_the_tree_floor():
    """Looking as many questions ahead as there are, with every variable searched, is the optimal
    tree; on the greedy trap three questions ahead already reach it."""
    for answers, weights in random_cases(5, 40, classes=(2, 7), questions=(1, 5), yes=0.5):
        labels = np.arange(len(weights))
        splits = [q for q in range(len(answers)) if 0 < answers[q].sum() < len(weights)]
        if len(splits) < 2:
            continue  # one question alone is not ranked (it keeps its one-question bound)
        q = answers[splits]
        exhaustive, _ = lookahead_scores(q, weights, labels, beam=len(q), depth=len(q) + 1,
                                         inner_beam=len(q))
        floor = tree_floor(answers, weights)
        assert floor.exact
        assert exhaustive.min() == pytest.approx(floor.expected, abs=1e-9)
    two, _ = lookahead_scores(GREEDY_TRAP, GREEDY_TRAP_WEIGHTS, np.arange(5), depth=2)
    three, _ = lookahead_scores(GREEDY_TRAP, GREEDY_TRAP_WEIGHTS, np.arange(5), depth=3)
    optimum = tree_floor(GREEDY_TRAP, GREEDY_TRAP_WEIGHTS).expected
    assert three.min() == pytest.approx(optimum) and two.min() <= three.min() + 1e-9


def test_lookahead_strategy_asks_grouped_variables_and_records_its_score():
    assert DEFAULT_STRATEGY == "planned" and "cluster-grouped" in STRATEGIES
    pool = dev_pool(9)
    session = RepairSession(pool, strategy="expected-depth")
    ranked = session.variables()
    assert {v.kind for v in ranked} == {"atomic", "group"}
    mined = session._mined()
    assert all("expected_turns" in v.extra for v in mined)
    deep = [v.extra["expected_turns"] for v in mined if v.extra["lookahead"]]
    top = next(v for v in mined
               if tuple(pool.vocabulary[j].key for j in v.features) == ranked[0].keys)
    assert top.extra["lookahead"] and top.extra["expected_turns"] == pytest.approx(min(deep))
    # the Decision Space shows it; the paper's strategy has none to show
    assert ranked[0].expected_turns == pytest.approx(min(deep))
    assert RepairSession(pool, strategy="cluster-grouped").variables()[0].expected_turns is None


# 'random' is seeded per target, so it is no single decision tree and the floor is not its bound
DETERMINISTIC = tuple(s for s in STRATEGIES if s != "random")


@cache
def _prior_runs(limit: int) -> tuple:
    pools = [(dev_pool(i), "") for i in range(limit)]
    runs, _ = evaluate.evaluate(pools, DETERMINISTIC,
                                users=("gold-features",), populations=("prior",))
    return pools, runs


def test_no_strategy_beats_the_tree_floor_and_the_tree_floor_not_huffman():
    pools, runs = _prior_runs(10)
    for pool, _ in pools:
        tree = vocabulary_floor(pool)
        assert tree.exact and tree.expected >= huffman_floor(pool) - 1e-9
        atomic = vocabulary_floor(pool, max_group=1)
        assert atomic.expected >= tree.expected - 1e-9  # fewer questions, never a lower floor
        assert vocabulary_answers(pool).shape[1] == sum(
            1 for r in runs if r.task == pool.task_id and r.strategy == DEFAULT_STRATEGY)
        for strategy in DETERMINISTIC:
            mine = [r for r in runs if r.task == pool.task_id and r.strategy == strategy]
            turns = sum(r.turns * r.weight for r in mine)
            assert turns >= tree.expected - 1e-9, (pool.task_id, strategy)
            assert all(r.tree_floor == pytest.approx(tree.expected) for r in mine)


def test_prior_report_prints_both_floors_per_task(tmp_path, capsys):
    out = tmp_path / "film.json"
    assert evaluate.main([str(FILM), "--limit", "2", "--population", "prior", "--repair", "none",
                          "--strategies", "cluster-grouped", "expected-depth", "--per-task",
                          "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "÷tree" in table and "÷floor" in table
    per_task = table.split("per task (prior, gold-features)")[1].splitlines()
    assert sum(line.startswith("film-") for line in per_task) == 2
    summary = json.loads(out.read_text())["summary"]
    for s in ("cluster-grouped", "expected-depth"):
        g = summary["results"]["prior"]["gold-features"]["overall"][s]
        assert g["turns_per_tree"] == pytest.approx(g["mean_turns"] / g["tree_floor"])
        assert g["floor"] <= g["tree_floor"] + 1e-9 <= g["mean_turns"] + 2e-9


def test_expected_depth_offers_pairs_of_even_features_the_groups_lack(monkeypatch):
    """With PAIR_FEATURES on, expected-depth offers conjunctions of two features that the
    per-cluster groups do not mine, and they stay on offer after an answer."""
    from core.engine import strategy
    from core.engine.strategy import PAIR_FEATURES

    assert PAIR_FEATURES > 0
    pool = dev_pool(9)
    session = RepairSession(pool, strategy="expected-depth")
    with_pairs = {v.mask.tobytes(): v for v in session._mined()}
    assert strategy.pair_features(len(session.survivors)) == PAIR_FEATURES  # a bank-sized pool
    assert 0 < strategy.pair_features(strategy.PAIR_FULL_UP_TO + 1) < PAIR_FEATURES  # bounded
    monkeypatch.setattr(strategy, "PAIR_FEATURES", 0)
    without = {v.mask.tobytes() for v in RepairSession(pool, strategy="expected-depth")._mined()}
    added = [v for k, v in with_pairs.items() if k not in without]
    assert added and without <= set(with_pairs)
    x = pool.x[session.survivors]
    for v in added:  # each added question is the conjunction of two features, as offered
        assert len(v.features) == 2
        assert np.array_equal(v.mask, x[:, v.features[0]] & x[:, v.features[1]])
    monkeypatch.setattr(strategy, "PAIR_FEATURES", PAIR_FEATURES)
    first = session.variables()[0]
    session.answer(first.keys, True)
    later = {tuple(pool.vocabulary[j].key for j in v.features) for v in session._mined()}
    alive = session.survivors
    kept = [v for v in added
            if 0 < pool.x[alive][:, list(v.features)].all(axis=1).sum() < len(alive)]
    assert kept and all(tuple(pool.vocabulary[j].key for j in v.features) in later
                        or _same_split(pool, alive, v, session._mined()) for v in kept)


def _same_split(pool, alive, variable, mined) -> bool:
    """Whether some mined variable splits the survivors as ``variable``'s features do."""
    mask = pool.x[alive][:, list(variable.features)].all(axis=1)
    return any(np.array_equal(m.mask, mask) for m in mined)


def test_modal_weights_move_a_share_of_each_class_onto_its_usual_spelling():
    """Each class keeps its mass; ``share`` of it goes to its heaviest candidate."""
    from core.engine.strategy import modal_weights

    w = np.array([1.0, 3.0, 2.0, 0.0, 5.0, 5.0])
    labels = np.array([2, 2, 2, 7, 1, 1])
    assert np.array_equal(modal_weights(w, labels, 0.0), w)
    half = modal_weights(w, labels, 0.5)
    for lab in np.unique(labels):
        assert half[labels == lab].sum() == pytest.approx(w[labels == lab].sum())
    assert half.tolist() == pytest.approx([0.5, 4.5, 1.0, 0.0, 7.5, 2.5])  # ties: the first
    assert modal_weights(w, labels, 1.0).tolist() == pytest.approx([0, 6, 0, 0, 10, 0])


def test_a_question_isolating_the_usual_spelling_of_the_heavy_class_scores_better_modal():
    """With MODAL_SPELLING the question that picks out the heavy class's usual spelling is
    scored as nearly settling it; spread over spellings it looks as if it settled nothing."""
    labels = np.array([0, 0, 0, 1, 2, 3])
    weights = np.array([4.0, 2.0, 2.0, 1.0, 1.0, 1.0])
    masks = np.array([[1, 0, 0, 0, 0, 0],   # the heavy class's usual spelling
                      [0, 0, 0, 1, 1, 0]], dtype=bool)
    spread, _ = lookahead_scores(masks, weights, labels, modal=0.0)
    modal, _ = lookahead_scores(masks, weights, labels, modal=0.5)
    assert modal[0] < spread[0]
    assert modal[0] - modal[1] < spread[0] - spread[1]  # it gains on the other question
