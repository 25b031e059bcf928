"""Safe, read-only execution of candidate SQL.

Four layers keep a candidate from changing, hanging or exhausting anything:

1. allow-lists parsed with sqlglot (:mod:`core.engine.sqlguard`): exactly one SELECT / WITH /
   set operation, and only pure functions;
2. a read-only connection: SQLite files, dumps and ``sqlite:///`` URLs open as percent-encoded
   ``mode=ro`` URIs with ``query_only`` and an authorizer; PostgreSQL runs each query in a
   ``READ ONLY`` transaction through a cursor; every other dialect is refused;
3. a worker process (:mod:`core.engine.sqlworker`, :mod:`core.engine.workerpool`) with size,
   heap, result and address-space limits, and a time limit enforced from outside the query
   (interrupt / cancel at the limit, SIGKILL of the worker at the limit + 0.3 s);
4. a row cap with a ``truncated`` flag.

A failing candidate becomes data (:class:`ExecutionResult` with ``error``), never an exception
that stops the pool.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import sqlglot

from core import settings
from core.engine.errors import DatabaseError, UnsafeQueryError
from core.engine.sqlguard import check_query
from core.engine.sqlworker import _norm as _worker_norm
from core.engine.taskbank import DatabaseSpec
from core.engine.workerpool import KILL_GRACE_S, POOL, WorkerTimeout

__all__ = ["DEFAULT_ROW_CAP", "DEFAULT_TIMEOUT_S", "ExecutionResult", "TaskDatabase",
           "check_query", "execute_candidates", "materialise_dump", "open_database"]

DEFAULT_TIMEOUT_S = 2.0
DEFAULT_ROW_CAP = 1000
DEFAULT_RESULT_BYTES = 16_000_000  # cell text a result may carry back


@dataclass
class ExecutionResult:
    """The output table of one candidate, or its error: what functional similarity compares."""

    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    error: str | None = None
    truncated: bool = False
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the output; (0, 0) for an error."""
        return (len(self.rows), len(self.columns)) if self.ok else (0, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"columns": self.columns, "rows": [list(r) for r in self.rows],
                "error": self.error, "truncated": self.truncated, "elapsed_ms": self.elapsed_ms}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ExecutionResult:
        return cls(list(d["columns"]), [tuple(r) for r in d["rows"]], d.get("error"),
                   bool(d.get("truncated")), float(d.get("elapsed_ms", 0.0)))


_DUMP_LOCK = threading.Lock()


def cache_dir(kind: str) -> Path:
    """A folder for derived files (``$PLEASQLARIFY_CACHE_DIR`` or ``cache/`` in the data folder)."""
    path = settings.cache_root() / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def materialise_dump(dump: str) -> Path:
    """Write an SQL dump to a cached SQLite file (once per content hash) and return its path."""
    digest = hashlib.sha256(dump.encode()).hexdigest()[:20]
    target = cache_dir("databases") / f"{digest}.sqlite"
    with _DUMP_LOCK:
        if target.is_file():
            return target
        tmp = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.unlink(missing_ok=True)
        con = sqlite3.connect(tmp)
        try:
            con.executescript(dump)
            con.commit()
        except sqlite3.Error as exc:
            con.close()
            tmp.unlink(missing_ok=True)
            raise DatabaseError(f"the database dump does not load in SQLite: {exc}") from None
        con.close()
        os.replace(tmp, target)
    return target


