"""Server warm-up: the first visitors should not pay for imports or numba compilation.

:func:`start` runs once per process (app.py calls it on every run; later calls return at
once): a daemon thread imports the modules the pages use (sklearn, scipy, anthropic, pandas
through the workspace and participant views) and then warms UMAP's numba code from the
persistent cache under logs/ (:func:`core.engine.layout.warm_up`).
"""

from __future__ import annotations

import importlib
import threading

PRELOAD = ("ui.workspace", "ui.panels", "ui.participant_views", "ui.condition_views",
           "core.engine.clustering", "scipy.spatial", "pandas")
_started = threading.Event()


def _run() -> None:
    from core.engine.layout import warm_up

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the page importing it will show the real error
            continue
    warm_up()


def start() -> None:
    """Start the warm-up thread once per process."""
    if _started.is_set():
        return
    _started.set()
    threading.Thread(target=_run, name="pleasqlarify-warm-up", daemon=True).start()
