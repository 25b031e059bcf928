"""Pre-generate candidate pools for a whole task bank before a study's sessions.

``python -m core.generate BANK.jsonl --n 50 --out POOLS.jsonl [--study-db URL] [--model M]
[--temperature 0.7] [--concurrency 4] [--budget-usd X] [--offline-variants] [--base-url URL]
[--batch [--batch-state FILE] [--poll-s 30]]``

Each task is sampled from an Anthropic model (key from ``$ANTHROPIC_API_KEY``), or with
``--offline-variants`` built from its gold queries by sqlglot rewrites, or with ``--batch``
through the Message Batches API (half the price; resumable, see :mod:`core.generation.batch`).
Pools are cached
(study database with ``--study-db``, else ``logs/pool-cache/``), so a second run samples
nothing. POOLS.jsonl is a task bank: each task line with its generated ``candidates`` and a
``generation`` object (settings, usage, estimated cost, origin labels and every raw sample).
A progress line goes to stderr, a final summary to stdout. Exit codes: 0 all pools complete,
1 some tasks failed or stopped early, 2 nothing could run (no key, bad bank, bad model).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from core.engine.errors import GenerationError, StudioError
from core.engine.execute import open_database
from core.engine.pool import PreparedPool
from core.engine.prepare import load_prepared
from core.engine.taskbank import Task, load_task_bank
from core.generation.poolcache import GeneratedPool, PoolCache, Sample, open_pool_cache
from core.generation.sampler import (
    DEFAULT_MODEL,
    PROMPT_VERSION,
    AnthropicSampler,
    Budget,
    Progress,
    SamplerConfig,
    SamplingError,
    generate_pool,
)
from core.generation.variants import generate_variants, schema_info

if TYPE_CHECKING:  # the Batches API (anthropic, ~1-10 s to import) only for --batch
    from core.generation.batch import TaskOutcome

OFFLINE_MODEL = "offline-variants"
VARIANTS_VERSION = "variants-v1"


def variant_pool(task: Task, n: int = 50, random_state: int = 0) -> GeneratedPool:
    """An offline pool for a task: rewrites of its golds (else of its shipped candidates)."""
    seeds = list(task.gold) or [c.sql for c in task.candidates]
    if not seeds:
        raise GenerationError(f"task '{task.id}' has neither gold queries nor candidates to "
                              "derive variants from; add a gold query to the task bank")
    db = open_database(task.database)
    try:
        made = generate_variants(seeds, schema_info(db), n=n, dialect=task.dialect,
                                 random_state=random_state)
    finally:
        db.close()
    pool = GeneratedPool(task.question, task.dialect, OFFLINE_MODEL, 0.0, n,
                         f"{VARIANTS_VERSION}-seed{random_state}", task.database.fingerprint())
    for cand, label in zip(made.candidates, made.labels, strict=True):
        for _ in range(cand.count):
            pool.samples.append(Sample(len(pool.samples), cand.sql, cand.sql, origin=label))
    pool.complete = True
    return pool


def question_task(task: Task, question: str, pool: GeneratedPool) -> Task:
    """A task for a new question on ``task``'s database, carrying a generated pool (no golds)."""
    digest = hashlib.sha256(question.strip().encode()).hexdigest()[:10]
    return Task(id=f"{task.id}~q{digest}", question=question.strip(), database=task.database,
                candidates=list(pool.candidates), ambiguity="unknown", source="generated",
                title=f"{task.title or task.id}: own question")


def question_pool(task: Task, question: str, *, n: int = 50, cache: PoolCache | None = None,
                  sampler: AnthropicSampler | None = None,
                  on_progress: Progress | None = None) -> PreparedPool:
    """Sample candidates for a free-text ``question`` on ``task``'s database and prepare them.

    Sampling goes through the pool cache (nothing is sampled twice) and the prepared pool
    through the prepared-pool cache, so asking the same question again costs no request.
    """
    if not question.strip():
        raise GenerationError("the question is empty: type a question first")
    sampler = sampler or AnthropicSampler(SamplerConfig(n=n))
    pool = generate_pool(sampler, question.strip(), task.database,
                         cache if cache is not None else open_pool_cache(), on_progress=on_progress)
    if not pool.candidates:
        raise GenerationError("no sample contained a usable SQL query; rephrase the question "
                              "or use the shipped pool")
    return load_prepared(question_task(task, question, pool))


def pool_line(task: Task, pool: GeneratedPool) -> dict[str, Any]:
    """The task as a bank line carrying the generated pool and how it was made."""
    line = task.to_json()
    line["candidates"] = [{"sql": c.sql, "count": c.count} for c in pool.candidates]
    line["generation"] = {
        "key": pool.key, "model": pool.model, "temperature": pool.temperature,
        "temperature_applied": pool.temperature_applied, "n": pool.n,
        "prompt_version": pool.prompt_version, "complete": pool.complete,
        "stopped": pool.stopped, "distinct": len(pool.candidates),
        "replies": len(pool.replies), "invalid_share": round(pool.invalid_share, 4),
        "input_tokens": pool.input_tokens, "output_tokens": pool.output_tokens,
        "estimated_cost_usd": round(pool.cost_usd, 6), "labels": pool.labels,
        "samples": [{"index": s.index, "text": s.text, "sql": s.sql, "error": s.error,
                     "origin": s.origin} for s in pool.samples],
    }
    return line


