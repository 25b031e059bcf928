"""A prepared candidate pool: everything about a task's candidates that never changes.

``prepare_pool`` runs the fixed part of the pipeline once per (task, pool) — execution,
features, functional classes and their distances, the 2-D layout — and the result serialises
to JSON, so the app and the repair sessions only read it. The per-turn part (clustering,
mining, ranking) lives in :mod:`core.engine.session`.

The pipeline, in order (one module each)::

    PIPELINE = (execute_candidates, extract_features, similarity_matrix, compute_layout)
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sqlglot

from core.engine.execute import ExecutionResult, TaskDatabase, execute_candidates, open_database
from core.engine.features import (
    Feature,
    extract_features,
    numeric_columns,
    schema_constraints,
)
from core.engine.layout import compute_layout
from core.engine.lru import LRUCache
from core.engine.poolfile import ENGINE_VERSION  # noqa: F401 - re-exported (core.engine)
from core.engine.similarity import extend_classes, functional_classes, output_key
from core.engine.taskbank import DatabaseSpec, Task

FORMAT_VERSION = 1

# Per-pool bounds of the repair caches (shared by every session of a pool for the server's
# life). A round executes at most 200 proposals and recomposition repeats itself across
# sessions, so 2048 entries keep ~10 rounds of distinct queries; 32 MB bounds the outputs
# they hold (one result may carry up to 16 MB of cell text). Clause atoms are small and per
# candidate: 8192 entries cover a 1000-candidate pool and the candidates its repairs added.
REPAIR_CACHE_ENTRIES = 2048
REPAIR_CACHE_BYTES = 32 * 1024 * 1024
ATOM_CACHE_ENTRIES = 8192


def _value_bytes(v: Any) -> int:
    """Estimated Python memory of one output cell (object header plus its text)."""
    if isinstance(v, str):
        return 49 + len(v)
    if isinstance(v, bytes):
        return 33 + len(v)
    return 32


def result_bytes(result: ExecutionResult) -> int:
    """Estimated memory of an output kept in a repair cache: its rows (tuples of cells), column
    names and error text; what :data:`REPAIR_CACHE_BYTES` is counted in."""
    size = 100 + sum(_value_bytes(c) for c in result.columns) + len(result.error or "")
    for row in result.rows:
        size += 56 + 8 * len(row) + sum(_value_bytes(v) for v in row)
    return size


def repair_entry_bytes(entry: Any) -> int:
    """Estimated memory of a repair-cache entry ``[result, output key, features]``."""
    result, key = entry[0], entry[1]
    return result_bytes(result) + 49 + len(key or "")


def new_repair_cache() -> LRUCache:
    """An empty per-pool repair cache: SQL -> [result, output key, features or None]."""
    return LRUCache(REPAIR_CACHE_ENTRIES, REPAIR_CACHE_BYTES, repair_entry_bytes)


@dataclass(frozen=True)
class StoredRound:
    """A repair round computed when the pool was prepared (the first state's "None of
    these", :func:`core.engine.repair.first_round`), stored with the pool so that the first
    press on it, in any process, applies it without computing it."""

    version: int  # core.engine.repair.REPAIR_VERSION it was computed with (else ignored)
    outputs: tuple[str, ...]  # the rejection it follows: the output keys ruled out
    max_new: int
    sqls: tuple[str, ...]  # the queries it added, in order
    weights: tuple[float, ...]
    new_outputs: int
    results: tuple[ExecutionResult, ...]  # their outputs and features, as the round read them
    features: tuple[tuple[Feature, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        # the queries share most features: each is stored once, the queries name them by place
        vocab = list(dict.fromkeys(f for fs in self.features for f in fs))
        place = {f: j for j, f in enumerate(vocab)}
        return {"version": self.version, "outputs": list(self.outputs),
                "max_new": self.max_new, "sqls": list(self.sqls), "weights": list(self.weights),
                "new_outputs": self.new_outputs, "results": [r.to_dict() for r in self.results],
                "vocabulary": [[f.keyword, f.value] for f in vocab],
                "features": [[place[f] for f in fs] for fs in self.features]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StoredRound:
        vocab = [Feature(k, v) for k, v in d["vocabulary"]]
        return cls(int(d["version"]), tuple(d["outputs"]), int(d["max_new"]), tuple(d["sqls"]),
                   tuple(float(w) for w in d["weights"]), int(d["new_outputs"]),
                   tuple(ExecutionResult.from_dict(r) for r in d["results"]),
                   tuple(tuple(vocab[j] for j in fs) for fs in d["features"]))


def new_atom_cache() -> LRUCache:
    """An empty per-pool cache of clause atoms: SQL -> (atoms, nested SELECTs' atoms)."""
    return LRUCache(ATOM_CACHE_ENTRIES, 1 << 62)


@dataclass
class PreparedPool:
    """Candidates with outputs, features, functional classes, distances and positions."""

    task_id: str
    question: str
    dialect: str
    sqls: list[str]
    counts: np.ndarray  # int weights (prior)
    results: list[ExecutionResult]
    vocabulary: list[Feature]
    x: np.ndarray  # candidates × features, bool; invalid candidates have no features
    class_keys: list[str]  # distinct output keys, in order of first appearance
    class_index: np.ndarray  # candidate -> class position
    class_similarity: np.ndarray  # classes × classes
    positions: np.ndarray | None = None  # candidates × 2, unit square
    gold_sqls: list[str] = field(default_factory=list)
    gold_results: list[ExecutionResult] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)  # e.g. "llm", "variant", "shipped"
    # what feature extraction read, kept so golds and repaired candidates get the same features
    schema: dict[str, list[str]] = field(default_factory=dict)
    not_null: dict[str, list[str]] = field(default_factory=dict)
    unique: dict[str, list[str]] = field(default_factory=dict)
    # where repair executes new candidates; set by prepare_pool / load_prepared, never saved
    database: DatabaseSpec | None = field(default=None, compare=False, repr=False)
    # SQL -> [result, output key, features] of queries repair tried on this pool (shared by its
    # sessions and their extended copies: a query's output never changes); never saved; an
    # LRU bounded by REPAIR_CACHE_ENTRIES and REPAIR_CACHE_BYTES (resampling adds new SQL)
    repair_cache: MutableMapping[str, Any] = field(default_factory=new_repair_cache,
                                                   compare=False, repr=False)
    # SQL -> (clause atoms, nested SELECTs' atoms) of candidates repair decomposed (shared
    # like repair_cache: a repair round then parses only the candidates it has not seen)
    atom_cache: MutableMapping[str, Any] = field(default_factory=new_atom_cache, compare=False,
                                                 repr=False)
    # questions about the answer (core.engine.answers.AnswerContext) when the vocabulary holds
    # them (core.engine.answers.with_answers); never saved
    answers: Any = field(default=None, compare=False, repr=False)
    # columns of a numeric type (core.engine.features.numeric_columns), read like not_null
    numeric: dict[str, list[str]] = field(default_factory=dict)
    # the first state's repair round, computed when the pool was prepared (saved with it;
    # a copy with answer questions shares it, a copy extended by repair has none)
    first_round: StoredRound | None = field(default=None, compare=False, repr=False)

    @property
    def n(self) -> int:
        return len(self.sqls)

    @property
    def valid(self) -> np.ndarray:
        return np.array([r.ok for r in self.results], dtype=bool)

    @property
    def class_distance(self) -> np.ndarray:
        return 1.0 - self.class_similarity

    def feature_keys(self, i: int) -> list[str]:
        """Keys of candidate ``i``'s features, in display order."""
        return [self.vocabulary[j].key for j in np.flatnonzero(self.x[i])]

    def gold_class(self, g: int) -> int | None:
        """Class position realised by gold ``g``, or None if no candidate realises it."""
        key = output_key(self.gold_results[g])
        if key == "error" or key not in self.class_keys:
            return None
        return self.class_keys.index(key)

    def features_of(self, sql: str, tree: Any = None) -> list[Feature]:
        """Features of any query (a gold, a repaired candidate) read exactly as the pool's;
        ``tree`` is its parse in this pool's dialect when the caller has one (no second parse)."""
        return extract_features(sql, self.dialect, self.schema, not_null=self.not_null,
                                unique=self.unique, numeric=self.numeric, tree=tree)

    def answer_features(self, result: ExecutionResult) -> list[Feature]:
        """Answer features of an output within this pool's vocabulary (none when the pool has
        no answer questions): what repair's new candidates must agree with besides clauses."""
        return [] if self.answers is None else self.answers.features(result)

    def similarity(self, i: int, j: int) -> float:
        return float(self.class_similarity[self.class_index[i], self.class_index[j]])

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION, "task_id": self.task_id, "question": self.question,
            "dialect": self.dialect, "sqls": self.sqls, "counts": self.counts.tolist(),
            "results": [r.to_dict() for r in self.results],
            "vocabulary": [[f.keyword, f.value] for f in self.vocabulary],
            "features": [np.flatnonzero(row).tolist() for row in self.x],
            "class_keys": self.class_keys, "class_index": self.class_index.tolist(),
            "class_similarity": np.round(self.class_similarity, 6).tolist(),
            "positions": None if self.positions is None else np.round(self.positions, 6).tolist(),
            "gold_sqls": self.gold_sqls, "gold_results": [r.to_dict() for r in self.gold_results],
            "origins": self.origins, "schema": self.schema, "not_null": self.not_null,
            "unique": self.unique, "numeric": self.numeric,
            **({} if self.first_round is None else {"first_round": self.first_round.to_dict()}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PreparedPool:
        if d.get("format") != FORMAT_VERSION:
            raise ValueError(f"prepared pool format {d.get('format')} is not {FORMAT_VERSION}; "
                             "re-run `python -m core.prepare` to rebuild it")
        vocab = [Feature(k, v) for k, v in d["vocabulary"]]
        x = np.zeros((len(d["sqls"]), len(vocab)), dtype=bool)
        for i, cols in enumerate(d["features"]):
            x[i, cols] = True
        return cls(
            d["task_id"], d["question"], d["dialect"], list(d["sqls"]),
            np.array(d["counts"], dtype=float), [ExecutionResult.from_dict(r) for r in d["results"]],
            vocab, x, list(d["class_keys"]), np.array(d["class_index"], dtype=int),
            np.array(d["class_similarity"], dtype=float).reshape(len(d["class_keys"]), -1),
            None if d.get("positions") is None else np.array(d["positions"], dtype=float),
            list(d.get("gold_sqls", [])), [ExecutionResult.from_dict(r) for r in d.get("gold_results", [])],
            list(d.get("origins", [])), dict(d.get("schema", {})), dict(d.get("not_null", {})),
            dict(d.get("unique", {})), numeric=dict(d.get("numeric", {})),
            first_round=None if d.get("first_round") is None else
            StoredRound.from_dict(d["first_round"]),
        )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict()), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> PreparedPool:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def _feature_lists(sqls: list[str], results: list[ExecutionResult], dialect: str,
                   schema: dict[str, list[str]], constraints: tuple[dict, ...],
                   conjuncts: bool) -> list[list[Feature]]:
    per: list[list[Feature]] = []
    for sql, res in zip(sqls, results, strict=True):
        if not res.ok:
            per.append([])
            continue
        try:
            per.append(extract_features(sql, dialect, schema, conjuncts=conjuncts,
                                        not_null=constraints[0], unique=constraints[1],
                                        numeric=constraints[2] if len(constraints) > 2 else None))
        except sqlglot.errors.SqlglotError:
            per.append([])
    return per


def _matrix(per: list[list[Feature]]) -> tuple[list[Feature], np.ndarray]:
    vocab = sorted({f for fs in per for f in fs}, key=Feature.sort_key)
    col = {f: j for j, f in enumerate(vocab)}
    x = np.zeros((len(per), len(vocab)), dtype=bool)
    for i, fs in enumerate(per):
        x[i, [col[f] for f in fs]] = True
    return vocab, x


def candidate_features(sqls: list[str], results: list[ExecutionResult], dialect: str,
                       schema: dict[str, list[str]], *, conjuncts: bool = False,
                       not_null: dict[str, list[str]] | None = None,
                       unique: dict[str, list[str]] | None = None,
                       numeric: dict[str, list[str]] | None = None
                       ) -> tuple[list[Feature], np.ndarray]:
    """Vocabulary and feature matrix; invalid candidates (errors) carry no features."""
    return _matrix(_feature_lists(sqls, results, dialect, schema,
                                  (not_null or {}, unique or {}, numeric or {}), conjuncts))


def extend_pool(pool: PreparedPool, sqls: list[str], results: list[ExecutionResult],
                weights: list[float], origin: str,
                features: list[list[Feature]] | None = None) -> PreparedPool:
    """A copy of ``pool`` with candidates appended (repair); earlier indices and classes stay.

    ``features`` (per new candidate) saves reading them again when the caller has them.
    New candidates of a known class sit beside its members; a new class is placed at the
    similarity-weighted centre of the classes most like it, so the layout stays stable.
    """
    per = [[pool.vocabulary[j] for j in np.flatnonzero(row)] for row in pool.x]
    added = features if features is not None else _feature_lists(
        sqls, results, pool.dialect, pool.schema, (pool.not_null, pool.unique, pool.numeric),
        False)
    if pool.answers is not None:  # the answer questions hold for new candidates too
        added = [sorted(set(fs) | set(pool.answer_features(r)), key=Feature.sort_key)
                 if fs else [] for fs, r in zip(added, results, strict=True)]
    per += added
    vocab, x = _matrix(per)
    all_results = pool.results + list(results)
    classes, class_index, class_sim = extend_classes(pool.class_keys, pool.class_index,
                                                     pool.class_similarity, pool.results,
                                                     list(results))
    new = PreparedPool(pool.task_id, pool.question, pool.dialect, pool.sqls + list(sqls),
                       np.concatenate([pool.counts, np.array(weights, dtype=float)]),
                       all_results, vocab, x, classes, class_index, class_sim, None,
                       pool.gold_sqls, pool.gold_results,
                       (pool.origins or ["shipped"] * pool.n) + [origin] * len(sqls),
                       pool.schema, pool.not_null, pool.unique, pool.database,
                       pool.repair_cache, pool.atom_cache, pool.answers, numeric=pool.numeric)
    if pool.positions is not None:
        new.positions = _place(pool.positions, class_index, class_sim, pool.n)
    return new


def _place(old: np.ndarray, class_index: np.ndarray, class_sim: np.ndarray,
           n_old: int) -> np.ndarray:
    points = [p for p in old]
    for i in range(n_old, len(class_index)):
        c = int(class_index[i])
        mates = [j for j in range(i) if class_index[j] == c]
        if mates:
            base = np.mean([points[j] for j in mates], axis=0)
        else:
            placed = sorted({int(class_index[j]) for j in range(i)},
                            key=lambda k: -class_sim[c, k])[:3]
            w = np.array([max(class_sim[c, k], 1e-3) for k in placed])
            centres = [np.mean([points[j] for j in range(i) if class_index[j] == k], axis=0)
                       for k in placed]
            base = (w[:, None] * np.array(centres)).sum(axis=0) / w.sum() if placed else \
                np.array([0.5, 0.5])
        k = i - n_old + 1  # a deterministic golden-angle offset keeps glyphs apart
        angle = k * np.pi * (3 - np.sqrt(5))
        points.append(base + 0.04 * np.array([np.cos(angle), np.sin(angle)]))
    return np.clip(np.array(points), 0.01, 0.99)


def column_constraints(db: TaskDatabase) -> tuple[dict[str, list[str]], ...]:
    """(never-NULL columns, unique columns, numeric columns) per table, read from the
    database's DDL."""
    try:
        ddl = db.ddl()
    except Exception:  # without DDL only the constraint-based rewrites are lost
        return {}, {}, {}
    return (*schema_constraints(ddl, db.dialect), numeric_columns(ddl, db.dialect))


def prepare_pool(task: Task, *, db: TaskDatabase | None = None, layout: bool = True,
                 conjuncts: bool = False, random_state: int = 0,
                 origins: list[str] | None = None) -> PreparedPool:
    """Execute, featurise, classify and lay out ``task``'s candidates (and run its golds)."""
    own = db is None
    db = db or open_database(task.database)
    try:
        sqls = [c.sql for c in task.candidates]
        counts = np.array([c.count for c in task.candidates], dtype=float)
        results = execute_candidates(db, sqls)
        schema = db.schema()
        not_null, unique, numeric = column_constraints(db)
        gold_results = execute_candidates(db, list(task.gold))
    finally:
        if own:
            db.close()
    vocab, x = candidate_features(sqls, results, task.dialect, schema, conjuncts=conjuncts,
                                  not_null=not_null, unique=unique, numeric=numeric)
    classes, class_index, class_sim = functional_classes(results)
    pool = PreparedPool(task.id, task.question, task.dialect, sqls, counts, results, vocab, x,
                        classes, class_index, class_sim, None, list(task.gold), gold_results,
                        origins or [str(task.extra.get("origin", "shipped"))] * len(sqls),
                        schema, not_null, unique, task.database, numeric=numeric)
    if layout:
        pool.positions = compute_layout(class_index, 1.0 - class_sim, counts, random_state)
    return pool
