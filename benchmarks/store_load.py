"""Load benchmark: concurrent simulated participants logging events, each sent twice.

    python -m benchmarks.store_load [--db URL] [--participants 20] [--events 500]

Always runs against a temporary SQLite store, and also against ``--db`` (e.g. PostgreSQL) when
given. Each participant joins through ``assign_participant`` (flagged simulated, in a study of
its own named ``bench-<random>``), opens a session and logs ``--events`` events, sending every
event twice to exercise idempotency. Prints events/s and verifies 0 lost, 0 duplicated; exits
non-zero otherwise.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from sqlalchemy import make_url
from sqlalchemy.exc import OperationalError

from study.assignment import assign_participant
from study.spec import StudySpec, parse_study
from study.store import StoreError, open_store
from study.trace import log_event

TYPES = ("space.hover", "space.click", "output.view", "dv.browse", "dv.accept", "dv.reject",
         "clause.accept", "undo", "marker", "answer")

_SPEC = """
id: {study}
title: Load benchmark
consent: simulated
conditions: [pleasqlarify, atomic-only]
task_bank: none.jsonl
subtasks: {{"1": interpret, 2a: explore, 2b: explain, "3": navigate}}
tasks: [t0, t1, t2, t3]
questionnaires: [sus7]
assignment: {{task_order: williams, conditions: between, seed: 1}}
"""


@dataclass(frozen=True)
class BenchResult:
    """What one benchmark run measured and verified."""

    url: str
    participants: int
    events: int
    seconds: float
    stored: int
    lost: int
    duplicated: int
    resend_inserted: int  # second sends that were (wrongly) inserted
    order_violations: int

    @property
    def events_per_s(self) -> float:
        return self.stored / self.seconds if self.seconds else 0.0

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.resend_inserted
                    or self.order_violations or self.stored != self.participants * self.events)


def bench_spec() -> StudySpec:
    """A throwaway study spec with a unique id."""
    study = f"bench-{secrets.token_hex(4)}"
    return parse_study(_SPEC.format(study=study), Path(tempfile.gettempdir()) / "bench.yaml")


def run_bench(url: str, participants: int = 20, events: int = 500,
              sqlite_synchronous: str = "FULL") -> BenchResult:
    """Run the benchmark against one store URL and verify the stored trace."""
    store = open_store(url, pool_size=participants + 2, sqlite_synchronous=sqlite_synchronous)
    spec = bench_spec()
    sent: dict[str, list[str]] = {}
    resend_inserted = 0
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(participants + 1)

    def participant() -> None:
        nonlocal resend_inserted
        try:
            a = assign_participant(store, spec, now=int(time.time() * 1000), simulated=True)
            sid = store.start_session(a.participant, spec.id, now=int(time.time() * 1000))
            client = secrets.token_hex(8)
            ids, bad = [], 0
            barrier.wait()
            for i in range(events):
                eid = f"{client}-{i:06d}"
                send = partial(log_event, store, session_id=sid, participant=a.participant,
                               study=spec.id, condition=a.condition,
                               task=a.task_order[i % len(a.task_order)], subtask="3",
                               type=TYPES[i % len(TYPES)], payload={"i": i},
                               client_ts=int(time.time() * 1000), event_id=eid)
                send()
                bad += send().inserted
                ids.append(eid)
            with lock:
                sent[sid] = ids
                resend_inserted += bad
        except BaseException as exc:  # reported by the caller
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=participant) for _ in range(participants)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    if errors:
        raise errors[0]
    rows = store.events(study=spec.id)
    stored_ids = [r["event_id"] for r in rows]
    expected = {e for ids in sent.values() for e in ids}
    order_violations = 0
    for sid, ids in sent.items():
        got = [r["event_id"] for r in rows if r["session_id"] == sid]
        order_violations += got != ids
    store.close()
    return BenchResult(store.url, participants, events, seconds, len(rows),
                       lost=len(expected - set(stored_ids)),
                       duplicated=len(stored_ids) - len(set(stored_ids)),
                       resend_inserted=resend_inserted, order_violations=order_violations)


def report(r: BenchResult) -> str:
    """One human-readable line per run."""
    return (f"{r.url}: {r.participants} participants x {r.events} events (each sent twice) in "
            f"{r.seconds:.2f} s = {r.events_per_s:,.0f} events/s stored, "
            f"{2 * r.stored / r.seconds:,.0f} log calls/s; stored {r.stored}, lost {r.lost}, "
            f"duplicated {r.duplicated}, re-sends inserted {r.resend_inserted}, "
            f"sessions out of order {r.order_violations} -> {'OK' if r.ok else 'FAILED'}")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.store_load", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", help="an extra store URL to benchmark, e.g. postgresql+psycopg://…")
    ap.add_argument("--participants", type=int, default=20)
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--sqlite-synchronous", default="FULL", choices=("FULL", "NORMAL"),
                    help="SQLite durability: FULL (default, survives power loss) or NORMAL "
                    "(survives process crashes)")
    args = ap.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="pleasqlarify-bench-") as tmp:
        urls = [f"sqlite:///{Path(tmp) / 'bench.sqlite'}"] + ([args.db] if args.db else [])
        for url in urls:
            try:
                result = run_bench(url, args.participants, args.events, args.sqlite_synchronous)
            except (StoreError, OperationalError) as exc:
                reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
                ap.error(f"--db {make_url(url).render_as_string(hide_password=True)}: {reason}")
            print(report(result), flush=True)
            ok &= result.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
