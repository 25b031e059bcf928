"""Workspace gestures as plain functions: one session call plus one trace event each.

The Streamlit widgets call these from their callbacks, so every view renders the new state in
the same rerun; tests call them directly. Each event goes through the injected ``log(type,
payload)`` with the step, the survivors before and after and what was decided, so replaying the
decision events reproduces the workspace (DESIGN.md, "The trace").
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.engine.errors import SessionError, StudioError
from core.engine.repair import (
    RepairOutcome,
    Resampler,
    Stop,
    known_round,
    none_of_these_outputs,
    recompose,
    resample,
)
from core.engine.session import RankedVariable, RepairSession
from core.planpool.accounting import open_variables
from ui import speculate
from ui.chips import counted
from ui.state import WorkspaceOptions, WorkspaceState, current_variable

Log = Callable[[str, dict[str, Any]], None]
OnSubmit = Callable[[int, str], None]
REPAIR_METHODS = ("none", "recompose", "resample")
PENDING = "repair_pending"
ACCEPTED = "accepted"  # ws.extra: (step, output key) the user said Yes to ("You accepted …")
SEARCH = speculate.SEARCHING  # ws.extra: the RepairSearch running off the script thread
SAVED = "repair_search"  # key of the saved workspace: a search was running (resumed on reload)
MAX_DETAIL = 2000  # characters of an error's text kept in a repair.fail / chat.fail event
SPEC = "repair_ahead"  # ws.extra: the RepairSearch speculated for a "No" / "None of these" here
AHEAD_ENV = "PLEASQLARIFY_REPAIR_AHEAD"  # 0/off: no speculated repair, no remembered rounds
SPEC_DELAY_S = 0.5  # the person reads a state this long before its repair is speculated
SPEC_PATIENCE_S = 2.0  # then waits at most this long for the process's speculation slot
CROWD_ENV = "PLEASQLARIFY_REPAIR_AHEAD_MAX_SESSIONS"
CROWD_SESSIONS = 3  # more connected sessions than this: no speculated repair (a crowd study)
_SPEC_SLOT = threading.BoundedSemaphore(1)  # one speculated round at a time per process
BUSY = ("Still looking for other readings of the question: wait a moment for them, or go "
        "Back to take the rejection back.")
LOG = logging.getLogger(__name__)
# What a refused gesture says. The error's own words may quote SQL (a feature key) or the
# database, which a `labels: plain` condition never shows: they become ``ws.flash_detail``.
STALE_ANSWER = ("That answer was not applied: no remaining query fits it, or its question is "
                "no longer shown. Nothing changed; answer a question shown now.")
EMPTY_SELECTION = ("None of the remaining queries is in that selection, so nothing changed: "
                   "select among the queries still shown.")
STALE_OUTPUT = ("That output is no longer among the remaining ones, so nothing changed: judge "
                "the output shown now.")
# for researchers only (free exploration, Setup, Facilitator): participants never read of keys
NO_KEY_REPAIR = "No API key is configured: only recomposition is available."
REPAIR_FAILED = ("The search for other readings of the question stopped with an error, so no "
                 "new queries were added.")


def no_log(event_type: str, payload: dict[str, Any]) -> None:
    """A logger that drops events (free exploration without a trace)."""


def refused(ws: WorkspaceState, plain: str, detail: str) -> None:
    """Say that something did not go through: ``plain`` (what happened and what to do, free
    of SQL) is the notice; ``detail``, the error's own text, is kept beside it (shown only
    where labels show SQL) and logged for the researcher."""
    ws.flash, ws.flash_detail = plain, detail
    LOG.info("workspace notice for task %s: %s (%s)", ws.session.pool.task_id, plain, detail)


def _decided(ws: WorkspaceState, before: int, log: Log, event_type: str,
             payload: dict[str, Any]) -> None:
    ws.browse = 0
    ws.flash = None
    payload.update(step=ws.session.step, survivors_before=before,
                   survivors_after=len(ws.session.survivors))
    drop_speculation(ws)  # the state it was speculated for is gone
    log(event_type, payload)


def busy(ws: WorkspaceState) -> bool:
    """Whether a repair search is running (every gesture but Back waits for it); says so."""
    if SEARCH not in ws.extra:
        return False
    ws.flash = BUSY
    return True


def answer_variable(ws: WorkspaceState, yes: bool, log: Log,
                    keys: tuple[str, ...] | None = None) -> bool:
    """Yes/No on the decision variable shown in the Decision Space (or, given ``keys``, on
    that variable: the one the user saw when they answered)."""
    if busy(ws):
        return False
    variable = current_variable(ws)
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
        refused(ws, STALE_ANSWER, str(exc))
        return False
    speculate.adopt(ws, yes)  # the views computed while the user read the question
    _decided(ws, before, log, "dv.accept" if yes else "dv.reject",
             {"features": list(variable.keys), "implicit": [f.key for f in variable.implicit],
              "gain": round(variable.gain, 6), "rank": ws.browse, "kind": variable.kind})
    return True


def browse(ws: WorkspaceState, delta: int, log: Log) -> bool:
    """Show the next (+1) or previous (-1) decision variable; browsing is skipping."""
    if busy(ws):
        return False
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
    if busy(ws):
        return False
    before = len(ws.session.survivors)
    prob = next((b.probability for b in ws.session.predicted_query() if b.feature.key == key),
                None)
    try:
        ws.session.answer_feature(key, yes)
    except SessionError as exc:
        refused(ws, STALE_ANSWER, str(exc))
        return False
    _decided(ws, before, log, "clause.accept" if yes else "clause.reject",
             {"feature": key, "features": [key], "probability": prob})
    return True


def restrict(ws: WorkspaceState, ids: list[int], gesture: str, log: Log, *,
             cluster: int | None = None) -> bool:
    """Keep only the selected candidates (lasso, box, click or a whole cluster)."""
    if busy(ws):
        return False
    before = len(ws.session.survivors)
    survivors_before = ws.session.survivors.tolist()
    try:
        ws.session.restrict(ids, gesture)
    except SessionError as exc:
        refused(ws, EMPTY_SELECTION, str(exc))
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
    one), logged as one ``undo`` event whose ``decisions`` says how many it took back.

    While a repair search runs, Back drops it and takes back the rejection that started it.
    """
    cancel_search(ws)
    before = len(ws.session.survivors)
    n = gesture_size(ws.session)
    if n == 0:
        return False
    undone = [d for _ in range(n) if (d := ws.session.undo()) is not None]  # n <= history
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
    if busy(ws) or keys in ws.dismissed:
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
    if chosen is None or busy(ws):
        return None
    still_open = blocking(ws, options)
    if still_open:
        ws.flash = (f"{counted(len(still_open), 'decision')} "
                    f"{'is' if len(still_open) == 1 else 'are'} still open: answer or dismiss "
                    f"{'it' if len(still_open) == 1 else 'them'} in the Decision Space before "
                    "submitting.")
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
    if busy(ws):
        return False
    key = ws.session.predicted_output_key()
    if key is None:
        return False
    ws.extra[ACCEPTED] = (ws.session.step, key)
    log("output.accept", {"output": key, "candidate": ws.session.best_candidate(),
                          "step": ws.session.step, "survivors": len(ws.session.survivors)})
    return True


