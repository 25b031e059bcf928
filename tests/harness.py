"""Throwaway Streamlit servers and headless Chromium for the tests, benchmarks and screenshots.

:func:`start` / :func:`running` are the one way tools and tests start a server on a free loopback
port and wait until it answers its health check (the browser tests, the benchmarks in
benchmarks/, docs/make_screenshots.py); :func:`start_nginx` puts several of them behind nginx
with the shipped ``deploy/nginx.conf.example`` (sticky sessions), on a free loopback port with its
own prefix, never the system service. Product code never imports this module.
"""

from __future__ import annotations

import os
import re
import shutil
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
NGINX_CONF = REPO_ROOT / "deploy" / "nginx.conf.example"
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
    wait_healthy(server.url, proc, timeout, f"streamlit run {script} did not become healthy within "
             f"{timeout:.0f} s; see its output in {log}")
    return server


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float, failure: str) -> None:
    """Wait until ``url``'s health check answers; stop ``proc`` and raise ``failure`` if it
    exits first or ``timeout`` s pass."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(proc)
                raise RuntimeError(failure) from None
            time.sleep(0.1)


@dataclass
class Balancer:
    """An nginx child process in front of app servers: its URL, prefix folder and logs."""

    proc: subprocess.Popen
    url: str
    prefix: Path

    @property
    def access_log(self) -> Path:
        """One line per request: time, route, status, "upstream addresses tried", "request"."""
        return self.prefix / "access.log"

    def stop(self, timeout: float = 10) -> None:
        """Stop nginx (its workers exit with the master)."""
        stop(self.proc, timeout)


def nginx_config(upstreams: Sequence[str], port: int, prefix: Path,
                 snippet: Path = NGINX_CONF) -> str:
    """A main nginx.conf for a private nginx: ``snippet`` with its upstream servers and listen
    address replaced, temp files and logs under ``prefix``. Raises ValueError when the snippet
    has no upstream block or listen line to replace."""
    text = snippet.read_text(encoding="utf-8")
    servers = "".join(f"    server {u.removeprefix('http://')} max_fails=1 fail_timeout=10s;\n"
                      for u in upstreams)
    text, n_up = re.subn(r"(upstream \w+ \{\n(?:\s*(?:hash|ip_hash|least_conn|#).*\n)*)"
                         r"(?:\s*server .*\n)+", lambda m: m.group(1) + servers, text)
    text, n_listen = re.subn(r"listen [^;]+;", f"listen {LOOPBACK}:{port};", text)
    if n_up != 1 or n_listen != 1:
        raise ValueError(f"{snippet}: expected one upstream block with server lines and one "
                         "listen line to replace")
    user = "user root;\n" if hasattr(os, "geteuid") and os.geteuid() == 0 else ""
    temps = "".join(f"    {kind}_temp_path {prefix / 'tmp' / kind};\n"
                    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"{user}worker_processes 1;\npid {prefix / 'nginx.pid'};\n"
            f"error_log {prefix / 'error.log'} warn;\nevents {{ worker_connections 4096; }}\n"
            f"http {{\n{temps}"
            "    log_format route '$msec $pleasqlarify_route $status \"$upstream_addr\" "
            "\"$request\"';\n"
            f"    access_log {prefix / 'access.log'} route;\n{text}}}\n")


def start_nginx(upstreams: Sequence[str], prefix: Path, *, timeout: float = 30,
                snippet: Path = NGINX_CONF) -> Balancer:
    """nginx (``nginx -c CONF -p PREFIX -g 'daemon off;'``) on a free loopback port in front of
    ``upstreams`` (base URLs), with the shipped config; returns once it proxies a health check.
    Raises RuntimeError when nginx is not installed or does not come up (naming its log)."""
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists()
                                       else None)
    if binary is None:
        raise RuntimeError("nginx is not installed (Debian: apt-get install nginx)")
    prefix.mkdir(parents=True, exist_ok=True)
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / "tmp" / kind).mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = prefix / "nginx.conf"
    conf.write_text(nginx_config(upstreams, port, prefix, snippet), encoding="utf-8")
    with open(prefix / "stderr.log", "w") as err:
        proc = subprocess.Popen([binary, "-c", str(conf), "-p", str(prefix), "-g", "daemon off;"],
                                stdout=err, stderr=subprocess.STDOUT)
    balancer = Balancer(proc, f"http://{LOOPBACK}:{port}", prefix)
    wait_healthy(balancer.url, proc, timeout, f"nginx did not proxy within {timeout:.0f} s; see "
             f"{prefix / 'error.log'} and {prefix / 'stderr.log'}")
    return balancer


@contextmanager
def running(script: str | Path = "app.py", **kw) -> Iterator[Server]:
    """:func:`start` as a context manager: the server is stopped on exit."""
    server = start(script, **kw)
    try:
        yield server
    finally:
        server.stop()
