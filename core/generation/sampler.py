"""Sample N SQL candidates for one question from an Anthropic model (§5.1 step 1 of the paper).

The prompt shows the database schema (DDL), a few rows per table and the question, and asks for
one SQL query. Requests run with bounded concurrency; 429, 5xx, timeouts and connection errors
are retried here with exponential backoff that honours ``retry-after`` (the SDK's own retries
are off, ``max_retries=0``, so every attempt is counted). A :class:`Budget` (samples, tokens,
USD) stops launching new requests cleanly. Whatever was gathered is never thrown away: errors
carry the partial pool (``SamplingError.pool``) and :func:`generate_pool` caches it.

Sampling parameters: the SDK 2.x removed ``temperature`` from ``messages.create`` and newer
models reject it ("`temperature` is deprecated for this model"); it is sent through
``extra_body`` and, if the model refuses it, dropped for the rest of the run
(``GeneratedPool.temperature_applied`` records that).
"""

from __future__ import annotations

import concurrent.futures as cf
import email.utils
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.engine.errors import DatabaseError, GenerationError
from core.engine.execute import TaskDatabase, open_database
from core.engine.taskbank import DatabaseSpec
from core.generation.extract import extract_sql
from core.generation.keys import NO_KEY_MESSAGE, has_api_key, resolve_api_key
from core.generation.poolcache import GeneratedPool, PoolCache, Sample, estimate_cost
from core.generation.variants import read_ddl

if TYPE_CHECKING:  # imported where a request is made: ~1 s (pydantic models) on a cold start,
    import anthropic  # ~10 s under load, which every page importing DEFAULT_MODEL paid

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-4-6"
PROMPT_VERSION = "v1"
REPAIR_PROMPT_VERSION = "repair-v1"  # resampling after a rejection (core.engine.repair)
PROMPTS: dict[str, tuple[str, str]] = {
    "v1": (
        "You are an expert data analyst who writes SQL for a {dialect} database. Answer the "
        "user's question with exactly one SQL query. If the question can be read in several "
        "ways, choose one reasonable reading. Reply with the query in a ```sql code block.",
        "Database schema:\n```sql\n{ddl}\n```\n\nSample rows (up to {rows} per table):\n"
        "{samples}\n\nQuestion: {question}",
    ),
    # the question is followed by the user's decisions so far (see repair_question)
    "repair-v1": (
        "You are an expert data analyst who writes SQL for a {dialect} database. The user "
        "asked a question that can be read in several ways and has already told us which "
        "clauses their query must and must not contain and which outputs are not what they "
        "want. Write exactly one SQL query for a reading that respects every one of these "
        "decisions and whose output differs from every rejected output. Reply with the query "
        "in a ```sql code block.",
        "Database schema:\n```sql\n{ddl}\n```\n\nSample rows (up to {rows} per table):\n"
        "{samples}\n\nQuestion: {question}",
    ),
}
_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
Progress = Callable[[int, int, dict[str, Any]], None]


class SamplingError(GenerationError):
    """Sampling stopped with a message for the user; ``pool`` keeps what was gathered.

    ``kind`` says what to fix: input, database, model, key, request, invalid or transient.
    """

    def __init__(self, message: str, pool: GeneratedPool | None = None, kind: str = "input"):
        super().__init__(message)
        self.pool = pool
        self.kind = kind


@dataclass(frozen=True)
class Budget:
    """Stop launching requests past any of these totals (None: no limit)."""

    max_samples: int | None = None
    max_tokens: int | None = None
    max_usd: float | None = None

    def reason(self, launched: int, tokens: int, usd: float, projected: float = 0.0,
               projected_tokens: float = 0.0) -> str | None:
        """Why no further request may start, or None while the budget allows one."""
        if self.max_samples is not None and launched >= self.max_samples:
            return f"budget: {self.max_samples} samples reached"
        if self.max_tokens is not None and tokens + projected_tokens > self.max_tokens:
            return f"budget: {self.max_tokens} tokens would be exceeded ({tokens} used)"
        if self.max_usd is not None and usd + projected > self.max_usd:
            return f"budget: ${self.max_usd:g} would be exceeded (~${usd:.4f} used)"
        return None


@dataclass(frozen=True)
class SamplerConfig:
    """What to sample and how hard to try; no secrets live here."""

    model: str = DEFAULT_MODEL
    n: int = 50
    temperature: float = 0.7
    max_tokens: int = 1024
    concurrency: int = 4
    prompt_version: str = PROMPT_VERSION
    rows_per_table: int = 3
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    budget: Budget = field(default_factory=Budget)