def reject_output(ws: WorkspaceState, log: Log) -> bool:
    """"No" on the Predicted Output: that output is ruled out and repair is queued (a second
    press while its search runs is refused)."""
    if busy(ws):
        return False
    key = ws.session.predicted_output_key()
    if key is None:
        return False
    ws.extra[PENDING] = {"trigger": "reject", "outputs": [key]}
    return True


def none_of_these(ws: WorkspaceState, log: Log) -> bool:
    """"None of these": every surviving output is ruled out and repair is queued."""
    if busy(ws):
        return False
    ws.extra[PENDING] = {"trigger": "none", "outputs": none_of_these_outputs(ws.session)}
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
    """Whether a rejection waits for :func:`run_repair` or :func:`start_repair`."""
    return PENDING in ws.extra


def _reject(ws: WorkspaceState, log: Log, pending: dict[str, Any], method: str) -> bool:
    """Apply the queued rejection (logged ``output.reject``); False if it changed nothing.
    A rejection restored with the page (``applied``) is already in the session."""
    if method not in REPAIR_METHODS:
        raise ValueError(f"repair must be one of {', '.join(REPAIR_METHODS)}, not {method!r}")
    if pending.get("applied"):
        return ws.session.step > 0 and ws.session.history[-1].kind == "reject"
    session = ws.session
    before = len(session.survivors)
    try:
        session.reject_outputs(pending["outputs"])
    except SessionError as exc:
        refused(ws, STALE_OUTPUT, str(exc))
        return False
    _decided(ws, before, log, "output.reject", {"outputs": list(session.history[-1].outputs),
                                                "trigger": pending["trigger"]})
    return True


