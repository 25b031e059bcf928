"""Start the studio: print the researcher password, then ``streamlit run asgi.py`` (app.py
served by ``st.App`` with the route that sets the researcher cookie HttpOnly).

``python -m study.serve [streamlit options, e.g. --server.port 8501]``. Plain
``streamlit run app.py`` works too; it prints the password when the first page is opened.

One server per data folder: the server holds an exclusive ``flock`` on ``logs/server.lock``
(pid and port inside) for as long as it runs (the lock passes through ``execv`` to Streamlit
and the kernel drops it when the process ends, even on SIGKILL). A second ``study.serve``
finds it held, says where the running server is and exits, so it never prints a new password
that would change the running server's.

Throwaway servers for tests and benchmarks are started by tests/harness.py.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core import settings
from core.settings import REPO_ROOT
from study import access
from study.limits import parse_int

DEFAULT_PORT = 8501


def _port(argv: Sequence[str]) -> int | None:
    """The ``--server.port`` among Streamlit options (None when not given)."""
    for i, arg in enumerate(argv):
        if arg.startswith("--server.port="):
            return parse_int(arg.partition("=")[2], 1, 65535)
        if arg == "--server.port" and i + 1 < len(argv):
            return parse_int(argv[i + 1], 1, 65535)
    return None


def claim(port: int, path: Path | None = None) -> int | None:
    """Take the data folder's server lock for this process (the fd, inheritable across
    ``execv``), writing pid and port into it; None when a running server holds it."""
    path = path or settings.server_lock_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid(), "port": port, "started": time.time()}).encode())
    os.set_inheritable(fd, True)
    return fd


def holder(path: Path | None = None) -> dict[str, Any] | None:
    """``{"pid", "port", "started"}`` of the server running on this data folder, else None."""
    path = path or settings.server_lock_file()
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: a server runs
            raw = os.read(fd, 4096)
            try:
                data = json.loads(raw or b"{}")
            except ValueError:
                data = {}
            return data if isinstance(data, dict) else {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def main(argv: list[str] | None = None, *, lock: Path | None = None) -> int:
    """Take the data folder's server lock, announce the password, then replace this process
    with the Streamlit server; 1 (and where the running one is) when one already runs."""
    options = list(sys.argv[1:] if argv is None else argv)
    lock = lock or settings.server_lock_file()
    port = _port(options)
    if port is None:  # explicit, so Streamlit never moves to another port unannounced
        port = parse_int(os.environ.get("STREAMLIT_SERVER_PORT"), 1, 65535) or DEFAULT_PORT
        options += ["--server.port", str(port)]
    if claim(port, lock) is None:
        other = holder(lock) or {}
        print(f"PleaSQLarify Studio is already running for this data folder ({lock.parent}): "
              f"pid {other.get('pid', '?')}, http://localhost:{other.get('port', '?')}. Its "
              "researcher password is the one it printed when it started (`python -m "
              "study.access` prints a new one for it). Stop it before starting another.",
              file=sys.stderr)
        return 1
    access.announce()
    sys.stdout.flush()  # execv drops what is still buffered (the password, into a pipe)
    os.environ[access.ENV_ANNOUNCED] = "1"
    os.chdir(REPO_ROOT)
    args = [sys.executable, "-m", "streamlit", "run", "asgi.py", *options]
    os.execv(sys.executable, args)
    return 0  # pragma: no cover - execv does not return


if __name__ == "__main__":
    raise SystemExit(main())
