"""The study database's tables (SQLAlchemy Core) and its schema version.

Every timestamp is epoch milliseconds (``BigInteger``); every JSON value is stored as text so the
same schema runs on SQLite and PostgreSQL. Bump :data:`SCHEMA_VERSION` whenever a table changes:
an existing database with another version is refused with a clear message, never reset.

Tables
------
schema_meta       key/value; ``version`` holds :data:`SCHEMA_VERSION`.
participants      one row per pseudonymous participant and their assignment.
sessions          one row per browser session (a participant may reconnect several times).
events            the trace; ``event_id`` is the primary key, so re-sending an event is a no-op;
                  ``seq`` orders events in insertion order across processes.
answers           questionnaire, demographics and subtask answers, upserted per item.
progress          the participant's current step, so a refresh resumes exactly there.
candidate_pools   cached candidate pools, keyed by the generator's cache key.
completion_codes  the code shown at the end (one per participant).
codes             researchers' qualitative codes for analysis.
withdrawals       one row per withdrawal: study, join number, cell, stage, when, who asked, what
                  happened to the data (deleted | kept) and how many rows; never the pseudonym.
llm_spend         tokens an LLM condition spent, per participant, task and attempt (cumulative
                  counts of that attempt, upserted), so a study's budget can be checked.

Version 2 added ``participants.flag_reason``, ``withdrawals`` and ``llm_spend``; a version-1
database is upgraded in place (additive only) by ``Store.ensure_schema``.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Identity,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

SCHEMA_VERSION = 2

metadata = MetaData()

schema_meta = Table(
    "schema_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

participants = Table(
    "participants", metadata,
    Column("participant", String(64), primary_key=True),
    Column("study", String(200), nullable=False),
    Column("number", Integer, nullable=False),  # join order within the study, 1-based
    Column("stage", String(16), nullable=False, default="main"),  # pilot | main
    Column("simulated", Boolean, nullable=False, default=False),
    Column("flagged", Boolean, nullable=False, default=False),
    Column("flag_reason", Text, nullable=True),  # why a researcher flagged the participant
    Column("status", String(16), nullable=False, default="active"),
    Column("cell", Integer, nullable=False),  # index into the design's (conditions x tasks) cells
    Column("task_sequence", Integer, nullable=False),
    Column("condition_sequence", Integer, nullable=False),
    Column("condition", String(64), nullable=False),  # the first (or only) condition
    Column("condition_order", Text, nullable=False),  # JSON list of condition ids
    Column("task_order", Text, nullable=False),  # JSON list of task ids
    Column("seed", BigInteger, nullable=False),
    Column("study_hash", String(64), nullable=False),
    Column("override", Text, nullable=True),  # JSON of a facilitator override, if any
    Column("created", BigInteger, nullable=False),
    Column("last_active", BigInteger, nullable=False),
)
Index("ix_participants_study", participants.c.study, participants.c.status)

sessions = Table(
    "sessions", metadata,
    Column("session_id", String(100), primary_key=True),
    Column("participant", String(64), nullable=False),
    Column("study", String(200), nullable=False),
    Column("role", String(16), nullable=False, default="participant"),  # participant|researcher
    Column("started", BigInteger, nullable=False),
    Column("last_seen", BigInteger, nullable=False),
    Column("ended", BigInteger, nullable=True),
)
Index("ix_sessions_participant", sessions.c.participant)

events = Table(
    "events", metadata,
    Column("event_id", String(200), primary_key=True),
    Column("seq", BigInteger, Identity(), nullable=False),
    Column("session_id", String(100), nullable=False),
    Column("participant", String(64), nullable=False),
    Column("study", String(200), nullable=False, default=""),
    Column("condition", String(64), nullable=False, default=""),
    Column("task", String(200), nullable=False, default=""),
    Column("subtask", String(32), nullable=False, default=""),
    Column("type", String(64), nullable=False),
    Column("payload", Text, nullable=False, default="{}"),
    Column("client_ts", BigInteger, nullable=True),
    Column("server_ts", BigInteger, nullable=False),
)
Index("ix_events_seq", events.c.seq, unique=True)
Index("ix_events_participant", events.c.participant, events.c.seq)
Index("ix_events_session", events.c.session_id)
Index("ix_events_study_type", events.c.study, events.c.type)

answers = Table(
    "answers", metadata,
    Column("participant", String(64), primary_key=True),
    Column("item", String(200), primary_key=True),  # e.g. "sus7/sus3", "task:film-x/2b"
    Column("study", String(200), nullable=False, default=""),
    Column("value", Text, nullable=False),  # JSON
    Column("updated", BigInteger, nullable=False),
)

progress = Table(
    "progress", metadata,
    Column("participant", String(64), primary_key=True),
    Column("step", Text, nullable=False),  # JSON object describing the current step
    Column("updated", BigInteger, nullable=False),
)

candidate_pools = Table(
    "candidate_pools", metadata,
    Column("key", Text, primary_key=True),
    Column("payload", Text, nullable=False),  # JSON
    Column("created", BigInteger, nullable=False),
)

completion_codes = Table(
    "completion_codes", metadata,
    Column("participant", String(64), primary_key=True),
    Column("code", String(64), nullable=False, unique=True),
    Column("created", BigInteger, nullable=False),
)

codes = Table(
    "codes", metadata,
    Column("id", Integer, Identity(), primary_key=True),
    Column("participant", String(64), nullable=False),
    Column("task", String(200), nullable=False, default=""),
    Column("subtask", String(32), nullable=False, default=""),
    Column("code", String(200), nullable=False),
    Column("coder", String(100), nullable=False),
    Column("ts", BigInteger, nullable=False),
)
Index("ix_codes_participant", codes.c.participant)

withdrawals = Table(
    "withdrawals", metadata,
    Column("id", Integer, Identity(), primary_key=True),
    Column("study", String(200), nullable=False),
    Column("number", Integer, nullable=False),  # the withdrawn participant's join number
    Column("cell", Integer, nullable=False),
    Column("stage", String(16), nullable=False),
    Column("condition", String(64), nullable=False),
    Column("by", String(16), nullable=False),  # participant | researcher
    Column("mode", String(16), nullable=False),  # deleted | kept
    Column("counts", Text, nullable=False),  # JSON {table: rows deleted (or kept)}
    Column("ts", BigInteger, nullable=False),
)
Index("ix_withdrawals_study", withdrawals.c.study)

llm_spend = Table(
    "llm_spend", metadata,
    Column("study", String(200), primary_key=True),
    Column("participant", String(64), primary_key=True),
    Column("task", String(200), primary_key=True),
    Column("attempt", Integer, primary_key=True),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("updated", BigInteger, nullable=False),
)

TABLE_NAMES = tuple(metadata.tables)
V1_TABLES = tuple(t for t in TABLE_NAMES if t not in ("withdrawals", "llm_spend"))