class _Progress:
    """The one-line progress display on stderr."""

    def __init__(self, stream: TextIO, total_tasks: int):
        self.stream, self.total_tasks, self.task_no, self.task_id = stream, total_tasks, 0, ""
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.calls = 0

    def task(self, number: int, task_id: str) -> None:
        self.task_no, self.task_id = number, task_id

    def __call__(self, done: int, total: int, info: dict[str, Any]) -> None:
        self.calls += 1
        if not self.tty:
            return  # logs and pipes get one line per task (from ``end``)
        extra = " (cached)" if info.get("cached") else (
            f", {info.get('distinct', 0)} distinct, {info.get('invalid', 0)} invalid, "
            f"~${info.get('cost_usd', 0.0):.4f}")
        self.stream.write(f"\r[{self.task_no}/{self.total_tasks}] {self.task_id}: "
                          f"{done}/{total} samples{extra}\033[K")
        self.stream.flush()

    def end(self, text: str) -> None:
        clear = "\r\033[K" if self.tty else ""
        self.stream.write(f"{clear}[{self.task_no}/{self.total_tasks}] {self.task_id}: {text}\n")
        self.stream.flush()


def _parser(prog: str = "python -m core.generate") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog,
                                description="Pre-generate candidate pools for a task bank.")
    p.add_argument("bank", help="task bank (JSON Lines)")
    p.add_argument("--out", required=True, help="output bank with the pools (JSON Lines)")
    p.add_argument("--n", type=int, default=50, help="samples per task (default 50)")
    p.add_argument("--study-db", help="cache pools in this study database (SQLAlchemy URL)")
    p.add_argument("--cache-dir", help="JSON cache folder (default logs/pool-cache)")
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"default {DEFAULT_MODEL}")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--prompt-version", default=PROMPT_VERSION)
    p.add_argument("--max-tokens", type=int, default=1024, help="per reply")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    p.add_argument("--retries", type=int, default=4, help="retries per sample")
    p.add_argument("--budget-usd", type=float, help="stop the run past this estimated cost")
    p.add_argument("--budget-tokens", type=int, help="stop the run past this many tokens")
    p.add_argument("--base-url", help="API base URL (default $ANTHROPIC_BASE_URL or Anthropic)")
    p.add_argument("--offline-variants", action="store_true",
                   help="no API: build pools by rewriting each task's gold queries")
    p.add_argument("--seed", type=int, default=0, help="random_state of the variant generator")
    p.add_argument("--tasks", help="comma-separated task ids (default: all)")
    p.add_argument("--batch", action="store_true",
                   help="one Message Batch for the whole bank (half the price, results within "
                        "24 h); an interrupted run resumes when started again")
    p.add_argument("--batch-state", help="the batch state file (default OUT.batch.json)")
    p.add_argument("--poll-s", type=float, default=30.0,
                   help="seconds between batch status checks (default 30)")
    return p


def main(argv: list[str] | None = None, *, stdout: TextIO = sys.stdout,
         stderr: TextIO = sys.stderr, open_store: Callable[[str], Any] | None = None) -> int:
    """Run the CLI; returns the exit code.

    ``open_store`` opens ``--study-db URL`` as a store with ``get_pool``/``put_pool``; core/ has
    none of its own (it never imports study/), so ``python -m study.generate`` passes it in.
    """
    prog = "python -m study.generate" if open_store is not None else "python -m core.generate"
    args = _parser(prog).parse_args(argv)
    try:
        tasks, _ = load_task_bank(args.bank)
        store = None
        if args.study_db:
            if open_store is None:
                raise GenerationError("--study-db needs the study store: run the same command as "
                                      "`python -m study.generate …`, or cache in files with "
                                      "--cache-dir")
            store = open_store(args.study_db)
        cache: PoolCache = open_pool_cache(store, args.cache_dir)
        sampler = None if args.offline_variants else AnthropicSampler(
            SamplerConfig(model=args.model, n=args.n, temperature=args.temperature,
                          max_tokens=args.max_tokens, concurrency=args.concurrency,
                          prompt_version=args.prompt_version, timeout_s=args.timeout,
                          max_retries=args.retries), base_url=args.base_url)
    except StudioError as exc:
        print(f"error: {exc}", file=stderr)
        return 2
    if args.tasks:
        wanted = set(args.tasks.split(","))
        tasks = [t for t in tasks if t.id in wanted]
    batched: dict[str, TaskOutcome] | None = None
    if args.batch:
        try:
            batched = _run_batch(args, tasks, sampler, cache, stderr)
        except StudioError as exc:
            print(f"error: {exc}", file=stderr)
            return 2
    progress = _Progress(stderr, len(tasks))
    totals = {"ok": 0, "failed": 0, "distinct": 0, "replies": 0, "invalid": 0,
              "in": 0, "out": 0, "usd": 0.0}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        for number, task in enumerate(tasks, 1):
            progress.task(number, task.id)
            pool, spent, fatal = (_one_task(task, args, sampler, cache, progress, totals)
                                  if batched is None else
                                  _batch_task(batched[task.id], progress, totals))
            if pool is not None and pool.candidates:
                out.write(json.dumps(pool_line(task, pool)) + "\n")
                out.flush()
                totals["distinct"] += len(pool.candidates)
                totals["replies"] += len(pool.replies)
                totals["invalid"] += pool.n_invalid
            totals["usd"] += spent[0]
            totals["in"] += spent[1]
            totals["out"] += spent[2]
            if fatal:
                break
            if _over_budget(args, totals):
                print(f"budget reached after {number} of {len(tasks)} tasks", file=stderr)
                totals["failed"] += len(tasks) - number
                break
    share = totals["invalid"] / totals["replies"] if totals["replies"] else 0.0
    print(f"{totals['ok']} of {len(tasks)} pools complete, {totals['failed']} failed or "
          f"partial; {totals['distinct']} distinct candidates; {share:.0%} of replies invalid; "
          f"{totals['in']} input + {totals['out']} output tokens; estimated cost "
          f"${totals['usd']:.4f} (list-price estimate); written to {args.out}", file=stdout)
    return 0 if totals["failed"] == 0 and totals["ok"] == len(tasks) else 1


