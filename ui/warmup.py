"""Server warm-up: the first visitors should not pay for imports or numba compilation.

:func:`start` runs once per process (app.py calls it at the end of every run, so the first
visitor's page is drawn before it competes for the interpreter; later calls return at once):
a daemon thread imports the modules the pages use (sklearn, scipy, anthropic, pandas
through the workspace and participant views). UMAP's numba code (10-90 s of CPU in a fresh
process: much of it is not cached on disk) is warmed by :func:`layout`, which the
free-exploration page calls: only a typed question needs a new layout, so a study server's
participants never share the CPU with that compilation.
"""

from __future__ import annotations

import importlib
import threading

PRELOAD = ("ui.workspace", "ui.panels", "ui.participant_views", "ui.condition_views",
           "core.engine.clustering", "scipy.spatial", "pandas")
_started = threading.Event()


def _run() -> None:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # the page importing it will show the real error
            continue


def layout() -> None:
    """Warm UMAP in the background once per process (a free question's layout needs it)."""
    from core.engine.layout import start_warm_up

    start_warm_up()


def start() -> None:
    """Start the warm-up thread once per process."""
    if _started.is_set():
        return
    _started.set()
    threading.Thread(target=_run, name="pleasqlarify-warm-up", daemon=True).start()
