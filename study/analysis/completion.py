"""Table 1: task completion codes, suggested from the submitted query and confirmed by a coder.

Codes (paper, Table 1): ``solved``; ``partial-better`` (found a better query than the one first
intended); ``partial-not-original`` (the intended reading was not found, another satisfying one
was chosen); ``not-solved``. Suggestion rules for subtask 3, with ``intended`` the gold the
participant's subtask-1 description names (an int, or ``{"gold": k}``; free text gives None):

1. no submission, or the submitted query fails -> ``not-solved``;
2. intended known: output = intended gold's -> ``solved``; another output while some candidate
   realises the intended gold -> ``partial-better``; otherwise -> ``partial-not-original``;
3. intended unknown: output equals some gold's -> ``solved`` (check against the description);
   equals no gold's -> ``partial-not-original``.

Subtasks 2a/2b are verbal and get no suggestion. Only tasks the participant reached get rows, so
a participant who left early does not count as failing the tasks they never saw. Researcher codes are stored in the ``codes``
table as ``completion:<code>`` with coder and time; the newest one wins.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from core.engine.similarity import output_key
from study.analysis.data import StudyData, condition_of, latest_codes
from study.store import Store

if TYPE_CHECKING:  # the engine's session pulls in scikit-learn: only a repaired submit needs it
    from core.engine.pool import PreparedPool

CODES = ("solved", "partial-better", "partial-not-original", "not-solved")
CODE_LABELS = {"solved": "solved", "partial-better": "partial (found better query)",
               "partial-not-original": "partial (didn't find original query)",
               "not-solved": "not solved"}
NAMESPACE = "completion"


@dataclass(frozen=True)
class Suggestion:
    """A suggested code (None: code it by hand) and the rule that produced it."""

    code: str | None
    reason: str


def intended_gold(value: Any) -> int | None:
    """The gold index a subtask-1 answer names (int or {'gold': k}); None for free text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("gold"), int):
        return int(value["gold"])
    return None


def suggest_code(submitted: str | None, gold_keys: list[str], realised: list[bool],
                 intended: int | None) -> Suggestion:
    """Suggest a subtask-3 code from output keys (see the module docstring for the rules)."""
    if submitted is None:
        return Suggestion("not-solved", "no query was submitted")
    if submitted == "error":
        return Suggestion("not-solved", "the submitted query fails to run")
    if intended is not None and 0 <= intended < len(gold_keys):
        if submitted == gold_keys[intended]:
            return Suggestion("solved", f"output equals the intended gold {intended}")
        if realised[intended]:
            return Suggestion("partial-better", f"intended gold {intended} was available; "
                              "another query was chosen")
        return Suggestion("partial-not-original", f"no candidate realises intended gold "
                          f"{intended}; another query was chosen")
    if submitted in gold_keys:
        return Suggestion("solved", f"output equals gold {gold_keys.index(submitted)}; "
                          "check it against the subtask-1 description")
    return Suggestion("partial-not-original", "output equals no gold interpretation")


def reached(events: list[Any]) -> bool:
    """Whether the participant got to this task (a step or timer start was logged for it)."""
    return any(e.type in ("step", "timer.start") for e in events)


def last_submission(events: list[Any]) -> dict[str, Any] | None:
    """The payload of the last ``submit`` event in ``events`` (None if there is none)."""
    subs = [e.payload for e in events if e.type == "submit"]
    return subs[-1] if subs else None


OutputKeys = Callable[[str], tuple[Callable[[dict[str, Any]], str | None], list[str],
                                   list[bool]]]


