"""Structured PlanPool agent on film tasks, the simulated chat user, metrics, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.planpool.agents import NOT_SPECIFIED, RESOLVED, splits
from core.planpool.evaluate import Outcome, addressed, classify, main, separates, summarise
from core.planpool.pool import QuestionPool
from core.planpool.simulated import SimulatedChatUser, run_structured
from tests.conftest_core import FILM_BANK as FILM


@pytest.mark.parametrize("variant", ["naive", "plan-prompt", "planpool"])
def test_structured_agent_submits_the_target_gold_on_film_tasks(film_pools, variant):
    correct = total = 0
    for pool in film_pools:
        for g in range(len(pool.gold_sqls)):
            ep = run_structured(RepairSession(pool), g, variant)
            assert ep.submitted is not None and ep.asked
            total += 1
            correct += output_key(pool.results[ep.submitted]) == output_key(pool.gold_results[g])
    assert correct / total >= 0.85


def test_planpool_accounts_for_every_question_before_submitting(film_pools):
    pool = film_pools[0]
    ep = run_structured(RepairSession(pool), 0, "planpool")
    qp = QuestionPool.from_dict(ep.pool)
    assert qp.submitted == pool.sqls[ep.submitted]
    assert all(q.status in ("answered", "dropped") for q in qp.questions.values())
    reasons = {q.reason for q in qp.questions.values() if q.status == "dropped"}
    assert reasons <= {RESOLVED, "not specified by the user"} and reasons
    assert qp.stats()["asked"] == len(ep.asked)
    unspecified = [a for a in ep.asked if a["answer"] == NOT_SPECIFIED]
    assert sum(q.reason == "not specified by the user" for q in qp.questions.values()) == \
        len(unspecified)
    assert all(a["text"].startswith("Should ") for a in ep.asked)


def test_plan_prompt_may_abandon_planned_questions_planpool_does_not(film_pools):
    abandoned = [run_structured(RepairSession(p), g, "plan-prompt").abandoned
                 for p in film_pools for g in range(len(p.gold_sqls))]
    assert sum(abandoned) > 0
    for p in film_pools:
        ep = run_structured(RepairSession(p), 0, "planpool")
        assert ep.abandoned == 0 and not QuestionPool.from_dict(ep.pool).open


def test_simulated_chat_user_says_not_specified_when_realisers_split(film_pools):
    pool = film_pools[1]
    session = RepairSession(pool)
    user = SimulatedChatUser(session, 0)
    realisers = user.inner.realisers
    col = {f.key: j for j, f in enumerate(pool.vocabulary)}
    seen = set()
    for key, j in col.items():
        share = pool.x[realisers, j].mean()
        reply = user.answer_keys((key,))
        expected = "yes" if share == 1 else "no" if share == 0 else NOT_SPECIFIED
        assert reply == expected, key
        seen.add(reply)
    assert seen == {"yes", "no", NOT_SPECIFIED}


def test_splits_is_false_after_the_answer_that_resolves_it(film_pools):
    session = RepairSession(film_pools[1])
    v = session.next_variable()
    assert splits(session, v.keys)
    session.answer(v.keys, True)
    assert not splits(session, v.keys)


def test_separates_uses_the_golds_realiser_majority():
    counts = np.array([1.0, 1, 1, 1, 1])
    a = np.array([1, 1, 0, 0, 0], bool)
    b = np.array([0, 0, 1, 1, 0], bool)
    mask = np.array([1, 1, 0, 0, 1], bool)
    assert separates(mask, a, b, counts)
    assert not separates(np.ones(5, bool), a, b, counts)
    assert not separates(mask, a, np.zeros(5, bool), counts)  # an unrealised gold


def test_addressed_counts_applicable_ambiguities():
    counts = np.ones(4)
    real = [np.array([1, 1, 0, 0], bool), np.array([0, 0, 1, 0], bool),
            np.array([0, 0, 0, 1], bool)]
    keys = ["k0", "k1", "k1"]  # golds 1 and 2 have the same output: one interpretation
    sets = [(0, 1, 2), (1, 2)]
    asked = [np.array([1, 1, 0, 1], bool)]  # separates gold 0 from gold 1
    assert addressed(asked, sets, real, keys, counts) == (1, 1)
    assert addressed([], sets, real, keys, counts) == (1, 0)


def test_outcome_categories_grounded_ungrounded_silent():
    assert classify(True, True) == "grounded"
    assert classify(True, False) == "ungrounded"
    assert classify(False, False) == "silent failure"
    assert classify(False, True) == "grounded failure"
    runs = [Outcome("t1", "scope", 0, "planpool", True, 1, 1, 3, added=1),
            Outcome("t1", "scope", 1, "planpool", True, 1, 0, 1, dropped=2),
            Outcome("t2", "vague", 0, "planpool", False, 2, 1, 2),
            Outcome("t3", "vague", 0, "planpool", False, 0, 0, 0)]
    s = summarise(runs)
    assert s["grounded"] == 0.25 and s["ungrounded"] == 0.25 and s["silent_failure"] == 0.25
    assert s["ex"] == 0.5 and s["questions"] == 1.5
    assert s["coverage"] == pytest.approx((1 + 0 + 0.5) / 3)  # t3 has no applicable ambiguity
    assert s["added"] == 0.25 and s["dropped"] == 0.25 and s["mean_dropped"] == 0.5


def test_cli_smoke_on_two_film_tasks(tmp_path, capsys):
    out = tmp_path / "pp.json"
    assert main([str(FILM), "--limit", "2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    for col in ("Cov", "EX", "GS", "US", "SF", "#Q", "Add%", "Drop%"):
        assert col in text
    data = json.loads(out.read_text())
    variants = {o["variant"] for o in data["outcomes"]}
    assert variants == {"naive", "plan-prompt", "planpool"}
    assert {o["task"] for o in data["outcomes"]} == {"film-practice-tarantino",
                                                     "film-pulp-review"}
    assert data["summary"]["overall"]["planpool"]["n"] == 5
