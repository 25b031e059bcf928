"""Analysis computed once per study and data version, not on every rerun of the page.

The Analysis page reruns on every widget (a tab's selectbox, the replay slider, a filter), and
recomputing the study's data, its export tables and the export zip cost seconds on each. Here
:func:`study_data` loads a study once per :meth:`study.store.Store.data_version` (new events,
answers, codes or a participant's change make a new version), and :func:`memo` keeps what is
computed from it, keyed by the identity of its inputs: the same loaded data gives the same
filtered data object, whose tables and timings are then found again. Results are shared
between reruns and sessions, so callers must not mutate them (the page copies before editing).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from study.analysis.data import StudyData, filter_data, load_study_data
from study.analysis.specs import SpecLookup, find_study_spec, spec_files_version
from study.export import build_tables
from study.store import Store

LOG = logging.getLogger(__name__)
T = TypeVar("T")
# results kept, least recently used dropped: a study's data version has ~25 (data, tables, each
# tab's figures and tables), so this holds a few studies or versions
MAX_ENTRIES = 128
_LOCK = threading.Lock()
_MEMO: OrderedDict[tuple, tuple[Any, tuple]] = OrderedDict()


def _token(value: Any) -> Any:
    """A key part for one argument: its value when hashable (lists become tuples), else its
    identity (the entry holds the argument, so the identity cannot be reused meanwhile)."""
    if isinstance(value, list | tuple):
        return ("seq", tuple(_token(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return ("v", value)


def memo(fn: Callable[..., T], *args: Any, version: Any = None, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, computed once per ``version`` and inputs (see module)."""
    key = (fn.__module__, fn.__qualname__, _token(version), _token(args),
           tuple((k, _token(v)) for k, v in sorted(kwargs.items())))
    with _LOCK:
        hit = _MEMO.get(key)
        if hit is not None:
            _MEMO.move_to_end(key)
            return hit[0]
    result = fn(*args, **kwargs)  # outside the lock: two sessions may compute it both once
    with _LOCK:
        _MEMO[key] = (result, (args, kwargs))
        while len(_MEMO) > MAX_ENTRIES:
            _MEMO.popitem(last=False)
    return result


def study_data(store: Store, study: str) -> StudyData:
    """Every participant, event, answer and code of ``study``, loaded once per data version."""
    return memo(load_study_data, store, study, version=store.data_version(study))


def study_spec(study: str, raw: StudyData) -> SpecLookup:
    """The study file of ``study`` for its loaded data, parsed again only when a candidate
    file changes (its mtime or size) or the data does."""
    return memo(find_study_spec, study, raw, version=spec_files_version(study))


@dataclass(frozen=True)
class Prepared:
    """One study as the page shows it: loaded, filtered, its study file and export tables."""

    raw: StudyData
    data: StudyData
    lookup: SpecLookup
    tables: dict[str, pd.DataFrame]


def prepare(store: Store, study: str, filters: dict[str, Any], raw: StudyData | None = None
            ) -> Prepared:
    """``study`` loaded (or ``raw``, its :func:`study_data` of this run: the data version is
    then not asked again), filtered with the sidebar's ``filters`` (:func:`filter_data`'s
    keywords), its study file found and its export tables built — each step memoised."""
    raw = study_data(store, study) if raw is None else raw
    data = memo(filter_data, raw, **filters)
    lookup = study_spec(study, raw)
    tables = memo(build_tables, data, lookup.spec, lookup) if data.ids else {}
    return Prepared(raw, data, lookup, tables)


# one background thread, started once and reused: starting a thread per page run cost the
# run 10-45 ms (the new thread must take the GIL before start() returns). A daemon thread
# fed by a queue, not a ThreadPoolExecutor: an executor's worker is joined at interpreter
# exit, so stopping the server mid-warm-up waited for the whole round (seconds)
_JOBS: queue.SimpleQueue[tuple[Future, Callable[[], None]]] = queue.SimpleQueue()
_WORKER: list[threading.Thread] = []
_WARMER: list[Future] = []


def _work() -> None:
    """The warm-up thread's body: run each queued round, its outcome kept in its future."""
    while True:
        future, run = _JOBS.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            run()
        except BaseException as exc:  # run() logs its own errors; never lose the thread
            future.set_exception(exc)
        else:
            future.set_result(None)


def _submit(run: Callable[[], None]) -> Future:
    """Queue ``run`` on the warm-up thread (started on first use, a daemon); call under _LOCK."""
    if not _WORKER or not _WORKER[0].is_alive():
        _WORKER[:] = [threading.Thread(target=_work, name="analysis-warm", daemon=True)]
        _WORKER[0].start()
    future: Future = Future()
    _JOBS.put((future, run))
    return future


def warm(store: Store, studies: list[str], filters: dict[str, Any]) -> None:
    """Prepare ``studies`` in the background thread (not queued while a round still runs), so
    switching to another study finds its data and tables computed; errors are logged only
    (the page reports them when that study is opened)."""
    def run() -> None:
        for study in studies:
            try:
                prepare(store, study, filters)
            except Exception:  # the page shows the error if the study is opened
                LOG.exception("preparing %s for the Analysis page failed", study)

    with _LOCK:
        if not studies or (_WARMER and not _WARMER[0].done()):
            return
        _WARMER[:] = [_submit(run)]


def clear() -> None:
    """Forget every cached result (tests; a researcher never needs it: versions change)."""
    with _LOCK:
        _MEMO.clear()
