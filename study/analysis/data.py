"""One study's trace loaded from the store into plain records, and the analysis filters.

Every analysis function takes a :class:`StudyData` (or its parts), never the store, so it can be
tested on a hand-made trace. Simulated and flagged participants are excluded by default;
withdrawn participants whose data the study keeps (``withdrawal: keep``) are always excluded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from study.store import Store
from study.trace import Event, read_events


@dataclass(frozen=True)
class StudyData:
    """Participants (decoded rows), their events, answers and the researchers' codes."""

    participants: tuple[dict[str, Any], ...]
    events: tuple[Event, ...]
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    codes: tuple[dict[str, Any], ...] = ()

    @property
    def ids(self) -> list[str]:
        """Participant pseudonyms in join order."""
        return [p["participant"] for p in self.participants]

    def participant(self, pid: str) -> dict[str, Any]:
        """The participant row of ``pid`` (KeyError if filtered out or unknown)."""
        for p in self.participants:
            if p["participant"] == pid:
                return p
        raise KeyError(f"participant {pid!r} is not in this selection")

    @cached_property
    def _by_participant(self) -> dict[str, tuple[Event, ...]]:
        """Each participant's events in trace order, grouped once (the page asks per row)."""
        out: dict[str, list[Event]] = {}
        for e in self.events:
            out.setdefault(e.participant, []).append(e)
        return {pid: tuple(evs) for pid, evs in out.items()}

    def events_of(self, pid: str, task: str | None = None) -> list[Event]:
        """The participant's events in trace order (optionally of one task)."""
        return [e for e in self._by_participant.get(pid, ())
                if task is None or e.task == task]

    def label(self, pid: str) -> str:
        """A short display label 'P<number>' (pseudonyms stay in the data)."""
        return f"P{self.participant(pid)['number']}"


def load_study_data(store: Store, study: str) -> StudyData:
    """Every participant, event, answer and code of one study (no filtering yet)."""
    participants = tuple(store.participants(study))
    ids = {p["participant"] for p in participants}
    events = tuple(e for e in read_events(store, study=study) if e.participant in ids)
    answers = {pid: store.answers(pid) for pid in sorted(ids)}
    codes = tuple(c for c in store.codes() if c["participant"] in ids)
    return StudyData(participants, events, answers, codes)


def filter_data(data: StudyData, *, conditions: list[str] | None = None,
                stages: list[str] | None = None, include_flagged: bool = False,
                include_simulated: bool = False) -> StudyData:
    """The data of the participants that pass the filters (flagged/simulated out by default)."""
    keep = []
    for p in data.participants:
        if conditions and not set(p.get("condition_order") or [p["condition"]]) & set(conditions):
            continue
        if stages and p.get("stage", "main") not in stages:
            continue
        if p.get("flagged") and not include_flagged:
            continue
        if p.get("simulated") and not include_simulated:
            continue
        if p.get("status") == "withdrawn":
            continue
        keep.append(p)
    ids = {p["participant"] for p in keep}
    return StudyData(tuple(keep), tuple(e for e in data.events if e.participant in ids),
                     {k: v for k, v in data.answers.items() if k in ids},
                     tuple(c for c in data.codes if c["participant"] in ids))


def condition_of(data: StudyData, pid: str, task: str) -> str:
    """The condition the participant solved ``task`` in (from its events, else assignment)."""
    for e in data.events_of(pid, task):
        if e.condition:
            return e.condition
    return str(data.participant(pid)["condition"])


def latest_codes(codes: tuple[dict[str, Any], ...] | list[dict[str, Any]],
                 namespace: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The newest code per (participant, task, subtask) whose code starts with 'namespace:'."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    prefix = namespace + ":"
    for c in sorted(codes, key=lambda c: (c["ts"], c.get("id") or 0)):
        if str(c["code"]).startswith(prefix):
            out[(c["participant"], c["task"], c["subtask"])] = {
                **c, "value": str(c["code"])[len(prefix):]}
    return out
