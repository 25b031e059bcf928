"""The study store and the trace, on SQLite and PostgreSQL (the `store_url` fixture)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from study.schema import SCHEMA_VERSION
from study.store import SchemaVersionError, StoreError, open_store
from study.trace import EVENT_TYPES, TraceError, log_event, read_events
from tests.pg import fetch, run_sql
from tests.threads import at_once

REPO = Path(__file__).resolve().parent.parent


def _log(store, eid, type="dv.accept", **kw):
    return log_event(store, session_id="s1", participant="p1", type=type, event_id=eid,
                     study="film", task="film-pulp-review", subtask="3", clock=lambda: 1000.5,
                     **kw)


def test_events_are_idempotent_by_event_id(store_url):
    store = open_store(store_url)
    first = _log(store, "c1-0001", payload={"variable": "v1"}, client_ts=999)
    again = _log(store, "c1-0001", payload={"variable": "CHANGED"})
    _log(store, "c1-0002", type="dv.reject")
    assert first.inserted and not again.inserted
    events = read_events(store, participant="p1")
    assert [e.event_id for e in events] == ["c1-0001", "c1-0002"]
    assert events[0].payload == {"variable": "v1"}  # the first write wins
    assert events[0].client_ts == 999 and events[0].server_ts == 1_000_500
    assert store.count_events(study="film") == 2


def test_events_keep_insertion_order_within_the_same_millisecond(store_url):
    store = open_store(store_url)
    ids = [f"z-{i}" for i in range(30, 0, -1)]  # ids sort opposite to insertion order
    for eid in ids:
        _log(store, eid, type="space.hover")
    assert [e["event_id"] for e in store.events(session_id="s1")] == ids


def test_unknown_event_type_is_refused_with_a_suggestion(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    with pytest.raises(TraceError, match="unknown event type 'dv.acept'; did you mean "
                                         "'dv.accept'"):
        _log(store, "e1", type="dv.acept")
    with pytest.raises(TraceError, match="not JSON-serialisable"):
        _log(store, "e2", payload={"x": object()})
    assert _log(store, "e3", type="x.custom-widget").inserted
    assert store.count_events() == 1
    assert all(meaning for meaning in EVENT_TYPES.values())


def test_schema_version_mismatch_is_a_clear_error_and_changes_nothing(store_url):
    open_store(store_url).close()
    run_sql(store_url, "UPDATE schema_meta SET value = '999' WHERE key = 'version'")
    with pytest.raises(SchemaVersionError) as exc:
        open_store(store_url)
    msg = str(exc.value)
    assert "schema version 999" in msg and f"expects schema version {SCHEMA_VERSION}" in msg
    assert "never reset" in msg and "PLEASQLARIFY_DB_URL" in msg
    assert fetch(store_url, "SELECT value FROM schema_meta") == [("999",)]  # nothing was reset


def test_existing_tables_without_version_are_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'odd.sqlite'}"
    run_sql(url, "CREATE TABLE events (x INTEGER)")
    with pytest.raises(SchemaVersionError, match="has no schema version"):
        open_store(url)


def test_default_url_uses_environment_and_in_memory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("PLEASQLARIFY_DB_URL", f"sqlite:///{tmp_path / 'env.sqlite'}")
    store = open_store()
    assert store.url.endswith("env.sqlite") and (tmp_path / "env.sqlite").exists()
    with store.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
    with pytest.raises(StoreError, match="in-memory"):
        open_store("sqlite://")


def test_nested_writes_join_the_outer_transaction(store_url):
    store = open_store(store_url)
    with pytest.raises(RuntimeError, match="boom"), store.write():
        store.put_answer("p", "i", 1, now=0)  # joins the outer transaction (no deadlock)
        assert store.answers("p") == {"i": 1}  # and reads its own write
        raise RuntimeError("boom")
    assert store.answers("p") == {}  # rolled back together with the outer transaction
    with store.write():
        store.put_answer("p", "i", 2, now=1)
    assert store.answers("p") == {"i": 2}


def test_answers_progress_pools_codes(store_url):
    store = open_store(store_url)
    store.put_answer("p1", "sus7/sus1", 5, now=1)
    store.put_answer("p1", "sus7/sus1", 6, now=2)  # upsert
    store.put_answer("p1", "demographics/sql_expertise", "advanced", now=3)
    assert store.answers("p1") == {"sus7/sus1": 6, "demographics/sql_expertise": "advanced"}
    assert store.answers("p1", prefix="sus7/") == {"sus7/sus1": 6}
    assert store.get_progress("p1") is None
    store.set_progress("p1", {"step": "task", "index": 2, "subtask": "2b"}, now=4)
    store.set_progress("p1", {"step": "task", "index": 3, "subtask": "1"}, now=5)
    assert store.get_progress("p1") == {"step": "task", "index": 3, "subtask": "1"}
    assert store.get_pool("k") is None
    store.put_pool("k", {"candidates": [{"sql": "SELECT 1", "count": 3}]}, now=6)
    store.put_pool("k", {"candidates": []}, now=7)
    assert store.get_pool("k") == {"candidates": []}
    code = store.completion_code("p1", now=8)
    assert store.completion_code("p1", now=9) == code and len(code) == 8
    assert store.completion_code("p2", now=9) != code
    store.add_code("p1", "output-based", "coder-a", 10, task="t1", subtask="3")
    store.add_code("p1", "decision-space", "coder-b", 11, task="t2", subtask="3")
    assert [c["code"] for c in store.codes("p1")] == ["output-based", "decision-space"]
    sid = store.start_session("p1", "film", now=12)
    assert [s["session_id"] for s in store.sessions("p1")] == [sid]


def test_concurrent_writers_lose_nothing(store_url):
    store = open_store(store_url)

    def worker(w: int) -> None:
        other = open_store(store_url)  # a separate engine, as another server process
        for i in range(40):
            for _ in range(2):
                log_event(other, session_id=f"s{w}", participant=f"p{w}", type="marker",
                          event_id=f"w{w}-{i}", payload={"i": i})
        other.close()

    at_once(6, worker)
    rows = store.events()
    assert len(rows) == 240 == len({r["event_id"] for r in rows})
    assert len({r["seq"] for r in rows}) == 240


CRASH_SCRIPT = """
import sys, time
from study.store import open_store
from study.trace import log_event
store = open_store(sys.argv[1])
i = 0
while True:
    log_event(store, session_id="crash", participant="p", type="space.hover",
              event_id=f"crash-{i}", payload={"i": i})
    print(f"crash-{i}", flush=True)
    i += 1
"""


def test_sigkill_mid_run_loses_no_returned_event(store_url):
    open_store(store_url).close()
    proc = subprocess.Popen([sys.executable, "-c", CRASH_SCRIPT, store_url], cwd=REPO,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    acknowledged = []
    deadline = time.monotonic() + 60
    while len(acknowledged) < 150 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acknowledged.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)
    rest, _ = proc.communicate(timeout=30)
    acknowledged += rest.split()
    assert proc.returncode == -signal.SIGKILL
    assert len(acknowledged) >= 150
    stored = {r["event_id"] for r in open_store(store_url).events(session_id="crash")}
    missing = [e for e in acknowledged if e not in stored]
    assert not missing, f"{len(missing)} acknowledged events lost, e.g. {missing[:3]}"
