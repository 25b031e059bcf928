"""core.planpool_eval with the evaluation's users and populations: its figures can fail too."""

from __future__ import annotations

import json
from pathlib import Path

from core.engine.pool import prepare_pool
from core.engine.session import RepairSession
from core.engine.taskbank import load_tasks
from core.evaluation.populations import targets
from core.planpool.agents import NO, NOT_SPECIFIED, YES
from core.planpool.evaluate import main
from core.planpool.simulated import SimulatedChatUser

ROOT = Path(__file__).resolve().parent.parent
FILM = ROOT / "studies" / "film" / "tasks.jsonl"
DEV = ROOT / "data" / "ambrosia" / "dev.jsonl"


def test_gold_features_chat_user_answers_from_the_gold_sql_only():
    task = load_tasks(FILM)[1]
    pool = prepare_pool(task, layout=False)
    session = RepairSession(pool)
    honest = SimulatedChatUser(session, 0, "gold-features")
    own = honest.inner.target.own_keys
    assert own
    for f in pool.vocabulary:
        assert honest.answer_keys((f.key,)) == (YES if f.key in own else NO)
    optimistic = SimulatedChatUser(session, 0)
    assert {optimistic.answer_keys((f.key,)) for f in pool.vocabulary} >= {YES, NO}
    assert NOT_SPECIFIED not in {honest.answer_keys((f.key,)) for f in pool.vocabulary}


def test_cli_on_a_dev_slice_reports_failures_for_the_honest_user_and_unrealised_golds(
        tmp_path, capsys):
    out = tmp_path / "pp.json"
    assert main([str(DEV), "--limit", "6", "--variant", "planpool", "--population", "all",
                 "prior", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "OPTIMISTIC" in text and "HONEST" in text
    assert "population all" in text and "population prior" in text
    data = json.loads(out.read_text())
    summary, outcomes = data["summary"], data["outcomes"]
    tasks = load_tasks(DEV)[:6]
    n_golds = sum(len(t.gold) for t in tasks)
    for user in ("gold-features", "pool-informed"):
        mine = [o for o in outcomes if o["user"] == user and o["population"] == "all"]
        assert len(mine) == n_golds
        unrealised = [o for o in mine if not o["realised"]]
        assert unrealised and not any(o["correct"] for o in unrealised)
        assert summary["results"]["all"][user]["overall"]["planpool"]["ex"] < 1.0
    # prior targets: one per valid class, weights summing to one per task
    prior = [o for o in outcomes if o["population"] == "prior" and o["user"] == "gold-features"]
    for t in tasks:
        pool = prepare_pool(t, layout=False)
        mine = [o for o in prior if o["task"] == t.id]
        assert len(mine) == len(targets(pool, "prior"))
        assert abs(sum(o["weight"] for o in mine) - 1.0) < 1e-9
    assert summary["overall"] == summary["results"]["all"]["gold-features"]["overall"]
