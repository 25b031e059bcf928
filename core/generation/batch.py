"""Generate a whole bank's pools through the Anthropic Message Batches API (half the price).

One request per missing sample (``custom_id`` names the task and the sample), submitted as one
batch (split only past the API's 100,000 requests or ~200 MB). The batch ids and a manifest of
every request are written to a *state file* before and after each submission and the status
after each poll, so a run that crashes or is interrupted resumes on the next start: it polls
and collects the batch it already submitted and never submits it twice (a crash between the
API accepting a batch and its id reaching the file is recovered from the list of recent
batches). Results are streamed,
matched by ``custom_id``, read with the same extractor as the direct path, merged with what the
pool cache already holds and cached; errored, expired and canceled requests are reported per
task and leave the pool partial (a rerun submits only the missing samples).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, cast

import anthropic
from anthropic.types.messages.batch_create_params import Request
from tqdm import tqdm

from core.engine.errors import GenerationError, StudioError
from core.engine.execute import open_database
from core.engine.taskbank import Task
from core.generation.extract import extract_sql
from core.generation.poolcache import GeneratedPool, PoolCache, Sample
from core.generation.sampler import _RETRY_STATUS, AnthropicSampler

log = logging.getLogger(__name__)

BATCH_PRICE_FACTOR = 0.5  # the Batches API bills half the list price
MAX_REQUESTS = 100_000  # per batch (API limit)
MAX_BYTES = 200 * 1024 * 1024  # per batch; the API's limit is 256 MB
STATE_VERSION = 1
_ENDED = ("succeeded", "errored", "expired", "canceled")


@dataclass
class TaskOutcome:
    """What the batch run gave one task: its pool (None if not even planned) and problems."""

    pool: GeneratedPool | None
    cached: bool = False
    problems: dict[str, int] = field(default_factory=dict)  # errored/expired/canceled/missing
    first_error: str | None = None
    failure: str | None = None  # the task could not be planned (database, prompt)
    fresh_usd: float = 0.0
    fresh_tokens: tuple[int, int] = (0, 0)

    def report(self) -> str:
        """One line for the progress display: the pool's summary and what went wrong."""
        if self.failure:
            return f"failed: {self.failure}"
        assert self.pool is not None
        text = self.pool.summary() + (" (cached)" if self.cached else "")
        if self.problems:
            parts = ", ".join(f"{n} {kind}" for kind, n in sorted(self.problems.items()))
            text += f"; batch requests: {parts}"
            if self.first_error:
                text += f" (first: {self.first_error})"
        return text


@dataclass
class _Planned:
    """One task's part of the batch: its pool key, dialect, samples wanted, replies it had."""

    task_id: str
    key: str
    dialect: str
    wanted: int
    base_replies: int
    params: dict[str, Any]


def default_state_path(out: str | Path) -> Path:
    """Where a run writing ``out`` keeps its batch state (beside the output)."""
    out = Path(out)
    return out.with_name(out.name + ".batch.json")


def custom_id(position: int, key: str, sample: int) -> str:
    """The request id of one sample: task position, pool key prefix, sample number.

    The API allows 1-64 characters of ``[A-Za-z0-9_-]``; this is at most ~30.
    """
    return f"t{position}-{key[5:17]}-s{sample}"


