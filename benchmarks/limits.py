"""What the hard limits cost and how fast they stop each attack (a printing benchmark).

``python -m benchmarks.limits [--bank studies/film/tasks.jsonl] [--repeat 5]
[--pg-url URL] [--timeout 2]``

Per query on the bank's pools: the statement check alone, the same limited SQLite backend in
this process, the full path one query per round trip (``execute``) and one round trip per pool
(``execute_many``, what pool preparation uses); the start-up of one worker. Then each attack
of benchmarks.attacks (the limit tests' list) with its stop time, this process's RSS growth,
the worker's peak RSS growth and whether its error says what the tests expect. First, the inputs
aimed at the statement check itself (it runs in the app process, before any worker limit): the
time to decide each and this process's peak memory growth, against the 0.5 s / 50 MB bound.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks.attacks import ATTACKS, CHECK_ATTACKS, INFO_ATTACKS, run_attack, run_check
from core.engine.execute import open_database
from core.engine.sqlguard import check_query
from core.engine.sqlworker import SqliteBackend, Watchdog
from core.engine.taskbank import DatabaseSpec, load_task_bank
from core.engine.workerpool import POOL, Worker


def _best_ms(fn: Any, n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000 / max(n, 1)


def per_query_cost(bank: str, repeat: int) -> dict[str, float]:
    """ms per query (best of ``repeat`` passes over every candidate of every task)."""
    tasks, _ = load_task_bank(bank, lenient=True)
    dbs = [open_database(t.database) for t in tasks]
    work = [(db, [c.sql for c in t.candidates]) for db, t in zip(dbs, tasks, strict=True)]
    n = sum(len(s) for _, s in work)
    dog = Watchdog()
    dog.start()
    backends = [SqliteBackend(db._target) for db in dbs]

    def inline() -> None:
        for backend, (_, sqls) in zip(backends, work, strict=True):
            for sql in sqls:
                try:
                    backend.run(sql, 2.0, 1000, 16_000_000, dog)
                except Exception:  # failing candidates cost time too
                    continue

    def full() -> None:
        for db, sqls in work:
            for sql in sqls:
                db.execute(sql)

    def batched() -> None:
        for db, sqls in work:
            db.execute_many(sqls)

    def check() -> None:
        for _, sqls in work:
            for sql in sqls:
                try:
                    check_query(sql)
                except Exception:
                    continue

    full()  # warm the worker's connections
    out = {"queries": n, "check_ms": _best_ms(check, n, repeat),
           "inline_limited_ms": _best_ms(inline, n, repeat), "worker_ms": _best_ms(full, n, repeat),
           "worker_batched_ms": _best_ms(batched, n, repeat)}
    out["worker_overhead_ms"] = out["worker_ms"] - out["inline_limited_ms"] - out["check_ms"]
    out["batched_overhead_ms"] = (out["worker_batched_ms"] - out["inline_limited_ms"]
                                  - out["check_ms"])
    starts = []
    for _ in range(repeat):
        start = time.perf_counter()
        w = Worker()
        w.call({"kind": "sqlite", "target": dbs[0]._target, "sql": "SELECT 1", "timeout_s": 2.0,
                "row_cap": 1, "max_bytes": 1000}, 5.0)
        starts.append((time.perf_counter() - start) * 1000)
        w.kill()
    out["worker_start_ms"] = statistics.median(starts)
    for db in dbs:
        db.close()
    return out


CHECK_BOUND_S, CHECK_BOUND_MB = 0.5, 50.0


def check_figures(repeat: int) -> list[dict[str, Any]]:
    """Per input of CHECK_ATTACKS: the check's decision, its slowest time of ``repeat`` and
    the largest peak memory growth, and whether both are within the bound."""
    rows = []
    for attack in CHECK_ATTACKS:
        runs = [run_check(attack.sql) for _ in range(max(repeat, 1))]
        error = runs[0].error
        slowest = max(r.elapsed_s for r in runs)
        peak = max(r.peak_growth_mb for r in runs)
        rows.append({"input": attack.name, "chars": len(attack.sql), "check_s": slowest,
                     "peak_mb": peak, "decision": error or "(accepted)",
                     "as_tested": all(w in (error or "") for w in attack.words),
                     "within": slowest < CHECK_BOUND_S and peak < CHECK_BOUND_MB})
    return rows


def attack_figures(spec: DatabaseSpec, dialect: str, timeout_s: float) -> list[dict[str, Any]]:
    """Stop time and memory growth of every attack of ``dialect`` (limit ``timeout_s``) and of
    every server-information read (INFO_ATTACKS), and whether its error says what the limit
    tests expect."""
    db = open_database(spec, timeout_s=timeout_s)
    rows = []
    for attack in ATTACKS[dialect] + INFO_ATTACKS[dialect]:
        run = run_attack(db, attack.sql)
        error = run.result.error or "(ran)"
        rows.append({"attack": attack.name, "stop_s": run.elapsed_s,
                     "app_rss_mb": run.app_growth_mb, "worker_peak_mb": run.worker_growth_mb,
                     "as_tested": not run.result.ok and all(
                         w in error for w in attack.expected(timeout_s)), "error": error})
    db.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.limits",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--bank", default="studies/film/tasks.jsonl",
                    help="task bank whose candidates are timed (default: the film study's)")
    ap.add_argument("--repeat", type=int, default=5, help="passes per figure; the best is shown")
    ap.add_argument("--timeout", type=float, default=2.0, help="the time limit for the attacks, s")
    ap.add_argument("--pg-url", default="", help="a PostgreSQL database for the server attacks")
    args = ap.parse_args(argv)
    print(f"the statement check itself, in this process (slowest of {args.repeat}; bound "
          f"{CHECK_BOUND_S:g} s, {CHECK_BOUND_MB:g} MB):")
    print(f"  {'input':26s} {'chars':>9s} {'check s':>8s} {'peak MB':>8s} {'within':>6s}"
          "  decision")
    for r in check_figures(args.repeat):
        print(f"  {r['input']:26s} {r['chars']:9,d} {r['check_s']:8.4f} {r['peak_mb']:8.1f} "
              f"{'yes' if r['within'] and r['as_tested'] else 'NO':>6s}  {r['decision'][:70]}")
    print()
    cost = per_query_cost(args.bank, args.repeat)
    print(f"per query over {cost['queries']} candidates of {args.bank} (best of {args.repeat}):")
    for key in ("check_ms", "inline_limited_ms", "worker_ms", "worker_overhead_ms",
                "worker_batched_ms", "batched_overhead_ms"):
        print(f"  {key:22s} {cost[key]:8.3f}")
    print(f"  {'worker_start_ms':22s} {cost['worker_start_ms']:8.1f}  (median, once per worker)")
    tasks, _ = load_task_bank(args.bank, lenient=True)
    targets = [("sqlite", tasks[0].database)]
    if args.pg_url:
        targets.append(("postgres", DatabaseSpec("url", args.pg_url)))
    for dialect, spec in targets:
        print(f"\nattacks on {dialect}, limit {args.timeout:g} s:")
        print(f"  {'attack':22s} {'stop s':>7s} {'app MB':>7s} {'worker MB':>9s} {'as tested':>9s}"
              "  error")
        for r in attack_figures(spec, dialect, args.timeout):
            print(f"  {r['attack']:22s} {r['stop_s']:7.2f} {r['app_rss_mb']:7.1f} "
                  f"{r['worker_peak_mb']:9.1f} {'yes' if r['as_tested'] else 'NO':>9s}  "
                  f"{r['error'][:80]}")
    POOL.shutdown()


if __name__ == "__main__":
    from core._cli import run

    raise SystemExit(run(main))
