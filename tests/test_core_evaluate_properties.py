"""Properties of the §7 evaluation: it can fail, honestly, and only for reasons of meaning."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from core.engine.execute import open_database
from core.engine.pool import prepare_pool
from core.engine.taskbank import Candidate, load_tasks
from core.evaluation import evaluate

ROOT = Path(__file__).resolve().parent.parent
FILM = ROOT / "studies" / "film" / "tasks.jsonl"
DEV = ROOT / "data" / "ambrosia" / "dev.jsonl"
DUMP = ("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, x INTEGER);\n"
        "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30);\n")


def _prepared(tasks):
    pools, schemas = [], []
    for t in tasks:
        db = open_database(t.database)
        try:
            schemas.append(db.schema())
            pools.append((prepare_pool(t, db=db, layout=False), t.ambiguity))
        finally:
            db.close()
    return pools, schemas


def _runs(tasks, populations=("all",), strategies=("cluster-grouped",)):
    pools, schemas = _prepared(tasks)
    runs, unrealised = evaluate.evaluate(pools, strategies, populations=populations,
                                         repair="none", schemas=schemas)
    return runs, unrealised


@pytest.fixture(scope="module")
def sample_tasks():
    """Film tasks and a spread-out subset of the AMBROSIA dev bank (some unrealised golds)."""
    dev = load_tasks(DEV)
    return load_tasks(FILM)[:4] + dev[::9][:7]


@pytest.fixture(scope="module")
def sample_runs(sample_tasks):
    return _runs(sample_tasks, populations=("all", "prior"))


def test_gold_features_without_repair_never_reaches_an_unrealised_gold(sample_runs):
    runs, unrealised = sample_runs
    missing = [r for r in runs if r.population == "all" and not r.realised]
    assert missing and len(missing) == 2 * len(unrealised)  # both users, every such pair
    assert not any(r.success for r in missing)
    assert all(r.silent_failure for r in missing)


def test_pool_informed_is_an_upper_bound_of_gold_features(sample_runs):
    runs, _ = sample_runs
    by = {(r.population, r.task, r.gold, r.strategy, r.user): r for r in runs}
    for (pop, task, gold, strategy, user), r in by.items():
        if user != "gold-features":
            continue
        optimistic = by[(pop, task, gold, strategy, "pool-informed")]
        # without repair the optimistic user succeeds whenever the honest one does
        assert optimistic.success >= r.success, (pop, task, gold)
        if r.realised and r.turns < evaluate.MAX_TURNS:
            assert optimistic.success
    for pop in ("all", "prior"):
        rate = {u: np.average([r.success for r in runs if r.population == pop and r.user == u],
                              weights=[r.weight for r in runs if r.population == pop
                                       and r.user == u]) for u in ("gold-features",
                                                                   "pool-informed")}
        assert rate["pool-informed"] >= rate["gold-features"]


def test_success_does_not_change_when_candidates_are_only_reordered(sample_tasks):
    rng = np.random.default_rng(7)
    tasks = sample_tasks[::2]
    shuffled = [dataclasses.replace(t, candidates=[t.candidates[i] for i in
                                                   rng.permutation(len(t.candidates))])
                for t in tasks]
    a, _ = _runs(tasks)
    b, _ = _runs(shuffled)
    outcome = {(r.task, r.gold, r.user): (r.success, r.silent_failure) for r in a}
    assert outcome == {(r.task, r.gold, r.user): (r.success, r.silent_failure) for r in b}


def _trap_bank(path: Path) -> Path:
    """Two tasks the evaluation must fail honestly on (see the test)."""
    db = {"dump": DUMP}
    lines = [
        # the gold's output is realised, but only by a spelling the gold does not share:
        # the honest user says No to `x >= 20` and ends on the unfiltered names
        {"id": "trap-spelling", "question": "Names with x above 10?", "ambiguity": "vague",
         "database": db, "gold": ["SELECT name FROM t WHERE x > 10"],
         "candidates": [{"sql": "SELECT name FROM t", "count": 3},
                        {"sql": "SELECT name FROM t WHERE x >= 20", "count": 1},
                        {"sql": "SELECT name FROM t WHERE x > 20", "count": 1}]},
        # no candidate produces the gold's output, and no atom of the pool (nor a column of
        # its tables) can build it: no condition keeps x below 15
        {"id": "trap-missing", "question": "Which ids?", "ambiguity": "scope",
         "database": db, "gold": ["SELECT id FROM t WHERE x < 15"],
         "candidates": [{"sql": "SELECT name FROM t", "count": 2},
                        {"sql": "SELECT name FROM t WHERE x > 10", "count": 1}]},
    ]
    bank = path / "trap.jsonl"
    bank.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return bank


def test_the_evaluation_reports_failure_on_a_bank_where_it_must_fail(tmp_path, capsys):
    bank = _trap_bank(tmp_path)
    out = tmp_path / "trap.json"
    repair = "recompose"
    assert evaluate.main([str(bank), "--strategies", "cluster-grouped", "--repair", repair,
                          "--population", "all", "realised", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    summary = json.loads(out.read_text())["summary"]
    honest = summary["results"]["all"]["gold-features"]["overall"]["cluster-grouped"]
    optimistic = summary["results"]["all"]["pool-informed"]["overall"]["cluster-grouped"]
    assert honest["success"] == 0.0 and honest["n"] == 2
    assert optimistic["success"] == 0.5  # it knows the pool: the spelling trap cannot catch it
    assert summary["results"]["realised"]["gold-features"]["overall"]["cluster-grouped"][
        "n"] == 1
    assert len(summary["unrealised"]) == 1
    assert "task×gold pairs whose gold output no candidate produces: 1" in table
    assert "  0.000" in table  # the printed table says so too
    if repair == "none":
        assert honest["silent_failure"] == 1.0


def test_trap_bank_candidates_really_split_as_described(tmp_path):
    """Guard for the trap: the honest user's answer removes the only realiser."""
    task = load_tasks(_trap_bank(tmp_path))[0]
    assert isinstance(task.candidates[0], Candidate)
    (pool, _), = _prepared([task])[0]
    assert pool.gold_class(0) is not None
    runs, _ = _runs([task])
    honest = next(r for r in runs if r.user == "gold-features")
    assert not honest.success and honest.questions


def test_looking_at_every_step_only_ends_sessions_sooner(sample_tasks):
    """``look='each'`` (the user reads the predicted output before every question, as the
    workspace shows it) follows the same path as ``end`` until the shown output is theirs:
    never more turns, never less success, and it does end some sessions sooner."""
    tasks = sample_tasks[:4] + sample_tasks[4::3]
    pools, schemas = _prepared(tasks)
    kw = {"populations": ("all",), "repair": "recompose", "schemas": schemas,
          "databases": [t.database for t in tasks], "users": ("gold-features",)}
    end, _ = evaluate.evaluate(pools, ("expected-depth",), **kw)
    each, _ = evaluate.evaluate(pools, ("expected-depth",), look="each", **kw)
    assert len(end) == len(each) and all(r.look == "each" for r in each)
    sooner = 0
    for a, b in zip(end, each, strict=True):
        assert (a.task, a.gold, a.population) == (b.task, b.gold, b.population)
        assert b.turns <= a.turns and b.success >= a.success, (a.task, a.gold)
        assert b.questions == a.questions[:len(b.questions)]  # the same questions, fewer
        if b.turns < a.turns:
            sooner += 1
            assert b.success and b.end == "accepted"
    assert sooner > 0
    with pytest.raises(ValueError, match="unknown look"):
        evaluate.simulate(pools[0][0], 0, "expected-depth", look="never")
