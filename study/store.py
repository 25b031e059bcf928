"""The study store: SQLite under logs/ by default, PostgreSQL by setting one URL.

``open_store()`` returns a :class:`Store`. Every write is committed before the call returns
(no in-memory buffering a crash could lose). On SQLite the database runs in WAL mode with a busy
timeout, and every write transaction starts with ``BEGIN IMMEDIATE`` so read-then-write
sequences (assignment, upserts) cannot interleave. On PostgreSQL, per-study serialisation uses a
transaction-level advisory lock (:meth:`Store.lock_study`).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import make_url

from core import settings
from core.engine.errors import StudioError
from study import schema as S

REPO_ROOT = settings.REPO_ROOT
ENV_URL = settings.DB_URL_ENV
SQLITE_BUSY_TIMEOUT_MS = 30_000


class StoreError(StudioError):
    """The study database cannot be used as it is (wrong schema version, unknown tables)."""


class SchemaVersionError(StoreError):
    """The database was written by another schema version of PleaSQLarify Studio."""


def default_url() -> str:
    """The store URL: ``$PLEASQLARIFY_DB_URL`` if set, else SQLite at ``logs/study.sqlite``."""
    return settings.study_db_url()


def _redact(url: str) -> str:
    """The URL with any password hidden, for error messages."""
    return make_url(url).render_as_string(hide_password=True)


def _sqlite_setup(engine: Engine, synchronous: str) -> None:
    """Install WAL, busy timeout and explicit BEGIN [IMMEDIATE] on a SQLite engine."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # let SQLAlchemy's "begin" event emit BEGIN itself
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute(f"PRAGMA synchronous = {synchronous}")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute("PRAGMA secure_delete = ON")  # deleted rows are overwritten, not just freed
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


