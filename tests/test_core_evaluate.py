"""The §7 evaluation CLI on the film bank and a slice of the AMBROSIA dev bank, and the floor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.engine.execute import ExecutionResult
from core.engine.prepare import _read, default_pool_dir, pool_fingerprint
from core.engine.taskbank import load_task_bank
from core.evaluation import evaluate, report
from core.evaluation.optimal import expected_questions, huffman_depths
from core.evaluation.simulate import USER_NOTES, output_matches

ROOT = Path(__file__).resolve().parent.parent
FILM = ROOT / "studies" / "film" / "tasks.jsonl"
DEV = ROOT / "data" / "ambrosia" / "dev.jsonl"


@pytest.fixture(scope="module")
def film_run(tmp_path_factory):
    """One CLI run on film: populations all and prior, the default strategy, JSON and plots."""
    tmp = tmp_path_factory.mktemp("film")
    out, png = tmp / "film.json", tmp / "fig5.png"
    argv = [str(FILM), "--population", "all", "prior", "--strategies", "cluster-grouped",
            "--repair", "none", "--per-gold", "--json", str(out), "--plot", str(png)]
    return argv, out, png


def test_film_cli_prints_both_users_side_by_side_and_the_floor_only_for_prior(film_run, capsys):
    argv, out, png = film_run
    assert evaluate.main(argv) == 0
    table = capsys.readouterr().out
    for note in USER_NOTES.values():  # who the simulated user is and what it knows
        assert note in table
    assert "OPTIMISTIC" in table and "HONEST" in table
    blocks = table.split("\npopulation ")
    prior = next(b for b in blocks if b.startswith("prior"))
    gold = next(b for b in blocks if b.startswith("all"))
    assert "÷floor" in prior and "÷floor" not in gold and "×opt" not in table
    assert "Hdepth" in gold
    per_gold = table.split("per gold (all, cluster-grouped)")[1].splitlines()
    assert sum(line.startswith("film-") for line in per_gold) == sum(
        len(t.gold) for t in load_task_bank(FILM)[0])
    summary = json.loads(out.read_text())["summary"]
    runs = json.loads(out.read_text())["runs"]
    tasks, _ = load_task_bank(FILM)
    golds = sum(len(t.gold) for t in tasks)
    for user in ("gold-features", "pool-informed"):
        g = summary["results"]["all"][user]["overall"]["cluster-grouped"]
        assert g["n"] == golds
        for key in ("success", "silent_failure", "mean_turns", "p90_turns", "repair_rounds",
                    "added", "mean_depth"):
            assert key in g
        p = summary["results"]["prior"][user]["overall"]["cluster-grouped"]
        assert p["turns_per_floor"] == pytest.approx(p["mean_turns"] / p["floor"])
        assert "turns_per_floor" not in g
    # the optimistic user reaches every film gold (all are realised)
    assert summary["results"]["all"]["pool-informed"]["overall"]["cluster-grouped"][
        "success"] == 1.0
    # prior weights sum to one per task and user/strategy
    prior_runs = [r for r in runs if r["population"] == "prior" and r["user"] == "gold-features"
                  and r["strategy"] == "cluster-grouped"]
    for t in tasks:
        assert sum(r["weight"] for r in prior_runs if r["task"] == t.id) == pytest.approx(1.0)
    assert all(r["depth"] is not None and r["floor"] is not None for r in prior_runs)
    assert png.stat().st_size > 10_000
    assert png.with_name("fig5.pool-informed.png").stat().st_size > 10_000


def test_ambrosia_slice_counts_unrealised_golds_as_failures(tmp_path, capsys):
    out = tmp_path / "dev.json"
    assert evaluate.main([str(DEV), "--limit", "8", "--strategies", "cluster-grouped",
                          "--repair", "none", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "task×gold pairs whose gold output no candidate produces:" in table
    data = json.loads(out.read_text())
    summary, runs = data["summary"], data["runs"]
    tasks, _ = load_task_bank(DEV)
    n_golds = sum(len(t.gold) for t in tasks[:8])
    assert all(u["reason"] for u in summary["unrealised"])
    for user in ("gold-features", "pool-informed"):
        mine = [r for r in runs if r["user"] == user]
        assert len(mine) == n_golds  # every pair is a run: nothing skipped
        unrealised = [r for r in mine if not r["realised"]]
        assert len(unrealised) == len(summary["unrealised"]) > 0
        assert not any(r["success"] for r in unrealised)
        assert all(r["silent_failure"] and r["end"] == "rejected" for r in unrealised)
        g = summary["results"]["all"][user]["overall"]["cluster-grouped"]
        assert g["success"] <= 1 - len(unrealised) / n_golds + 1e-9


def test_repair_is_on_by_default_and_reported(capsys):
    code = evaluate.main([str(FILM), "--limit", "1", "--strategies", "cluster-grouped",
                          "--population", "all"])
    out = capsys.readouterr().out
    assert code == 0 and "repair after a rejected output: recompose" in out
    assert "look end: the user judges the predicted output when one output is left" in out


def test_look_each_is_named_in_the_table_and_the_json(tmp_path, capsys):
    out = tmp_path / "film.json"
    assert evaluate.main([str(FILM), "--limit", "1", "--strategies", "cluster-grouped",
                          "--population", "all", "prior", "--look", "each", "--per-task",
                          "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "look each: the user reads the predicted output before every question" in table
    data = json.loads(out.read_text())
    assert data["summary"]["look"] == "each" and {r["look"] for r in data["runs"]} == {"each"}
    # the floors count questions until one output is left: no ratio against them here
    prior = data["summary"]["results"]["prior"]["gold-features"]["overall"]["cluster-grouped"]
    assert prior["floor"] > 0 and prior["turns_per_floor"] is None
    assert prior["turns_per_tree"] is None
    per_task = table.split("per task (prior")[1].splitlines()[3]
    assert per_task.split()[-2:] == ["–", "–"]


def test_a_broken_repair_module_fails_loudly_instead_of_switching_repair_off(tmp_path):
    """The evaluation once caught ImportError and quietly ran without repair."""
    broken = tmp_path / "core" / "engine"
    broken.mkdir(parents=True)
    (broken / "repair.py").write_text("raise ImportError('broken on purpose')\n")
    code = ("import sys, core.engine; core.engine.__path__.insert(0, sys.argv[1]); "
            "from core.evaluation import evaluate; "
            "sys.exit(evaluate.main([sys.argv[2], '--limit', '1', '--strategies', "
            "'cluster-grouped', '--population', 'all']))")
    proc = subprocess.run([sys.executable, "-c", code, str(broken), str(FILM)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "broken on purpose" in proc.stderr
    assert "repair after a rejected output" not in proc.stdout


def test_output_matches_ignores_row_and_column_order_even_for_tied_columns():
    a = ExecutionResult(["a", "b"], [(1, 2), (2, 3), (3, 1)])
    swapped = ExecutionResult(["b", "a"], [(2, 1), (3, 2), (1, 3)])
    shuffled = ExecutionResult(["a", "b"], [(3, 1), (1, 2), (2, 3)])
    assert output_matches(a, swapped) and output_matches(a, shuffled)
    assert not output_matches(a, ExecutionResult(["a", "b"], [(1, 2), (2, 3)]))
    assert not output_matches(a, ExecutionResult(["a", "b"], [(1, 2), (2, 3), (3, 1), (3, 1)]))
    assert not output_matches(a, ExecutionResult(error="boom"))
    assert not output_matches(None, a)


def test_huffman_floor_by_hand():
    # weights 4,2,1,1 → code lengths 1,2,3,3 → expected (4+4+3+3)/8 = 1.75
    assert sorted(huffman_depths([4, 2, 1, 1])) == [1, 2, 3, 3]
    assert expected_questions([4, 2, 1, 1]) == pytest.approx(1.75)
    assert expected_questions([5]) == 0.0
    assert expected_questions([1, 1]) == 1.0


def test_bootstrap_ci_brackets_the_median():
    values = np.arange(1, 101, dtype=float)
    lo, hi = report.bootstrap_ci(values)
    assert lo < np.median(values) < hi and hi - lo < 30
    assert report.bootstrap_ci(values) == (lo, hi)  # seeded
    assert report.bootstrap_ci(np.array([4.0])) == (4.0, 4.0)
    assert report.bootstrap_ci(np.array([2.0, 2.0, 2.0])) == (2.0, 2.0)
    assert all(np.isnan(report.bootstrap_ci(np.array([]))))


def test_shipped_film_pools_are_current():
    """studies/film/pools/ must match the bank and engine, or the app would recompute (UMAP)."""
    tasks, _ = load_task_bank(FILM)
    pool_dir = default_pool_dir(FILM)
    for task in tasks:
        pool = _read(pool_dir / f"{task.id}.json", pool_fingerprint(task))
        assert pool is not None, f"{task.id}: run `python -m core.prepare {FILM}`"
        assert pool.positions is not None and pool.positions.shape == (pool.n, 2)
