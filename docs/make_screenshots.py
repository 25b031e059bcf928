"""Regenerate the README screenshots: `python docs/make_screenshots.py [--only NAME ...]` (needs
Debian's Chromium; ``--only analysis`` retakes that one shot, NAME from :data:`SHOTS`).

Starts the app on a free loopback port against a throwaway study database filled by
``study.simulate_demo``, drives it with Playwright, and writes PNGs to docs/img/.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from docs/
from tests.harness import CHROMIUM, CHROMIUM_ARGS, running

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img"
SHOTS = ("workspace", "analysis", "setup", "participant-consent")  # docs/img/<name>.png
TIMEOUT_MS = 180_000  # generous: a shared, loaded machine can take a minute per page


def _idle(page) -> None:
    page.wait_for_timeout(500)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           timeout=TIMEOUT_MS)


def _unlock(page, base: str) -> None:
    """Unlock the researcher pages in this browser session (password "demo", set below)."""
    page.goto(f"{base}/researcher")
    page.get_by_label("Researcher password").fill("demo")
    page.get_by_role("button", name="Unlock").click()
    _idle(page)


def main(argv: list[str] | None = None) -> None:
    """Take the screenshots named by ``--only`` (default: all of :data:`SHOTS`)."""
    parser = argparse.ArgumentParser(description="Regenerate the README screenshots.")
    parser.add_argument("--only", action="append", choices=SHOTS, metavar="NAME",
                        help=f"take only this shot (repeatable): {', '.join(SHOTS)}")
    wanted = set(parser.parse_args(argv).only or SHOTS)
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="shots-"))
    env = dict(os.environ, PLEASQLARIFY_DB_URL=f"sqlite:///{tmp / 'study.sqlite'}",
               PLEASQLARIFY_DEMO_DB_URL=f"sqlite:///{tmp / 'demo.sqlite'}",
               PLEASQLARIFY_RESEARCHER_PASSWORD="demo",
               NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"))
    subprocess.run([sys.executable, "-m", "study.simulate_demo", "--participants", "6"],
                   cwd=ROOT, env=env, check=True)
    with running("app.py", env=env, log=tmp) as server, sync_playwright() as p:
        base = server.url
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        page = browser.new_context(viewport={"width": 1600, "height": 1150}).new_page()
        page.set_default_timeout(TIMEOUT_MS)
        if "workspace" in wanted:
            page.goto(f"{base}/workspace")
            page.get_by_text("queries remain").first.wait_for()
            _idle(page)
            page.get_by_role("button", name="Yes").first.click()
            _idle(page)
            # Streamlit scrolls inside its main container, so full_page would not reach the
            # Predicted Output below the first screen: make the window tall enough instead
            page.set_viewport_size({"width": 1600, "height": 1500})
            _idle(page)
            page.screenshot(path=str(OUT / "workspace.png"))
            page.set_viewport_size({"width": 1600, "height": 1150})
        if wanted & {"analysis", "setup"}:
            _unlock(page, base)
        if "analysis" in wanted:
            # a page load would start a new (locked) session: navigate inside the app
            page.get_by_role("link", name="Analysis").click()
            page.get_by_text("Demo (simulated)").click()  # the simulated demo database
            page.get_by_role("tab", name="Completion").wait_for()
            _idle(page)
            # the completion grid (HTML), and the canvas of any (lazily loaded) data grid
            page.wait_for_function(
                "() => document.querySelector('.pq-grid td') && [...document.querySelectorAll("
                "'[data-testid=stDataFrame]')].every((e) => e.querySelector('canvas'))",
                timeout=TIMEOUT_MS)
            page.wait_for_timeout(500)
            page.screenshot(path=str(OUT / "analysis.png"))
        if "setup" in wanted:
            page.get_by_role("link", name="Setup").click()
            page.get_by_text("What the study can do").wait_for()
            # the honest simulated user runs per task first (a progress bar), then the table
            page.wait_for_function(
                "() => !document.querySelector('[data-testid=stProgress]') && [...document"
                ".querySelectorAll('[data-testid=stDataFrame]')].length >= 3 && [...document"
                ".querySelectorAll('[data-testid=stDataFrame]')].every((e) => e.querySelector("
                "'canvas'))", timeout=600_000)
            _idle(page)
            page.set_viewport_size({"width": 1600, "height": 1700})
            _idle(page)
            page.screenshot(path=str(OUT / "setup.png"))
            page.set_viewport_size({"width": 1600, "height": 1150})
        if "participant-consent" in wanted:
            # a fresh context: the researcher cookie set above would show the navigation,
            # which a participant's link never has
            page = browser.new_context(viewport={"width": 1600, "height": 1150}).new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(f"{base}/participant?study=film")
            page.get_by_text("consent").first.wait_for()
            _idle(page)
            page.screenshot(path=str(OUT / "participant-consent.png"))
        browser.close()
    print(f"screenshots written to {OUT}: {', '.join(sorted(wanted))}")


if __name__ == "__main__":
    main()