class BatchRun:
    """One resumable batch generation over a bank, driven by :meth:`run`."""

    def __init__(self, sampler: AnthropicSampler, cache: PoolCache, state_path: str | Path, *,
                 poll_s: float = 30.0, sleep: Callable[[float], None] = time.sleep,
                 stream: TextIO | None = None):
        self.sampler, self.cache, self.state_path = sampler, cache, Path(state_path)
        self.poll_s, self._sleep, self.stream = poll_s, sleep, stream
        self.state: dict[str, Any] = {}
        self.created = 0  # batches this process submitted (tests and the summary read it)

    # -- planning ---------------------------------------------------------------------------

    def _plan(self, tasks: list[Task], send_temperature: bool,
              outcomes: dict[str, TaskOutcome],
              fixed: dict[str, dict[str, Any]] | None = None) -> list[_Planned]:
        """The samples each task still needs; cached-complete and unreadable tasks are settled.

        ``fixed`` (key → the state's entry) is the plan of a run being resumed: what it asked
        for is asked again, whatever the cache has gained since (a crash mid-collection).
        """
        planned: dict[str, _Planned] = {}
        for task in tasks:
            base = self.sampler.empty_pool(task.question, task.database)
            if base.key in planned:
                continue  # the same question on the same database: one pool serves both
            cached = self.cache.get(base.key)
            entry = fixed.get(base.key) if fixed is not None else None
            if entry is None and cached is not None and cached.complete:
                outcomes[task.id] = TaskOutcome(cached, cached=True)
                continue
            if entry is None and fixed is not None:
                outcomes[task.id] = TaskOutcome(None, failure="not in the open batch; run "
                                                "again once it is collected")
                continue
            try:
                db = open_database(task.database)
                try:
                    system, user = self.sampler.prompt(task.question, db)
                finally:
                    db.close()
            except StudioError as exc:
                outcomes[task.id] = TaskOutcome(None, failure=str(exc))
                continue
            if entry is not None:
                wanted, had = int(entry["wanted"]), int(entry["base_replies"])
            else:
                wanted = cached.missing() if cached is not None else base.n
                had = len(cached.replies) if cached is not None else 0
            planned[base.key] = _Planned(task.id, base.key, task.dialect, wanted, had,
                                         self.sampler.params(system, user, send_temperature))
        return list(planned.values())

    def _identity(self, tasks: list[Task]) -> str:
        """Identity of a run: the tasks and every setting that keys their pools."""
        raw = json.dumps([[t.id, self.sampler.empty_pool(t.question, t.database).key]
                          for t in tasks])
        return hashlib.sha256(raw.encode()).hexdigest()[:24]

    def _chunks(self, planned: list[_Planned]) -> list[list[str]]:
        """Request ids grouped into batches within the API's count and size limits."""
        chunks: list[list[str]] = [[]]
        size = 0
        for position, p in enumerate(planned):
            one = len(json.dumps(p.params)) + 64
            for j in range(p.wanted):
                if len(chunks[-1]) >= MAX_REQUESTS or (chunks[-1] and size + one > MAX_BYTES):
                    chunks.append([])
                    size = 0
                chunks[-1].append(custom_id(position, p.key, j))
                size += one
        return [c for c in chunks if c]

    # -- state file -------------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any] | None:
        """The state file's content, or None when there is none; damage is one clear error."""
        if not self.state_path.is_file():
            return None
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise GenerationError(
                f"{self.state_path}: the batch state file cannot be read ({exc}); if no batch "
                "of this run is still open, delete it and run again") from None
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise GenerationError(f"{self.state_path}: not a batch state file of this version; "
                                  "delete it (or pass another --batch-state) and run again")
        return state

    def _save(self) -> None:
        """Write the state atomically (a crash leaves the old or the new file, never half)."""
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_name(self.state_path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.state, indent=1), encoding="utf-8")
        os.replace(tmp, self.state_path)

    # -- the run ----------------------------------------------------------------------------

    def run(self, tasks: list[Task]) -> dict[str, TaskOutcome]:
        """Plan, submit (or resume), poll and collect; returns each task's outcome by id."""
        previous = self._load_state()
        send_temperature = bool(previous.get("send_temperature", True)) if previous else True
        identity = self._identity(tasks)
        outcomes: dict[str, TaskOutcome] = {}
        if previous is not None and not previous.get("collected"):
            if previous.get("plan") != identity:
                ids = ", ".join(b["id"] for b in previous.get("batches", []) if b.get("id"))
                raise GenerationError(
                    f"{self.state_path}: an uncollected batch ({ids or 'not yet submitted'}) "
                    "belongs to another bank, task selection or settings. Rerun the command "
                    "that started it to collect it, or delete this file to abandon it (a "
                    "submitted batch keeps running and is billed).")
            self.state = previous
            self._say(f"resuming the batch run recorded in {self.state_path}")
            planned = self._plan(tasks, send_temperature, outcomes,
                                 {e["key"]: e for e in previous["tasks"]})
        else:
            planned = self._plan(tasks, send_temperature, outcomes)
            if not planned:
                return self._settle(tasks, outcomes, planned, {})
            self.state = self._new_state(planned, identity, send_temperature)
            if previous is not None:  # never to be mistaken for this run's batch in _adopt
                self.state["known_batches"] = _known_batches(previous)
            self._save()
        client = self.sampler._client()
        try:
            self._submit(client, planned)
            self._poll(client)
            results = self._collect(client, planned)
        finally:
            client.close()
        return self._settle(tasks, outcomes, planned, results)

    def _new_state(self, planned: list[_Planned], identity: str,
                   send_temperature: bool) -> dict[str, Any]:
        """A fresh state: the plan's identity and its batches, none submitted yet."""
        c = self.sampler.config
        return {"version": STATE_VERSION, "plan": identity, "collected": False,
                "send_temperature": send_temperature,
                "settings": {"model": c.model, "n": c.n, "temperature": c.temperature,
                             "prompt_version": c.prompt_version, "max_tokens": c.max_tokens},
                "tasks": [{"task": p.task_id, "key": p.key, "wanted": p.wanted,
                           "base_replies": p.base_replies} for p in planned],
                "batches": [{"id": None, "custom_ids": ids, "status": "not submitted",
                             "request_counts": {}} for ids in self._chunks(planned)]}

    def _requests(self, planned: list[_Planned], ids: Iterable[str]) -> Iterator[dict[str, Any]]:
        """The batch request bodies for these custom ids."""
        by_prefix = {custom_id(i, p.key, 0)[:-1]: p for i, p in enumerate(planned)}
        for cid in ids:
            prefix = cid[:cid.rindex("-s") + 2]
            yield {"custom_id": cid, "params": by_prefix[prefix].params}

    def _submit(self, client: anthropic.Anthropic, planned: list[_Planned]) -> None:
        """Create every batch of the state that has no id yet, saving the id at once."""
        for batch in self.state["batches"]:
            if batch["id"]:
                continue
            if batch["status"] == "submitting" and self._adopt(client, batch):
                continue
            batch["status"] = "submitting"
            batch["submitted_at"] = time.time()
            self._save()
            requests = cast(list[Request], list(self._requests(planned, batch["custom_ids"])))
            created = self._call(functools.partial(client.messages.batches.create,
                                                   requests=requests), "submit the batch")
            batch["id"], batch["status"] = created.id, created.processing_status
            batch["request_counts"] = created.request_counts.model_dump()
            self.created += 1
            self._save()
            self._say(f"submitted batch {created.id} ({len(batch['custom_ids'])} requests); "
                      f"state in {self.state_path}")

    def _adopt(self, client: anthropic.Anthropic, batch: dict[str, Any]) -> bool:
        """After a crash between submitting a batch and recording its id: find it among the
        account's recent batches (created since, with as many requests) and record it."""
        since = float(batch.get("submitted_at") or 0) - 120  # clock skew margin
        known = _known_batches(self.state)  # this run's other batches and earlier runs' ones
        page = self._call(lambda: client.messages.batches.list(limit=100),
                          "list recent batches to find the one submitted before the crash")
        for found in page.data:
            total = sum(found.request_counts.model_dump().values())
            if (found.id not in known and found.created_at.timestamp() >= since
                    and total == len(batch["custom_ids"])):
                batch["id"], batch["status"] = found.id, found.processing_status
                batch["request_counts"] = found.request_counts.model_dump()
                self._save()
                self._say(f"found batch {found.id}, submitted before the interruption")
                return True
        return False

    def _poll(self, client: anthropic.Anthropic) -> None:
        """Poll every open batch until all have ended, with a progress bar over requests."""
        total = sum(len(b["custom_ids"]) for b in self.state["batches"])
        bar = tqdm(total=total, desc="batch", unit="req", file=self.stream, disable=None,
                   dynamic_ncols=True)
        try:
            while True:
                for batch in self.state["batches"]:
                    if batch["status"] == "ended":
                        continue
                    got = self._call(functools.partial(client.messages.batches.retrieve, batch["id"]),
                                     "check the batch", fatal=False)
                    if got is None:
                        continue  # a transient failure: the next poll asks again
                    if got.processing_status != batch["status"]:
                        self._say(f"batch {got.id}: {got.processing_status}")
                    batch["status"] = got.processing_status
                    batch["request_counts"] = got.request_counts.model_dump()
                self._save()
                done = sum(sum(b["request_counts"].get(k, 0) for k in _ENDED)
                           for b in self.state["batches"])
                bar.update(done - bar.n)
                bar.set_postfix_str(", ".join(sorted({b["status"] for b in
                                                       self.state["batches"]})))
                if all(b["status"] == "ended" for b in self.state["batches"]):
                    return
                self._sleep(self.poll_s)
        except KeyboardInterrupt:
            self._say(f"interrupted: the batch keeps running; run the same command again to "
                      f"collect it (state in {self.state_path})")
            raise
        finally:
            bar.close()

    def _collect(self, client: anthropic.Anthropic,
                 planned: list[_Planned]) -> dict[str, list[Sample]]:
        """Stream every batch's results into samples per pool key, in sample order."""
        where = {custom_id(i, p.key, j): (p, j) for i, p in enumerate(planned)
                 for j in range(p.wanted)}
        found: dict[str, Sample] = {}
        for batch in self.state["batches"]:
            results = self._call(functools.partial(client.messages.batches.results, batch["id"]),
                                 "download the batch results")
            for line in results:
                if line.custom_id not in where:
                    log.warning("batch %s: result for unknown request %s ignored", batch["id"],
                                line.custom_id)
                    continue
                planned_task, _ = where[line.custom_id]
                found[line.custom_id] = self._sample(line.result, planned_task.dialect)
        samples: dict[str, list[Sample]] = {p.key: [] for p in planned}
        for cid, (p, j) in where.items():
            sample = found.get(cid) or Sample(j, error="missing: the batch returned no result")
            sample.index = j
            samples[p.key].append(sample)
        return samples

    def _sample(self, result: Any, dialect: str) -> Sample:
        """One batch result as a sample (index set by the caller); errors keep their reason."""
        if result.type == "succeeded":
            msg = result.message
            text = "".join(getattr(b, "text", "") for b in msg.content)
            got = extract_sql(text, dialect)
            return Sample(0, text, got.sql, got.error, msg.usage.input_tokens,
                          msg.usage.output_tokens, 1, price_factor=BATCH_PRICE_FACTOR)
        if result.type == "errored":
            err = result.error.error
            message = str(getattr(err, "message", "") or "")
            if "temperature" in message and getattr(err, "type", "") == "invalid_request_error":
                self.state["send_temperature"] = False  # the next batch leaves it out
            return Sample(0, error=f"errored: {getattr(err, 'type', 'error')}: {message}",
                          attempts=1)
        return Sample(0, error=f"{result.type}: the request was not processed", attempts=1)

    def _settle(self, tasks: list[Task], outcomes: dict[str, TaskOutcome],
                planned: list[_Planned], results: dict[str, list[Sample]]) -> dict[str,
                                                                                  TaskOutcome]:
        """Merge each task's fresh samples into its cached pool, cache it, mark the state done."""
        by_key: dict[str, TaskOutcome] = {}
        for p in planned:
            base = self.sampler.empty_pool(*_question_and_db(tasks, p.task_id))
            fresh = GeneratedPool(base.question, base.dialect, base.model, base.temperature,
                                  base.n, base.prompt_version, base.db_fingerprint,
                                  results.get(p.key, []),
                                  temperature_applied=bool(self.state.get("send_temperature",
                                                                          True)),
                                  requests=p.wanted)
            cached = self.cache.get(p.key)
            if cached is not None and len(cached.replies) > p.base_replies:
                pool = cached  # collected before a crash: already merged
            else:
                pool = cached.merge(fresh) if cached is not None else fresh
            problems: dict[str, int] = {}
            for s in fresh.samples:
                if s.text is None and s.error:
                    kind = s.error.split(":", 1)[0]
                    problems[kind] = problems.get(kind, 0) + 1
            pool.stopped = None if not problems else ", ".join(
                f"{n} batch requests {k}" for k, n in sorted(problems.items()))
            pool.complete = pool.stopped is None and pool.missing() == 0
            self.cache.put(pool)
            first = next((s.error for s in fresh.samples if s.error and s.text is None), None)
            by_key[p.key] = TaskOutcome(pool, problems=problems, first_error=first,
                                        fresh_usd=fresh.cost_usd,
                                        fresh_tokens=(fresh.input_tokens, fresh.output_tokens))
        if self.state:
            self.state["collected"] = True
            self._save()
        for task in tasks:
            if task.id not in outcomes:  # a repeated question shares the first task's pool
                key = self.sampler.empty_pool(task.question, task.database).key
                shared = by_key[key]
                planner = next(p.task_id for p in planned if p.key == key)
                outcomes[task.id] = shared if planner == task.id else TaskOutcome(shared.pool,
                                                                                   cached=True)
        return outcomes

    # -- helpers ----------------------------------------------------------------------------

    def _call(self, fn: Callable[[], Any], what: str, fatal: bool = True) -> Any:
        """An API call with the sampler's retries for transient failures; refusals are fatal."""
        c = self.sampler.config
        for attempt in range(1, c.max_retries + 2):
            try:
                return fn()
            except anthropic.APIStatusError as exc:
                if exc.status_code not in _RETRY_STATUS:
                    raise GenerationError(f"cannot {what}: "
                                          + self.sampler._fatal_message(exc)) from None
                error = f"HTTP {exc.status_code}"
            except (anthropic.APITimeoutError, anthropic.APIConnectionError) as exc:
                error = type(exc).__name__
            if attempt > c.max_retries:
                if not fatal:
                    log.warning("cannot %s (%s); trying again at the next poll", what, error)
                    return None
                raise GenerationError(
                    f"cannot {what}: {error} after {attempt} attempts. The state is kept in "
                    f"{self.state_path}; run the same command again later to resume.")
            self._sleep(min(c.backoff_max_s, c.backoff_s * 2 ** (attempt - 1)))
        return None

    def _say(self, text: str) -> None:
        """A status line on the progress stream (which tqdm shares)."""
        if self.stream is not None:
            tqdm.write(text, file=self.stream)


def _known_batches(state: dict[str, Any]) -> list[str]:
    """Ids of the batches a state records plus the newest 100 that earlier states passed on
    (one page of the list ``_adopt`` searches): batches ``_adopt`` must never take."""
    return list(state.get("known_batches", []))[-100:] + [
        b["id"] for b in state.get("batches", []) if b.get("id")]


def _question_and_db(tasks: list[Task], task_id: str) -> tuple[str, Any]:
    """(question, database spec) of the task with this id."""
    task = next(t for t in tasks if t.id == task_id)
    return task.question, task.database


__all__ = ["BATCH_PRICE_FACTOR", "BatchRun", "TaskOutcome", "custom_id", "default_state_path"]
