"""Task and subtask timers computed from trace events, as pure functions of event lists.

A timer is keyed by ``(task, subtask)``; ``subtask == ""`` is a task-level timer. It runs from
``timer.start`` (or ``timer.resume``) to ``timer.pause`` / ``timer.stop``. While the browser
reports the tab hidden (``tab.hidden`` until ``tab.visible``, global to the participant) no timer
accumulates *active* time; that time is reported as ``hidden_ms``. Repeated starts or pauses are
ignored and listed as anomalies. Times come from ``server_ts`` (one clock for facilitator and
participant events) unless ``use_client_ts`` is set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Interval = tuple[int, int]


@dataclass(frozen=True)
class TimerSummary:
    """One timer: active (visible, running) ms, hidden ms, pauses, bounds and anomalies."""

    task: str
    subtask: str
    active_ms: int
    hidden_ms: int
    paused_ms: int
    started: int | None
    stopped: int | None
    running: bool
    pauses: int
    anomalies: tuple[str, ...] = ()


def _get(ev: Any, key: str) -> Any:
    """A field of an Event object or of an events-table row."""
    return ev[key] if isinstance(ev, Mapping) else getattr(ev, key)


def _ts(ev: Any, use_client_ts: bool) -> int:
    """The event's timestamp in epoch ms."""
    if use_client_ts and _get(ev, "client_ts") is not None:
        return int(_get(ev, "client_ts"))
    return int(_get(ev, "server_ts"))


def _overlap(a: list[Interval], b: list[Interval]) -> int:
    """Total length of the intersection of two interval lists."""
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


def hidden_intervals(events: Iterable[Any], *, now: int | None = None,
                     use_client_ts: bool = False) -> list[Interval]:
    """The intervals during which the tab was reported hidden."""
    out: list[Interval] = []
    hidden_since: int | None = None
    last = 0
    for ev in sorted(events, key=lambda e: _ts(e, use_client_ts)):
        t = _ts(ev, use_client_ts)
        last = max(last, t)
        kind = _get(ev, "type")
        if kind == "tab.hidden" and hidden_since is None:
            hidden_since = t
        elif kind == "tab.visible" and hidden_since is not None:
            out.append((hidden_since, t))
            hidden_since = None
    if hidden_since is not None:
        out.append((hidden_since, max(last, now if now is not None else last)))
    return out


def compute_timers(events: Iterable[Any], *, now: int | None = None,
                   use_client_ts: bool = False) -> dict[tuple[str, str], TimerSummary]:
    """Every timer found in the events; a running timer is measured up to ``now`` (or last)."""
    evs = sorted(events, key=lambda e: _ts(e, use_client_ts))
    hidden = hidden_intervals(evs, now=now, use_client_ts=use_client_ts)
    end = max([_ts(e, use_client_ts) for e in evs] + ([now] if now is not None else []),
              default=0)
    state: dict[tuple[str, str], dict[str, Any]] = {}
    for ev in evs:
        kind = _get(ev, "type")
        if not kind.startswith("timer."):
            continue
        key = (_get(ev, "task"), _get(ev, "subtask"))
        t = _ts(ev, use_client_ts)
        st = state.setdefault(key, {"runs": [], "since": None, "paused_at": None,
                                    "paused_ms": 0, "started": None, "stopped": None,
                                    "pauses": 0, "anomalies": []})
        if kind in ("timer.start", "timer.resume"):
            if st["since"] is not None:
                st["anomalies"].append(f"{kind} at {t} while running")
                continue
            if kind == "timer.start" and st["started"] is None:
                st["started"] = t
            elif kind == "timer.start":
                st["anomalies"].append(f"timer.start at {t} after an earlier start")
            if st["paused_at"] is not None:
                st["paused_ms"] += t - st["paused_at"]
                st["paused_at"] = None
            st["since"], st["stopped"] = t, None
        elif kind in ("timer.pause", "timer.stop"):
            if st["since"] is None:
                if kind == "timer.stop" and st["paused_at"] is not None:
                    st["paused_ms"] += t - st["paused_at"]
                    st["paused_at"], st["stopped"] = None, t
                else:
                    st["anomalies"].append(f"{kind} at {t} while not running")
                continue
            st["runs"].append((st["since"], t))
            st["since"] = None
            if kind == "timer.pause":
                st["paused_at"], st["pauses"] = t, st["pauses"] + 1
            else:
                st["stopped"] = t
    out = {}
    for (task, sub), st in state.items():
        runs = list(st["runs"]) + ([(st["since"], end)] if st["since"] is not None else [])
        paused = st["paused_ms"] + (end - st["paused_at"] if st["paused_at"] is not None else 0)
        total = sum(e - s for s, e in runs)
        hid = _overlap(runs, hidden)
        out[(task, sub)] = TimerSummary(task, sub, total - hid, hid, paused, st["started"],
                                        st["stopped"], st["since"] is not None, st["pauses"],
                                        tuple(st["anomalies"]))
    return out


def task_active_ms(timers: Mapping[tuple[str, str], TimerSummary], task: str) -> int:
    """A task's active time: its task-level timer if any, else the sum of its subtasks."""
    if (task, "") in timers:
        return timers[(task, "")].active_ms
    return sum(t.active_ms for (tk, _), t in timers.items() if tk == task)
