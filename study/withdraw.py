"""Withdrawal: a participant leaves the study, and their data is deleted or kept but excluded.

The study file's ``withdrawal:`` decides: ``delete`` (default) removes the participant's events,
answers, progress, sessions, completion code, researcher codes and think-aloud audio, and the
participant row itself; ``keep`` keeps them, sets the status to ``withdrawn`` (excluded from
analysis and export) and logs ``session.end``. Either way the assignment slot is released and
one ``withdrawals`` row remains: study, join number, cell, stage, condition, who asked, the mode
and the row counts, never the pseudonym. Everything in the database happens in one transaction;
audio files are removed after it commits, then :meth:`Store.scrub` checkpoints and truncates
SQLite's WAL (the connections run with ``secure_delete``), so the deleted text is gone from the
files on disk too.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select

from study import schema as S
from study.audio import audio_root
from study.spec import StudySpec
from study.store import Store
from study.trace import log_event

BY = ("participant", "researcher")
_LABEL = re.compile(r"^\s*[Pp]?\s*(\d+)\s*$")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
_TABLES = (("events", S.events), ("answers", S.answers), ("progress", S.progress),
           ("sessions", S.sessions), ("completion_codes", S.completion_codes),
           ("codes", S.codes))


class WithdrawError(ValueError):
    """The participant to withdraw cannot be found (message says what to enter instead)."""


def find_participant(store: Store, study: str, who: str) -> str:
    """The pseudonym of a label (``P3`` or ``3``) or a completion code within ``study``."""
    p, cc = S.participants.c, S.completion_codes.c
    with store.read() as conn:  # a code first: a code may be all digits, like a label
        pid = conn.execute(select(p.participant).join(
            S.completion_codes, cc.participant == p.participant).where(
            (p.study == study) & (func.upper(cc.code) == (who or "").strip().upper()))
        ).scalar()
        m = _LABEL.match(who or "")
        if pid is None and m:
            pid = conn.execute(select(p.participant).where(
                (p.study == study) & (p.number == int(m.group(1))))).scalar()
    if pid is None:
        raise WithdrawError(f"no participant '{who}' in study '{study}'; enter a label such as "
                            "P3 (the Facilitator list's number) or the completion code the "
                            "participant was shown")
    return str(pid)


def _count(conn: Any, table: Any, participant: str) -> int:
    return int(conn.execute(select(func.count()).select_from(table).where(
        table.c.participant == participant)).scalar_one())


def withdraw(store: Store, spec: StudySpec, participant: str, *, by: str, now: int,
             audio: Path | None = None) -> dict[str, Any]:
    """Withdraw ``participant`` as the study file says; returns the withdrawal record."""
    if by not in BY:
        raise ValueError(f"by must be one of {BY}, got {by!r}")
    p = S.participants.c
    with store.write() as conn:
        store.lock_study(conn, spec.id)
        row = conn.execute(select(S.participants).where(
            (p.participant == participant) & (p.study == spec.id))).first()
        if row is None:
            raise WithdrawError(f"no participant {participant[:8]}… in study '{spec.id}' (already "
                                "withdrawn and deleted, or another study)")
        part = dict(row._mapping)
        if part["status"] == "withdrawn":
            raise WithdrawError(f"P{part['number']} of '{spec.id}' has already withdrawn")
        counts = {name: _count(conn, t, participant) for name, t in _TABLES}
        folder = (audio or audio_root()) / _SAFE.sub("_", participant)
        counts["audio_files"] = len(list(folder.glob("*.wav"))) if folder.is_dir() else 0
        if spec.withdrawal == "keep":
            conn.execute(S.participants.update().where(p.participant == participant)
                         .values(status="withdrawn", last_active=now))
            log_event(store, session_id=f"withdraw-{by}", participant=participant,
                      type="session.end", study=spec.id, payload={"status": "withdrawn",
                                                                  "by": by},
                      event_id=f"{participant}:withdrawn", clock=lambda: now / 1000)
        else:
            for _, table in _TABLES:
                conn.execute(delete(table).where(table.c.participant == participant))
            conn.execute(S.llm_spend.update().where(S.llm_spend.c.participant == participant)
                         .values(participant=f"withdrawn:{part['number']}"))
            conn.execute(delete(S.participants).where(p.participant == participant))
        record = {"study": spec.id, "number": part["number"], "cell": part["cell"],
                  "stage": part["stage"], "condition": part["condition"], "by": by,
                  "mode": "kept" if spec.withdrawal == "keep" else "deleted",
                  "counts": json.dumps(counts, sort_keys=True), "ts": now}
        conn.execute(S.withdrawals.insert().values(**record))
    if spec.withdrawal != "keep":
        if folder.is_dir():
            shutil.rmtree(folder)
        store.scrub()  # no copy of the deleted rows left in the WAL or the freed pages
    return {**record, "counts": counts}


def withdrawals(store: Store, study: str) -> list[dict[str, Any]]:
    """The study's withdrawal records, oldest first (counts decoded)."""
    with store.read() as conn:
        rows = conn.execute(select(S.withdrawals).where(S.withdrawals.c.study == study)
                            .order_by(S.withdrawals.c.ts, S.withdrawals.c.id)).all()
    return [{**dict(r._mapping), "counts": json.loads(r.counts)} for r in rows]
