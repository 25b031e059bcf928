"""The SQL worker process: runs candidate SQL under hard limits, one request at a time.

Started by :mod:`core.engine.workerpool` as ``python sqlworker.py HEADROOM_MB`` and spoken to
over stdin/stdout with length-prefixed ``marshal`` frames; it imports only the standard library
(and psycopg for PostgreSQL), never ``core``. Limits, innermost first:

- SQLite: ``setlimit`` (value length, SQL length, program size, no ATTACH), a process-wide heap
  limit (``PRAGMA hard_heap_limit``, harmless here because this process runs nothing else), an
  authorizer refusing writes, PRAGMA, ATTACH and file functions, ``query_only`` on a ``mode=ro``
  file;
- PostgreSQL: a ``READ ONLY`` transaction with ``statement_timeout`` and a server-side cursor;
- a watchdog thread that interrupts (SQLite) or cancels (PostgreSQL) at the deadline, from
  outside the query; SQLite's progress handler checks the same deadline between VM steps;
- a result budget (bytes of cell text) and an address-space limit (``RLIMIT_AS``) on the process.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import decimal
import hashlib
import json
import marshal
import os
import resource
import sqlite3
import struct
import sys
import threading
import time
from typing import Any

MAX_VALUE_BYTES = 10_000_000  # SQLITE_LIMIT_LENGTH: longest string or blob a query may build
HEAP_LIMIT_BYTES = 64 * 1024 * 1024  # PRAGMA hard_heap_limit for this process
BLOB_HEX_MAX = 512  # longer blobs are rendered as "<blob N bytes sha256 …>", not doubled as hex
_HEADER = struct.Struct(">I")
_SQLITE_LIMITS = [
    (sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES),
    (sqlite3.SQLITE_LIMIT_SQL_LENGTH, 1_000_000),
    (sqlite3.SQLITE_LIMIT_VDBE_OP, 250_000),
    (sqlite3.SQLITE_LIMIT_ATTACHED, 0),
    (sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 10_000),
    (sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 100),
    (sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH, 1),
    (sqlite3.SQLITE_LIMIT_WORKER_THREADS, 0),
]
_AUTH_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                 sqlite3.SQLITE_RECURSIVE}
_AUTH_DENIED_FUNCTIONS = {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit",
                          "sqlite_dbpage"}


class LimitError(Exception):
    """A query hit a size, memory or time limit; ``kind`` is 'timeout', 'size' or 'memory'."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Watchdog(threading.Thread):
    """Calls the armed function once its deadline passes, unless disarmed first.

    Arming wakes the thread only when it sleeps without a deadline or past the new one, so a
    stream of short queries costs no thread switch per query.
    """

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._until: float | None = None  # when the thread wakes next (None: when notified)
        self._fn: Any = None
        self.fired = False

    def arm(self, seconds: float, fn: Any) -> None:
        with self._cond:
            self._deadline, self._fn, self.fired = time.monotonic() + seconds, fn, False
            if self._until is None or self._until > self._deadline:
                self._cond.notify()

    def disarm(self) -> bool:
        """Stop watching; True if the function fired (the query was interrupted)."""
        with self._cond:
            self._deadline = None
            return self.fired

    def run(self) -> None:
        with self._cond:
            while True:
                if self._deadline is None:
                    self._until = None
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._until = self._deadline
                    self._cond.wait(left)
                    continue
                self._deadline, self.fired = None, True
                with contextlib.suppress(Exception):  # a failed cancel leaves the outer kill
                    self._fn()


def _norm(v: Any) -> Any:
    """A cell as a marshal-able, driver-independent value (blobs never doubled in size)."""
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, decimal.Decimal):
        v = float(v)
    if isinstance(v, float):
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if isinstance(v, bytes | bytearray | memoryview):
        b = bytes(v)
        if len(b) <= BLOB_HEX_MAX:
            return b.hex()
        return f"<blob {len(b)} bytes sha256 {hashlib.sha256(b).hexdigest()[:16]}>"
    if isinstance(v, _dt.date | _dt.datetime | _dt.time):
        return v.isoformat()
    if isinstance(v, list | tuple):
        return [_norm(x) for x in v]
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, default=str)
    return str(v)


