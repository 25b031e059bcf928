"""Shared pytest fixtures: the PostgreSQL server (tests/pg.py) and the prepared film pools."""

import pytest

from tests.pg import film_pg, pg_server_url, pg_url, store_url  # noqa: F401  (registered as fixtures)

# core/layout.py imports umap (numba) for n >= 5 classes: keep its compiled cache writable.
__import__("os").environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")


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
