"""How many participants one app process holds: K simulated participants over Streamlit's
websocket, through the free workspace, one decision every few seconds.

``python -m benchmarks.capacity [--ks 5 10 20 40] [--decisions 10] [--think 3]
[--speculation on off] [--processes 1 2] [--max-seconds 120] [--json OUT]``

Each participant is a websocket client speaking Streamlit's protocol (``BackMsg`` /
``ForwardMsg`` from the installed streamlit package), not a browser (browsers would eat the
cores the server needs). It opens the workspace page like the frontend (``rerun_script`` with
the page's script hash), then every ``--think`` s (± 50 %) answers the Decision Space question
the way ``ui/components/clauses.js`` does: a one-shot trigger on the panel's trigger widget
(``json_trigger_value`` = ``[{"event": "answer", "value": {"key", "yes", "seq"}}]``); when the
question runs out it presses Back (the ``dv.back`` button's ``trigger_value``). Per decision it
times send → the acknowledgement element carrying its ``seq`` (the state is confirmed) and
send → ``script_finished`` (the whole rerun, speculation of the next states included).

Each (processes, speculation, K) runs on a fresh server (a warm-up session loads the task
first), loopback only, bounded by ``--decisions`` per participant and ``--max-seconds``.
Server CPU is read from /proc for the server and its worker processes; memory per session is
the RSS growth over the K sessions / K. With ``--processes 2`` two app processes run behind
nginx (deploy/nginx.conf.example) and CPU and memory are summed over both. On a shared machine
the figures are pessimistic; the ratios between rows are what to read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from html import unescape
from pathlib import Path
from typing import Any

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

from benchmarks.common import percentile
from core.engine.workerpool import status_mb
from tests.harness import LOOPBACK, running, start_nginx

PAGE = "workspace"
STREAMLIT = Subprotocol("streamlit")  # the websocket subprotocol of /_stcore/stream
TARGET_P95_MS = 150.0
_BUTTON = re.compile(r"<button\b([^>]*)>")
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# -- the server side, from /proc -------------------------------------------------------------

def _tree(pid: int) -> list[int]:
    """``pid`` and its live descendants (the SQL worker processes of an app server)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes and their descendants (reaped children included)."""
    total = 0.0
    for root in pids:
        for p in _tree(root):
            try:
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(x) for x in fields[11:15]) / _TICK  # utime stime cutime cstime
    return total


def rss_mb(pids: list[int]) -> float:
    """Resident memory of these processes and their descendants, in MB."""
    return sum(status_mb(p, "VmRSS") for root in pids for p in _tree(root))


# -- one simulated participant ---------------------------------------------------------------

@dataclass
class Timing:
    """One decision: its kind, send → acknowledged and send → script finished (ms)."""

    kind: str  # answer | back
    ack_ms: float | None
    done_ms: float


@dataclass
class Participant:
    """A websocket client that works through the workspace like a person with a keyboard."""

    url: str
    page_hash: str
    rng: random.Random
    think_s: float
    decisions: int
    deadline: float
    timings: list[Timing] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    panel_id: str = ""
    panel_html: str = ""
    back_id: str = ""
    task_box: tuple[str, str] = ("", "")  # (selectbox id, the title shown)
    seq: int = 0
    done: bool = False  # all decisions made (or time ran out)
    upstream: str = ""  # the app process nginx chose (its X-Upstream header), if behind nginx
    _sent: float = 0.0
    _ack_at: float | None = None
    _finished: asyncio.Event = field(default_factory=asyncio.Event)

    def _read(self, raw: bytes) -> None:
        """Take one ForwardMsg: remember the panel, the Back button, acks, exceptions, ends."""
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = msg.WhichOneof("type")
        if kind == "script_finished":
            if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                self._finished.set()  # a run the script restarted itself (st.rerun) goes on
            return
        if kind != "delta" or msg.delta.WhichOneof("type") != "new_element":
            return
        el = msg.delta.new_element
        which = el.WhichOneof("type")
        if which == "exception":
            self.errors.append(f"{el.exception.type}: {el.exception.message}"[:200])
        elif which == "button" and el.button.id.endswith("dv.back"):
            self.back_id = el.button.id if not el.button.disabled else ""
        elif which == "selectbox" and el.selectbox.id.endswith("workspace.task"):
            shown = el.selectbox.raw_value or el.selectbox.options[el.selectbox.default]
            self.task_box = (el.selectbox.id, shown)
        elif which == "bidi_component":
            data = json.loads(el.bidi_component.json or "{}")
            if data.get("testid") == "pq-decision-variable":
                self.panel_id, self.panel_html = el.bidi_component.id, data.get("html", "")
            elif data.get("testid") == "pq-ack":
                ack = data.get("ack") or {}
                if self.seq and ack.get("seq") == self.seq and self._ack_at is None:
                    self._ack_at = time.perf_counter()
                    if not ack.get("ok"):
                        self.errors.append(f"answer {self.seq} refused by the server")

    def answers(self) -> list[tuple[str, bool]]:
        """The (variable keys, yes) of the Yes/No buttons on the Decision Space panel."""
        found = []
        for match in _BUTTON.finditer(self.panel_html):
            attrs = dict(_ATTR.findall(match.group(1)))
            if attrs.get("data-event") == "answer" and "disabled" not in match.group(1):
                found.append((unescape(attrs.get("data-key", "")), attrs.get("data-yes") == "1"))
        return found

    def _rerun(self, states: list[Any]) -> bytes:
        """A ``rerun_script`` BackMsg for the workspace with these widget states."""
        back = BackMsg()
        back.rerun_script.page_script_hash = self.page_hash
        back.rerun_script.page_name = PAGE
        back.rerun_script.widget_states.widgets.extend(states)
        if self.task_box[0]:
            box = back.rerun_script.widget_states.widgets.add()
            box.id, box.string_value = self.task_box
        return back.SerializeToString()

    async def _round(self, ws: ClientConnection, payload: bytes) -> float:
        """Send one rerun and wait for its script_finished; returns the ms it took."""
        self._finished.clear()
        self._sent = time.perf_counter()
        await ws.send(payload)
        await asyncio.wait_for(self._finished.wait(), timeout=max(1.0, self.deadline
                                                                   - time.perf_counter()))
        return (time.perf_counter() - self._sent) * 1000

    async def decide(self, ws: ClientConnection) -> None:
        """One decision: answer the question on the panel (Yes or No), else press Back."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        options = self.answers()
        state = WidgetState()
        if options:
            key, yes = self.rng.choice(options)
            self.seq += 1
            self._ack_at = None
            state.id = _make_trigger_id(self.panel_id, "events")
            state.json_trigger_value = json.dumps(
                [{"event": "answer", "value": {"key": key, "yes": yes, "seq": self.seq}}])
            kind = "answer"
        elif self.back_id:
            state.id, state.trigger_value, kind = self.back_id, True, "back"
        else:
            raise RuntimeError("the workspace shows neither a question nor Back")
        done = await self._round(ws, self._rerun([state]))
        ack = None
        if kind == "answer":
            if self._ack_at is None:
                self.errors.append(f"answer {self.seq}: no acknowledgement in its rerun")
            else:
                ack = (self._ack_at - self._sent) * 1000
        self.timings.append(Timing(kind, ack, done))

    async def run(self, start_after: float, loaded: asyncio.Barrier,
                  hold: asyncio.Event | None = None) -> None:
        """Open the workspace, wait for everyone to have it (``loaded``), then decide every
        few seconds until done or out of time; with ``hold``, keep the session open until it
        is set."""
        await asyncio.sleep(start_after)
        stream = self.url.replace("http://", "ws://") + "/_stcore/stream"
        passed = False
        try:
            async with connect(stream, subprotocols=[STREAMLIT], max_size=2 ** 28,
                               open_timeout=60) as ws:
                reader = asyncio.create_task(self._reader(ws))
                if ws.response is not None:
                    self.upstream = ws.response.headers.get("X-Upstream", "")
                try:
                    try:
                        await self._round(ws, self._rerun([]))
                        if not self.panel_id:
                            raise RuntimeError("the workspace drew no Decision Space panel")
                    finally:
                        passed = True
                        await loaded.wait()
                    for _ in range(self.decisions):
                        pause = self.think_s * (0.5 + self.rng.random())
                        if time.perf_counter() + pause >= self.deadline:
                            break
                        await asyncio.sleep(pause)
                        await self.decide(ws)
                    self.done = True
                    if hold is not None:
                        await hold.wait()
                finally:
                    reader.cancel()
        except (TimeoutError, RuntimeError, OSError) as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            if not passed:
                await loaded.wait()

    async def _reader(self, ws: ClientConnection) -> None:
        """Read every ForwardMsg of this session."""
        async for raw in ws:
            if isinstance(raw, bytes):
                self._read(raw)