def suggestions(data: StudyData, subtasks: Mapping[str, list[str]],
                outputs: OutputKeys) -> pd.DataFrame:
    """One row per participant x task x subtask with the suggested code and its reason.

    ``outputs(task)`` returns (submitted payload -> output key, gold output keys, realised
    flags); it is where the prepared pool comes in, so this function stays pure.
    """
    rows = []
    for pid in data.ids:
        tasks = list(data.participant(pid).get("task_order") or subtasks)
        for task in tasks:
            evs = data.events_of(pid, task)
            if not reached(evs):
                continue  # a participant who left (or is still going) never saw this task
            cond = condition_of(data, pid, task)
            for sub in subtasks.get(task, []):
                if sub == "1":
                    continue  # the interpretation itself; Table 1 codes 2a, 2b and 3
                if sub in ("2a", "2b"):
                    sug = Suggestion(None, "verbal subtask: code it from the answer/recording")
                else:
                    payload = last_submission(evs)
                    key_of, gold_keys, realised = outputs(task)
                    submitted = None if payload is None else key_of(payload)
                    answer = data.answers.get(pid, {}).get(f"task:{task}/1")
                    sug = suggest_code(submitted, gold_keys, realised, intended_gold(answer))
                rows.append({"participant": pid, "label": data.label(pid), "condition": cond,
                             "task": task, "subtask": sub, "suggested": sug.code,
                             "reason": sug.reason})
    return pd.DataFrame(rows, columns=["participant", "label", "condition", "task", "subtask",
                                       "suggested", "reason"])


def completion_table(sugg: pd.DataFrame, codes: tuple[dict[str, Any], ...]) -> pd.DataFrame:
    """Suggestions joined with the newest researcher code (who/when); ``final`` = code or None."""
    coded = latest_codes(codes, NAMESPACE)
    out = sugg.copy()
    keys = list(zip(out["participant"], out["task"], out["subtask"], strict=True))
    out["code"] = [coded[k]["value"] if k in coded else None for k in keys]
    out["coder"] = [coded[k]["coder"] if k in coded else None for k in keys]
    out["coded_at"] = [coded[k]["ts"] if k in coded else None for k in keys]
    out["final"] = out["code"]
    out["confirmed"] = out["code"].notna()
    return out


def store_code(store: Store, participant: str, task: str, subtask: str, code: str,
               coder: str, now: int | None = None) -> None:
    """Store a researcher's completion code (confirming or overriding the suggestion)."""
    if code not in CODES:
        raise ValueError(f"unknown completion code {code!r}; use one of {', '.join(CODES)}")
    if not coder.strip():
        raise ValueError("a completion code needs the coder's name or initials")
    ts = int(time.time() * 1000) if now is None else now
    store.add_code(participant, f"{NAMESPACE}:{code}", coder.strip(), ts, task=task,
                   subtask=subtask)


def pool_outputs(pool: PreparedPool) -> tuple[Callable[[dict[str, Any]], str | None],
                                              list[str], list[bool]]:
    """(submit payload -> output key, gold output keys, gold realised?) for one prepared pool."""
    class_keys = {output_key(r) for r in pool.results}
    gold_keys = [output_key(r) for r in pool.gold_results]

    def key_of(payload: dict[str, Any]) -> str | None:
        idx, sql = payload.get("candidate"), payload.get("sql")
        if not isinstance(idx, int) and sql in pool.sqls:
            idx = pool.sqls.index(sql)
        if not isinstance(idx, int) or idx < 0:
            return None
        if idx < pool.n and sql in (None, pool.sqls[idx]):
            return output_key(pool.results[idx])
        return _repaired_output(pool, payload)

    return key_of, gold_keys, [k != "error" and k in class_keys for k in gold_keys]


def _repaired_output(pool: PreparedPool, payload: dict[str, Any]) -> str | None:
    """Output key of a submitted candidate that repair added (not in the prepared pool): the
    submit's recorded decisions are replayed, which re-runs the repaired queries; None if that
    fails or the replayed candidate is not the submitted SQL."""
    from core.engine.session import RepairSession  # here: scikit-learn, for this case only

    try:
        session = RepairSession.from_dict({"history": payload.get("history") or []}, pool)
    except Exception:
        return None
    idx = payload["candidate"]
    if idx >= session.pool.n or session.pool.sqls[idx] != payload.get("sql"):
        return None
    return output_key(session.pool.results[idx])


def completion_rate(table: pd.DataFrame, column: str = "final") -> float:
    """Share of coded cells that are solved or partial (the paper's 84.4 % measure)."""
    coded = table[table[column].notna()]
    if coded.empty:
        return float("nan")
    return float((coded[column] != "not-solved").mean())
