"""Precompute prepared pools (with layouts) for a task bank, and find them again.

``python -m core.prepare BANK.jsonl [--out DIR] [--rounds]`` writes ``DIR/<task id>.json`` for
every task (default DIR: ``pools/`` beside the bank), each with its first state's repair round
(``--rounds``: only that, for the current files). The app reads these files, so no UMAP fit (and
no numba compilation) ever runs on a request path, and no first "None of these" waits. ``load_prepared`` returns the stored pool when
it matches the task's candidates and otherwise prepares and caches it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

from core.engine.errors import StudioError
from core.engine.execute import cache_dir
from core.engine.pool import PreparedPool, prepare_pool
from core.engine.poolfile import (  # noqa: F401 - re-exported: the prepare API
    default_pool_dir,
    pool_fingerprint,
    pool_ready,
    stored_fingerprint,
)
from core.engine.taskbank import Task, load_task_bank

LOG = logging.getLogger(__name__)


class PoolNotPreparedError(StudioError):
    """A study task's prepared pool is missing or out of date and fitting one was not allowed."""


def _read(path: Path, fingerprint: str) -> PreparedPool | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("fingerprint") != fingerprint:
            return None
        return PreparedPool.from_dict(data)
    except (ValueError, KeyError):
        return None


def write_prepared(pool: PreparedPool, task: Task, path: Path) -> None:
    """Write ``pool`` as ``task``'s prepared pool file, with its first repair round (computed
    here when the pool has none of this version: the first "None of these" never waits)."""
    with_first_round(pool)
    data = pool.to_dict()
    data["fingerprint"] = pool_fingerprint(task)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def with_first_round(pool: PreparedPool) -> PreparedPool:
    """``pool`` with its first state's repair round stored (:func:`first_round`), computed
    unless it holds one of this version of recomposition; needs the pool's database. A round
    that fails (e.g. the database went away) is not stored: preparing the pool still works."""
    from core.engine.repair import REPAIR_VERSION, first_round  # the repair engine, on demand

    current = pool.first_round
    if (current is None or current.version != REPAIR_VERSION) and pool.database is not None:
        try:
            pool.first_round = first_round(pool)
        except StudioError as exc:  # the pool stays usable: a press computes (and reports) it
            LOG.warning("no first repair round stored for task %s: %s", pool.task_id, exc)
            pool.first_round = None
    return pool


def load_prepared(task: Task, pool_dir: str | Path | None = None, *,
                  fit: bool = True) -> PreparedPool:
    """The prepared pool of ``task``: shipped file, else cache, else computed and cached.

    ``fit=False`` (a participant's request) raises :class:`PoolNotPreparedError` instead of
    computing it: execution, features and a UMAP layout take a minute a pool.
    """
    fp = pool_fingerprint(task)
    candidates = []
    if pool_dir is not None:
        candidates.append(Path(pool_dir) / f"{task.id}.json")
    cached = cache_dir("pools") / f"{task.id}-{fp}.json"
    candidates.append(cached)
    for path in candidates:
        pool = _read(path, fp)
        if pool is not None:
            pool.database = task.database  # repair runs new candidates there
            return pool
    if not fit:
        raise PoolNotPreparedError(
            f"the pool of task '{task.id}' is not prepared for its current candidates; "
            "prepare it on Setup (Prepare missing pools) or with python -m core.prepare")
    pool = prepare_pool(task)
    write_prepared(pool, task, cached)
    return pool


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.prepare", description=__doc__)
    parser.add_argument("bank", help="task bank (JSON Lines)")
    parser.add_argument("--out", help="output folder (default: pools/ beside the bank)")
    parser.add_argument("--seed", type=int, default=0, help="layout random_state")
    parser.add_argument("--rounds", action="store_true",
                        help="only store each current pool file's first repair round again "
                             "(after a change to recomposition); layouts are kept")
    args = parser.parse_args(argv)
    tasks, _ = load_task_bank(args.bank)
    out = Path(args.out) if args.out else default_pool_dir(args.bank)
    out.mkdir(parents=True, exist_ok=True)
    for i, task in enumerate(tasks, 1):
        start = time.perf_counter()
        path = out / f"{task.id}.json"
        pool = _read(path, pool_fingerprint(task)) if args.rounds else None
        if pool is not None:
            pool.database, pool.first_round = task.database, None
        else:
            pool = prepare_pool(task, random_state=args.seed)
        write_prepared(pool, task, path)
        invalid = int((~pool.valid).sum())
        print(f"[{i}/{len(tasks)}] {task.id}: {pool.n} candidates, {len(pool.class_keys)} "
              f"outputs, {invalid} invalid ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    print(f"wrote {len(tasks)} prepared pools to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