# -- one measured configuration --------------------------------------------------------------

@dataclass
class Row:
    """The figures of one (processes, speculation, K) run."""

    processes: int
    speculation: bool
    k: int
    decisions: int
    seconds: float
    per_s: float
    p50_ms: float
    p95_ms: float
    ack_p50_ms: float
    ack_p95_ms: float
    cpu_ms: float
    mb_per_session: float
    server_mb: float  # RSS of the app processes and their workers with the K sessions open
    errors: int
    first_error: str | None
    loadavg: str
    split: str  # participants per app process (behind nginx)


def page_hash(url: str) -> str:
    """The workspace page's script hash, from the navigation message of a first connection."""
    async def probe() -> str:
        async with connect(url.replace("http://", "ws://") + "/_stcore/stream",
                           subprotocols=[STREAMLIT], max_size=2 ** 28) as ws:
            back = BackMsg()
            back.rerun_script.page_name = PAGE
            await ws.send(back.SerializeToString())
            async for raw in ws:
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                if msg.WhichOneof("type") == "navigation":
                    for page in msg.navigation.app_pages:
                        if page.url_pathname == PAGE:
                            return page.page_script_hash
        raise RuntimeError(f"the app at {url} has no '{PAGE}' page")
    return asyncio.run(asyncio.wait_for(probe(), timeout=120))


