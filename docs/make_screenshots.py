"""Regenerate the README screenshots: `python docs/make_screenshots.py` (needs Debian's Chromium).

Starts the app on a free loopback port against a throwaway study database filled by
``study.simulate_demo``, drives it with Playwright, and writes PNGs to docs/img/.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _idle(page) -> None:
    page.wait_for_timeout(500)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           timeout=60_000)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="shots-"))
    env = dict(os.environ, PLEASQLARIFY_DB_URL=f"sqlite:///{tmp / 'study.sqlite'}",
               PLEASQLARIFY_DEMO_DB_URL=f"sqlite:///{tmp / 'demo.sqlite'}",
               PLEASQLARIFY_RESEARCHER_PASSWORD="demo",
               NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"))
    subprocess.run([sys.executable, "-m", "study.simulate_demo", "--participants", "6"],
                   cwd=ROOT, env=env, check=True)
    port = _port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py",
                               "--server.headless", "true", "--server.port", str(port),
                               "--server.address", "127.0.0.1"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{base}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_context(viewport={"width": 1600, "height": 1150}).new_page()
            page.set_default_timeout(60_000)
            page.goto(f"{base}/workspace")
            page.get_by_text("queries remain").first.wait_for()
            _idle(page)
            page.get_by_role("button", name="Yes").first.click()
            _idle(page)
            page.screenshot(path=str(OUT / "workspace.png"))
            page.goto(f"{base}/researcher")
            page.get_by_label("Researcher password").fill("demo")
            page.get_by_role("button", name="Unlock").click()
            _idle(page)
            # a page load would start a new (locked) session: navigate inside the app
            page.get_by_role("link", name="Analysis").click()
            page.get_by_text("Demo (simulated)").click()  # the simulated demo database
            page.get_by_role("tab", name="Completion").wait_for()
            _idle(page)
            page.screenshot(path=str(OUT / "analysis.png"))
            page.goto(f"{base}/participant?study=film")
            page.get_by_text("consent").first.wait_for()
            _idle(page)
            page.screenshot(path=str(OUT / "participant-consent.png"))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"screenshots written to {OUT}")


if __name__ == "__main__":
    main()