def repair_question(question: str, decisions: str) -> str:
    """The question followed by the decisions so far: what the repair prompt asks (and what its
    pool is cached under, so the same decisions never cost a second request)."""
    return f"{question.strip()}\n\n{decisions.strip()}"


def build_prompt(question: str, db: TaskDatabase, prompt_version: str = PROMPT_VERSION,
                 rows_per_table: int = 3) -> tuple[str, str]:
    """(system, user) prompt: schema DDL, a few rows per table, the question."""
    if prompt_version not in PROMPTS:
        raise GenerationError(f"unknown prompt version '{prompt_version}'; use one of "
                              f"{', '.join(sorted(PROMPTS))}")
    system, user = PROMPTS[prompt_version]
    blocks = []
    for table in sorted(db.schema()):
        result = db.sample_rows(table, rows_per_table)
        if not result.ok:
            blocks.append(f"{table}: (rows unavailable: {result.error})")
            continue
        lines = [f"{table}({', '.join(result.columns)}):"]
        lines += ["  " + repr(tuple(row)) for row in result.rows] or ["  (no rows)"]
        blocks.append("\n".join(lines))
    dialect = {"sqlite": "SQLite", "postgres": "PostgreSQL", "mysql": "MySQL"}.get(
        db.dialect, db.dialect)
    return (system.format(dialect=dialect),
            user.format(ddl=read_ddl(db), rows=rows_per_table, samples="\n".join(blocks),
                        question=question.strip()))