async def _crowd(url: str, hash_: str, k: int, args: argparse.Namespace, seed: int,
                 pids: list[int]) -> tuple[list[Participant], float, float, tuple[float, float]]:
    """K participants, their starts spread over one think time: each opens the workspace, and
    once all have it they decide until done or out of time. Returns them, and the server's
    CPU seconds, wall seconds (from the moment all had the page), and RSS growth and RSS (MB,
    from before the first connected to the end, all sessions still open)."""
    deadline = time.perf_counter() + args.max_seconds
    people = [Participant(url, hash_, random.Random(seed * 1000 + i), args.think, args.decisions,
                          deadline) for i in range(k)]
    loaded, hold = asyncio.Barrier(k + 1), asyncio.Event()
    rss0 = rss_mb(pids)
    runs = [asyncio.create_task(p.run(args.think * i / k, loaded, hold))
            for i, p in enumerate(people)]
    await loaded.wait()
    cpu0, t0 = cpu_seconds(pids), time.perf_counter()
    while not all(p.done or p.errors for p in people) and not all(r.done() for r in runs):
        await asyncio.sleep(0.1)
    cpu, seconds, rss = cpu_seconds(pids) - cpu0, time.perf_counter() - t0, rss_mb(pids)
    hold.set()
    await asyncio.gather(*runs)
    return people, cpu, seconds, (rss - rss0, rss)


