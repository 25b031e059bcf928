"""Typed per-user state behind one small accessor, instead of string keys spread over files.

Everything lives in ``st.session_state`` (per browser session), never in module globals or
``st.cache_resource`` objects, which are shared between participants. Each workspace is stored
under one namespaced key holding a :class:`WorkspaceState`; widget keys are derived from the
same namespace so two embedded workspaces never collide. The one thing shared between users is
what a pool determines alone: the first state of a new default session (:func:`started_session`),
of which each user gets an independent fork.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from core.engine.lru import LRUCache

if TYPE_CHECKING:  # the engine (sklearn, scipy) loads with the first workspace, not with Home
    from core.engine.pool import PreparedPool
    from core.engine.session import RankedVariable, RepairSession

PREFIX = "pleasqlarify"
PREPARED = f"{PREFIX}.prepared"  # task id -> a fresh RepairSession warmed in the background


@dataclass(frozen=True)
class WorkspaceOptions:
    """Which panels a study condition shows, and whether pool accounting gates Submit."""

    show_action_space: bool = True
    show_decision_space: bool = True
    pool_accounting: bool = False  # Submit waits until informative variables are settled
    ig_threshold: float = 0.1  # bits: variables above this gain must be answered or dismissed
    submit: bool = True  # study mode: offer Submit (exploration subtasks do not)
    show_question: bool = True  # False when the page shows the question itself
    repair: str = "recompose"  # after "No" / "None of these": none | recompose | resample
    labels: str = "both"  # clauses as SQL chips, plain-language questions, or both
    submit_primary: bool = True  # the practice's Submit is secondary: continuing is its step


@dataclass
class WorkspaceState:
    """One user's repair workspace for one task: the session plus view-only UI state."""

    session: RepairSession
    question: str
    browse: int = 0  # index into session.variables() shown in the Decision Space
    last_selection: str | None = None  # signature of the last chart selection applied
    flash: str | None = None  # a one-rerun notice (e.g. an impossible decision): no SQL in it
    submitted: int | None = None  # pool index submitted in study mode
    extra: dict[str, Any] = field(default_factory=dict)
    dismissed: list[tuple[str, ...]] = field(default_factory=list)  # pool accounting
    # the error behind ``flash`` in its own words (may quote SQL or the database): shown only
    # where the condition's labels show SQL, and logged (ui.actions.refused)
    flash_detail: str | None = None

    def widget_key(self, name: str) -> str:
        """A widget key unique to this workspace."""
        return f"{PREFIX}.{self.session.pool.task_id}.{name}"


def current_variable(ws: WorkspaceState) -> RankedVariable | None:
    """The decision variable the Decision Space shows (browse index clamped to the ranking)."""
    ranked = ws.session.variables()
    if not ranked:
        return None
    ws.browse = min(max(ws.browse, 0), len(ranked) - 1)
    return ranked[ws.browse]