def _retry_after(exc: anthropic.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``)."""
    headers = exc.response.headers
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


@dataclass
class _Run:
    """Mutable state of one sampling run, shared by its worker threads."""

    dialect: str = "sqlite"
    send_temperature: bool = True
    fatal: str | None = None
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class AnthropicSampler:
    """Samples SQL candidates with the official SDK; the key is held privately, never shown."""

    def __init__(self, config: SamplerConfig | None = None, *, api_key: str | None = None,
                 base_url: str | None = None, sleep: Callable[[float], None] = time.sleep,
                 random_state: int | None = None):
        self.config = config or SamplerConfig()
        self.base_url = base_url
        self._api_key = resolve_api_key(api_key)
        self._sleep = sleep
        self._rng = random.Random(random_state)

    def with_config(self, **changes: Any) -> AnthropicSampler:
        """A sampler with the same key and endpoint and some settings changed (e.g. the
        repair prompt: ``with_config(prompt_version=REPAIR_PROMPT_VERSION, n=8)``)."""
        other = AnthropicSampler.__new__(AnthropicSampler)
        other.config = replace(self.config, **changes)
        other.base_url = self.base_url
        other._api_key = self._api_key
        other._sleep = self._sleep
        other._rng = self._rng
        return other

    def __repr__(self) -> str:
        return (f"AnthropicSampler(model={self.config.model!r}, n={self.config.n}, "
                f"base_url={self.base_url!r}, api_key=<hidden>)")

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, "<hidden>") if self._api_key else text

    def _client(self) -> anthropic.Anthropic:
        import anthropic

        return anthropic.Anthropic(api_key=self._api_key, base_url=self.base_url,
                                   max_retries=0, timeout=self.config.timeout_s)

    def empty_pool(self, question: str, spec: DatabaseSpec) -> GeneratedPool:
        """A pool record with this sampler's settings and no samples yet."""
        c = self.config
        return GeneratedPool(question, spec.dialect, c.model, c.temperature, c.n,
                             c.prompt_version, spec.fingerprint())

    def sample(self, question: str, database: DatabaseSpec | TaskDatabase, *,
               n: int | None = None, on_progress: Progress | None = None) -> GeneratedPool:
        """Draw ``n`` (default ``config.n``) samples; raises SamplingError with the pool."""
        if not question or not question.strip():
            raise SamplingError("The question is empty: write the question the candidate "
                                "queries should answer, then generate again.")
        db = database if isinstance(database, TaskDatabase) else _open(database)
        pool = self.empty_pool(question, db.spec)
        system, user = self.prompt(question, db)
        total = self.config.n if n is None else n
        run = _Run(dialect=db.dialect)
        self._run(pool, run, total, system, user, on_progress)
        pool.requests = run.requests
        pool.temperature_applied = run.send_temperature
        return self._finish(pool, run, total)

    def prompt(self, question: str, db: TaskDatabase) -> tuple[str, str]:
        """(system, user) prompt for ``question`` under this sampler's prompt version."""
        try:
            return build_prompt(question, db, self.config.prompt_version,
                                self.config.rows_per_table)
        except DatabaseError as exc:
            raise SamplingError(f"Cannot read the task database to build the prompt: {exc}. "
                                "Check the task's database entry (file, dump or URL) and that "
                                "its server is running.", kind="database") from None

    def params(self, system: str, user: str, send_temperature: bool = True) -> dict[str, Any]:
        """The Messages API parameters of one sample (also one request of a batch)."""
        params: dict[str, Any] = {
            "model": self.config.model, "max_tokens": self.config.max_tokens, "system": system,
            "messages": [{"role": "user", "content": user}]}
        if send_temperature:
            params["temperature"] = self.config.temperature
        return params

    def _run(self, pool: GeneratedPool, run: _Run, total: int, system: str, user: str,
             on_progress: Progress | None) -> None:
        c = self.config
        client = self._client()
        launched = 0
        pending: set[cf.Future[Sample]] = set()
        with cf.ThreadPoolExecutor(max_workers=max(1, c.concurrency)) as ex:
            while True:
                while (len(pending) < max(1, c.concurrency) and launched < total
                       and run.fatal is None and pool.stopped is None):
                    reason = self._budget_reason(pool, launched, len(pending))
                    if reason:
                        pool.stopped = reason
                        log.info("sampling stopped: %s", reason)
                        break
                    pending.add(ex.submit(self._one, client, run, launched, system, user))
                    launched += 1
                if not pending:
                    break
                done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for fut in sorted(done, key=lambda f: f.result().index):
                    pool.samples.append(fut.result())
                    if on_progress is not None:
                        on_progress(len(pool.samples), total, self._info(pool, run))
        client.close()
        pool.samples.sort(key=lambda s: s.index)

    def _budget_reason(self, pool: GeneratedPool, launched: int, in_flight: int) -> str | None:
        """Budget check before launching one more request (projects in-flight usage)."""
        done = [s for s in pool.samples if s.text is not None]
        tokens = pool.input_tokens + pool.output_tokens
        avg_tokens = tokens / len(done) if done else 0.0
        avg_usd = pool.cost_usd / len(done) if done else 0.0
        return self.config.budget.reason(launched, tokens, pool.cost_usd,
                                         avg_usd * (in_flight + 1), avg_tokens * (in_flight + 1))

    def _info(self, pool: GeneratedPool, run: _Run) -> dict[str, Any]:
        return {"valid": sum(s.ok for s in pool.samples), "invalid": pool.n_invalid,
                "failed": pool.n_failed, "distinct": len(pool.candidates),
                "input_tokens": pool.input_tokens, "output_tokens": pool.output_tokens,
                "cost_usd": pool.cost_usd, "requests": run.requests,
                "last_error": next((s.error for s in reversed(pool.samples) if s.error), None)}

    def _request(self, client: anthropic.Anthropic, run: _Run, system: str,
                 user: str) -> Any:
        params = self.params(system, user, run.send_temperature)
        extra = {"temperature": params.pop("temperature")} if run.send_temperature else None
        with run.lock:
            run.requests += 1
        return client.messages.create(**params, extra_body=extra)

    def _one(self, client: anthropic.Anthropic, run: _Run, index: int, system: str,
             user: str) -> Sample:
        """One sample with retries; failures come back as a Sample with ``error``."""
        import anthropic

        c = self.config
        attempt = 0
        while True:
            attempt += 1
            if run.fatal is not None:
                return Sample(index, error="not sent: " + run.fatal, attempts=attempt - 1)
            try:
                msg = self._request(client, run, system, user)
            except anthropic.APIStatusError as exc:
                if exc.status_code == 400 and "temperature" in str(exc.api_message or ""):
                    if run.send_temperature:
                        log.warning("model %s refuses `temperature`; sampling at its default "
                                    "for the rest of this run", c.model)
                    run.send_temperature = False
                    continue
                if exc.status_code not in _RETRY_STATUS:
                    run.fatal = run.fatal or self._fatal_message(exc)
                    return Sample(index, error=self._scrub(run.fatal), attempts=attempt)
                error, wait = f"HTTP {exc.status_code}", _retry_after(exc)
            except anthropic.APITimeoutError:
                error, wait = f"timed out after {c.timeout_s:g} s", None
            except anthropic.APIConnectionError as exc:
                error, wait = f"cannot connect to the API ({type(exc.__cause__).__name__})", None
            else:
                text = "".join(getattr(b, "text", "") for b in msg.content)
                found = extract_sql(text, run.dialect)
                return Sample(index, text, found.sql, found.error, msg.usage.input_tokens,
                              msg.usage.output_tokens, attempt)
            if attempt > c.max_retries:
                return Sample(index, error=f"{error}; gave up after {attempt} attempts",
                              attempts=attempt)
            backoff = min(c.backoff_max_s, c.backoff_s * 2 ** (attempt - 1))
            delay = min(c.backoff_max_s, max(wait or 0.0, backoff * (0.5 + self._rng.random() / 2)))
            log.info("sample %d: %s; retry %d/%d in %.2f s", index, error, attempt,
                     c.max_retries, delay)
            self._sleep(delay)

    def _fatal_message(self, exc: anthropic.APIStatusError) -> str:
        detail = self._scrub(str(exc.api_message or exc.type or "no detail"))
        model = self.config.model
        if exc.status_code == 404 or (exc.status_code == 400 and "model" in detail.lower()):
            return (f"The model '{model}' is not available (HTTP {exc.status_code}: {detail}). "
                    f"Choose a model your key can use (e.g. {DEFAULT_MODEL}) with --model or "
                    "the model field.")
        if exc.status_code in (401, 403):
            return (f"The Anthropic API refused the key (HTTP {exc.status_code}: {detail}). "
                    "Check ANTHROPIC_API_KEY or the app's secrets.")
        return (f"The Anthropic API refused the request (HTTP {exc.status_code}: {detail}). "
                "Check the model, max_tokens and prompt settings.")

    def _finish(self, pool: GeneratedPool, run: _Run, total: int) -> GeneratedPool:
        replies = pool.replies
        if run.fatal is not None:
            pool.stopped = run.fatal
            kind = ("model" if "not available" in run.fatal else
                    "key" if "refused the key" in run.fatal else "request")
            raise SamplingError(self._scrub(run.fatal) + _kept(pool), pool, kind)
        if replies and not any(s.ok for s in replies):
            first = next(s.error for s in replies if s.error)
            pool.stopped = "all replies invalid"
            raise SamplingError(
                f"None of the {len(replies)} replies held a usable SQL query (first reason: "
                f"{first}). Check that the model answers in SQL for this prompt version "
                f"('{self.config.prompt_version}') and the database's dialect.", pool, "invalid")
        failed = [s for s in pool.samples if s.text is None]
        if failed and pool.stopped is None:
            pool.stopped = f"{len(failed)} requests failed"
            what = "could not be reached" if not replies else "kept failing"
            raise SamplingError(
                f"The Anthropic API {what}: {len(failed)} of {total} samples failed after "
                f"{self.config.max_retries + 1} attempts each (last: {failed[-1].error})."
                + _kept(pool) + " Run again later to sample only the missing ones.", pool,
                "transient")
        pool.complete = pool.stopped is None and len(replies) >= total
        return pool


