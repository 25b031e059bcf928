"""Two study server processes on one PostgreSQL database, 20 participants joining and logging
across them, one server SIGKILLed mid-session and its participants resumed on a fresh server:
assignment stays balanced, 0 events lost or duplicated. Prints the figures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from study import schema as S
from study.store import open_store
from tests.study_flow_fixtures import FILM_BANK
from tests.two_server_worker import EVENTS

ROOT = Path(__file__).resolve().parents[1]
STUDY = f"""\
id: twoserver
title: Two servers
consent: Please agree.
conditions: [pleasqlarify, atomic-only]
task_bank: {FILM_BANK}
subtasks: {{"1": Interpret., 2a: Explore., 2b: Explain., "3": Submit.}}
tasks: [film-pulp-review, film-dicaprio-rating]
assignment: {{task_order: latin, conditions: between, seed: 3}}
"""


def _server(url: str, study: Path, n: int, journal: Path, *resume: str) -> subprocess.Popen:
    args = [sys.executable, "-m", "tests.two_server_worker", url, str(study), str(n),
            str(journal)] + (["resume", *resume] if resume else [])
    return subprocess.Popen(args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stderr=subprocess.PIPE, text=True)


def _lines(journal: Path, kind: str) -> list[str]:
    if not journal.exists():
        return []
    return [ln.split(" ", 1)[1] for ln in journal.read_text().splitlines()
            if ln.startswith(kind + " ")]


@pytest.mark.slow
@pytest.mark.postgres
def test_two_servers_one_killed_mid_session(pg_url, tmp_path):
    study = tmp_path / "twoserver" / "study.yaml"
    study.parent.mkdir()
    study.write_text(STUDY)
    open_store(pg_url).close()  # create the schema once
    ja, jb, jc = (tmp_path / f"{x}.journal" for x in "abc")
    t0 = time.monotonic()
    a, b = _server(pg_url, study, 10, ja), _server(pg_url, study, 10, jb)
    deadline = time.monotonic() + 60
    while ((len(_lines(jb, "ev")) < 60 or len(_lines(jb, "join")) < 10) and b.poll() is None
           and time.monotonic() < deadline):
        time.sleep(0.02)
    assert b.poll() is None, f"server B ended before the kill: {b.stderr.read()}"
    os.kill(b.pid, signal.SIGKILL)
    b.wait()
    killed_after = len(_lines(jb, "ev"))
    assert len(_lines(jb, "done")) < 10  # mid-session: B's participants had not finished
    b_pids = _lines(jb, "join")
    # B's participants reconnect to a new server; any whose join B never acknowledged start over
    c = _server(pg_url, study, 10 - len(b_pids), jc, *b_pids)
    assert a.wait(timeout=90) == 0, a.stderr.read()
    assert c.wait(timeout=90) == 0, c.stderr.read()
    elapsed = time.monotonic() - t0

    store = open_store(pg_url)
    parts = store.participants("twoserver")
    pids = [p["participant"] for p in parts]
    journaled = set(_lines(ja, "join")) | set(b_pids) | set(_lines(jc, "join"))
    assert len(journaled) == 20
    orphans = set(pids) - journaled  # joins B committed but never reported before the kill
    assert journaled <= set(pids)
    cells = Counter(p["cell"] for p in parts)
    assert len(cells) == 4 and max(cells.values()) - min(cells.values()) <= 1, cells
    with store.read() as conn:
        rows = conn.execute(select(S.events.c.event_id, S.events.c.participant,
                                   S.events.c.type, S.events.c.payload)).all()
        n_seq = conn.execute(select(func.count(func.distinct(S.events.c.seq)))).scalar_one()
    ids = [r.event_id for r in rows]
    assert len(ids) == len(set(ids)) == n_seq  # no duplicate ids, one seq per row
    sent = {f"{p}:e{i}" for p in journaled for i in range(EVENTS)}
    stored_load = {r.event_id for r in rows if r.type == "x.load"}
    acknowledged = set(_lines(ja, "ev")) | set(_lines(jb, "ev")) | set(_lines(jc, "ev"))
    lost = acknowledged - stored_load
    missing = sent - stored_load
    assert not lost and not missing
    steps = Counter((r.participant, r.payload) for r in rows if r.type == "step")
    assert max(steps.values()) == 1  # every move logged once, even those re-driven after the kill
    finished = {p["participant"] for p in parts if p["status"] == "completed"}
    assert journaled <= finished
    print(f"\ntwo servers: {len(pids)} participants ({len(orphans)} joined on B without an "
          f"acknowledgement), cells {dict(sorted(cells.items()))}, {len(rows)} events stored, "
          f"{len(acknowledged)} acknowledged, {killed_after} acknowledged by B before SIGKILL, "
          f"lost {len(lost)}, duplicated {len(ids) - len(set(ids))}, {elapsed:.1f} s")
