"""Replay a recorded session's decisions through core.RepairSession, step by step.

Decision events: ``dv.accept``/``dv.reject`` and ``clause.accept``/``clause.reject`` (payload
``features`` or ``feature``), restrictions (``space.lasso|box|click|cluster`` whose payload has
``candidates``), ``output.reject`` (payload ``outputs``), ``repair`` (payload ``sqls``,
``weights`` and ``method``: the added candidates are executed again on the pool's database,
so replay needs it — ``load_prepared`` sets it; a repair that added nothing is a step that
changes nothing), and ``undo`` (payload ``decisions``: how many decisions one Back took back,
2 for a rejection with its repair; default 1); ``pool.init`` starts afresh. Replay is
deterministic. Where the payload recorded ``survivors_before``/``survivors_after`` and the
replayed counts differ, or a decision cannot be applied, the step carries a ``mismatch``
message: reported, never hidden; an event replay cannot get past ends it with a ``failure``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the engine's session pulls in scikit-learn: imported where replay runs
    from core.engine.pool import PreparedPool
    from core.engine.session import Decision, RepairSession

RESTRICT_TYPES = ("space.lasso", "space.box", "space.click", "space.cluster")
DECISION_TYPES = ("dv.accept", "dv.reject", "clause.accept", "clause.reject", "undo",
                  "pool.init", "output.reject", "repair", *RESTRICT_TYPES)


@dataclass(frozen=True)
class ReplayStep:
    """The workspace after one decision event (or after the start, ``index`` -1)."""

    index: int
    event_id: str
    type: str
    history_len: int
    survivors: tuple[int, ...]
    n_classes: int
    done: bool
    next_variable: str
    best_candidate: int | None
    recorded_before: int | None
    recorded_after: int | None
    mismatch: str | None
    # set on the step where replay had to stop (the engine failed on this event): what failed;
    # the step's state fields are those of the last state reproduced
    failure: str | None = None
    pool_size: int = 0  # candidates at this step (repair adds some)
    best_sql: str | None = None  # SQL of best_candidate (a repaired one is not in the pool)


def decision_of(event_type: str, payload: dict[str, Any]) -> Decision | None:
    """The core Decision an event stands for (None for undo, pool.init and inspections)."""
    from core.engine.session import Decision  # scikit-learn: not with the Analysis page's import
    if event_type in ("dv.accept", "dv.reject", "clause.accept", "clause.reject"):
        feats = payload.get("features") or ([payload["feature"]] if "feature" in payload else [])
        kind = "variable" if event_type.startswith("dv.") else "feature"
        return Decision(kind, tuple(feats), event_type.endswith(".accept"))
    if event_type == "output.reject" and payload.get("outputs"):
        return Decision("reject", outputs=tuple(payload["outputs"]))
    if event_type == "repair" and payload.get("sqls"):
        sqls = tuple(payload["sqls"])
        return Decision("repair", gesture=payload.get("method", "recompose"), sqls=sqls,
                        weights=tuple(float(w) for w in payload.get("weights") or [])
                        or (0.5,) * len(sqls))
    if event_type in RESTRICT_TYPES and isinstance(payload.get("candidates"), list):
        return Decision("restrict", candidates=tuple(int(c) for c in payload["candidates"]),
                        gesture=event_type.split(".", 1)[1])
    return None


def _snapshot(session: RepairSession, index: int, ev: Any, before: int | None,
              after: int | None, problem: str | None) -> ReplayStep:
    """Freeze the session's derived state; compare recorded and replayed survivor counts."""
    surv = tuple(int(i) for i in session.survivors)
    msgs = [problem] if problem else []
    if after is not None and after != len(surv):
        msgs.append(f"recorded {after} survivors after, replay has {len(surv)}")
    nxt = session.next_variable()
    best = session.best_candidate()
    return ReplayStep(index, getattr(ev, "event_id", ""), getattr(ev, "type", "start"),
                      session.step, surv, session.n_classes, session.is_done,
                      nxt.label if nxt else "", best, before, after, "; ".join(msgs) or None,
                      None, session.pool.n, None if best is None else session.pool.sqls[best])


def _chosen(payload: dict[str, Any]) -> dict[str, Any]:
    """The session options a ``pool.init`` recorded (strategy, question vocabulary, values)."""
    chosen: dict[str, Any] = {k: payload[k] for k in ("strategy", "questions")
                              if isinstance(payload.get(k), str)}
    if isinstance(payload.get("values"), bool):
        chosen["values"] = payload["values"]
    return chosen


def replay(events: Iterable[Any], pool: PreparedPool, **session_kwargs: Any) -> list[ReplayStep]:
    """The workspace state at the start and after every decision event of one task's trace.

    A decision the session refuses is a ``mismatch`` and replay goes on; anything else that
    fails (a recorded repair whose database is gone, an engine fault) ends the replay with a
    last step whose ``failure`` names the event and the reason — never an exception.
    """
    from core.engine.errors import SessionError
    from core.engine.session import RepairSession  # scikit-learn: when a replay is asked for

    events = list(events)
    first = next((ev for ev in events if ev.type in DECISION_TYPES), None)
    if first is not None and first.type == "pool.init":  # the start as the participant saw it
        session_kwargs = {**session_kwargs, **_chosen(first.payload or {})}
    session = RepairSession(pool, **session_kwargs)
    steps = [_snapshot(session, -1, None, None, None, None)]
    for i, ev in enumerate(events):
        if ev.type not in DECISION_TYPES:
            continue
        p = ev.payload or {}
        before, after = p.get("survivors_before"), p.get("survivors_after")
        try:
            problem = None
            if before is not None and before != len(session.survivors):
                problem = (f"recorded {before} survivors before, replay has "
                           f"{len(session.survivors)}")
            if ev.type == "pool.init":  # the session's strategy and the condition's question
                # vocabulary, when recorded (older traces: the engine's defaults)
                # (a chat's pool.init has a list of questions: not a vocabulary)
                session = RepairSession(pool, **{**session_kwargs, **_chosen(p)})
            elif ev.type == "undo":  # one Back may take back a rejection with its repair
                for _ in range(max(1, int(p.get("decisions") or 1))):
                    if session.undo() is None:
                        problem = "undo with nothing to undo"
                        break
            else:
                decision = decision_of(ev.type, p)
                if decision is None and ev.type != "repair":
                    continue  # an inspection click without a selection
                try:  # a repair that found nothing changed nothing, yet it is a step
                    if decision is not None:
                        session.decide(decision)
                except SessionError as exc:
                    problem = f"cannot apply {ev.type}: {exc}"
            steps.append(_snapshot(session, i, ev, before, after, problem))
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            steps.append(replace(steps[-1], index=i, event_id=getattr(ev, "event_id", ""),
                                 type=ev.type, recorded_before=before, recorded_after=after,
                                 mismatch=f"replay stopped: {reason}", failure=reason))
            break
    return steps


def failure(steps: list[ReplayStep]) -> ReplayStep | None:
    """The step where replay had to stop, if it did."""
    return next((s for s in steps if s.failure), None)


def mismatches(steps: list[ReplayStep]) -> list[ReplayStep]:
    """The steps whose recorded and replayed state disagree."""
    return [s for s in steps if s.mismatch]
