"""Workspace gestures as plain functions: one session call plus one trace event each.

The Streamlit widgets call these from their callbacks, so every view renders the new state in
the same rerun; tests call them directly. Each event goes through the injected ``log(type,
payload)`` with the step, the survivors before and after and what was decided, so replaying the
decision events reproduces the workspace (DESIGN.md, "The trace").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.engine.errors import SessionError, StudioError
from core.engine.repair import RepairOutcome, recompose, resample
from core.engine.session import RankedVariable, RepairSession
from core.planpool.accounting import open_variables
from ui import speculate
from ui.state import WorkspaceOptions, WorkspaceState

Log = Callable[[str, dict[str, Any]], None]
OnSubmit = Callable[[int, str], None]
# session -> outcome: the LLM resampling step, available when an API key is configured
Resampler = Callable[[RepairSession], RepairOutcome]
REPAIR_METHODS = ("none", "recompose", "resample")
PENDING = "repair_pending"


def no_log(event_type: str, payload: dict[str, Any]) -> None:
    """A logger that drops events (free exploration without a trace)."""


def _current(ws: WorkspaceState):
    ranked = ws.session.variables()
    if not ranked:
        return None
    ws.browse = min(max(ws.browse, 0), len(ranked) - 1)
    return ranked[ws.browse]


def _decided(ws: WorkspaceState, before: int, log: Log, event_type: str,
             payload: dict[str, Any]) -> None:
    ws.browse = 0
    ws.flash = None
    payload.update(step=ws.session.step, survivors_before=before,
                   survivors_after=len(ws.session.survivors))
    log(event_type, payload)


def answer_variable(ws: WorkspaceState, yes: bool, log: Log,
                    keys: tuple[str, ...] | None = None) -> bool:
    """Yes/No on the decision variable shown in the Decision Space (or, given ``keys``, on
    that variable: the one the user saw when they answered)."""
    variable = _current(ws)
    if keys is not None and (variable is None or variable.keys != keys):
        ranked = {v.keys: (i, v) for i, v in enumerate(ws.session.variables())}
        if keys not in ranked:
            ws.flash = ("That question was no longer open when your answer arrived (the "
                        "queries had changed); answer the one shown now.")
            return False
        ws.browse, variable = ranked[keys]
    if variable is None:
        return False
    before = len(ws.session.survivors)
    try:
        ws.session.answer(variable.keys, yes)
    except SessionError as exc:
        ws.flash = str(exc)
        return False
    speculate.adopt(ws, yes)  # the views computed while the user read the question
    _decided(ws, before, log, "dv.accept" if yes else "dv.reject",
             {"features": list(variable.keys), "implicit": [f.key for f in variable.implicit],
              "gain": round(variable.gain, 6), "rank": ws.browse, "kind": variable.kind})
    return True


def browse(ws: WorkspaceState, delta: int, log: Log) -> bool:
    """Show the next (+1) or previous (-1) decision variable; browsing is skipping."""
    ranked = ws.session.variables()
    if not ranked:
        return False
    old = min(max(ws.browse, 0), len(ranked) - 1)
    new = min(max(old + delta, 0), len(ranked) - 1)
    if new == old:
        return False
    ws.browse = new
    log("dv.browse", {"direction": "down" if delta > 0 else "up", "from": old, "to": new,
                      "skipped": list(ranked[old].keys), "features": list(ranked[new].keys),
                      "gain": round(ranked[new].gain, 6), "step": ws.session.step})
    return True


def answer_clause(ws: WorkspaceState, key: str, yes: bool, log: Log) -> bool:
    """Yes/No on one atomic feature of the Predicted Query (clause-level path)."""
    before = len(ws.session.survivors)
    prob = next((b.probability for b in ws.session.predicted_query() if b.feature.key == key),
                None)
    try:
        ws.session.answer_feature(key, yes)
    except SessionError as exc:
        ws.flash = str(exc)
        return False
    _decided(ws, before, log, "clause.accept" if yes else "clause.reject",
             {"feature": key, "features": [key], "probability": prob})
    return True


def restrict(ws: WorkspaceState, ids: list[int], gesture: str, log: Log, *,
             cluster: int | None = None) -> bool:
    """Keep only the selected candidates (lasso, box, click or a whole cluster)."""
    before = len(ws.session.survivors)
    survivors_before = ws.session.survivors.tolist()
    try:
        ws.session.restrict(ids, gesture)
    except SessionError as exc:
        ws.flash = str(exc)
        return False
    payload: dict[str, Any] = {"candidates": sorted(int(i) for i in ids),
                               "kept": ws.session.survivors.tolist(),
                               "previous": survivors_before}
    if cluster is not None:
        payload["cluster"] = cluster
    _decided(ws, before, log, f"space.{gesture}", payload)
    return True


def gesture_size(session: RepairSession) -> int:
    """How many decisions the user's last gesture made: 2 for a repair with the rejection
    that asked for it ("No" or "None of these" is one decision to the user), else 1."""
    h = session.history
    return 2 if len(h) >= 2 and h[-1].kind == "repair" and h[-2].kind == "reject" else \
        min(1, len(h))


def undo(ws: WorkspaceState, log: Log) -> bool:
    """Back: take back the user's last gesture (a rejection with the repair it triggered is
    one), logged as one ``undo`` event whose ``decisions`` says how many it took back."""
    before = len(ws.session.survivors)
    n = gesture_size(ws.session)
    if n == 0:
        return False
    undone = [ws.session.undo() for _ in range(n)]
    _decided(ws, before, log, "undo", {"undone": undone[0].to_dict(), "decisions": n,
                                       "also": [d.to_dict() for d in undone[1:]]})
    return True


def blocking(ws: WorkspaceState, options: WorkspaceOptions | None) -> list[RankedVariable]:
    """Variables that keep Submit disabled under pool accounting (none without it)."""
    if options is None or not options.pool_accounting:
        return []
    return open_variables(ws.session, ws.dismissed, options.ig_threshold)


def dismiss(ws: WorkspaceState, keys: tuple[str, ...], log: Log) -> bool:
    """Explicitly leave a decision variable unanswered (pool accounting); logs dv.dismiss."""
    keys = tuple(keys)
    if keys in ws.dismissed:
        return False
    ranked = ws.session.variables()
    rank = next((i for i, v in enumerate(ranked) if v.keys == keys), None)
    ws.dismissed.append(keys)
    log("dv.dismiss", {"features": list(keys), "rank": rank, "step": ws.session.step,
                       "gain": None if rank is None else round(ranked[rank].gain, 6),
                       "dismissed": len(ws.dismissed)})
    return True


def submit(ws: WorkspaceState, log: Log, on_submit: OnSubmit | None = None,
           options: WorkspaceOptions | None = None) -> int | None:
    """Submit the query the session would choose now (study mode); returns its pool index."""
    session: RepairSession = ws.session
    chosen = session.best_candidate()
    if chosen is None:
        return None
    still_open = blocking(ws, options)
    if still_open:
        ws.flash = (f"{len(still_open)} decision(s) are still open: answer or dismiss them in "
                    "the Decision Space before submitting.")
        return None
    sql = session.pool.sqls[chosen]
    ws.submitted = chosen
    log("submit", {"candidate": chosen, "sql": sql, "step": session.step,
                   "survivors": len(session.survivors), "done": session.is_done,
                   "history": [d.to_dict() for d in session.history]})
    if on_submit is not None:
        on_submit(chosen, sql)
    return chosen


def survivor_counts(session: RepairSession) -> list[int]:
    """Survivors after each decision of the history."""
    return session.survivors_per_step()


def accept_output(ws: WorkspaceState, log: Log) -> bool:
    """"Yes, this is the output I want" on the Predicted Output (logged; nothing changes)."""
    key = ws.session.predicted_output_key()
    if key is None:
        return False
    ws.extra["accepted"] = (ws.session.step, key)
    log("output.accept", {"output": key, "candidate": ws.session.best_candidate(),
                          "step": ws.session.step, "survivors": len(ws.session.survivors)})
    return True


def reject_output(ws: WorkspaceState, log: Log) -> bool:
    """"No" on the Predicted Output: that output is ruled out and repair is queued."""
    key = ws.session.predicted_output_key()
    if key is None:
        return False
    ws.extra[PENDING] = {"trigger": "reject", "outputs": [key]}
    return True


def none_of_these(ws: WorkspaceState, log: Log) -> bool:
    """"None of these": every surviving output is ruled out and repair is queued."""
    session = ws.session
    keys = sorted({session.output_key_of(int(i)) for i in session.survivors
                   if session.pool.results[int(i)].ok})
    ws.extra[PENDING] = {"trigger": "none", "outputs": keys}
    return True


def resampler_for(method: str, api_key: str | None = None) -> Resampler | None:
    """The LLM resampling step when ``method`` asks for it and a key is configured (``api_key``,
    e.g. the app's secret, else ``$ANTHROPIC_API_KEY``), else None.

    Its pools are cached like generated pools (``logs/pool-cache/``), keyed by the question
    and the decisions, so a replay or a second participant in the same state costs nothing.
    """
    from core.generation.keys import has_api_key
    from core.generation.poolcache import FilePoolCache

    if method != "resample" or not has_api_key(api_key):
        return None
    from core.generation.sampler import AnthropicSampler

    sampler = AnthropicSampler(api_key=api_key)
    return lambda session: resample(session, sampler, cache=FilePoolCache())


def repair_pending(ws: WorkspaceState) -> bool:
    """Whether a rejection waits for :func:`run_repair` (the workspace runs it with a spinner)."""
    return PENDING in ws.extra


def run_repair(ws: WorkspaceState, log: Log, method: str = "recompose",
               resampler: Resampler | None = None) -> RepairOutcome | None:
    """Apply the queued rejection, then add candidates by ``method`` (one ``repair`` event).

    ``resample`` without a ``resampler`` (no API key) falls back to recomposition and says so.
    """
    pending = ws.extra.pop(PENDING, None)
    if pending is None:
        return None
    if method not in REPAIR_METHODS:
        raise ValueError(f"repair must be one of {', '.join(REPAIR_METHODS)}, not {method!r}")
    session = ws.session
    before = len(session.survivors)
    try:
        session.reject_outputs(pending["outputs"])
    except SessionError as exc:
        ws.flash = str(exc)
        return None
    _decided(ws, before, log, "output.reject", {"outputs": list(session.history[-1].outputs),
                                                "trigger": pending["trigger"]})
    if method == "none":
        if session.is_exhausted:
            ws.flash = ("No query of the pool is left and repair is off here: go Back to "
                        "take the rejection back.")
        return None
    used = method
    if method == "resample" and resampler is None:
        ws.flash = "No API key is configured: only recomposition is available."
        used = "recompose"
    before = len(session.survivors)
    try:
        outcome = resampler(session) if used == "resample" and resampler else recompose(session)
    except StudioError as exc:
        ws.flash = f"Repair failed: {exc}"
        return None
    _decided(ws, before, log, "repair", {"method": outcome.method, "requested": method,
                                         "trigger": pending["trigger"],
                                         "added": len(outcome.added), "sqls": list(outcome.added),
                                         "weights": list(session.history[-1].weights)
                                         if outcome.added else [],
                                         "new_outputs": outcome.new_outputs})
    if not outcome.added:
        ws.flash = ("Repair found no other reading" + (": go Back, or pick another output."
                                                       if not session.is_exhausted else
                                                       ": go Back to take the rejection back."))
    return outcome
