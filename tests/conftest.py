"""Shared pytest fixtures: the PostgreSQL server (tests/pg.py) and the prepared film pools.

The session also checks that the suite writes nothing in the checkout outside ``logs/`` (the
data folder, core.settings) and ``test-artifacts/`` (screenshots): every other new, changed or
deleted file fails the run, named.
"""

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from tests.pg import film_pg, pg_server_url, pg_url, store_url  # noqa: F401  (registered as fixtures)

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = ("logs/", "test-artifacts/", "node_modules/")  # node_modules: npm ci, before the tests
GIT_STATUS = ["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "--", ".",
              *(f":!{a.rstrip('/')}" for a in ALLOWED)]

# core/layout.py imports umap (numba) for n >= 5 classes: keep its compiled cache writable.
os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
# Hypothesis keeps its example database and caches in the data folder, not in the checkout's root.
set_hypothesis_home_dir(ROOT / "logs" / "hypothesis")


def checkout_state(root: Path = ROOT) -> dict[str, tuple[str, int]] | None:
    """Every changed, untracked or ignored file outside the allowed folders (git status), with its
    status and modification time; None outside a git checkout. Python's bytecode caches are left
    out: the interpreter writes them beside every module it imports."""
    try:
        out = subprocess.run(GIT_STATUS, cwd=root, capture_output=True, text=True, timeout=60,
                             check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    state = {}
    for line in out.splitlines():
        path = line[3:].strip('"')
        if "__pycache__/" in path:
            continue
        try:
            mtime = (root / path).stat().st_mtime_ns
        except OSError:
            mtime = -1  # deleted
        state[path] = (line[:2], mtime)
    return state


def written_outside(before: dict[str, tuple[str, int]],
                    after: dict[str, tuple[str, int]]) -> list[str]:
    """Paths that appeared, changed or vanished between two :func:`checkout_state` snapshots."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Snapshot the checkout before any test runs."""
    session.config.stash[_BEFORE] = checkout_state()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test wrote in the checkout outside logs/ and test-artifacts/."""
    before = session.config.stash.get(_BEFORE, None)
    after = checkout_state() if before is not None else None
    if before is None or after is None:
        return
    bad = written_outside(before, after)
    if bad:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = ("the tests wrote in the checkout outside logs/ and test-artifacts/ (use "
                   "tmp_path or core.settings' data folder): " + ", ".join(bad[:20]))
        if reporter is not None:
            reporter.write_line(f"ERROR {message}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_BEFORE = pytest.StashKey[dict[str, tuple[str, int]] | None]()


@pytest.fixture(scope="session")
def film_pools() -> list:
    """The film bank's first three tasks prepared without layout (tests/conftest_core.py)."""
    from tests.conftest_core import film_pools as prepared

    return list(prepared())


def pytest_terminal_summary(terminalreporter) -> None:
    """Print what the session state machine explored (tests/test_session_machine.py), if it ran."""
    import sys

    machine = sys.modules.get("tests.test_session_machine")
    line = machine.summary() if machine is not None else None
    if line:
        terminalreporter.write_line(line)