def _method_used(ws: WorkspaceState, method: str, resampler: Resampler | None) -> str:
    """The repair that runs: ``resample`` without a ``resampler`` (no key) is recomposition.
    Nothing is flashed (the person's repair still runs; a participant never reads about
    keys): the ``repair`` event's ``requested`` and ``method`` and the log keep it, and the
    Setup and Facilitator pages tell the researcher (:func:`study.registry.key_notices`)."""
    if method == "resample" and resampler is None:
        LOG.info("task %s: resample requested without an API key; recomposition runs",
                 ws.session.pool.task_id)
        return "recompose"
    return method


def ahead_enabled() -> bool:
    """Whether repair work is done ahead: the speculated repair and the rounds remembered per
    pool; on unless $PLEASQLARIFY_REPAIR_AHEAD or $PLEASQLARIFY_SPECULATE is 0/off/false/no
    (read per call: a benchmark server started with it off measures the round computed)."""
    own = os.environ.get(AHEAD_ENV, "1").strip().lower() not in ("0", "off", "false", "no")
    return own and speculate.enabled()


def _repair(session: RepairSession, used: str, resampler: Resampler | None,
            stop: Stop | None = None) -> RepairOutcome:
    """One repair round on ``session`` (in place); ``stop`` may end a recomposition early."""
    return (resampler(session) if used == "resample" and resampler else
            recompose(session, stop=stop, cached=ahead_enabled()))


def _record(ws: WorkspaceState, log: Log, before: int, outcome: RepairOutcome, method: str,
            trigger: str) -> None:
    """Log the ``repair`` event of a round applied to ``ws.session``; say when it found none."""
    session = ws.session
    _decided(ws, before, log, "repair", {"method": outcome.method, "requested": method,
                                         "trigger": trigger,
                                         "added": len(outcome.added), "sqls": list(outcome.added),
                                         "weights": list(session.history[-1].weights)
                                         if outcome.added else [],
                                         "new_outputs": outcome.new_outputs,
                                         **({"llm_requests": outcome.requests,
                                             "llm_usd": round(outcome.usd, 6)}
                                            if outcome.method == "resample" else {})})
    if not outcome.added:
        ws.flash = ("Repair found no other reading" + (": go Back, or pick another output."
                                                       if not session.is_exhausted else
                                                       ": go Back to take the rejection back."))


def _failed(ws: WorkspaceState, log: Log, detail: str, method: str, trigger: str) -> None:
    """A repair round that raised: the user reads a plain notice saying what to do (the
    rejection stays applied); the error itself goes to the trace (``repair.fail``) and the
    log, where the facilitator and researcher find it."""
    session = ws.session
    refused(ws, REPAIR_FAILED + (" Go Back to take the rejection back, or carry on with the "
                                 "queries that remain." if not session.is_exhausted else
                                 " Go Back to take the rejection back."), detail)
    LOG.warning("repair failed for task %s at step %d: %s", session.pool.task_id,
                session.step, detail)
    log("repair.fail", {"requested": method, "trigger": trigger, "step": session.step,
                        "error": detail[:MAX_DETAIL]})


def _repair_off(ws: WorkspaceState) -> None:
    if ws.session.is_exhausted:
        ws.flash = ("No query of the pool is left and repair is off here: go Back to "
                    "take the rejection back.")


def run_repair(ws: WorkspaceState, log: Log, method: str = "recompose",
               resampler: Resampler | None = None) -> RepairOutcome | None:
    """Apply the queued rejection, then add candidates by ``method`` (one ``repair`` event),
    on the calling thread; the workspace uses :func:`start_repair` instead.

    ``resample`` without a ``resampler`` (no API key) falls back to recomposition and says so.
    """
    pending = ws.extra.pop(PENDING, None)
    if pending is None or not _reject(ws, log, pending, method):
        return None
    if method == "none":
        _repair_off(ws)
        return None
    used = _method_used(ws, method, resampler)
    before = len(ws.session.survivors)
    try:
        outcome = _repair(ws.session, used, resampler)
    except StudioError as exc:
        _failed(ws, log, str(exc), method, pending["trigger"])
        return None
    _record(ws, log, before, outcome, method, pending["trigger"])
    return outcome


