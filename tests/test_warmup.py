"""The warm-up thread yields to the pages: it waits while a page's script runs (issue 24)."""

from __future__ import annotations

import threading
import time

import pytest

from ui import warmup


def _script(release: threading.Event) -> threading.Thread:
    """A thread named as Streamlit names a running page script, alive until ``release``."""
    thread = threading.Thread(target=release.wait, name=warmup.SCRIPT_THREAD, daemon=True)
    thread.start()
    return thread


def test_the_warm_up_waits_while_a_page_script_runs() -> None:
    release = threading.Event()
    script = _script(release)
    returned: list[bool] = []
    waiter = threading.Thread(target=lambda: returned.append(
        warmup.wait_for_quiet(poll_s=0.01, quiet_s=0.05, max_wait_s=60)), daemon=True)
    waiter.start()
    assert warmup.scripts_running()
    waiter.join(0.5)
    assert waiter.is_alive() and not returned  # still waiting: the script runs
    release.set()
    script.join()
    waiter.join(30)
    assert returned == [True] and not warmup.scripts_running()


def test_a_server_that_never_goes_quiet_warms_up_anyway() -> None:
    release = threading.Event()
    script = _script(release)
    try:
        start = time.monotonic()
        assert warmup.wait_for_quiet(poll_s=0.01, quiet_s=0.05, max_wait_s=0.2) is False
        assert time.monotonic() - start >= 0.2
    finally:
        release.set()
        script.join()


def test_warm_up_modules_exist() -> None:
    """Every module the warm-up imports is importable by name (a typo would warm nothing)."""
    import importlib.util

    missing = [m for m in warmup.PRELOAD if importlib.util.find_spec(m) is None]
    assert missing == []


@pytest.mark.slow
def test_a_cold_numba_cache_is_filled_by_a_child_process(tmp_path, monkeypatch) -> None:
    """On an empty NUMBA_CACHE_DIR the child process compiles UMAP's cacheable code into it,
    and this process has not imported umap (nothing of it held this server's GIL)."""
    import sys

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    had_umap = "umap" in sys.modules
    assert not warmup.numba_cache_filled(tmp_path / "numba")
    assert warmup.fill_numba_cache() is True
    assert warmup.numba_cache_filled(tmp_path / "numba")
    assert ("umap" in sys.modules) == had_umap
