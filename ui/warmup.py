"""Server warm-up: the first visitors should not pay for imports or numba compilation.

:func:`start` runs once per process (app.py calls it at the end of every run, so the first
visitor's page is drawn before it competes for the interpreter; later calls return at once):
a daemon thread imports the modules the pages use (numpy, SciPy, pandas, scikit-learn through
the workspace and participant views, then anthropic for the chat conditions), one step at a
time, and **yields**: before each step it waits while a page's script runs
(:func:`scripts_running`), so a visitor's page that needs none of these modules never shares
the interpreter (the GIL) with them, and one that does imports what it needs itself (an
import in progress in the warm-up thread is finished first, then the page finds it). After a
restart under load the first consent, practice and Setup pages waited 18-60 s; see
docs/performance.md ("First visitors of a restarted server") for what they waited for.

UMAP's numba code (10-90 s of CPU in a fresh process: much of it is not cached on disk) is
warmed by :func:`layout`, which the free-exploration page and Setup call: only a typed question
or preparing a pool needs a new layout, so a study server's participants never share the CPU
with that compilation. On a cold numba cache it first lets a child process at the lowest CPU
priority compile what numba caches on disk (:func:`fill_numba_cache`), so the in-process part
that holds the GIL shrinks to loading it plus what numba cannot cache; then it too waits until
no script runs before it starts.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from core.settings import REPO_ROOT

# in the order the pages need them; each step small enough that a page starting meanwhile
# waits for little of it (scikit-learn and pandas are ~1-2 s each on a quiet machine)
PRELOAD = ("numpy", "scipy.sparse", "scipy.spatial", "scipy.cluster.hierarchy", "pandas",
           "sklearn.metrics", "core.engine.session", "ui.workspace", "ui.panels",
           "ui.participant_views", "ui.condition_views", "core.engine.clustering",
           "scipy.stats", "plotly.graph_objects", "anthropic")
SCRIPT_THREAD = "ScriptRunner.scriptThread"  # Streamlit's thread for one run of a page script
POLL_S = 0.05
QUIET_S = 0.3  # a page's follow-up run (a widget's callback, st.rerun) often starts this soon
MAX_WAIT_S = 20.0  # a busy server (a crowd study) warms up anyway, between runs if it can
PRELOAD_THREAD = "pleasqlarify-preload"
_started = threading.Event()
_layout_started = threading.Event()
_preloading: set[str] = set()
_preload_lock = threading.Lock()


def scripts_running() -> bool:
    """Whether a page's script (or fragment) is running in this process now."""
    return any(t.name == SCRIPT_THREAD and t.is_alive() for t in threading.enumerate())


def wait_for_quiet(poll_s: float = POLL_S, quiet_s: float = QUIET_S,
                   max_wait_s: float = MAX_WAIT_S) -> bool:
    """Wait until no page script has run for ``quiet_s`` seconds (polled every ``poll_s``);
    False when ``max_wait_s`` passed first (the caller goes on regardless)."""
    start = calm_since = time.monotonic()
    while True:
        now = time.monotonic()
        if scripts_running():
            calm_since = now
        elif now - calm_since >= quiet_s:
            return True
        if now - start >= max_wait_s:
            return False
        time.sleep(poll_s)


def _run() -> None:
    """The warm-up thread: each module of :data:`PRELOAD` in turn, each after the pages' scripts."""
    for name in PRELOAD:
        wait_for_quiet()
        try:
            importlib.import_module(name)
        except Exception:  # the page importing it will show the real error
            continue


# the child: lowest CPU priority, gone when the server is (a stopped server leaves no compiler)
FILL_CACHE = """
import os, threading, time
os.nice(19)
parent = os.getppid()
def orphaned():
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)
threading.Thread(target=orphaned, daemon=True).start()
from core.engine.layout import warm_up
warm_up()
"""
FILL_TIMEOUT_S = 600.0


def numba_cache_filled(cache: Path) -> bool:
    """Whether numba's on-disk cache holds UMAP's compiled code (its index files)."""
    return any(cache.glob("umap_*/*.nbi"))


def fill_numba_cache(timeout_s: float = FILL_TIMEOUT_S) -> bool:
    """Compile UMAP's cacheable numba code in a child process at the lowest CPU priority, so
    this process then loads it from disk (on a cold cache: ~27 s of CPU here become ~12 s)
    while the child's ~15 s never hold this server's GIL; True when the cache was filled (or
    already was), False when the child failed (the in-process warm-up compiles it all)."""
    from core.engine.layout import use_numba_cache

    cache = Path(use_numba_cache())
    if numba_cache_filled(cache):
        return True
    try:
        subprocess.run([sys.executable, "-c", FILL_CACHE], cwd=REPO_ROOT, check=True,
                       env=dict(os.environ), timeout=timeout_s, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return numba_cache_filled(cache)


def _layout() -> None:
    """The UMAP warm-up: the disk cache filled by a low-priority child process, then, once the
    pages' scripts are quiet, the in-process import and tiny fit (loading from that cache)."""
    fill_numba_cache()
    wait_for_quiet()
    from core.engine.layout import start_warm_up

    start_warm_up()


def layout() -> None:
    """Warm UMAP in the background once per process (a free question's layout needs it), after
    the page calling this has finished (its script no longer competes with the compilation)."""
    if _layout_started.is_set():
        return
    _layout_started.set()
    threading.Thread(target=_layout, name="pleasqlarify-layout-warm-up", daemon=True).start()


def _preload(name: str) -> None:
    """Import ``name`` once the page that asked for it has finished running."""
    wait_for_quiet(quiet_s=0.05)
    with contextlib.suppress(Exception):  # the page importing it will show the real error
        importlib.import_module(name)


def preload(name: str) -> None:
    """Import module ``name`` in the background once this page's script has finished (once per
    process): a gated page's body (the Analysis page's pandas, SciPy, Plotly and export tables)
    loads while its password form is read, not before the form shows nor after Unlock."""
    if name in sys.modules:
        return
    with _preload_lock:
        if name in _preloading:
            return
        _preloading.add(name)
    threading.Thread(target=_preload, args=(name,), name=PRELOAD_THREAD, daemon=True).start()


def start() -> None:
    """Start the warm-up thread once per process."""
    if _started.is_set():
        return
    _started.set()
    threading.Thread(target=_run, name="pleasqlarify-warm-up", daemon=True).start()