@dataclass
class RepairSearch:
    """A repair round running off the script thread, on a fork of the rejected state; the
    live session is not touched until :func:`finish_repair` applies the result."""

    fork: RepairSession
    history: list  # the live session's decisions when it started (ending with the rejection)
    method: str  # as requested (the trace's ``requested``)
    trigger: str  # "reject" | "none"
    started: float = field(default_factory=time.perf_counter)
    outcome: RepairOutcome | None = None
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event)
    # a speculated round (:func:`speculate_repair`): taken by a press, or dropped unused
    adopted: threading.Event = field(default_factory=threading.Event)
    dropped: threading.Event = field(default_factory=threading.Event)
    settled: threading.Event = field(default_factory=threading.Event)  # adopted or dropped
    # the browser session that asked for a speculated round: gone (a reload, a closed tab),
    # nobody can press for it, so it is dropped (:meth:`unwanted`)
    owner: str | None = None
    _fate: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def run(self, used: str, resampler: Resampler | None, stop: Stop | None = None) -> None:
        """The thread's body: one round on the fork; a failure is kept for the script."""
        try:
            self.outcome = _repair(self.fork, used, resampler, stop)
        except StudioError as exc:
            self.error = str(exc)
        except Exception as exc:  # reported to the user, never lost with the thread
            LOG.exception("repair search failed")
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.done.set()

    def settle(self, how: threading.Event) -> bool:
        """Decide a speculated round's fate (``adopted`` or ``dropped``), waking its thread;
        False if it was decided already (a round its thread skipped cannot be adopted)."""
        with self._fate:
            if self.settled.is_set():
                return False
            how.set()
            self.settled.set()
            return True

    def unwanted(self) -> bool:
        """Whether a speculated round is dropped, dropping it first if the session that asked
        for it is gone (an adopted round is the live session's own: it is never dropped)."""
        if not self.settled.is_set() and owner_gone(self.owner):
            self.settle(self.dropped)
        return self.dropped.is_set()

    def ahead(self, delay: float) -> None:
        """A speculated round's thread body: wait ``delay`` (the person may act first, which
        drops it), then run once the process's one speculation slot is free, or skip it (drop
        it) if the slot stays taken for ``SPEC_PATIENCE_S``: speculation never queues up. A
        press that adopted it runs it at once, slot or not. A dropped round never starts."""
        self.settled.wait(delay)
        if crowded():  # participants connected while this one read: leave them the CPU
            self.settle(self.dropped)
        slot = False
        patience = time.monotonic() + SPEC_PATIENCE_S
        while not self.settled.is_set() and not self.unwanted():
            slot = _SPEC_SLOT.acquire(timeout=0.05)
            if slot:
                break
            if time.monotonic() > patience:
                self.settle(self.dropped)
        try:
            if self.unwanted():
                self.error = "dropped"
                self.done.set()
                return
            # dropped while it runs (the person moved on, reloaded or left): it stops at the
            # next phase
            self.run("recompose", None, stop=self.unwanted)
        finally:
            if slot:
                _SPEC_SLOT.release()
            _forget(self)


def start_repair(ws: WorkspaceState, log: Log, method: str = "recompose",
                 resampler: Resampler | None = None, background: bool = True) -> bool:
    """Apply the queued rejection now and start its repair off the script thread; True if a
    search was started. The page draws the rejected state as "looking for other readings"
    until :func:`finish_repair` applies the round (``background=False`` runs it in place,
    for tests)."""
    pending = ws.extra.pop(PENDING, None)
    if pending is None or SEARCH in ws.extra:
        return False
    session = ws.session
    ahead = ws.extra.pop(SPEC, None)
    search = None
    if method != "none" and (pending.get("applied") or _can_reject(session, pending)):
        # the search works on its own fork of the rejected state, made before the event is
        # logged (the saved workspace then says a search was running)
        twin = session.fork()
        if not pending.get("applied"):
            twin.reject_outputs(pending["outputs"])
        search = RepairSearch(twin, list(twin.history), method, pending["trigger"])
        if (isinstance(ahead, RepairSearch) and ahead.history == search.history
                and _method_used(ws, method, resampler) == "recompose"
                and ahead.settle(ahead.adopted)):
            # speculated while the person read the state: the same round, maybe done
            search, ahead = ahead, None
            search.method, search.trigger = method, pending["trigger"]
            search.started = time.perf_counter()
        ws.extra[SEARCH] = search
    if isinstance(ahead, RepairSearch):
        ahead.settle(ahead.dropped)
    if not _reject(ws, log, pending, method):
        ws.extra.pop(SEARCH, None)
        return False
    if search is None:
        _repair_off(ws)
        return False
    used = _method_used(ws, method, resampler)
    if search.adopted.is_set():
        return True  # its thread runs (or ran) the round already
    if used == "recompose" and ahead_enabled():
        # a round known without computing it (the prepared pool's first round, or one a
        # session of this pool ran here) is applied at once: this run draws it repaired
        search.outcome = known_round(search.fork)
        if search.outcome is not None:
            search.done.set()
            return True
    if background:
        threading.Thread(target=search.run, args=(used, resampler), daemon=True,
                         name="pleasqlarify-repair").start()
    else:
        search.run(used, resampler)
    return True


