"""A pool of SQL worker processes (:mod:`core.engine.sqlworker`) and the hard outer deadline.

Candidate SQL never runs in the app's own process: a worker has its own address-space and heap
limits, so a query that balloons cannot grow the app, and a worker that does not answer by the
time limit plus ``KILL_GRACE_S`` is killed (SIGKILL) and replaced. Workers are reused across
queries and databases (each keeps its connections), at most ``MAX_WORKERS`` at once.

Decision: a worker process, always. In-process limits cannot stop everything: SQLite's
``printf('%.*c', 900000000, 'x')`` pads in one VM step that ignores interrupts (21 s measured
in-process; in a worker it ends only when the memory limit does, about 1.3 s),
and a PostgreSQL client buffers whole rows (a 200 MB ``repeat`` row), so only a process with its
own RLIMIT_AS that can be killed bounds both time and memory. Cost, measured by ``python -m
benchmarks.limits`` on the film pools (329 candidates) on the shared 2-core machine at
load 13-16: the limited SQLite backend alone 0.07-0.13 ms per query, the worker round trip
0.8-1.0 ms more per query, 0.8 ms at load 6 (0.4 ms when a pool goes as one streamed request,
``execute_many``, as pool preparation does), and a worker's start 100-380 ms once, in the
background. End to end (open + execute the 2069 candidates and golds of the film
and AMBROSIA banks) the old in-process path took 3.9-5.7 ms per query and this one 2.8-4.5:
the difference is within the noise of the machine.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from core.engine.errors import DatabaseError

WORKER_SCRIPT = Path(__file__).with_name("sqlworker.py")
HEADROOM_MB = 192  # RLIMIT_AS of a worker: its address space at start plus this (< 200 MB growth)
KILL_GRACE_S = 0.3  # the outer deadline: time limit + this, then SIGKILL
MAX_WORKERS = 4
START_TIMEOUT_S = 20.0
_HEADER = struct.Struct(">I")


def status_mb(pid: int | str, field: str) -> float:
    """A VmRSS / VmHWM figure of a process from /proc, in MB (0 if the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return 0.0


def reset_peak(pid: int) -> None:
    """Reset a process's VmHWM to its current RSS (Linux clear_refs), to measure one query."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/clear_refs", "w") as fh:
        fh.write("5")


class WorkerTimeout(Exception):
    """The worker did not answer by the outer deadline and was killed."""


class Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        env = dict(os.environ, MALLOC_ARENA_MAX="2", PYTHONDONTWRITEBYTECODE="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(WORKER_SCRIPT), str(HEADROOM_MB)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
            start_new_session=True)
        self.ready = False
        self.peak_mb: float | None = None  # VmHWM when it was killed

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def _stdin(self) -> IO[bytes]:
        """The worker's request pipe (always there: the process is started with PIPE)."""
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def _stdout(self) -> IO[bytes]:
        """The worker's reply pipe (always there: the process is started with PIPE)."""
        assert self.proc.stdout is not None
        return self.proc.stdout

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_exact(self, n: int, deadline: float) -> bytes:
        fd = self._stdout.fileno()
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerTimeout
            chunk = os.read(fd, min(n - got, 1 << 20))
            if not chunk:
                code = self.proc.wait()
                raise DatabaseError(
                    f"the SQL worker process stopped unexpectedly (exit code {code}); the query "
                    "probably exceeded its memory limit")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _receive(self, deadline: float) -> dict[str, Any]:
        (n,) = _HEADER.unpack(self._read_exact(_HEADER.size, deadline))
        return marshal.loads(self._read_exact(n, deadline))

    def send(self, request: dict[str, Any]) -> None:
        """Send one request (after the worker's start-up message)."""
        if not self.ready:
            self._receive(time.monotonic() + START_TIMEOUT_S)
            self.ready = True
        body = marshal.dumps(request)
        try:
            self._stdin.write(_HEADER.pack(len(body)) + body)
            self._stdin.flush()
        except BrokenPipeError:
            raise DatabaseError("the SQL worker process is gone; run the query again") from None

    def receive(self, wait_s: float) -> dict[str, Any]:
        """The next reply within ``wait_s``; otherwise the worker is killed and this raises."""
        try:
            return self._receive(time.monotonic() + wait_s)
        except WorkerTimeout:
            self.kill()
            raise

    def call(self, request: dict[str, Any], wait_s: float) -> dict[str, Any]:
        """Send one request and wait at most ``wait_s`` for the reply (else kill, then raise)."""
        self.send(request)
        return self.receive(wait_s)

    def kill(self) -> None:
        """SIGKILL the worker (noting its peak RSS first, for the limit benchmarks)."""
        if self.alive():
            self.peak_mb = status_mb(self.proc.pid, "VmHWM")
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for stream in (self._stdin, self._stdout):
            with contextlib.suppress(OSError):
                stream.close()


class WorkerPool:
    """Idle workers handed out one per query; dead ones are dropped, new ones started lazily."""

    def __init__(self, max_workers: int = MAX_WORKERS):
        self.max_workers = max_workers
        self._idle: list[Worker] = []
        self._busy = 0
        self._cond = threading.Condition()
        self._pid = os.getpid()
        self.killed_peaks: dict[int, float] = {}  # pid -> VmHWM (MB) of workers killed

    def _reset_after_fork(self) -> None:
        if os.getpid() != self._pid:  # a forked child must not share the parent's pipes
            self._idle, self._busy, self._pid = [], 0, os.getpid()

    def prestart(self) -> None:
        """Start one worker in the background if none is idle (hides the start-up cost)."""
        with self._cond:
            self._reset_after_fork()
            if not self._idle and self._busy < self.max_workers:
                self._idle.append(Worker())

    def _take(self) -> Worker:
        with self._cond:
            self._reset_after_fork()
            while not self._idle and self._busy >= self.max_workers:
                self._cond.wait()
            self._busy += 1
            while self._idle:
                w = self._idle.pop()
                if w.alive():
                    return w
        try:
            return Worker()
        except OSError as exc:
            self._give_back(None)
            raise DatabaseError(f"cannot start the SQL worker process: {exc}") from None

    def _give_back(self, worker: Worker | None) -> None:
        """Return a live worker to the pool; a killed one is replaced at once, in the
        background, so the next query does not wait for a start-up."""
        with self._cond:
            self._busy -= 1
            if os.getpid() == self._pid and worker is not None:
                if worker.peak_mb is not None:
                    self.killed_peaks[worker.pid] = worker.peak_mb
                if worker.alive():
                    self._idle.append(worker)
                elif not self._idle:
                    with contextlib.suppress(OSError):
                        self._idle.append(Worker())
            self._cond.notify()

    def run(self, request: dict[str, Any], wait_s: float) -> dict[str, Any]:
        """Run one request on a free worker; raises WorkerTimeout or DatabaseError."""
        worker = self._take()
        try:
            return worker.call(request, wait_s)
        finally:
            self._give_back(worker)

    def run_many(self, request: dict[str, Any], sqls: list[str],
                 wait_s: float) -> list[dict[str, Any] | Exception]:
        """Run ``sqls`` as one streamed request; each query gets ``wait_s``. A query that times
        out or kills its worker becomes its exception; the rest go on in a fresh worker."""
        out: list[dict[str, Any] | Exception] = []
        while len(out) < len(sqls):
            rest = sqls[len(out):]
            worker = self._take()
            try:
                worker.send({**request, "sqls": rest})
                for _ in rest:
                    out.append(worker.receive(wait_s))
            except (WorkerTimeout, DatabaseError) as exc:
                out.append(exc)
                worker.kill()
            finally:
                self._give_back(worker)
        return out

    def pids(self) -> list[int]:
        """Process ids of the idle workers (for measurements)."""
        with self._cond:
            return [w.pid for w in self._idle if w.alive()]

    def shutdown(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
        for w in idle:
            w.kill()


POOL = WorkerPool()