async def _measured(url: str, hash_: str, k: int, args: argparse.Namespace, processes: int,
                    pids: list[int]) -> tuple[list[Participant], float, float,
                                              tuple[float, float]]:
    """Warm-up sessions (two per process) make a few decisions and stay open while the
    servers settle and the K participants run (so the crowd's memory is its own, not memory
    the warm-up freed), then close."""
    warm_args = argparse.Namespace(think=0.2, decisions=3, max_seconds=120)
    deadline = time.perf_counter() + warm_args.max_seconds
    warm = [Participant(url, hash_, random.Random(999 + i), 0.2, 3, deadline)
            for i in range(2 * processes)]
    loaded, hold = asyncio.Barrier(len(warm) + 1), asyncio.Event()
    runs = [asyncio.create_task(p.run(0.0, loaded, hold)) for p in warm]
    await loaded.wait()
    while not all(p.done or p.errors for p in warm):
        await asyncio.sleep(0.1)
    if any(p.errors for p in warm):
        raise RuntimeError(f"warm-up failed: {next(p.errors for p in warm if p.errors)[:1]}")
    await asyncio.to_thread(quiet, pids)
    try:
        return await _crowd(url, hash_, k, args, k, pids)
    finally:
        hold.set()
        await asyncio.gather(*runs)