def _can_reject(session: RepairSession, pending: dict[str, Any]) -> bool:
    """Whether the queued rejection rules out a surviving output (else nothing happens)."""
    alive = {session.output_key_of(int(i)) for i in session.survivors}
    return any(k in alive for k in pending.get("outputs", ()))


def searching(ws: WorkspaceState) -> RepairSearch | None:
    """The repair search running for this workspace, if any."""
    search = ws.extra.get(SEARCH)
    return search if isinstance(search, RepairSearch) else None


def finish_repair(ws: WorkspaceState, log: Log, wait: float = 0.0) -> RepairOutcome | None:
    """Apply the search's round once it is done (waiting at most ``wait`` s): the workspace
    takes the fork's repaired session and the ``repair`` event is logged, as
    :func:`run_repair` would have. None while it runs, or if it failed (said in a flash)."""
    search = searching(ws)
    if search is None or not search.done.wait(wait):
        return None
    ws.extra.pop(SEARCH, None)
    if ws.session.history != search.history:  # cannot happen (gestures wait); never misapply
        return None
    if search.error is not None or search.outcome is None:
        _failed(ws, log, search.error or "the search ended without a result", search.method,
                search.trigger)
        return None
    before = len(ws.session.survivors)
    if search.outcome.added:  # the fork is the live session plus the repair
        ws.session = search.fork
    _record(ws, log, before, search.outcome, search.method, search.trigger)
    return search.outcome


def crowded() -> bool:
    """Whether this server process holds more connected sessions than
    $PLEASQLARIFY_REPAIR_AHEAD_MAX_SESSIONS (default ``CROWD_SESSIONS``): then a speculated
    repair round (~0.1–0.2 s of CPU) would compete with other participants' reruns for the
    interpreter (capacity benchmark: p95 per decision 0.09 → 0.5 s at 5 participants), so
    none is started. A lab study (participant, facilitator) keeps it; outside a server
    (AppTest, scripts) there is no crowd."""
    active = _active_sessions()
    if active is None:
        return False
    try:
        limit = int(os.environ.get(CROWD_ENV, CROWD_SESSIONS))
    except ValueError:
        limit = CROWD_SESSIONS
    return active > limit


def _active_sessions() -> int | None:
    """Connected sessions of this Streamlit server process (None outside a server)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    try:
        return int(Runtime.instance()._session_mgr.num_active_sessions())
    except Exception:  # a Streamlit internal changed: keep speculating
        LOG.debug("cannot count the process's sessions", exc_info=True)
        return None


_OWNED: dict[str, RepairSearch] = {}  # browser session id -> its speculated round
_OWNED_LOCK = threading.Lock()


def _script_session() -> str | None:
    """The id of the browser session whose script runs on this thread (None outside one)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


def owner_gone(owner: str | None) -> bool:
    """Whether the browser session ``owner`` has left this server process (a reload or a
    closed tab disconnects it); False outside a server, or for no owner."""
    return owner is not None and _session_active(owner) is False