def _store(store: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
    if store is not None:
        return store
    import streamlit as st

    # the proxy is a MutableMapping[str | int, Any]: every key used here is a str
    return cast("MutableMapping[str, Any]", st.session_state)


def workspace_state(pool: PreparedPool, namespace: str = "free", *,
                    factory: Callable[[PreparedPool], RepairSession] | None = None,
                    store: MutableMapping[str, Any] | None = None) -> WorkspaceState:
    """The workspace of ``pool`` in ``namespace``, created on first use.

    ``factory`` makes a new session (default :func:`default_session`, or the one
    :func:`prepare_session` warmed for this user).
    """
    from core.engine.session import RepairSession

    state = _store(store)
    key = f"{PREFIX}.workspace.{namespace}.{pool.task_id}"
    ws = state.get(key)
    if not isinstance(ws, WorkspaceState) or ws.session.origin_pool is not pool:
        if isinstance(ws, WorkspaceState):  # pool object was reloaded: replay onto it
            session = RepairSession.from_dict(ws.session.to_dict(), pool)
            ws = WorkspaceState(session, ws.question, 0, None, None, ws.submitted, ws.extra,
                                ws.dismissed)
        else:
            warm = take_prepared(pool, store=state) if factory is None else None
            ws = WorkspaceState(warm or (factory or started_session)(pool), pool.question)
        state[key] = ws
    return ws


def default_session(pool: PreparedPool, **overrides: Any) -> RepairSession:
    """A new session with the workspace's default strategy and question vocabulary
    (:data:`core.engine.strategy.WORKSPACE_DEFAULT`, chosen on real golds); ``overrides``
    (a study condition's ``questions`` / ``values``) replace what they name."""
    from core.engine.session import RepairSession
    from core.engine.strategy import WORKSPACE_DEFAULT

    return RepairSession(pool, **{**WORKSPACE_DEFAULT, **overrides})


def warm_session(pool: PreparedPool) -> RepairSession:
    """A fresh session of ``pool`` with its first state computed (what a workspace shows)."""

    session = default_session(pool)
    session.cluster_of()
    session.variables()
    session.predicted_query()
    session.predicted_output()
    return session


STARTS_MAX = 32  # pools whose first state is kept (a generated pool is one user's own)
_STARTS = LRUCache(STARTS_MAX, 1 << 62)  # str(id(pool)) -> (pool, its first state)


def started_session(pool: PreparedPool) -> RepairSession:
    """A new default session of ``pool`` whose first state (clusters, ranked questions,
    predicted query and output) is computed once per pool and process: every user starts in
    that same state (the ranking is seeded by the session's ``random_state`` and step), so a
    new session's first paint does not rank again. Each call returns an independent fork (its
    own history and memo; the shared views are never changed in place)."""
    key = str(id(pool))
    entry = _STARTS.get(key)
    if entry is None or entry[0] is not pool:  # computed unlocked: other pools do not wait
        entry = _STARTS.setdefault(key, (pool, warm_session(pool)))
        if entry[0] is not pool:  # an id reused by a new pool: the stale entry goes
            entry = _STARTS[key] = (pool, warm_session(pool))
    return entry[1].fork()


def prepare_session(load: Callable[[], PreparedPool], task_id: str, *,
                    store: MutableMapping[str, Any] | None = None,
                    background: bool = True) -> threading.Thread | None:
    """Load ``task_id``'s pool with ``load`` and warm a fresh session of it for this user.

    The participant flow calls it a step ahead (onboarding → practice, part 1 → part 2a), in a
    daemon thread by default, so the first workspace render finds the pool cached and a ready
    session instead of loading, clustering and ranking on the click path. Returns the thread
    (None when run in place, or when this task is prepared or being prepared already).
    """
    prepared = _store(store).setdefault(PREPARED, {})
    if task_id in prepared:
        return None

    def run() -> None:
        try:
            prepared[task_id] = started_session(load())
        except Exception:  # the workspace then computes it itself, and shows why
            prepared.pop(task_id, None)
    if not background:
        run()
        return None
    thread = threading.Thread(target=run, name=f"pleasqlarify-prepare-{task_id}", daemon=True)
    prepared[task_id] = thread  # being prepared: take_prepared waits for it
    thread.start()
    return thread


WAIT_S = 2.0  # a session being prepared is nearly always closer to done than a new one


def take_prepared(pool: PreparedPool, *, store: MutableMapping[str, Any] | None = None
                  ) -> RepairSession | None:
    """The warmed session of ``pool`` (waiting for one being prepared), else None; used once."""
    from core.engine.session import RepairSession

    prepared = _store(store).get(PREPARED) or {}
    entry = prepared.get(pool.task_id)
    if isinstance(entry, threading.Thread):
        entry.join(WAIT_S)
        entry = prepared.get(pool.task_id)
    if isinstance(entry, RepairSession) and entry.origin_pool is pool and not entry.history:
        prepared.pop(pool.task_id, None)
        return entry
    return None


def selected_task(default: str | None = None, *,
                  store: MutableMapping[str, Any] | None = None) -> str | None:
    """The task id chosen on the Home or Workspace page."""
    return _store(store).get(f"{PREFIX}.task", default)


def select_task(task_id: str, *, store: MutableMapping[str, Any] | None = None) -> None:
    """Remember the chosen task id for the free-exploration page."""
    _store(store)[f"{PREFIX}.task"] = task_id
