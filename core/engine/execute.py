"""Safe, read-only execution of candidate SQL through SQLAlchemy.

Three layers keep a candidate from changing or hanging a database:

1. an allow-list parsed with sqlglot (exactly one SELECT / WITH / set operation, nothing else);
2. a read-only connection (SQLite opened with ``mode=ro`` and ``PRAGMA query_only``;
   PostgreSQL in a ``READ ONLY`` transaction);
3. a time limit that really stops the statement (SQLite's progress handler interrupts the VM;
   PostgreSQL's ``statement_timeout``) and a row cap with a ``truncated`` flag.

A failing candidate becomes data (:class:`ExecutionResult` with ``error``), never an exception
that stops the pool.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
import os
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import sqlglot
from sqlglot import exp

from core.engine.errors import DatabaseError, QueryTimeoutError, UnsafeQueryError
from core.engine.taskbank import DatabaseSpec

DEFAULT_TIMEOUT_S = 2.0
DEFAULT_ROW_CAP = 1000
_ALLOWED_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)
_FORBIDDEN = (
    exp.Insert, exp.Update, exp.Delete, exp.Drop, exp.Create, exp.Alter, exp.Command,
    exp.Pragma, exp.Attach, exp.Detach, exp.Merge, exp.TruncateTable, exp.Set, exp.Transaction,
    exp.Commit, exp.Rollback, exp.Into,
)


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


def check_query(sql: str, dialect: str = "sqlite") -> exp.Expression:
    """Parse ``sql`` and return its AST if it is exactly one read-only query.

    Raises :class:`UnsafeQueryError` naming what was refused (PRAGMA, ATTACH, DDL, DML, several
    statements, or unparsable text).
    """
    if not sql or not sql.strip():
        raise UnsafeQueryError("empty SQL: write one SELECT statement")
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except sqlglot.errors.ParseError as exc:
        first = exc.errors[0]["description"] if exc.errors else str(exc)
        raise UnsafeQueryError(f"SQL does not parse ({first})") from None
    except sqlglot.errors.TokenError as exc:
        raise UnsafeQueryError(f"SQL does not parse ({exc})") from None
    if len(statements) != 1:
        raise UnsafeQueryError(
            f"{len(statements)} statements found; exactly one SELECT / WITH query is allowed")
    tree = statements[0]
    root = tree
    if not isinstance(root, _ALLOWED_ROOTS):
        raise UnsafeQueryError(
            f"only SELECT, WITH and set operations may run; this is {type(root).__name__.upper()}")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN):
            raise UnsafeQueryError(
                f"{type(node).__name__.upper()} is not allowed inside a candidate query")
    return tree


_DUMP_LOCK = threading.Lock()


def cache_dir(kind: str) -> Path:
    """A folder for derived files (``$PLEASQLARIFY_CACHE_DIR`` or the system temp), created."""
    base = os.environ.get("PLEASQLARIFY_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), "pleasqlarify-cache")
    path = Path(base) / kind
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
    """A read-only handle on a task's database with a per-query time limit and row cap."""

    def __init__(self, spec: DatabaseSpec, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 row_cap: int = DEFAULT_ROW_CAP):
        self.spec = spec
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.dialect = spec.dialect
        self._engine = self._make_engine(spec)
        self._schema: dict[str, list[str]] | None = None

    @staticmethod
    def _make_engine(spec: DatabaseSpec) -> sa.Engine:
        if spec.kind in ("dump", "sqlite"):
            path = materialise_dump(spec.value) if spec.kind == "dump" else Path(spec.value)
            if not path.is_file():
                raise DatabaseError(f"SQLite database '{path}' does not exist")
            uri = f"file:{path}?mode=ro"

            def creator() -> sqlite3.Connection:
                con = sqlite3.connect(uri, uri=True, check_same_thread=False)
                con.execute("PRAGMA query_only = ON")
                return con

            return sa.create_engine("sqlite://", creator=creator, poolclass=sa.pool.NullPool)
        try:
            return sa.create_engine(spec.value, pool_pre_ping=True, pool_size=2)
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

    def execute(self, sql: str) -> ExecutionResult:
        """Run one candidate safely; every failure comes back as ``ExecutionResult.error``."""
        start = time.perf_counter()
        try:
            check_query(sql, self.dialect)
            columns, rows, truncated = self._run(sql)
        except (UnsafeQueryError, QueryTimeoutError, DatabaseError) as exc:
            return ExecutionResult(error=str(exc), elapsed_ms=_ms(start))
        except (sa.exc.SQLAlchemyError, sqlite3.Error) as exc:
            return ExecutionResult(error=_short_error(exc), elapsed_ms=_ms(start))
        return ExecutionResult(columns, rows, None, truncated, _ms(start))

    def _run(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        with self._engine.connect() as conn:
            if self.dialect == "sqlite":
                return self._run_sqlite(conn, sql)
            return self._run_server(conn, sql)

    def _run_sqlite(self, conn: sa.Connection, sql: str):
        raw = conn.connection.driver_connection
        deadline = time.monotonic() + self.timeout_s
        timed_out = False

        def handler() -> int:
            nonlocal timed_out
            if time.monotonic() > deadline:
                timed_out = True
                return 1
            return 0

        raw.set_progress_handler(handler, 2000)
        try:
            cur = raw.cursor()
            try:
                cur.execute(sql)
                rows = cur.fetchmany(self.row_cap + 1)
            except sqlite3.OperationalError as exc:
                if timed_out:
                    raise QueryTimeoutError(
                        f"stopped after the {self.timeout_s:g} s time limit") from None
                raise DatabaseError(_short_error(exc)) from None
            columns = [d[0] for d in cur.description or []]
            cur.close()
        finally:
            raw.set_progress_handler(None, 0)
        truncated = len(rows) > self.row_cap
        return columns, [_norm_row(r) for r in rows[: self.row_cap]], truncated

    def _run_server(self, conn: sa.Connection, sql: str):
        ms = max(1, int(self.timeout_s * 1000))
        try:
            with conn.begin():
                if self.dialect == "postgres":
                    conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {ms}")
                result = conn.exec_driver_sql(sql.replace("%", "%%"))
                columns = list(result.keys())
                rows = result.fetchmany(self.row_cap + 1)
                conn.rollback()
        except sa.exc.OperationalError as exc:
            if "statement timeout" in str(exc).lower() or "canceling statement" in str(exc):
                raise QueryTimeoutError(
                    f"stopped after the {self.timeout_s:g} s time limit") from None
            raise
        truncated = len(rows) > self.row_cap
        return columns, [_norm_row(tuple(r)) for r in rows[: self.row_cap]], truncated


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _short_error(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
    return text[:300]


def _norm_value(v: Any) -> Any:
    """Make a cell JSON-friendly and comparable across drivers."""
    if isinstance(v, decimal.Decimal):
        v = float(v)  # then integral values become int, as for SQLite's REAL 2.0
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).hex()
    if isinstance(v, _dt.date | _dt.datetime | _dt.time):
        return v.isoformat()
    return v


def _norm_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(_norm_value(v) for v in row)


def open_database(spec: DatabaseSpec, **kwargs: Any) -> TaskDatabase:
    """Open a task database read-only (``dump`` materialised once to a cached SQLite file)."""
    return TaskDatabase(spec, **kwargs)


def execute_candidates(db: TaskDatabase, sqls: list[str]) -> list[ExecutionResult]:
    """Execute every candidate; failures are recorded per candidate and never stop the pool."""
    return [db.execute(sql) for sql in sqls]