def _session_active(owner: str) -> bool | None:
    """Whether browser session ``owner`` is connected to this server process (None outside a
    server, or when Streamlit cannot say)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    try:
        return bool(Runtime.instance()._session_mgr.is_active_session(owner))
    except Exception:  # a Streamlit internal changed: keep the round (bounded anyway)
        LOG.debug("cannot ask whether session %s is active", owner, exc_info=True)
        return None


def _own(search: RepairSearch) -> None:
    """Make ``search`` its owner's one speculated round: an earlier one of the same browser
    session (another workspace, a workspace state replaced) is superseded and dropped."""
    if search.owner is None:
        return
    with _OWNED_LOCK:
        earlier = _OWNED.get(search.owner)
        _OWNED[search.owner] = search
    if earlier is not None and earlier is not search:
        earlier.settle(earlier.dropped)


def _forget(search: RepairSearch) -> None:
    """A speculated round's thread ended: its owner's entry goes (the dict stays bounded)."""
    with _OWNED_LOCK:
        if search.owner is not None and _OWNED.get(search.owner) is search:
            del _OWNED[search.owner]


def _worth_speculating(session: RepairSession) -> bool:
    """Whether a "None of these" is likely enough here to compute its repair ahead: the first
    state (every participant of a task starts there) and a converged one (one output left,
    or no question splits the survivors), where the person judges the output."""
    if session.is_exhausted or session.predicted_output_key() is None:
        return False
    return session.step == 0 or session.is_done or session.is_stuck


def speculate_repair(ws: WorkspaceState, method: str, delay: float | None = None,
                     owner: str | None = None) -> RepairSearch | None:
    """While the person reads this state: compute the recomposition a "None of these" (and
    a "No" to the one output of a converged state: the same rejection) would start, off the
    script thread after ``delay``, so the press finds it running or done (:func:`start_repair`
    adopts it). One per session, only for recomposition (resampling costs requests), never
    while a repair runs; any decision drops it (:func:`drop_speculation`). Returns it
    (``delay`` defaults to ``SPEC_DELAY_S``). Its CPU is bounded: one round at a time per
    process (:meth:`RepairSearch.ahead` skips one that would wait), stopped when dropped,
    when the browser session that asked for it (``owner``, default the script's) is gone,
    or when that session asks for another."""
    session = ws.session
    current = ws.extra.get(SPEC)
    if (method != "recompose" or SEARCH in ws.extra or PENDING in ws.extra
            or not ahead_enabled() or not _worth_speculating(session) or crowded()):
        drop_speculation(ws)
        return None
    keys = none_of_these_outputs(session)
    if (isinstance(current, RepairSearch) and current.history[:-1] == session.history
            and current.history[-1].outputs == tuple(keys)):
        return current
    drop_speculation(ws)
    twin = session.fork()
    try:
        twin.reject_outputs(keys)
    except SessionError:
        return None
    search = RepairSearch(twin, list(twin.history), "recompose", "none",
                          owner=owner or _script_session())
    ws.extra[SPEC] = search
    _own(search)
    threading.Thread(target=search.ahead, args=(SPEC_DELAY_S if delay is None else delay,),
                     daemon=True, name="pleasqlarify-repair-ahead").start()
    return search


def drop_speculation(ws: WorkspaceState) -> bool:
    """Forget the repair speculated for this state (a decision moved on): a round not begun
    never runs; one under way ends on its own fork, unused (bounded: one at a time)."""
    ahead = ws.extra.pop(SPEC, None)
    if isinstance(ahead, RepairSearch):
        ahead.settle(ahead.dropped)
        return True
    return False


def cancel_search(ws: WorkspaceState) -> bool:
    """Drop a running search (Back): its thread finishes on its own fork, unused."""
    return ws.extra.pop(SEARCH, None) is not None


def saved_search(ws: WorkspaceState) -> dict[str, Any]:
    """What the saved workspace keeps of a running search, so a reload resumes it."""
    search = searching(ws)
    return {} if search is None else {SAVED: {"method": search.method,
                                              "trigger": search.trigger}}


def restore_accept(ws: WorkspaceState, accepts: list[dict[str, Any]]) -> None:
    """After a reload: the last ``output.accept`` payload of this task (from the trace, which
    records each accept with its step and output) marks that output accepted again, so "You
    accepted this output." shows as before the reload (only while that state is shown)."""
    if accepts:
        last = accepts[-1]
        ws.extra[ACCEPTED] = (last.get("step"), last.get("output"))


def restore_search(ws: WorkspaceState, saved: dict[str, Any]) -> None:
    """After a reload: queue the search the saved workspace was running (its rejection is in
    the restored session; :func:`start_repair` starts the search again, logging nothing new)."""
    running = saved.get(SAVED)
    session = ws.session
    if isinstance(running, dict) and session.step and session.history[-1].kind == "reject":
        ws.extra[PENDING] = {"trigger": str(running.get("trigger", "none")), "applied": True,
                             "outputs": list(session.history[-1].outputs)}
