"""Browser-test fixtures: a `streamlit run app.py` on a free loopback port and Debian's Chromium."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import CHROMIUM, CHROMIUM_ARGS, running

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

if not Path(CHROMIUM).exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium); "
                "it is absent here", allow_module_level=True)


def server_env(**extra: str) -> dict[str, str]:
    """This process's environment, the shared numba cache, and ``extra``."""
    return dict(os.environ, NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"),
                **extra)


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """Base URL of a headless Streamlit server running app.py (stopped after the session)."""
    with running("app.py", env=server_env(), log=ARTIFACTS / "streamlit-browser.log",
                 timeout=60) as srv:
        yield srv.url


@pytest.fixture(scope="session")
def browser() -> Iterator:
    """One headless Chromium for the whole session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        yield b
        b.close()


@pytest.fixture()
def page(browser, server: str):
    """A fresh browser page (own Streamlit session) sized like a lab monitor."""
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1600, "height": 1100})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    yield pg
    context.close()
