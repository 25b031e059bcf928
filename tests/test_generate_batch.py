"""``python -m core.generate --batch`` against a loopback Message Batches API (the real SDK).

Covers a whole run (submit, poll, stream results, extract, cache, the same output as the direct
path), errored and expired requests reported per task and topped up by a second batch, and a
crash: the process is SIGKILLed while polling, the rerun collects the same batch.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.engine.taskbank import load_task_bank
from core.generation.batch import BatchRun, custom_id
from core.generation.poolcache import FilePoolCache
from core.generation.sampler import AnthropicSampler, SamplerConfig
from tests.anthropic_batch_server import BatchServer
from tests.bank_helpers import dev_slice
from tests.test_generate_cli import _run

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-ant-batch-test-SECRET"
TEXTS = ["```sql\nSELECT Name FROM Room\n```", "SELECT name FROM room;",
         "Here it is: SELECT * FROM Room WHERE Size = 500", "No idea, sorry."]


@pytest.fixture
def bank(tmp_path):
    """The first two AMBROSIA dev tasks."""
    return dev_slice(tmp_path)


@pytest.fixture
def server():
    with BatchServer(TEXTS, polls_to_end=3) as srv:
        yield srv


def _args(bank: Path, tmp_path: Path, server: BatchServer, n: int = 4) -> list[str]:
    return [str(bank), "--n", str(n), "--out", str(tmp_path / "pools.jsonl"), "--batch",
            "--poll-s", "0.02", "--cache-dir", str(tmp_path / "c"), "--base-url",
            server.base_url]


def test_batch_run_writes_the_pools_and_caches_them(bank, server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    code, stdout, stderr = _run(*_args(bank, tmp_path, server))
    assert code == 0, stderr
    assert server.created == 1
    batch = next(iter(server.batches.values()))
    ids = [r["custom_id"] for r in batch.requests]
    assert len(ids) == 8 and len(set(ids)) == 8 and all(len(i) <= 64 for i in ids)
    params = batch.requests[0]["params"]
    assert params["model"] == "claude-sonnet-4-6" and params["temperature"] == 0.7
    assert "Question:" in params["messages"][0]["content"] and "SQL" in params["system"]
    assert "2 of 2 pools complete" in stdout and "25% of replies invalid" in stdout
    assert "800 input + 160 output tokens" in stdout  # 8 × (100 + 20)
    # half the list price of claude-sonnet (3 / 15 USD per 1M tokens)
    assert "$0.0024" in stdout
    tasks, _ = load_task_bank(tmp_path / "pools.jsonl")
    gen = tasks[0].extra["generation"]
    assert gen["complete"] and len(gen["samples"]) == 4
    assert [s["index"] for s in gen["samples"]] == [0, 1, 2, 3]  # results came reversed
    assert sum(c.count for c in tasks[0].candidates) == 3
    state = json.loads((tmp_path / "pools.jsonl.batch.json").read_text())
    assert state["collected"] and state["batches"][0]["id"] == batch.id
    assert KEY not in stdout + stderr
    code, stdout, _ = _run(*_args(bank, tmp_path, server))  # everything cached now
    assert code == 0 and server.created == 1 and "0 input + 0 output tokens" in stdout


def test_errored_and_expired_requests_are_reported_per_task_then_topped_up(
        bank, server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    tasks, _ = load_task_bank(bank)
    sampler = AnthropicSampler(SamplerConfig(n=4), api_key=KEY)
    keys = [sampler.empty_pool(t.question, t.database).key for t in tasks]
    server.errored = {custom_id(0, keys[0], 1)}
    server.expired = {custom_id(1, keys[1], 0), custom_id(1, keys[1], 3)}
    code, stdout, stderr = _run(*_args(bank, tmp_path, server))
    assert code == 1 and "0 of 2 pools complete, 2 failed or partial" in stdout
    lines = [x for x in stderr.splitlines() if x.startswith("[")]
    assert "batch requests: 1 errored (first: errored: overloaded_error: Overloaded)" in lines[0]
    assert "2/4 samples" in lines[1] and "batch requests: 2 expired" in lines[1]
    cache = FilePoolCache(tmp_path / "c")
    assert [len(cache.get(k).replies) for k in keys] == [3, 2]
    assert not cache.get(keys[0]).complete
    server.errored, server.expired = set(), set()
    code, stdout, stderr = _run(*_args(bank, tmp_path, server))
    assert code == 0, stderr
    assert server.created == 2
    second = server.batches["msgbatch_0002"].requests
    assert len(second) == 3  # only the missing samples
    assert all(cache.get(k).complete and len(cache.get(k).replies) == 4 for k in keys)


def test_a_killed_run_resumes_its_batch_without_submitting_another(bank, server, tmp_path):
    server.polls_to_end = 10**9  # the batch stays in progress until the test says
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
    env.pop("ANTHROPIC_BASE_URL", None)
    state = tmp_path / "pools.jsonl.batch.json"
    proc = subprocess.Popen([sys.executable, "-m", "core.generate",
                             *_args(bank, tmp_path, server)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            polled = [b.polls for b in server.batches.values()]
            if polled and polled[0] >= 3:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    recorded = json.loads(state.read_text())
    assert server.created == 1 and not recorded["collected"]
    assert recorded["batches"][0]["id"] == "msgbatch_0001"
    assert recorded["batches"][0]["status"] == "in_progress"
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())
    server.polls_to_end = server.batches["msgbatch_0001"].polls + 2
    env_before = os.environ.get("ANTHROPIC_API_KEY")
    os.environ["ANTHROPIC_API_KEY"] = KEY
    try:
        code, stdout, stderr = _run(*_args(bank, tmp_path, server))
    finally:
        if env_before is None:
            os.environ.pop("ANTHROPIC_API_KEY")
        else:
            os.environ["ANTHROPIC_API_KEY"] = env_before
    assert code == 0, stderr
    assert server.created == 1  # no second batch
    assert "resuming the batch run" in stderr and "2 of 2 pools complete" in stdout
    tasks, _ = load_task_bank(tmp_path / "pools.jsonl")
    assert [len(t.extra["generation"]["samples"]) for t in tasks] == [4, 4]
    assert json.loads(state.read_text())["collected"]


def test_an_open_batch_of_another_run_is_one_clear_error(bank, server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    state = tmp_path / "pools.jsonl.batch.json"
    state.write_text(json.dumps({"version": 1, "plan": "other", "collected": False,
                                 "batches": [{"id": "msgbatch_x"}], "tasks": []}))
    code, _, stderr = _run(*_args(bank, tmp_path, server))
    assert code == 2 and str(state) in stderr and "msgbatch_x" in stderr
    assert "delete this file" in stderr and server.created == 0
    code, _, stderr = _run(*_args(bank, tmp_path, server), "--budget-usd", "1")
    assert code == 2 and "--n and --tasks" in stderr


def test_a_batch_submitted_just_before_a_crash_is_found_not_resubmitted(bank, server, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.polls_to_end = 10**9
    state = tmp_path / "pools.jsonl.batch.json"
    original = BatchRun._save

    def crash_once_submitted(self):  # the process dies before the id reaches the file
        if any(b["id"] for b in self.state["batches"]):
            raise KeyboardInterrupt
        original(self)

    monkeypatch.setattr(BatchRun, "_save", crash_once_submitted)
    with pytest.raises(KeyboardInterrupt):
        _run(*_args(bank, tmp_path, server))
    monkeypatch.setattr(BatchRun, "_save", original)
    recorded = json.loads(state.read_text())["batches"][0]
    assert recorded["status"] == "submitting" and recorded["id"] is None
    assert server.created == 1
    server.polls_to_end = 0
    code, stdout, stderr = _run(*_args(bank, tmp_path, server))
    assert code == 0, stderr
    assert server.created == 1 and "found batch msgbatch_0001" in stderr
    assert "2 of 2 pools complete" in stdout
