"""Assign participants to task orders and conditions, balanced and race-free.

A design's *cells* are the pairs (condition sequence, task sequence). A joining participant gets
the least-filled cell, counting completed participants and those active within the study's
abandon timeout (abandoned ones release their slot; withdrawn, flagged participants and those of
another stage or of simulated runs are not counted; a withdrawal that deletes the data deletes
the row, so its slot is released too). Ties go to the cell whose condition and
task sequences are least filled overall, then to the lowest index. The read-count-insert runs in
one transaction under ``BEGIN IMMEDIATE`` (SQLite) or a per-study advisory lock (PostgreSQL), so
concurrent joins never take the same slot.
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from study import schema as S
from study.designs import design_sequences, participant_seed, seeded_order
from study.spec import StudySpec
from study.store import Store

STAGES = ("main", "pilot")


@dataclass(frozen=True)
class Override:
    """A facilitator's choice; unset parts are still chosen by balancing."""

    task_sequence: int | None = None
    condition: str | None = None  # between-subjects: the condition id
    condition_sequence: int | None = None  # within-subjects: the condition-order index


@dataclass(frozen=True)
class Assignment:
    """What a participant was assigned: ids, orders, seed and the study file's hash."""

    participant: str
    study: str
    number: int
    cell: int
    task_sequence: int
    condition_sequence: int
    condition_order: tuple[str, ...]
    task_order: tuple[str, ...]
    seed: int
    study_hash: str
    stage: str = "main"

    @property
    def condition(self) -> str:
        """The first (between-subjects: the only) condition."""
        return self.condition_order[0]

    def blocks(self) -> list[tuple[str, list[str]]]:
        """(condition, tasks) blocks in order: the task order split evenly across conditions."""
        k, n = len(self.condition_order), len(self.task_order)
        bounds = [round(i * n / k) for i in range(k + 1)]
        return [(c, list(self.task_order[bounds[i]:bounds[i + 1]]))
                for i, c in enumerate(self.condition_order)]


def condition_sequences(spec: StudySpec) -> list[list[str]]:
    """The condition orders the design balances over (one per condition when between)."""
    ids = spec.condition_ids
    if spec.assignment.conditions == "between":
        return [[c] for c in ids]
    return [[ids[i] for i in row] for row in design_sequences(spec.assignment.condition_order,
                                                              len(ids))]


def task_sequences(spec: StudySpec) -> list[list[str]]:
    """The task orders the design balances over (one placeholder row for fixed/random)."""
    ids = spec.task_ids
    return [[ids[i] for i in row] for row in design_sequences(spec.assignment.task_order,
                                                              len(ids))]


def cells(spec: StudySpec) -> list[tuple[int, int]]:
    """Every (condition sequence, task sequence) pair, in index order."""
    nc, nt = len(condition_sequences(spec)), len(task_sequences(spec))
    return [(c, t) for c in range(nc) for t in range(nt)]


def _counting(now: int, timeout_ms: int, stage: str, simulated: bool) -> Any:
    """The WHERE clause of participants who hold a slot at ``now``."""
    p = S.participants.c
    return ((p.stage == stage) & (p.simulated == simulated) & (p.flagged == False)  # noqa: E712
            & ((p.status == "completed")
               | ((p.status == "active") & (p.last_active >= now - timeout_ms))))


def _choose(spec: StudySpec, filled: Counter, override: Override | None) -> tuple[int, int, int]:
    """The least-filled allowed cell as (cell index, condition seq, task seq)."""
    cond_seqs = condition_sequences(spec)
    allowed = list(enumerate(cells(spec)))
    if override is not None:
        if override.condition is not None:
            if override.condition not in spec.condition_ids:
                raise ValueError(f"override condition '{override.condition}' is not in this "
                                 f"study; use one of {spec.condition_ids}")
            allowed = [a for a in allowed if cond_seqs[a[1][0]][0] == override.condition]
        if override.condition_sequence is not None:
            allowed = [a for a in allowed if a[1][0] == override.condition_sequence]
        if override.task_sequence is not None:
            allowed = [a for a in allowed if a[1][1] == override.task_sequence]
        if not allowed:
            raise ValueError(f"override {override} matches no sequence of this design "
                             f"({len(cond_seqs)} condition and {len(task_sequences(spec))} "
                             "task sequences, numbered from 0)")
    cond_fill: Counter = Counter()
    task_fill: Counter = Counter()
    for idx, (c, t) in enumerate(cells(spec)):
        cond_fill[c] += filled[idx]
        task_fill[t] += filled[idx]
    idx, (c, t) = min(allowed, key=lambda a: (filled[a[0]], cond_fill[a[1][0]],
                                              task_fill[a[1][1]], a[0]))
    return idx, c, t


