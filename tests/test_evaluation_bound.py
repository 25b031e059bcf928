"""The segment floor (core.evaluation.bound): per segment of a session, what no question policy
beats on average, checked by hand and against measured turns."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from core.engine.similarity import output_key
from core.engine.strategy import WORKSPACE_DEFAULT
from core.evaluation import evaluate
from core.evaluation.bound import (
    bound_rows,
    gold_state,
    run_at_gold,
    run_floor,
    segment_record,
    show_floor,
    show_policy,
)
from core.evaluation.optimal import expected_questions
from core.evaluation.populations import class_weights
from tests.conftest_core import film_pools, make_pool

ROOT = Path(__file__).resolve().parent.parent
FILM = ROOT / "studies" / "film" / "tasks.jsonl"

# three outputs with prior 5 (spelled twice: 3 + 2), 2 and 1
POOL = [("SELECT title FROM film WHERE genre = 'action'", 3),
        ("SELECT DISTINCT title FROM film WHERE genre = 'action'", 2),
        ("SELECT title FROM film WHERE year > 1996", 2),
        ("SELECT COUNT(*) FROM film WHERE genre = 'action'", 1)]


def test_show_floor_by_hand():
    # uniform over 8: costs 0,1,2,2,3,3,3,3 -> 17/8; heaviest first
    assert show_floor([1] * 8) == pytest.approx(17 / 8)
    assert show_floor([1, 3]) == pytest.approx(1 / 4)
    assert show_floor([1, 2, 3, 4]) == pytest.approx((0 * 4 + 1 * 3 + 2 * 2 + 2 * 1) / 10)
    assert show_floor([7]) == 0.0
    # never above the questions-only floor: a shown output is a question that can be free
    rng = np.random.default_rng(0)
    for _ in range(50):
        w = rng.random(int(rng.integers(2, 30)))
        assert show_floor(w) <= expected_questions(w) + 1e-12


def best_with_shows(weights: list[float]) -> float:
    """The best expected turns with any question or a shown output, by plain recursion over
    every subset (tiny sets only): show one output (a turn unless it is theirs) or split."""
    from functools import cache
    from itertools import combinations

    w = list(weights)

    @cache
    def cost(items: frozenset[int]) -> float:  # weighted turns to single out one of items
        if len(items) <= 1:
            return 0.0
        total = sum(w[i] for i in items)
        best = min(total - w[i] + cost(items - {i}) for i in items)  # show i
        rest = sorted(items)
        for size in range(1, len(rest)):
            for part in combinations(rest[1:], size - 1):
                yes = frozenset((rest[0], *part))
                if yes != items:
                    best = min(best, total + cost(yes) + cost(items - yes))
        return best

    return cost(frozenset(range(len(w)))) / sum(w)


def test_show_floor_and_policy_bracket_the_best_policy():
    rng = np.random.default_rng(1)
    cases = [[1.0] * 6, [4, 3, 2, 1], [8, 4, 2, 1, 1], [5, 5, 1, 1, 1, 1]]
    cases += [list(rng.random(int(rng.integers(2, 8)))) for _ in range(30)]
    for w in cases:
        best = best_with_shows(w)
        assert show_floor(w) <= best + 1e-9, w
        assert best <= show_policy(w) + 1e-9, w
        assert best <= expected_questions(w) + 1e-9  # a show is never worse than asking it
    assert best_with_shows([1.0] * 8) == pytest.approx(2.5) == show_policy([1.0] * 8)
    assert show_floor([1.0] * 8) == pytest.approx(2.125)


def test_segment_record_by_hand():
    pool = make_pool(POOL)
    weights = class_weights(pool)
    assert sorted(weights.values()) == [1.0, 2.0, 5.0]
    action = pool.class_keys[pool.class_index[0]]
    rec = segment_record(pool, np.ones(pool.n, dtype=bool), action)
    # Huffman over 5, 2, 1: depths 1, 2, 2 -> (5 + 4 + 2) / 8; shown heaviest first: (2 + 2) / 8
    assert rec["classes"] == 3
    assert rec["floor"] == pytest.approx(11 / 8)
    assert rec["show_floor"] == pytest.approx(4 / 8)
    assert rec["show_policy"] == pytest.approx(4 / 8)  # show 5, then 2: (2 + 1) + 1
    assert rec["share"] == pytest.approx(5 / 8) and rec["depth"] == 1
    # the action titles rejected: two outputs left, the target among none of them
    rest = pool.class_index != pool.class_index[0]
    rec = segment_record(pool, rest, action)
    assert rec["floor"] == pytest.approx(1.0) and rec["show_floor"] == pytest.approx(1 / 3)
    assert rec["share"] is None and rec["depth"] is None


def test_run_floor_by_hand():
    absent = {"floor": 11 / 8, "show_floor": 0.5, "show_policy": 0.5, "depth": None, "questions": 3}
    present = {"floor": 1.0, "show_floor": 1 / 3, "show_policy": 0.5, "depth": 2, "questions": 1}
    later = {"floor": 2.0, "show_floor": 1.0, "show_policy": 1.5, "depth": 1, "questions": 2}
    # before the target is in the pool: that state's floor and its rejection; then the first
    # state holding it covers the rest (the later state is not added again)
    segs = [absent, present, later]
    assert gold_state(segs) == 1
    assert run_floor(segs, 2, 15) == pytest.approx(11 / 8 + 1 + 1.0)
    assert run_floor(segs, 2, 15, "show_floor") == pytest.approx(11 / 8 + 1 + 1 / 3)
    assert run_at_gold(segs, 2, 15) == pytest.approx(11 / 8 + 1 + 2)
    assert run_floor(segs, 2, 3) == 3.0
    # never in the pool: every state's floor and every rejection
    assert gold_state([absent, absent]) is None
    assert run_floor([absent, absent], 2, 15) == pytest.approx(2 * 11 / 8 + 2)
    runs = [{"success": True, "rejections": 1, "turns": 5, "segments": [absent, present]},
            {"success": True, "rejections": 0, "turns": 2, "segments": [present]},
            {"success": False, "rejections": 2, "turns": 15, "segments": [absent, absent]}]
    rows = {r.name: r for r in bound_rows(runs, 15)}
    assert rows["no rejection"].floor == pytest.approx(1.0)
    rep = rows["repaired successes"]
    assert (rep.absent_rejections, rep.absent_questions, rep.present_turns) == (1, 3, 1)
    assert rep.present_floor == pytest.approx(1.0) and rep.present_depth == 2
    fail = rows["failures"]
    assert fail.absent_rejections == 2 and fail.absent_questions == 6 and fail.present_turns == 0
    total = rows["all pairs"]
    assert total.turns == 22 and total.floor == pytest.approx(
        rep.floor + rows["no rejection"].floor + fail.floor)


def test_a_session_records_one_segment_per_state_and_every_question():
    pool = make_pool(POOL, gold=["SELECT title FROM film WHERE year > 1996"])
    run = evaluate.simulate(pool, 0, "expected-depth", questions="clauses")
    assert run.success and len(run.segments) == 1
    seg = run.segments[0]
    assert seg["floor"] == pytest.approx(11 / 8) and seg["share"] == pytest.approx(2 / 8)
    assert seg["questions"] == run.turns == len(run.questions)
    assert seg["shown_among"] == 1  # the paper's protocol: shown when one output is left
    assert output_key(pool.gold_results[0]) in pool.class_keys


def test_measured_turns_are_never_below_the_show_floor_on_prior():
    """On ``prior`` the targets are drawn from the pool's own prior, so no policy (questions,
    shown outputs, repair) can average fewer turns than the first state's show floor; and every
    run's segments account for all its questions and rejections."""
    pools = [(p, "") for p in film_pools()]
    strategy, questions = str(WORKSPACE_DEFAULT["strategy"]), str(WORKSPACE_DEFAULT["questions"])
    runs, _ = evaluate.evaluate(pools, (strategy,), users=("gold-features",),
                                populations=("all", "prior"), repair="none",
                                vocabularies=((questions, False),))
    for r in runs:
        assert sum(s["questions"] for s in r.segments) == len(r.questions)
        assert sum(s["questions"] for s in r.segments) + r.rejections == r.turns
    for pool, _ in pools:
        prior = [r for r in runs if r.task == pool.task_id and r.population == "prior"]
        first = {round(r.segments[0]["show_floor"], 12) for r in prior}
        assert len(first) == 1  # one first state per task
        mean = sum(r.weight * r.turns for r in prior)
        assert sum(r.weight for r in prior) == pytest.approx(1.0)
        assert mean >= first.pop() - 1e-9
        assert prior[0].segments[0]["show_floor"] <= prior[0].segments[0]["floor"]
    gold = [asdict(r) for r in runs if r.population == "all"]
    total = bound_rows(gold, 15)[-1]
    assert total.pairs == len(gold) and total.turns == sum(r["turns"] for r in gold)


def test_cli_prints_the_segment_floor(capsys):
    assert evaluate.main([str(FILM), "--limit", "2", "--population", "all", "--strategies",
                          "expected-depth", "--repair", "none", "--bound"]) == 0
    out = capsys.readouterr().out
    assert "segment floor (expected-depth" in out and "all pairs" in out