def _cell_bytes(v: Any) -> int:
    """Bytes a raw cell holds (blobs and text by length, everything else 16)."""
    return len(v) if isinstance(v, str | bytes | bytearray | memoryview) else 16


def _collect(fetch: Any, row_cap: int, max_bytes: int) -> tuple[list[tuple], bool]:
    """Up to ``row_cap + 1`` normalised rows; raw cell bytes are counted against ``max_bytes``.

    Batches start at one row and double only while rows stay small, so a result of huge rows
    is stopped after the first one that crosses the budget.
    """
    rows: list[tuple] = []
    size, batch = 0, 1
    while len(rows) <= row_cap:
        chunk = fetch(min(batch, row_cap + 1 - len(rows)))
        if not chunk:
            break
        for raw in chunk:
            size += sum(_cell_bytes(v) for v in raw)
            if size > max_bytes:
                raise LimitError("size", f"stopped: the result is larger than the "
                                         f"{max_bytes / 1e6:g} MB result limit")
            rows.append(tuple(_norm(v) for v in raw))
        batch = min(batch * 2, 256) if size < 4096 * len(rows) else 1
    return rows[:row_cap], len(rows) > row_cap


def _authorizer(action: int, arg1: Any, arg2: Any, _db: Any, _trigger: Any) -> int:
    if action not in _AUTH_ALLOWED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and str(arg2).lower() in _AUTH_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


class SqliteBackend:
    """A read-only SQLite connection with size limits, an authorizer and the heap limit."""

    def __init__(self, uri: str):
        con = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        con.execute("PRAGMA query_only = ON")
        con.execute(f"PRAGMA hard_heap_limit = {HEAP_LIMIT_BYTES}")
        con.execute(f"PRAGMA soft_heap_limit = {HEAP_LIMIT_BYTES // 2}")
        for limit, value in _SQLITE_LIMITS:
            con.setlimit(limit, value)
        con.set_authorizer(_authorizer)
        self.con = con

    def run(self, sql: str, timeout_s: float, row_cap: int, max_bytes: int, dog: Watchdog):
        deadline = time.monotonic() + timeout_s
        self.con.set_progress_handler(lambda: int(time.monotonic() > deadline), 5000)
        dog.arm(timeout_s, self.con.interrupt)
        cur = None
        try:
            cur = self.con.execute(sql)
            rows, truncated = _collect(cur.fetchmany, row_cap, max_bytes)
            columns = [d[0] for d in cur.description or []]
        except sqlite3.Error as exc:
            fired = dog.disarm()
            text = str(exc)
            if fired or time.monotonic() > deadline or text == "interrupted":
                raise LimitError("timeout", _timeout_text(timeout_s)) from None
            if "too big" in text:
                raise LimitError("size", f"stopped: a value grew past the "
                                         f"{MAX_VALUE_BYTES // 1_000_000} MB size limit "
                                         f"({text})") from None
            if "out of memory" in text:
                raise LimitError("memory", f"stopped: the query needed more than the "
                                           f"{HEAP_LIMIT_BYTES >> 20} MB memory limit") from None
            raise
        finally:
            dog.disarm()
            if cur is not None:
                cur.close()
            self.con.set_progress_handler(None, 0)
        return columns, rows, truncated

    def close(self) -> None:
        self.con.close()