def slot_counts(store: Store, spec: StudySpec, *, now: int, stage: str = "main",
                simulated: bool = False) -> list[int]:
    """How many slot-holding participants each cell has at ``now`` (for the facilitator)."""
    timeout_ms = int(spec.assignment.abandon_timeout_minutes * 60_000)
    with store.read() as conn:
        rows = conn.execute(select(S.participants.c.cell, func.count()).where(
            (S.participants.c.study == spec.id) & _counting(now, timeout_ms, stage, simulated))
            .group_by(S.participants.c.cell)).all()
    filled: dict[int, int] = {int(c): int(k) for c, k in rows}
    return [filled.get(i, 0) for i in range(len(cells(spec)))]


def assign_participant(store: Store, spec: StudySpec, *, now: int,
                       override: Override | None = None, stage: str = "main",
                       simulated: bool = False) -> Assignment:
    """Create a participant with a fresh pseudonym in the least-filled cell (now: epoch ms)."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    pid = secrets.token_urlsafe(16)
    seed = participant_seed(spec.assignment.seed, pid)
    timeout_ms = int(spec.assignment.abandon_timeout_minutes * 60_000)
    p = S.participants.c
    with store.write() as conn:
        store.lock_study(conn, spec.id)
        conn.execute(S.participants.update().where(
            (p.study == spec.id) & (p.status == "active") & (p.last_active < now - timeout_ms))
            .values(status="abandoned"))
        rows = conn.execute(select(p.cell, func.count()).where(
            (p.study == spec.id) & _counting(now, timeout_ms, stage, simulated))
            .group_by(p.cell)).all()
        number = max(  # withdrawn-and-deleted participants keep their number in withdrawals
            conn.execute(select(func.coalesce(func.max(p.number), 0))
                         .where(p.study == spec.id)).scalar_one(),
            conn.execute(select(func.coalesce(func.max(S.withdrawals.c.number), 0))
                         .where(S.withdrawals.c.study == spec.id)).scalar_one()) + 1
        idx, c, t = _choose(spec, Counter(dict(rows)), override)
        cond_order = condition_sequences(spec)[c]
        if spec.assignment.task_order == "random":
            task_order = [spec.task_ids[i] for i in seeded_order(len(spec.task_ids), seed)]
        else:
            task_order = task_sequences(spec)[t]
        conn.execute(S.participants.insert().values(
            participant=pid, study=spec.id, number=number, stage=stage, simulated=simulated,
            flagged=False, status="active", cell=idx, task_sequence=t, condition_sequence=c,
            condition=cond_order[0], condition_order=json.dumps(cond_order),
            task_order=json.dumps(task_order), seed=seed, study_hash=spec.hash,
            override=json.dumps(override.__dict__) if override else None,
            created=now, last_active=now))
    return Assignment(pid, spec.id, number, idx, t, c, tuple(cond_order), tuple(task_order),
                      seed, spec.hash, stage)


def load_assignment(store: Store, participant: str) -> Assignment | None:
    """The stored assignment of a participant (e.g. after a refresh), or None if unknown."""
    row = store.participant(participant)
    if row is None:
        return None
    return Assignment(row["participant"], row["study"], row["number"], row["cell"],
                      row["task_sequence"], row["condition_sequence"],
                      tuple(row["condition_order"]), tuple(row["task_order"]), row["seed"],
                      row["study_hash"], row["stage"])