def _kept(pool: GeneratedPool) -> str:
    n = len(pool.replies)
    return f" The {n} replies gathered so far are kept." if n else ""


def _open(spec: DatabaseSpec) -> TaskDatabase:
    """Open a task database for prompting, or one SamplingError saying what to check."""
    try:
        db = open_database(spec)
        db.schema()
        return db
    except DatabaseError as exc:
        raise SamplingError(f"Cannot open the task database: {exc}. Check the task's "
                            "database entry (file, dump or URL) and that its server is "
                            "running.", kind="database") from None


def generate_pool(sampler: AnthropicSampler, question: str,
                  database: DatabaseSpec | TaskDatabase, cache: PoolCache | None = None, *,
                  on_progress: Progress | None = None) -> GeneratedPool:
    """The cached pool for these settings, sampling only what is missing (then cached).

    A complete cached pool costs no request. A partial one is topped up. When sampling fails,
    the samples gathered so far are cached before the SamplingError propagates.
    """
    spec = database.spec if isinstance(database, TaskDatabase) else database
    base = sampler.empty_pool(question, spec)
    cached = cache.get(base.key) if cache is not None else None
    if cached is not None and cached.complete:
        if on_progress is not None:
            on_progress(len(cached.replies), cached.n, {"cached": True})
        return cached
    missing = cached.missing() if cached is not None else base.n
    try:
        fresh = sampler.sample(question, database, n=missing, on_progress=on_progress)
    except SamplingError as exc:
        if exc.pool is not None and cache is not None and (exc.pool.replies or cached):
            cache.put(cached.merge(exc.pool) if cached else exc.pool)
        raise
    pool = cached.merge(fresh) if cached is not None else fresh
    pool.complete = pool.stopped is None and pool.missing() == 0
    if cache is not None:
        cache.put(pool)
    return pool


__all__ = ["REPAIR_PROMPT_VERSION", "AnthropicSampler", "Budget", "SamplerConfig",
           "NO_KEY_MESSAGE", "SamplingError", "build_prompt", "estimate_cost", "generate_pool", "has_api_key",
           "repair_question", "resolve_api_key"]
