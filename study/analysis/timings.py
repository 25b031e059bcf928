"""Time per task and subtask per participant and condition (from study.timing), timer
intervals for the export, and the facilitator's markers and notes alongside."""

from typing import Any

import pandas as pd

from study.analysis.data import StudyData, condition_of
from study.timing import compute_timers

TIMING_COLUMNS = ["participant", "label", "condition", "task", "subtask", "active_s",
                  "hidden_s", "paused_s", "pauses", "running", "anomalies"]


def timings_table(data: StudyData) -> pd.DataFrame:
    """One row per participant x timer (task-level timers have subtask '')."""
    rows = []
    for pid in data.ids:
        evs = data.events_of(pid)
        for (task, sub), t in sorted(compute_timers(evs).items()):
            rows.append({"participant": pid, "label": data.label(pid),
                         "condition": condition_of(data, pid, task), "task": task,
                         "subtask": sub, "active_s": t.active_ms / 1000,
                         "hidden_s": t.hidden_ms / 1000, "paused_s": t.paused_ms / 1000,
                         "pauses": t.pauses, "running": t.running,
                         "anomalies": "; ".join(t.anomalies)})
    return pd.DataFrame(rows, columns=TIMING_COLUMNS)


def timer_intervals(data: StudyData) -> pd.DataFrame:
    """One row per running interval of a timer (start/resume to pause/stop), server clock."""
    rows: list[dict[str, Any]] = []
    for pid in data.ids:
        open_: dict[tuple[str, str], tuple[int, str]] = {}
        for e in sorted(data.events_of(pid), key=lambda e: e.server_ts):
            key = (e.task, e.subtask)
            if e.type in ("timer.start", "timer.resume") and key not in open_:
                open_[key] = (e.server_ts, e.type)
            elif e.type in ("timer.pause", "timer.stop") and key in open_:
                start, how = open_.pop(key)
                rows.append({"participant": pid, "task": e.task, "subtask": e.subtask,
                             "start_ts": start, "end_ts": e.server_ts,
                             "duration_s": (e.server_ts - start) / 1000, "opened_by": how,
                             "closed_by": e.type})
    return pd.DataFrame(rows, columns=["participant", "task", "subtask", "start_ts", "end_ts",
                                       "duration_s", "opened_by", "closed_by"])


def annotations(data: StudyData) -> pd.DataFrame:
    """Facilitator markers and notes (and audio segments) with their task and time."""
    rows = []
    for e in data.events:
        if e.type in ("marker", "note", "audio"):
            text = e.payload.get("label") or e.payload.get("text") or e.payload.get("path", "")
            rows.append({"participant": e.participant, "task": e.task, "subtask": e.subtask,
                         "type": e.type, "ts": e.server_ts, "text": str(text),
                         "duration_ms": e.payload.get("duration_ms")})
    return pd.DataFrame(rows, columns=["participant", "task", "subtask", "type", "ts", "text",
                                       "duration_ms"])