@contextmanager
def _servers(processes: int, speculation: bool, work: Path) -> Iterator[tuple[str, list[int]]]:
    """``processes`` fresh app servers (behind nginx when more than one): URL and server pids."""
    env = dict(os.environ, PLEASQLARIFY_SPECULATE="1" if speculation else "0",
               NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"))
    with ExitStack() as stack:
        servers = [stack.enter_context(running("app.py", env=env, log=work, timeout=120))
                   for _ in range(processes)]
        url = servers[0].url
        if processes > 1:
            balancer = start_nginx([s.url for s in servers], work / f"nginx-{time.time_ns()}")
            stack.callback(balancer.stop)
            url = balancer.url
        if not url.startswith(f"http://{LOOPBACK}:"):
            raise RuntimeError("the load generator only talks to loopback servers")
        yield url, [s.proc.pid for s in servers]


def quiet(pids: list[int], limit_s: float = 120.0) -> None:
    """Wait until the servers are idle (< 5 % of a core over a second): the app's background
    warm-up (heavy imports, numba compiling UMAP) must not be billed to the participants."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        before = cpu_seconds(pids)
        time.sleep(1.0)
        if cpu_seconds(pids) - before < 0.05:
            return
    print(f"  (servers still busy after {limit_s:.0f} s of warm-up; measuring anyway)",
          flush=True)


def measure(processes: int, speculation: bool, k: int, args: argparse.Namespace,
            work: Path) -> Row:
    """One configuration on fresh servers: warm up, then K participants; their figures."""
    with _servers(processes, speculation, work) as (url, pids):
        people, cpu, seconds, rss = asyncio.run(_measured(url, page_hash(url), k, args,
                                                          processes, pids))
    timings = [t for p in people for t in p.timings]
    done = [t.done_ms for t in timings]
    acks = [t.ack_ms for t in timings if t.ack_ms is not None]
    errors = [e for p in people for e in p.errors]
    loads = [len(p.timings) for p in people]
    return Row(processes, speculation, k, len(timings), round(seconds, 1),
               round(len(timings) / seconds, 2), round(percentile(done, .5), 1),
               round(percentile(done, .95), 1), round(percentile(acks, .5), 1), round(percentile(acks, .95), 1),
               round(cpu * 1000 / max(1, len(timings)), 1), round(rss[0] / k, 2),
               round(rss[1]),
               len(errors) + sum(1 for n in loads if n == 0), errors[0] if errors else None,
               Path("/proc/loadavg").read_text().split(" ", 3)[2] if Path(
                   "/proc/loadavg").exists() else "?",
               "/".join(str(n) for n in sorted(Counter(p.upstream for p in people).values(),
                                               reverse=True)))


def _table(rows: list[Row]) -> str:
    """The figures as a Markdown table."""
    head = ("| processes | speculation | K | decisions | decisions/s | p50 ms | p95 ms | ack p50 "
            "| ack p95 | CPU ms/decision | MB/session | server MB | errors | load (15 min) "
            "| split |")
    lines = [head, "|" + "---|" * 15]
    for r in rows:
        lines.append(f"| {r.processes} | {'on' if r.speculation else 'off'} | {r.k} | "
                     f"{r.decisions} | {r.per_s} | {r.p50_ms} | {r.p95_ms} | {r.ack_p50_ms} | "
                     f"{r.ack_p95_ms} | {r.cpu_ms} | {r.mb_per_session} | {r.server_mb} | {r.errors} | "
                     f"{r.loadavg} | {r.split} |")
    return "\n".join(lines)


def summary(rows: list[Row]) -> list[str]:
    """Where p95 passes the target, and what speculation costs, per process count."""
    out = []
    for processes in sorted({r.processes for r in rows}):
        for spec in (True, False):
            mine = sorted((r for r in rows if r.processes == processes and r.speculation == spec),
                          key=lambda r: r.k)
            if not mine:
                continue
            over = next((r.k for r in mine if r.p95_ms > TARGET_P95_MS), None)
            label = f"{processes} process{'es' if processes > 1 else ''}, speculation " + (
                "on" if spec else "off")
            out.append(f"{label}: p95 passes {TARGET_P95_MS:.0f} ms at K = {over}" if over else
                       f"{label}: p95 stays under {TARGET_P95_MS:.0f} ms up to K = {mine[-1].k}")
        on = {r.k: r for r in rows if r.processes == processes and r.speculation}
        off = {r.k: r for r in rows if r.processes == processes and not r.speculation}
        both = sorted(set(on) & set(off))
        if both:
            cpu_on = statistics.mean(on[k].cpu_ms for k in both)
            cpu_off = statistics.mean(off[k].cpu_ms for k in both)
            out.append(f"speculation ({processes} process): {cpu_on:.0f} vs {cpu_off:.0f} ms "
                       f"CPU per decision ({cpu_on / cpu_off - 1:+.0%}) over K = "
                       f"{', '.join(map(str, both))}; capacity at equal CPU ≈ "
                       f"{cpu_off / cpu_on:.2f}× the participants without it")
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the configurations, print the table and the summary; returns 1 on any error."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.capacity", description=__doc__
                                .split("\n\n")[0])
    p.add_argument("--ks", type=int, nargs="+", default=[5, 10, 20, 40])
    p.add_argument("--decisions", type=int, default=10, help="per participant (default 10)")
    p.add_argument("--think", type=float, default=3.0, help="seconds between decisions (±50%%)")
    p.add_argument("--speculation", nargs="+", choices=["on", "off"], default=["on", "off"])
    p.add_argument("--processes", type=int, nargs="+", default=[1])
    p.add_argument("--max-seconds", type=float, default=120.0, help="per configuration")
    p.add_argument("--json", help="write every row as JSON here")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="capacity-"))
    rows: list[Row] = []
    print(f"capacity: K participants over Streamlit's websocket, {args.decisions} decisions "
          f"each, one every {args.think:g} s ± 50 %; load average now "
          f"{Path('/proc/loadavg').read_text().strip()} on {os.cpu_count()} cores "
          "(a shared machine reads pessimistic)", flush=True)
    for processes in args.processes:
        for spec in args.speculation:
            for k in args.ks:
                row = measure(processes, spec == "on", k, args, work)
                rows.append(row)
                print(f"  {processes} proc, speculation {spec}, K={k}: {row.per_s}/s, p50 "
                      f"{row.p50_ms} ms, p95 {row.p95_ms} ms, CPU {row.cpu_ms} ms/decision, "
                      f"{row.mb_per_session} MB/session, {row.errors} errors"
                      + (f" (first: {row.first_error})" if row.first_error else ""), flush=True)
    print()
    print(_table(rows))
    for line in summary(rows):
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if any(r.errors for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
