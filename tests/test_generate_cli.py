"""``python -m core.generate`` on two AMBROSIA tasks against the loopback Messages API."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.engine.taskbank import load_task_bank
from core.generation.generate import main
from tests.anthropic_stub_server import StubServer

DEV = Path(__file__).resolve().parents[1] / "data" / "ambrosia" / "dev.jsonl"
ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-ant-cli-test-SECRET"


@pytest.fixture
def bank(tmp_path):
    path = tmp_path / "bank.jsonl"
    lines = DEV.read_text(encoding="utf-8").splitlines()[:2]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def server():
    texts = ["```sql\nSELECT Name FROM Room\n```", "SELECT name FROM room;",
             "Here it is: SELECT * FROM Room WHERE Size = 500", "No idea, sorry."]
    with StubServer(texts) as srv:
        yield srv


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_two_tasks_via_env_base_url_then_cached(bank, server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    out = tmp_path / "pools.jsonl"
    args = (str(bank), "--n", "8", "--out", str(out), "--cache-dir", str(tmp_path / "c"),
            "--concurrency", "2", "--model", "claude-sonnet-4-6")
    code, stdout, stderr = _run(*args)
    assert code == 0, stderr
    assert server.count == 16
    assert "2 of 2 pools complete" in stdout and "25% of replies invalid" in stdout
    assert "estimated cost $" in stdout and "1600 input + 320 output tokens" in stdout
    assert stderr.count("\n") == 2 and "[2/2]" in stderr
    tasks, _ = load_task_bank(out)
    assert [t.id for t in tasks] == [json.loads(x)["id"] for x in bank.read_text().splitlines()]
    gen = tasks[0].extra["generation"]
    assert sum(c.count for c in tasks[0].candidates) == 6 and len(gen["samples"]) == 8
    assert gen["model"] == "claude-sonnet-4-6" and gen["complete"] is True
    code, stdout, _ = _run(*args)
    assert code == 0 and server.count == 16  # nothing sampled twice
    assert "0 input + 0 output tokens" in stdout
    assert KEY not in stdout + stderr


def test_module_runs_with_base_url_flag_and_study_db(bank, server, tmp_path):
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
    env.pop("ANTHROPIC_BASE_URL", None)
    url = f"sqlite:///{tmp_path}/study.sqlite"
    out = tmp_path / "pools.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "study.generate", str(bank), "--n", "4", "--out", str(out),
         "--base-url", server.base_url, "--study-db", url], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert server.count == 8 and len(out.read_text().splitlines()) == 2
    from study.store import open_store
    key = json.loads(out.read_text().splitlines()[0])["generation"]["key"]
    assert open_store(url).get_pool(key)["n"] == 4


def test_no_key_exits_non_zero_with_the_message(bank, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, _, stderr = _run(str(bank), "--out", str(tmp_path / "p.jsonl"))
    assert code == 2 and "No Anthropic API key" in stderr and "--offline-variants" in stderr


def test_offline_variants_need_no_key(bank, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "p.jsonl"
    code, stdout, _ = _run(str(bank), "--out", str(out), "--n", "30", "--offline-variants",
                           "--cache-dir", str(tmp_path / "c"))
    assert code == 0 and "2 of 2 pools complete" in stdout
    tasks, _ = load_task_bank(out)
    labels = tasks[0].extra["generation"]["labels"]
    assert all(sum(c.count for c in t.candidates) >= 30 for t in tasks)
    assert "seed" in labels.values() and any(v.startswith("variant:") for v in labels.values())


def test_unknown_model_stops_the_run_with_one_message(bank, server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.known_models = {"claude-sonnet-4-6"}
    code, _, stderr = _run(str(bank), "--out", str(tmp_path / "p.jsonl"), "--n", "4",
                           "--base-url", server.base_url, "--model", "claude-typo",
                           "--cache-dir", str(tmp_path / "c"))
    assert code == 1 and stderr.count("'claude-typo' is not available") == 1
    assert "[2/2]" not in stderr  # the second task is not attempted


def test_budget_stops_between_tasks(bank, server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    code, stdout, stderr = _run(str(bank), "--out", str(tmp_path / "p.jsonl"), "--n", "4",
                                "--base-url", server.base_url, "--budget-usd", "0.0001",
                                "--concurrency", "1", "--cache-dir", str(tmp_path / "c"))
    assert code == 1 and "budget" in stderr and server.count < 8
