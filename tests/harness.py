"""Throwaway Streamlit servers and headless Chromium for the tests, benchmarks and screenshots.

:func:`start` / :func:`running` are the one way tools and tests start a server on a free loopback
port and wait until it answers its health check (the browser tests, the benchmarks in
benchmarks/, docs/make_screenshots.py). Product code never imports this module.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.settings import REPO_ROOT

LOOPBACK = "127.0.0.1"
CHROMIUM = "/usr/bin/chromium"  # Debian's; the browser tests and tools drive it headless
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run")


def free_port() -> int:
    """A TCP port on the loopback interface that was free a moment ago."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A ``streamlit run`` child process, its base URL and the file its output goes to."""

    proc: subprocess.Popen
    url: str
    log: Path

    def stop(self, timeout: float = 10) -> None:
        """Terminate the server (kill it if it does not stop within ``timeout`` s)."""
        stop(self.proc, timeout)


def stop(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Terminate a server process; kill it if it has not exited within ``timeout`` s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start(script: str | Path = "app.py", *, env: Mapping[str, str] | None = None,
          log: Path | None = None, timeout: float = 120, options: Sequence[str] = (),
          cwd: Path = REPO_ROOT) -> Server:
    """``streamlit run script`` headless on a free loopback port; returns once it is healthy.

    Output goes to ``log``: a file, or a folder to hold ``streamlit-<port>.log`` (default: the
    temp folder). Raises RuntimeError naming the log when the server exits or is not healthy
    within ``timeout`` s.
    """
    port = free_port()
    log = Path(log or tempfile.gettempdir())
    log = log / f"streamlit-{port}.log" if log.is_dir() else log
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:  # the child keeps its own handle
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
             "--server.port", str(port), "--server.address", LOOPBACK,
             "--browser.gatherUsageStats", "false", *options],
            cwd=cwd, env=dict(os.environ if env is None else env), stdout=out,
            stderr=subprocess.STDOUT)
    server = Server(proc, f"http://{LOOPBACK}:{port}", log)
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=1)
            return server
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"streamlit run {script} did not become healthy within "
                                   f"{timeout:.0f} s; see its output in {log}") from None
            time.sleep(0.1)


@contextmanager
def running(script: str | Path = "app.py", **kw) -> Iterator[Server]:
    """:func:`start` as a context manager: the server is stopped on exit."""
    server = start(script, **kw)
    try:
        yield server
    finally:
        server.stop()
