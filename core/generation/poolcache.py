"""Generated pools as records, their cost estimate, and the cache that makes them shared.

A :class:`GeneratedPool` keeps every raw sample (reply text, extracted SQL or the reason there
was none, tokens) and derives the deduplicated candidates from them, so nothing the model said
is lost. Pools are cached under :func:`pool_key` — (question, database fingerprint, model,
temperature, N, prompt version) — in the study database when one is given (every participant
of a study then sees the same pool) and otherwise in JSON files under ``logs/pool-cache/``.
A cached complete pool is returned without any request; a partial one (budget stop, failures)
is topped up with only the missing samples.

Costs are *estimates*: USD per million input/output tokens by model family (``PRICES``, list
prices as published when this was written). Check the provider's price page before budgeting.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core import settings
from core.engine.taskbank import Candidate
from core.generation.extract import dedupe

# (model-name prefix, USD per 1M input tokens, USD per 1M output tokens); first match wins.
PRICES: tuple[tuple[str, float, float], ...] = (
    ("claude-3-haiku", 0.25, 1.25),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-haiku", 1.0, 5.0),
    ("claude-sonnet-5", 2.0, 10.0),
    ("claude-3", 3.0, 15.0),  # 3.x Sonnet; 3 Opus is listed below but matched first here
    ("claude-sonnet", 3.0, 15.0),
    ("claude-opus-4-0", 15.0, 75.0),
    ("claude-opus-4-1", 15.0, 75.0),
    ("claude-opus-4-2025", 15.0, 75.0),
    ("claude-opus", 5.0, 25.0),
    ("offline", 0.0, 0.0),
)
FALLBACK_PRICE = (3.0, 15.0)


def price_for(model: str) -> tuple[float, float, bool]:
    """(USD/1M input, USD/1M output, known?) for a model; unknown models get a Sonnet price."""
    name = model.lower()
    if name.startswith("claude-3-opus"):
        return 15.0, 75.0, True
    for prefix, price_in, price_out in PRICES:
        if name.startswith(prefix):
            return price_in, price_out, True
    return FALLBACK_PRICE[0], FALLBACK_PRICE[1], False


def estimate_cost(model: str, input_tokens: int, output_tokens: int) -> float:
    """Estimated USD for the given usage (an estimate from ``PRICES``, not a bill)."""
    price_in, price_out, _ = price_for(model)
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000


@dataclass
class Sample:
    """One request's outcome: the reply text and its SQL, or why there is none."""

    index: int
    text: str | None = None  # None: the request itself failed (``error`` says why)
    sql: str | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 0
    origin: str = "model"
    price_factor: float = 1.0  # share of the list price billed (0.5 through the Batches API)

    @property
    def ok(self) -> bool:
        return self.sql is not None

    @property
    def invalid(self) -> bool:
        """A reply arrived but held no usable SQL."""
        return self.text is not None and self.sql is None


