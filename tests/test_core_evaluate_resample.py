"""``core.evaluate --repair resample``: the simulated sessions ask the model again after a
rejection, through the real Anthropic SDK pointed at a loopback Messages API server.

What is checked: a gold no candidate produces is reached only through the model's round; the
prompt states the decisions and never the gold; a second run is served from the pool cache (no
request) with the same runs, also in worker processes; ``recompose+resample`` runs both; a
missing key and a refused key are one clear error each.
"""

from __future__ import annotations

import json

import pytest

from core.evaluation import evaluate
from tests.anthropic_stub_server import Reply, StubServer
from tests.conftest_core import FILM_DUMP, write_bank

GOLD = "SELECT MAX(stars) FROM review"


def _bank(tmp_path):
    task = {"id": "best-review", "question": "The best review?", "ambiguity": "vague",
            "database": {"dump": FILM_DUMP}, "gold": [GOLD],
            "candidates": [{"sql": "SELECT COUNT(*) FROM film", "count": 3},
                           {"sql": "SELECT COUNT(*) FROM film WHERE year > 1995", "count": 2}]}
    return write_bank(tmp_path / "bank.jsonl", [task])


def _honest(path):
    runs = json.loads(path.read_text())["runs"]
    return [r for r in runs if r["user"] == "gold-features"]


def _args(bank, tmp_path, out, repair="resample", *extra):
    return [str(bank), "--strategies", "expected-depth", "--repair", repair,
            "--resample-n", "2", "--resample-cache", str(tmp_path / "cache"),
            "--json", str(out), *extra]


def test_resampling_reaches_a_gold_no_candidate_produces_and_never_sees_it(
        tmp_path, monkeypatch, capsys):
    bank = _bank(tmp_path)
    # offline repair cannot build MAX(stars) over review from counts of films
    assert evaluate.main([str(bank), "--strategies", "expected-depth", "--repair", "recompose",
                          "--json", str(tmp_path / "recompose.json")]) == 0
    assert not any(r["success"] for r in _honest(tmp_path / "recompose.json"))
    with StubServer([f"```sql\n{GOLD}\n```"]) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        capsys.readouterr()
        assert evaluate.main(_args(bank, tmp_path, tmp_path / "first.json")) == 0
        out = capsys.readouterr().out
        sent = server.count
        first = _honest(tmp_path / "first.json")
        assert first and all(r["success"] for r in first)
        assert all(r["repair_rounds"] >= 1 and r["llm_requests"] >= 1 for r in first)
        assert sent >= 2 and f"resampling: {sent} requests sent" in out
        assert "resample (claude" in out and "2 samples a round" in out
        prompts = [json.dumps(r.body) for r in server.requests]
        # the decisions are stated (a rejected output); the gold's query never is
        assert all("NOT what the user wants" in p for p in prompts)
        assert not any("max(stars)" in p.lower() for p in prompts)
        # the same evaluation again, in two worker processes: every round from the cache
        assert evaluate.main(_args(bank, tmp_path, tmp_path / "again.json", "resample",
                                   "--jobs", "2")) == 0
        assert server.count == sent
        assert "resampling: 0 requests sent" in capsys.readouterr().out
    again = _honest(tmp_path / "again.json")
    assert [(r["success"], r["turns"]) for r in again] == [(r["success"], r["turns"])
                                                            for r in first]


def test_recompose_and_resample_run_both_each_round(tmp_path, monkeypatch):
    bank = _bank(tmp_path)
    with StubServer([f"```sql\n{GOLD}\n```"]) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        assert evaluate.main(_args(bank, tmp_path, tmp_path / "both.json",
                                   "recompose+resample")) == 0
        assert server.count >= 2
    runs = _honest(tmp_path / "both.json")
    assert runs and all(r["success"] for r in runs)
    # recomposition added candidates of its own besides the model's one
    assert all(r["added"] > 1 for r in runs)


def test_resampling_without_a_key_or_with_a_refused_key_is_one_clear_error(
        tmp_path, monkeypatch, capsys):
    bank = _bank(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(SystemExit) as stop:
        evaluate.main(_args(bank, tmp_path, tmp_path / "x.json"))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "set ANTHROPIC_API_KEY" in err and "--repair recompose" in err
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
    with pytest.raises(SystemExit) as stop:
        evaluate.main(_args(bank, tmp_path, tmp_path / "x.json", "resample", "--resample-n", "0"))
    assert stop.value.code == 2 and "--resample-n must be at least 1" in capsys.readouterr().err
    with StubServer() as server:
        server.default = lambda _i, _body: Reply(status=401, message="invalid x-api-key")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-wrong-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        assert evaluate.main(_args(bank, tmp_path, tmp_path / "x.json")) == 1
    captured = capsys.readouterr()
    assert "resampling stopped" in captured.err and "sk-wrong-key" not in captured.err
    assert "HONEST" not in captured.out  # no figure from a half-run evaluation
    assert not (tmp_path / "x.json").exists()