class PostgresBackend:
    """A psycopg connection; each query runs in a READ ONLY transaction through a cursor."""

    def __init__(self, conninfo: str):
        import psycopg

        self.psycopg = psycopg
        self.con = psycopg.connect(conninfo, autocommit=True, connect_timeout=10,
                                   options="-c default_transaction_read_only=on")
        self.n = 0

    def run(self, sql: str, timeout_s: float, row_cap: int, max_bytes: int, dog: Watchdog):
        ms = max(1, int(timeout_s * 1000))
        self.n += 1
        con = self.con
        con.execute("BEGIN TRANSACTION READ ONLY")
        dog.arm(timeout_s, lambda: con.cancel_safe(timeout=0.5))
        try:
            con.execute(f"SET LOCAL statement_timeout = {ms}")
            con.execute(f"SET LOCAL lock_timeout = {ms}")
            con.execute(f"SET LOCAL idle_in_transaction_session_timeout = {ms + 5000}")
            with con.cursor(name=f"candidate_{self.n}") as cur:
                cur.execute(sql)
                rows, truncated = _collect(cur.fetchmany, row_cap, max_bytes)
                columns = [d.name for d in cur.description or []]
        except self.psycopg.errors.QueryCanceled:
            dog.disarm()
            raise LimitError("timeout", _timeout_text(timeout_s)) from None
        except self.psycopg.errors.ProgramLimitExceeded as exc:
            raise LimitError("size", f"stopped: {_first_line(exc)}") from None
        except self.psycopg.Error as exc:
            text = str(exc)  # libpq cannot allocate a huge row under RLIMIT_AS
            if "out of memory" in text or "results from command 'FETCH" in text:
                con.close()
                raise LimitError("memory", "stopped: a result row needed more than the SQL "
                                           "worker's memory limit") from None
            raise
        finally:
            dog.disarm()
            if not con.closed:
                try:
                    con.execute("ROLLBACK")
                except self.psycopg.Error:
                    con.close()
        return columns, rows, truncated

    def close(self) -> None:
        self.con.close()


def _timeout_text(timeout_s: float) -> str:
    return f"stopped after the {timeout_s:g} s time limit"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def _read(stream: Any) -> Any:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(head)
    return marshal.loads(stream.read(n))


def _write(stream: Any, obj: Any) -> None:
    body = marshal.dumps(obj)
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def _limit_address_space(headroom_mb: int) -> None:
    """RLIMIT_AS = the current address space plus ``headroom_mb`` (Linux; elsewhere the heap,
    result and time limits still hold)."""
    try:
        with open("/proc/self/statm") as fh:
            current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return
    limit = current + headroom_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _answer(req: dict[str, Any], sql: str, backends: dict[str, Any], dog: Watchdog,
            headroom_mb: int) -> dict[str, Any]:
    """Run one query of ``req`` and return its reply (errors as data)."""
    key = req["kind"] + ":" + req["target"]
    try:
        if key not in backends:
            cls = SqliteBackend if req["kind"] == "sqlite" else PostgresBackend
            backends[key] = cls(req["target"])
        columns, rows, truncated = backends[key].run(
            sql, req["timeout_s"], req["row_cap"], req["max_bytes"], dog)
        return {"columns": columns, "rows": rows, "truncated": truncated}
    except LimitError as exc:
        reply = {"error": str(exc), "kind": exc.kind}
    except MemoryError:
        backends.clear()
        return {"error": f"stopped: the query needed more than the {headroom_mb} MB memory "
                         "limit of the SQL worker", "kind": "memory"}
    except Exception as exc:  # every failure is data for the caller
        reply = {"error": _first_line(exc), "kind": "db"}
    backend = backends.get(key)
    if isinstance(backend, PostgresBackend) and backend.con.closed:
        backends.pop(key, None)  # reconnect on the next query
    return reply


def serve(headroom_mb: int) -> None:
    """Answer requests from stdin until it closes; each backend is opened once and kept.

    A request carries ``sql`` (one reply) or ``sqls`` (one reply per query, streamed, so a
    pool of candidates costs one round trip and the parent still times each query).
    """
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write into the reply channel
    dog = Watchdog()
    dog.start()
    if headroom_mb > 0:
        _limit_address_space(headroom_mb)
    backends: dict[str, Any] = {}
    _write(out, {"ready": os.getpid()})
    while (req := _read(inp)) is not None:
        for sql in req.get("sqls") or [req.get("sql", "")]:
            start = time.perf_counter()
            reply = _answer(req, sql, backends, dog, headroom_mb)
            reply["ms"] = round((time.perf_counter() - start) * 1000, 3)
            _write(out, reply)


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):  # the app went away
        serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