class TaskDatabase:
    """A read-only handle on a task's database with a hard per-query time limit and row cap.

    Candidates run in a worker process (:mod:`core.engine.workerpool`) under size, memory and
    time limits; this process keeps a read-only SQLAlchemy engine for schema reflection only.
    SQLite files, dumps and ``sqlite:///`` URLs open with ``mode=ro``; PostgreSQL URLs run in
    ``READ ONLY`` transactions with a statement timeout; other dialects are refused.
    """

    def __init__(self, spec: DatabaseSpec, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 row_cap: int = DEFAULT_ROW_CAP, max_result_bytes: int = DEFAULT_RESULT_BYTES):
        self.spec = spec
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.max_result_bytes = max_result_bytes
        self.dialect = spec.dialect
        if self.dialect == "sqlite":
            self.path: Path | None = sqlite_path(spec)
            self._target = sqlite_uri(self.path)
        elif self.dialect == "postgres":
            self.path = None
            self._target = _libpq_url(spec.value)
        else:
            raise DatabaseError(
                f"task databases of dialect '{self.dialect}' are refused: candidates can only "
                "run read-only with a hard time limit on SQLite (a file, a dump or a sqlite:/// "
                "URL) and PostgreSQL (postgresql+psycopg:// URL)")
        self._engine = self._make_engine()
        self._schema: dict[str, list[str]] | None = None
        POOL.prestart()

    def _make_engine(self) -> sa.Engine:
        if self.dialect == "sqlite":
            uri = self._target

            def creator() -> sqlite3.Connection:
                con = sqlite3.connect(uri, uri=True, check_same_thread=False)
                con.execute("PRAGMA query_only = ON")
                return con

            return sa.create_engine("sqlite://", creator=creator, poolclass=sa.pool.NullPool)
        url = sa.engine.make_url(self.spec.value)
        if "+" not in url.drivername:
            url = url.set(drivername="postgresql+psycopg")
        ms = max(1, int(self.timeout_s * 1000))
        try:
            return sa.create_engine(url, pool_pre_ping=True, pool_size=2, connect_args={
                "options": f"-c default_transaction_read_only=on -c statement_timeout={ms}"})
        except (sa.exc.ArgumentError, ImportError) as exc:
            raise DatabaseError(f"cannot use database URL: {exc}") from None

    def close(self) -> None:
        self._engine.dispose()

    def schema(self) -> dict[str, list[str]]:
        """Table name -> column names (lower-cased), read once; used to resolve columns."""
        if self._schema is None:
            try:
                insp = sa.inspect(self._engine)
                self._schema = {
                    t.lower(): [c["name"].lower() for c in insp.get_columns(t)]
                    for t in insp.get_table_names()
                }
            except sa.exc.SQLAlchemyError as exc:
                raise DatabaseError(f"cannot read the database schema: {exc}") from None
        return self._schema

    def ddl(self) -> str:
        """The CREATE TABLE statements of the database (for prompts and documentation).

        SQLite keeps each table's own DDL text; reading it avoids reflection, which fails on
        dumps whose foreign keys name tables that do not exist (seen in AMBROSIA).
        """
        if self.dialect == "sqlite":
            with self._engine.connect() as conn:
                rows = conn.exec_driver_sql(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
            return "\n".join(r[0].strip() + ";" for r in rows)
        meta = sa.MetaData()
        meta.reflect(self._engine)
        from sqlalchemy.schema import CreateTable
        return "\n".join(str(CreateTable(t).compile(self._engine)).strip() + ";"
                         for t in meta.sorted_tables)

    def sample_rows(self, table: str, n: int = 3) -> ExecutionResult:
        """A few rows of ``table`` (through the same safe path as candidates)."""
        quoted = sqlglot.exp.to_identifier(table).sql(self.dialect)
        return self.execute(f"SELECT * FROM {quoted} LIMIT {int(n)}")

    def _request(self) -> dict[str, Any]:
        return {"kind": self.dialect, "target": self._target, "timeout_s": float(self.timeout_s),
                "row_cap": int(self.row_cap), "max_bytes": int(self.max_result_bytes)}

    def _result(self, reply: dict[str, Any] | Exception, start: float) -> ExecutionResult:
        if isinstance(reply, WorkerTimeout):
            return ExecutionResult(
                error=f"stopped after the {self.timeout_s:g} s time limit (the SQL worker did "
                      "not answer in time and was stopped)", elapsed_ms=_ms(start))
        if isinstance(reply, Exception):
            return ExecutionResult(error=str(reply), elapsed_ms=_ms(start))
        ms = float(reply.get("ms", _ms(start)))  # measured in the worker, per query
        if "error" in reply:
            return ExecutionResult(error=str(reply["error"]), elapsed_ms=ms)
        return ExecutionResult(list(reply["columns"]), [tuple(r) for r in reply["rows"]], None,
                               bool(reply["truncated"]), ms)

    def execute(self, sql: str) -> ExecutionResult:
        """Run one candidate safely; every failure comes back as ``ExecutionResult.error``."""
        return self.execute_many([sql])[0]

    def execute_many(self, sqls: list[str], trees: dict[str, Any] | None = None
                     ) -> list[ExecutionResult]:
        """Run candidates in order through one streamed worker request (one round trip); each
        keeps its own time limit, and failures come back per candidate. ``trees`` receives the
        allow-list's parse of each query it let through (repair reads features from it)."""
        results: list[ExecutionResult | None] = [None] * len(sqls)
        todo: list[int] = []
        for i, sql in enumerate(sqls):
            start = time.perf_counter()
            try:
                tree = check_query(sql, self.dialect)
                if trees is not None:
                    trees[sql] = tree
                todo.append(i)
            except UnsafeQueryError as exc:
                results[i] = ExecutionResult(error=str(exc), elapsed_ms=_ms(start))
            except Exception as exc:
                results[i] = ExecutionResult(
                    error=f"the statement check failed on this candidate: "
                          f"{type(exc).__name__}: {str(exc)[:200]}", elapsed_ms=_ms(start))
        if todo:
            start = time.perf_counter()
            try:
                replies = POOL.run_many(self._request(), [sqls[i] for i in todo],
                                        self.timeout_s + KILL_GRACE_S)
            except DatabaseError as exc:
                replies = [exc] * len(todo)
            for i, reply in zip(todo, replies, strict=True):
                results[i] = self._result(reply, start)
        return [r for r in results if r is not None]


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _norm_value(v: Any) -> Any:
    """Make a cell JSON-friendly and comparable across drivers (the worker's normalisation)."""
    return _worker_norm(v)


def _norm_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(_norm_value(v) for v in row)


def sqlite_path(spec: DatabaseSpec) -> Path:
    """The SQLite file of a dump (materialised), a file spec or a ``sqlite:///`` URL."""
    if spec.kind == "dump":
        return materialise_dump(spec.value)
    if spec.kind == "sqlite":
        path = Path(spec.value)
    else:
        try:
            database = sa.engine.make_url(spec.value).database
        except sa.exc.ArgumentError as exc:
            raise DatabaseError(f"cannot use database URL: {exc}") from None
        if not database or database == ":memory:":
            raise DatabaseError(
                f"the SQLite URL '{spec.value}' names no file (an in-memory database has no "
                "tables); use sqlite:////absolute/path.sqlite")
        path = Path(database)
    if not path.is_file():
        raise DatabaseError(f"SQLite database '{path}' does not exist")
    return path.resolve()


def sqlite_uri(path: Path) -> str:
    """A read-only SQLite URI for ``path`` with every special character (#, ?, %, space)
    percent-encoded, so the file opened is exactly the one named."""
    return f"file:{urllib.parse.quote(str(path))}?mode=ro"


def _libpq_url(url: str) -> str:
    """The SQLAlchemy URL as a libpq URL for psycopg (driver suffix dropped)."""
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError as exc:
        raise DatabaseError(f"cannot use database URL: {exc}") from None
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)

def open_database(spec: DatabaseSpec, **kwargs: Any) -> TaskDatabase:
    """Open a task database read-only (``dump`` materialised once to a cached SQLite file)."""
    return TaskDatabase(spec, **kwargs)


def execute_candidates(db: TaskDatabase, sqls: list[str]) -> list[ExecutionResult]:
    """Execute every candidate; failures are recorded per candidate and never stop the pool."""
    return db.execute_many(sqls)