class Store:
    """A handle on the study database; thread-safe, one per process (e.g. ``cache_resource``)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.dialect = engine.dialect.name
        self.url = engine.url.render_as_string(hide_password=True)
        self._write_lock = threading.Lock()
        self._scrub_pending = False  # a scrub gave up beside a reader (see scrub)
        self._local = threading.local()
        self._insert_event_stmt = self._build_insert_event()

    # -- transactions -------------------------------------------------------------------------
    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A committed-on-exit write transaction (``BEGIN IMMEDIATE`` on SQLite).

        Inside an open ``write()`` of the same thread, ``write()`` and ``read()`` join that
        transaction, so a multi-step operation (join, advance, answer) commits all or nothing
        and reads its own writes.
        """
        outer = getattr(self._local, "conn", None)
        if outer is not None:
            yield outer
            return
        if self.dialect != "sqlite":
            with self.engine.connect() as conn, conn.begin():
                self._local.conn = conn
                try:
                    yield conn
                finally:
                    self._local.conn = None
            return
        # One writer at a time inside this process: SQLite's busy handler sleeps in steps of
        # up to 100 ms, so threads queue on a lock and only other processes meet the handler.
        with self._write_lock, self.engine.connect() as conn:
            conn = conn.execution_options(sqlite_begin="IMMEDIATE")
            self._local.conn = conn
            try:
                with conn.begin():
                    yield conn
            finally:
                self._local.conn = None
        if self._scrub_pending:  # a withdrawal's scrub met a reader: try again now
            self.scrub(attempts=1)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only snapshot transaction (the open write transaction of this thread, if any)."""
        outer = getattr(self._local, "conn", None)
        if outer is not None:
            yield outer
            return
        with self.engine.connect() as conn, conn.begin():
            yield conn

    def lock_study(self, conn: Connection, study: str) -> None:
        """Serialise read-then-write work on one study inside ``conn``'s transaction.

        SQLite's ``BEGIN IMMEDIATE`` already holds the single writer lock; on PostgreSQL this
        takes a transaction-level advisory lock keyed by the study name.
        """
        if self.dialect == "postgresql":
            key = int.from_bytes(hashlib.sha256(study.encode()).digest()[:8], "big", signed=True)
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})

    def scrub(self, attempts: int = 20) -> bool:
        """After a deletion (a withdrawal): copy the WAL into the main file, whose freed space
        ``secure_delete`` overwrites, and truncate the WAL, so no old copy of a deleted row
        stays in either file. True when the WAL was emptied; retried while another
        connection still reads an older snapshot. Each try gives up at once instead of
        waiting under the write lock (a long read would stall every write of this process),
        and a scrub that gave up is tried again after each later write until it succeeds.
        PostgreSQL keeps dead rows until VACUUM (README, *Withdrawal*); nothing is done here
        for it."""
        if self.dialect != "sqlite":
            return False
        for attempt in range(attempts):
            with self._write_lock, self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA busy_timeout = 0")
                try:
                    busy = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").first()
                except sa_exc.OperationalError:  # another process holds the write lock
                    busy = None
                finally:
                    conn.exec_driver_sql(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            if busy is not None and not busy[0]:
                self._scrub_pending = False
                return True
            if attempt + 1 < attempts:
                time.sleep(0.05 * (attempt + 1))
        self._scrub_pending = True
        return False

    def insert(self, table: Any) -> Any:
        """A dialect-specific INSERT that supports ``on_conflict_do_nothing/do_update``."""
        mod = pg_dialect if self.dialect == "postgresql" else sqlite_dialect
        return mod.insert(table)

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    # -- schema -------------------------------------------------------------------------------
    def ensure_schema(self) -> None:
        """Create a fresh database, or check an existing one's version (never reset it)."""
        with self.write() as conn:
            self.lock_study(conn, "__schema__")
            present = set(inspect(conn).get_table_names())
            ours = present & set(S.TABLE_NAMES)
            if not ours:
                S.metadata.create_all(conn)
                conn.execute(S.schema_meta.insert().values(key="version",
                                                           value=str(S.SCHEMA_VERSION)))
                return
            version = None
            if "schema_meta" in present:
                version = conn.execute(select(S.schema_meta.c.value).where(
                    S.schema_meta.c.key == "version")).scalar()
            if version == "1" and set(S.V1_TABLES) <= ours:
                _upgrade_v1(conn)
                version, ours = str(S.SCHEMA_VERSION), set(S.TABLE_NAMES)
        if version != str(S.SCHEMA_VERSION):
            found = "no schema version" if version is None else f"schema version {version}"
            raise SchemaVersionError(
                f"The study database {self.url} has {found}, but this PleaSQLarify Studio "
                f"expects schema version {S.SCHEMA_VERSION}. It was not changed. Export its "
                f"data with the matching Studio version, or point {ENV_URL} at a new database "
                f"(e.g. sqlite:///logs/study-v{S.SCHEMA_VERSION}.sqlite); it is never reset "
                f"automatically.")
        missing = set(S.TABLE_NAMES) - ours
        if missing:
            raise StoreError(f"The study database {self.url} lacks the tables "
                             f"{sorted(missing)} although its schema version matches; restore "
                             "it from a backup or use a new database.")

    # -- events -------------------------------------------------------------------------------
    def insert_event(self, row: dict[str, Any]) -> bool:
        """Insert one trace row, committed before returning; False if its event_id existed."""
        with self.write() as conn:
            return conn.execute(self._insert_event_stmt, row).first() is not None

    def _build_insert_event(self) -> Any:
        """The prepared INSERT … ON CONFLICT DO NOTHING RETURNING for events (built once)."""
        stmt = self.insert(S.events)
        if self.dialect == "sqlite":  # PostgreSQL fills seq from its identity column
            stmt = stmt.values(seq=select(func.coalesce(func.max(S.events.c.seq), 0) + 1)
                               .scalar_subquery())
        return stmt.on_conflict_do_nothing(index_elements=["event_id"]).returning(
            S.events.c.event_id)

    def events(self, *, participant: str | None = None, session_id: str | None = None,
               study: str | None = None, types: list[str] | None = None) -> list[dict[str, Any]]:
        """Trace rows in insertion order, filtered; ``payload`` stays JSON text."""
        q = select(S.events)
        if participant is not None:
            q = q.where(S.events.c.participant == participant)
        if session_id is not None:
            q = q.where(S.events.c.session_id == session_id)
        if study is not None:
            q = q.where(S.events.c.study == study)
        if types:
            q = q.where(S.events.c.type.in_(types))
        with self.read() as conn:
            return [dict(r._mapping) for r in conn.execute(q.order_by(S.events.c.seq))]

    def count_events(self, *, study: str | None = None) -> int:
        """How many trace rows (of one study) the database holds."""
        q = select(func.count()).select_from(S.events)
        if study is not None:
            q = q.where(S.events.c.study == study)
        with self.read() as conn:
            return int(conn.execute(q).scalar_one())

    def data_version(self, study: str) -> tuple[Any, ...]:
        """A cheap fingerprint of everything the Analysis page reads of ``study``: its events
        (count, latest seq), its participants' rows, their answers (count, latest update) and
        the codes (count, latest id); it changes whenever any of them does (a cache key)."""
        members = select(S.participants.c.participant).where(S.participants.c.study == study)
        p = S.participants.c
        with self.read() as conn:
            ev = conn.execute(select(func.count(), func.max(S.events.c.seq))
                              .where(S.events.c.study == study)).one()
            people = conn.execute(select(S.participants).where(p.study == study)
                                  .order_by(p.number)).all()
            ans = conn.execute(select(func.count(), func.max(S.answers.c.updated))
                               .where(S.answers.c.participant.in_(members))).one()
            codes = conn.execute(select(func.count(), func.max(S.codes.c.id))).one()
        return (tuple(ev), tuple(tuple(r) for r in people), tuple(ans), tuple(codes))

    # -- participants and sessions ------------------------------------------------------------
    def participant(self, participant: str) -> dict[str, Any] | None:
        """The participant's row (JSON columns decoded), or None if unknown."""
        with self.read() as conn:
            row = conn.execute(select(S.participants).where(
                S.participants.c.participant == participant)).first()
        return _decode_participant(dict(row._mapping)) if row else None

    def participants(self, study: str) -> list[dict[str, Any]]:
        """Every participant of a study in join order."""
        with self.read() as conn:
            rows = conn.execute(select(S.participants).where(S.participants.c.study == study)
                                .order_by(S.participants.c.number))
            return [_decode_participant(dict(r._mapping)) for r in rows]

    def touch(self, participant: str, now: int) -> None:
        """Mark the participant active now (an abandoned one becomes active again)."""
        with self.write() as conn:
            conn.execute(S.participants.update().where(
                S.participants.c.participant == participant).values(last_active=now))
            conn.execute(S.participants.update().where(
                (S.participants.c.participant == participant)
                & (S.participants.c.status == "abandoned")).values(status="active"))

    def set_status(self, participant: str, status: str, now: int) -> None:
        """Set status: active | completed | withdrawn | abandoned."""
        if status not in ("active", "completed", "withdrawn", "abandoned"):
            raise ValueError(f"unknown participant status {status!r}; use active, completed, "
                             "withdrawn or abandoned")
        with self.write() as conn:
            conn.execute(S.participants.update().where(
                S.participants.c.participant == participant).values(status=status,
                                                                    last_active=now))

    def set_flagged(self, participant: str, flagged: bool = True, reason: str = "") -> None:
        """Flag (exclude from balancing and analysis, with a reason) or unflag a participant."""
        with self.write() as conn:
            conn.execute(S.participants.update().where(
                S.participants.c.participant == participant).values(
                flagged=flagged, flag_reason=(reason.strip() or None) if flagged else None))

    def start_session(self, participant: str, study: str, now: int,
                      role: str = "participant") -> str:
        """Open a browser session for a participant; returns its new session id."""
        session_id = secrets.token_urlsafe(12)
        with self.write() as conn:
            conn.execute(S.sessions.insert().values(
                session_id=session_id, participant=participant, study=study, role=role,
                started=now, last_seen=now))
        return session_id

    def sessions(self, participant: str) -> list[dict[str, Any]]:
        """The participant's sessions, oldest first."""
        with self.read() as conn:
            rows = conn.execute(select(S.sessions).where(S.sessions.c.participant == participant)
                                .order_by(S.sessions.c.started))
            return [dict(r._mapping) for r in rows]

    # -- answers, progress, pools, completion codes, researcher codes -------------------------
    def put_answer(self, participant: str, item: str, value: Any, now: int,
                   study: str = "") -> None:
        """Upsert one answer (JSON-serialisable value) for a participant's item id."""
        stmt = self.insert(S.answers).values(participant=participant, item=item, study=study,
                                             value=json.dumps(value), updated=now)
        stmt = stmt.on_conflict_do_update(index_elements=["participant", "item"],
                                          set_={"value": stmt.excluded.value,
                                                "updated": stmt.excluded.updated})
        with self.write() as conn:
            conn.execute(stmt)

    def answers(self, participant: str, prefix: str = "") -> dict[str, Any]:
        """The participant's answers (decoded), optionally only items starting with prefix."""
        q = select(S.answers.c.item, S.answers.c.value).where(
            S.answers.c.participant == participant)
        with self.read() as conn:
            rows = conn.execute(q).all()
        return {item: json.loads(v) for item, v in rows if item.startswith(prefix)}

    def set_progress(self, participant: str, step: dict[str, Any], now: int) -> None:
        """Record the participant's current step (a JSON object) so a refresh resumes there."""
        stmt = self.insert(S.progress).values(participant=participant, step=json.dumps(step),
                                              updated=now)
        stmt = stmt.on_conflict_do_update(index_elements=["participant"],
                                          set_={"step": stmt.excluded.step,
                                                "updated": stmt.excluded.updated})
        with self.write() as conn:
            conn.execute(stmt)

    def get_progress(self, participant: str) -> dict[str, Any] | None:
        """The participant's current step, or None before the first step."""
        with self.read() as conn:
            raw = conn.execute(select(S.progress.c.step).where(
                S.progress.c.participant == participant)).scalar()
        return json.loads(raw) if raw is not None else None

    def get_pool(self, key: str) -> Any | None:
        """A cached candidate pool (decoded JSON), or None."""
        with self.read() as conn:
            raw = conn.execute(select(S.candidate_pools.c.payload).where(
                S.candidate_pools.c.key == key)).scalar()
        return json.loads(raw) if raw is not None else None

    def put_pool(self, key: str, payload: Any, now: int | None = None) -> None:
        """Cache a candidate pool under key (replacing an older one)."""
        from time import time
        stmt = self.insert(S.candidate_pools).values(
            key=key, payload=json.dumps(payload),
            created=now if now is not None else int(time() * 1000))
        stmt = stmt.on_conflict_do_update(index_elements=["key"],
                                          set_={"payload": stmt.excluded.payload,
                                                "created": stmt.excluded.created})
        with self.write() as conn:
            conn.execute(stmt)

    def completion_code(self, participant: str, now: int) -> str:
        """The participant's completion code, issued on first call and stable afterwards."""
        code = secrets.token_hex(4).upper()
        stmt = self.insert(S.completion_codes).values(participant=participant, code=code,
                                                      created=now)
        with self.write() as conn:
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["participant"]))
            return conn.execute(select(S.completion_codes.c.code).where(
                S.completion_codes.c.participant == participant)).scalar_one()

    def add_code(self, participant: str, code: str, coder: str, ts: int, *, task: str = "",
                 subtask: str = "") -> None:
        """Store one researcher code for analysis."""
        with self.write() as conn:
            conn.execute(S.codes.insert().values(participant=participant, task=task,
                                                 subtask=subtask, code=code, coder=coder, ts=ts))

    def codes(self, participant: str | None = None) -> list[dict[str, Any]]:
        """Researcher codes, oldest first (optionally of one participant)."""
        q = select(S.codes).order_by(S.codes.c.ts, S.codes.c.id)
        if participant is not None:
            q = q.where(S.codes.c.participant == participant)
        with self.read() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]