@dataclass
class GeneratedPool:
    """Every sample for one (question, database, settings), and the candidates they give."""

    question: str
    dialect: str
    model: str
    temperature: float
    n: int
    prompt_version: str
    db_fingerprint: str
    samples: list[Sample] = field(default_factory=list)
    complete: bool = False
    stopped: str | None = None
    temperature_applied: bool = True
    requests: int = 0

    @property
    def key(self) -> str:
        return pool_key(self.question, self.db_fingerprint, self.model, self.temperature,
                        self.n, self.prompt_version)

    @property
    def replies(self) -> list[Sample]:
        """Samples whose request succeeded (valid or not), in index order."""
        return sorted((s for s in self.samples if s.text is not None), key=lambda s: s.index)

    @property
    def candidates(self) -> list[Candidate]:
        """Distinct valid queries with their sample counts (the prior weights)."""
        valid = sorted((s for s in self.samples if s.ok), key=lambda s: s.index)
        return dedupe([s.sql for s in valid if s.sql], self.dialect)

    @property
    def labels(self) -> dict[str, str]:
        """Origin of each candidate's SQL (``model`` or ``variant:<rule>``)."""
        return {s.sql: s.origin for s in sorted(self.samples, key=lambda s: -s.index) if s.sql}

    @property
    def n_invalid(self) -> int:
        return sum(s.invalid for s in self.samples)

    @property
    def n_failed(self) -> int:
        return sum(s.text is None for s in self.samples)

    @property
    def invalid_share(self) -> float:
        replies = len(self.replies)
        return self.n_invalid / replies if replies else 0.0

    @property
    def input_tokens(self) -> int:
        return sum(s.input_tokens for s in self.samples)

    @property
    def output_tokens(self) -> int:
        return sum(s.output_tokens for s in self.samples)

    @property
    def cost_usd(self) -> float:
        return sum(estimate_cost(self.model, s.input_tokens, s.output_tokens) * s.price_factor
                   for s in self.samples)

    def missing(self) -> int:
        """How many more successful replies a complete pool needs."""
        return max(0, self.n - len(self.replies))

    def merge(self, more: GeneratedPool) -> GeneratedPool:
        """This pool's replies plus ``more``'s samples (a top-up), renumbered after ours."""
        kept = self.replies
        start = max((s.index for s in kept), default=-1) + 1
        added = [Sample(**{**asdict(s), "index": start + i}) for i, s in enumerate(
            sorted(more.samples, key=lambda s: s.index))]
        return GeneratedPool(
            self.question, self.dialect, self.model, self.temperature, self.n,
            self.prompt_version, self.db_fingerprint, kept + added, more.complete, more.stopped,
            self.temperature_applied and more.temperature_applied,
            self.requests + more.requests)

    def summary(self) -> str:
        """One line: distinct candidates, invalid share, tokens and estimated cost."""
        state = "complete" if self.complete else f"partial ({self.stopped or 'stopped'})"
        return (f"{len(self.candidates)} distinct from {len(self.replies)}/{self.n} samples, "
                f"{self.invalid_share:.0%} invalid, {self.input_tokens}+{self.output_tokens} "
                f"tokens, ~${self.cost_usd:.4f}, {state}")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["candidates"] = [{"sql": c.sql, "count": c.count} for c in self.candidates]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GeneratedPool:
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["samples"] = [Sample(**s) for s in data.get("samples", [])]
        return cls(**fields)


def pool_key(question: str, db_fingerprint: str, model: str, temperature: float, n: int,
             prompt_version: str) -> str:
    """The cache key of a pool: a hash of everything that changes what would be sampled."""
    raw = json.dumps([" ".join(question.split()), db_fingerprint, model, round(temperature, 4),
                      int(n), prompt_version])
    return "pool-" + hashlib.sha256(raw.encode()).hexdigest()[:32]


class PoolCache(Protocol):
    """Where pools are kept: ``get`` returns None when nothing is cached under the key."""

    def get(self, key: str) -> GeneratedPool | None: ...

    def put(self, pool: GeneratedPool) -> None: ...


class FilePoolCache:
    """One JSON file per pool under a folder (default ``logs/pool-cache/``)."""

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder else settings.pool_cache_dir()

    def __repr__(self) -> str:
        return f"FilePoolCache({str(self.folder)!r})"

    def get(self, key: str) -> GeneratedPool | None:
        path = self.folder / f"{key}.json"
        if not path.is_file():
            return None
        try:
            return GeneratedPool.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError, KeyError):
            return None  # a damaged cache file is resampled, not trusted

    def put(self, pool: GeneratedPool) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{pool.key}.json"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(pool.to_dict()), encoding="utf-8")
        os.replace(tmp, path)


class StorePoolCache:
    """Pools in the study database's ``candidate_pools`` table (shared by all sessions)."""

    def __init__(self, store: Any):
        self.store = store

    def __repr__(self) -> str:
        return f"StorePoolCache({getattr(self.store, 'url', '?')})"

    def get(self, key: str) -> GeneratedPool | None:
        payload = self.store.get_pool(key)
        if not isinstance(payload, dict):
            return None
        try:
            return GeneratedPool.from_dict(payload)
        except (TypeError, KeyError):
            return None

    def put(self, pool: GeneratedPool) -> None:
        self.store.put_pool(pool.key, pool.to_dict())


def open_pool_cache(store: Any | None = None,
                    folder: str | Path | None = None) -> PoolCache:
    """A cache in ``store`` (any object with ``get_pool``/``put_pool``), else the JSON file cache.

    core/ never opens a study database itself: a caller that has one (study/, the study CLI)
    passes it in, so the engine stays independent of the study package.
    """
    if store is None:
        return FilePoolCache(folder or settings.pool_cache_dir())
    if isinstance(store, str):
        raise TypeError("open_pool_cache takes a store object, not a URL: open the store first "
                        "(study.store.open_store(url)) and pass it in")
    return StorePoolCache(store)