def _run_batch(args: argparse.Namespace, tasks: list[Task], sampler: AnthropicSampler | None,
               cache: PoolCache, stderr: TextIO) -> dict[str, TaskOutcome]:
    """Every task's pool through one Message Batch (resuming a recorded one)."""
    if sampler is None:
        raise GenerationError("--batch samples from the API; it cannot be combined with "
                              "--offline-variants")
    if args.budget_usd is not None or args.budget_tokens is not None:
        raise GenerationError("--budget-usd/--budget-tokens cannot stop a batch once it is "
                              "submitted; bound it with --n and --tasks instead")
    from core.generation.batch import BatchRun, default_state_path

    state = args.batch_state or default_state_path(args.out)
    return BatchRun(sampler, cache, state, poll_s=args.poll_s, stream=stderr).run(tasks)


def _batch_task(outcome: TaskOutcome, progress: _Progress,
                totals: dict[str, Any]) -> tuple[GeneratedPool | None, tuple[float, int, int],
                                                 bool]:
    """Report one task's batch outcome like a directly sampled task; never aborts the run."""
    progress.end(outcome.report())
    pool = outcome.pool
    totals["ok" if pool is not None and pool.complete else "failed"] += 1
    return pool, (outcome.fresh_usd, *outcome.fresh_tokens), False


def _over_budget(args: argparse.Namespace, totals: dict[str, Any]) -> bool:
    if args.budget_usd is not None and totals["usd"] >= args.budget_usd:
        return True
    return args.budget_tokens is not None and totals["in"] + totals["out"] >= args.budget_tokens


def _one_task(task: Task, args: argparse.Namespace, sampler: AnthropicSampler | None,
              cache: PoolCache, progress: _Progress,
              totals: dict[str, Any]) -> tuple[GeneratedPool | None, tuple[float, int, int], bool]:
    """Generate (or fetch) one task's pool; returns (pool, fresh spend, abort the run?)."""
    if sampler is None:
        try:
            variants = variant_pool(task, args.n, args.seed)
        except StudioError as exc:
            progress.end(f"failed: {exc}")
            totals["failed"] += 1
            return None, (0.0, 0, 0), False
        progress.end(variants.summary())
        totals["ok"] += 1
        return variants, (0.0, 0, 0), False
    before = cache.get(sampler.empty_pool(task.question, task.database).key)
    base = (before.cost_usd, before.input_tokens, before.output_tokens) if before else (0, 0, 0)
    remaining_usd = None if args.budget_usd is None else args.budget_usd - totals["usd"]
    remaining_tok = None if args.budget_tokens is None else \
        args.budget_tokens - totals["in"] - totals["out"]
    sampler.config = SamplerConfig(**{**sampler.config.__dict__, "budget": Budget(
        max_tokens=remaining_tok, max_usd=remaining_usd)})
    fatal = False
    try:
        pool: GeneratedPool | None = generate_pool(sampler, task.question, task.database, cache,
                             on_progress=progress)
    except SamplingError as exc:
        progress.end(f"failed: {exc}")
        totals["failed"] += 1
        pool, fatal = exc.pool, exc.kind in ("model", "key", "request")
    spent = (0.0, 0, 0) if pool is None else (
        max(0.0, pool.cost_usd - base[0]), max(0, pool.input_tokens - base[1]),
        max(0, pool.output_tokens - base[2]))
    if pool is not None and not fatal and pool.complete:
        progress.end(pool.summary())
        totals["ok"] += 1
    elif pool is not None and pool.stopped and pool.stopped.startswith("budget"):
        progress.end(pool.summary())
        totals["failed"] += 1
    return pool, spent, fatal


if __name__ == "__main__":
    raise SystemExit(main())