def _upgrade_v1(conn: Connection) -> None:
    """Version 1 -> 2, additive: participants.flag_reason, the withdrawals and llm_spend tables."""
    conn.execute(text("ALTER TABLE participants ADD COLUMN flag_reason TEXT"))
    S.metadata.create_all(conn, tables=[S.withdrawals, S.llm_spend])
    conn.execute(S.schema_meta.update().where(S.schema_meta.c.key == "version")
                 .values(value=str(S.SCHEMA_VERSION)))


def _decode_participant(row: dict[str, Any]) -> dict[str, Any]:
    """Decode a participant row's JSON columns."""
    for key in ("condition_order", "task_order", "override"):
        if row.get(key) is not None:
            row[key] = json.loads(row[key])
    return row


def open_store(url: str | None = None, *, pool_size: int = 10,
               sqlite_synchronous: str = "FULL") -> Store:
    """Open (and create or version-check) the study database at ``url`` or the default."""
    url = url or default_url()
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        db = parsed.database
        if not db or db == ":memory:":
            raise StoreError("An in-memory SQLite store would lose the trace on restart and "
                             "cannot be shared between sessions; use a file URL such as "
                             "sqlite:///logs/study.sqlite.")
        Path(db).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, pool_size=pool_size, max_overflow=pool_size,
                               connect_args={"check_same_thread": False,
                                             "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        _sqlite_setup(engine, sqlite_synchronous.upper())
    elif parsed.get_backend_name() == "postgresql":
        if parsed.drivername == "postgresql":
            url = parsed.set(drivername="postgresql+psycopg").render_as_string(
                hide_password=False)
        engine = create_engine(url, pool_size=pool_size, max_overflow=pool_size,
                               pool_pre_ping=True)
    else:
        raise StoreError(f"Unsupported study database {_redact(url)}; use sqlite:///path or "
                         "postgresql+psycopg://user@host/db.")
    store = Store(engine)
    store.ensure_schema()
    return store
