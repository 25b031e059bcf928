"""First paint of a new session with a cold or a warm HTTP cache (used by benchmarks/rerun.py).

*Cold*: a fresh browser context (empty HTTP cache, as a participant's first visit). *Warm*: the
same context after one untimed visit to the same address, whose tab is closed first; a new tab
is a new Streamlit session, as when a participant returns or opens a second tab (or a lab
machine that opened the studio before). :func:`timeline` lists every request of one load
(start, end, size, cached, encoding, Cache-Control) and the WebSocket's first and last message,
from the Chrome DevTools Protocol.

``python -m benchmarks.paint [--reps 5] [--compare OTHER_CHECKOUT] [--network] [--screenshots DIR]
[--bank-dir DIR]`` serves each checkout as ``python -m study.serve`` does (asgi.py) and a trivial
one-button app (:data:`benchmarks.common.TRIVIAL`), and prints median and p95 (ms) of the
trivial app's first paint and, for the workspace, of its first paint with the chart drawn and
of the chart's first drawing (since navigation), cold and warm, on servers whose start-up work
(the free page's UMAP warm-up) is over; then each workspace's gap to the trivial app.
``--compare`` also serves another checkout (e.g. ``git worktree add /tmp/base main``); the
repetitions of all of them are interleaved, so they are measured under the same load.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

TIMEOUT_MS = 180_000  # a loaded 2-core machine can be very slow; figures, not a time limit
VIEWPORT: ViewportSize = {"width": 1600, "height": 1100}


def new_page(browser: Any, context: Any = None) -> Any:
    """A new tab (its own Streamlit session) in ``context``, or in a fresh context."""
    page = (context or browser.new_context(viewport=VIEWPORT)).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    return page


def _load(page: Any, address: str, ready: Callable[[Any], None]) -> float:
    start = time.perf_counter()
    page.goto(address)
    ready(page)
    return (time.perf_counter() - start) * 1000


def first_paint(browser: Any, address: str, ready: Callable[[Any], None], reps: int,
                warm: bool = False, probe: Callable[[Any], Any] | None = None,
                probed: list[Any] | None = None, cookies: list[dict] | None = None,
                settle: Callable[[Any], None] | None = None) -> list[float]:
    """ms from opening ``address`` in a new session until ``ready(page)`` holds, ``reps`` times.

    ``probe(page)``, if given, runs on each timed page once it is ready; its results are
    appended to ``probed``. ``cookies`` are set in each new context first (e.g. a
    researcher's unlock token: a returning researcher with an empty HTTP cache).
    ``settle(page)``, if given, runs untimed on every visit (the warm one's first visit too)
    before its tab closes, so what a visit starts after its first paint (the workspace's next
    states, :func:`workspace_settled`) does not run during the next timed visit.
    """
    times = []
    for _ in range(reps):
        context = browser.new_context(viewport=VIEWPORT)
        if cookies:
            context.add_cookies(cookies)
        if probe is not None:
            context.add_init_script(CHART_DRAWN_JS)
            context.add_init_script(FIRST_MESSAGE_JS)
            context.add_init_script(LONG_TASKS_JS)
        if warm:
            primer = new_page(browser, context)
            _load(primer, address, ready)
            if settle is not None:
                settle(primer)
            primer.close()
        page = new_page(browser, context)
        cdp = renderer_metrics(page) if probe is not None else None
        times.append(_load(page, address, ready))
        if probe is not None and probed is not None:
            probed.append({**(probe(page) or {}), **(work(page, cdp) if cdp else {})})
        if settle is not None:
            settle(page)
        context.close()
    return times


# when the chart first drew its state (the component stamps data-revision), ms since navigation
CHART_DRAWN_JS = """new MutationObserver((changes, observer) => {
  if (changes.some((c) => c.target.classList && c.target.classList.contains("pq-space"))) {
    window.__pqChartDrawn = performance.now();
    window.__pqMessagesDrawn = [window.__pqMessages ?? 0, window.__pqMessageBytes ?? 0,
                                window.__pqLastMessage ?? null];
    observer.disconnect();
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-revision"] });"""


# the phases of a load, ms since navigation: the document parsed and Streamlit's module run
# (DOMContentLoaded), the first health probe sent, the WebSocket's first message received
PHASES_JS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const probe = performance.getEntriesByType("resource")
    .find((r) => r.name.includes("_stcore/health"));
  return { dcl: nav ? nav.domContentLoadedEventEnd : null, probe: probe ? probe.startTime : null,
           message: window.__pqFirstMessage ?? null,
           last: (window.__pqMessagesDrawn ?? [0, 0, window.__pqLastMessage ?? null])[2] };
}"""
FIRST_MESSAGE_JS = """(() => {
  const Socket = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Socket(...args);
    ws.addEventListener("message", (e) => {
      window.__pqFirstMessage ??= performance.now();
      window.__pqMessages = (window.__pqMessages ?? 0) + 1;
      window.__pqLastMessage = performance.now();
      window.__pqMessageBytes = (window.__pqMessageBytes ?? 0)
        + (e.data.byteLength ?? e.data.size ?? e.data.length ?? 0);
    });
    return ws;
  };
  window.WebSocket.prototype = Socket.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
})();"""


# the main thread's long tasks (> 50 ms) since navigation: how many, and their total ms
LONG_TASKS_JS = """(() => {
  window.__pqLong = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__pqLong.push(e.duration);
  }).observe({ type: "longtask", buffered: true });
})();"""
# what the page holds and fetched when it is ready: Streamlit elements by kind, requests, bytes
WORK_JS = """() => {
  const kinds = {};
  for (const c of document.querySelectorAll('[data-testid="stElementContainer"]')) {
    const inner = c.querySelector("[data-testid]");
    const kind = inner ? inner.dataset.testid : "?";
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  const res = performance.getEntriesByType("resource");
  const long = window.__pqLong ?? [];
  return { elements: Object.values(kinds).reduce((a, b) => a + b, 0), kinds,
           requests: res.length,
           kb: res.reduce((a, r) => a + (r.transferSize || 0), 0) / 1024,
           long_tasks: long.length, long_ms: long.reduce((a, b) => a + b, 0),
           messages: (window.__pqMessagesDrawn ?? [window.__pqMessages ?? 0])[0],
           message_kb: (window.__pqMessagesDrawn ?? [0, window.__pqMessageBytes ?? 0])[1] / 1024,
           nodes: document.getElementsByTagName("*").length };
}"""
CPU_METRICS = ("ThreadTime", "ProcessTime", "ScriptDuration", "LayoutDuration",
               "RecalcStyleDuration", "TaskDuration")


def renderer_metrics(page: Any) -> Any:
    """A CDP session on ``page`` with the Performance domain on (for :func:`work`)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    return cdp


def work(page: Any, cdp: Any) -> dict[str, Any]:
    """What the renderer did for ``page`` until now, less distorted by a loaded machine than
    wall times: its main thread's CPU (CDP ThreadTime; ProcessTime all its threads), script,
    layout and style time (ms), long tasks, and what the page holds and fetched (:data:`WORK_JS`).
    The page is a new tab whose renderer started with this navigation, so totals are its load."""
    metrics = {m["name"]: m["value"] * 1000 for m in cdp.send("Performance.getMetrics")["metrics"]}
    cdp.detach()
    return {**{name: metrics.get(name) for name in CPU_METRICS}, **page.evaluate(WORK_JS)}


def phases(page: Any) -> dict[str, Any]:
    """The load's phases in ``page`` (:data:`PHASES_JS`), ms since navigation."""
    return dict(page.evaluate(PHASES_JS))


def chart_timing(page: Any) -> dict[str, Any] | None:
    """When the chart in ``page`` first drew and the load's phases (:data:`PHASES_JS`), ms since
    navigation; None if the chart never drew."""
    drawn = page.evaluate("() => window.__pqChartDrawn ?? null")
    return None if drawn is None else {"drawn": drawn, **phases(page)}


def timeline(browser: Any, address: str, ready: Callable[[Any], None], label: str,
             out: Any = sys.stderr) -> None:
    """Print the requests of a cold and then a warm load of ``address`` (ms from navigation)."""
    context = browser.new_context(viewport=VIEWPORT)
    for kind in ("cold", "warm"):
        page = new_page(browser, context)
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        reqs: dict[str, dict[str, Any]] = {}
        frames: list[float] = []
        cdp.on("Network.requestWillBeSent", lambda e, r=reqs: r.setdefault(
            e["requestId"], {"url": e["request"]["url"], "start": e["timestamp"]}))
        cdp.on("Network.responseReceived", lambda e, r=reqs: r.get(e["requestId"], {}).update(
            headers={k.lower(): v for k, v in e["response"]["headers"].items()},
            cached=e["response"].get("fromDiskCache") or e["response"].get("fromMemoryCache")))
        cdp.on("Network.requestServedFromCache",
               lambda e, r=reqs: r.get(e["requestId"], {}).update(cached=True))
        cdp.on("Network.loadingFinished", lambda e, r=reqs: r.get(e["requestId"], {}).update(
            end=e["timestamp"], size=e["encodedDataLength"]))
        page.on("websocket", lambda ws, f=frames: ws.on(
            "framereceived", lambda _m: f.append(time.perf_counter())))
        t0 = time.perf_counter()
        total = _load(page, address, ready)
        rows = sorted(reqs.values(), key=lambda r: r["start"])
        base = rows[0]["start"] if rows else 0.0
        ws = (f"WebSocket messages {1000 * (frames[0] - t0):.0f}-{1000 * (frames[-1] - t0):.0f}"
              if frames else "no WebSocket message")
        print(f"\n{label}, {kind} HTTP cache: ready after {total:.0f} ms; {ws} ms; "
              f"{sum(r.get('size', 0) for r in rows) / 1024:.0f} KB in {len(rows)} requests",
              file=out)
        print("  start    end       KB  cached  gzip  cache-control       path", file=out)
        for r in rows:
            h = r.get("headers", {})
            path = r["url"].split("//", 1)[-1].split("/", 1)[-1][:70]
            print(f"  {1000 * (r['start'] - base):5.0f} {1000 * (r.get('end', r['start']) - base):6.0f}"
                  f" {r.get('size', 0) / 1024:8.1f}  {'yes' if r.get('cached') else 'no':6}"
                  f"  {'yes' if h.get('content-encoding') == 'gzip' else 'no':4}"
                  f"  {h.get('cache-control', '-')[:18]:18}  /{path}", file=out)
        page.close()
    context.close()


def profile(browser: Any, address: str, ready: Callable[[Any], None], label: str,
            top: int = 25, out: Any = sys.stderr) -> None:
    """Print where the renderer's main thread spent a cold load of ``address`` (V8's sampling
    profiler, from navigation until ``ready``): self time by script file, then by function."""
    from collections import Counter

    page = new_page(browser)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 200})
    cdp.send("Profiler.start")
    total = _load(page, address, ready)
    prof = cdp.send("Profiler.stop")["profile"]
    page.context.close()
    nodes = {n["id"]: n for n in prof["nodes"]}
    self_ms: Counter[int] = Counter()
    for node, delta in zip(prof["samples"], prof["timeDeltas"], strict=True):
        self_ms[node] += delta / 1000
    by_file: Counter[str] = Counter()
    by_fn: Counter[str] = Counter()
    for node, ms in self_ms.items():
        frame = nodes[node]["callFrame"]
        url = frame.get("url", "").rsplit("/", 1)[-1] or frame.get("functionName") or "?"
        by_file[url] += ms
        by_fn[f"{frame.get('functionName') or '(anonymous)'} {url}:{frame.get('lineNumber', 0)}"] += ms
    busy = sum(ms for f, ms in by_file.items() if f not in ("(idle)", "(program)"))
    print(f"\n{label}, cold: ready after {total:.0f} ms; {busy:.0f} ms in scripts and GC, "
          f"(program) {by_file['(program)']:.0f}, (idle) {by_file['(idle)']:.0f}", file=out)
    for what, counter in (("file", by_file), ("function", by_fn)):
        print(f"  self ms by {what}:", file=out)
        for name, ms in counter.most_common(top):
            print(f"  {ms:7.1f}  {name}", file=out)


def workspace_ready(page: Any) -> None:
    """The workspace is drawn with its chart (the readiness benchmarks.rerun's first paint uses)."""
    page.get_by_text("queries remain").wait_for()
    page.locator(".pq-space[data-revision]").first.wait_for()


def workspace_settled(page: Any, timeout_ms: float = 30_000) -> None:
    """Wait (untimed) until the workspace's next states have arrived: the rerun its first
    paint asks for (:mod:`ui.optimistic`) is over. Gives up after ``timeout_ms``."""
    with contextlib.suppress(Exception):  # e.g. a state with no question: nothing speculated
        page.locator('[data-testid="pq-next"][data-speculated]').first.wait_for(
            state="attached", timeout=timeout_ms)


def trivial_ready(page: Any) -> None:
    """The trivial app (:data:`benchmarks.common.TRIVIAL`) is drawn."""
    page.get_by_text("0 of 1").wait_for()


# the rows of :func:`work` (not ms where the name says so)
WORK_ROWS = (("ThreadTime", "renderer main-thread CPU"), ("ProcessTime", "renderer process CPU"),
             ("ScriptDuration", "renderer script"),
             ("LayoutDuration", "renderer layout"), ("RecalcStyleDuration", "renderer style"),
             ("long_tasks", "long tasks (count)"), ("long_ms", "long tasks (total)"),
             ("elements", "Streamlit elements (count)"), ("nodes", "DOM nodes (count)"),
             ("requests", "requests (count)"), ("kb", "KB fetched"),
             ("messages", "WebSocket messages (count; the workspace's until its chart drew)"),
             ("message_kb", "WebSocket KB (the same)"))


def _summary(label: str, times: list[float], probes: list[Any], out: Any,
             what: str | None = None) -> None:
    from benchmarks.common import stats

    def row(what: str, values: list[float]) -> None:
        if values:
            med, p95 = stats(values)
            print(f"| {label}: {what} | {len(values)} | {med:.0f} | {p95:.0f} |", file=out)

    row(what or "workspace + chart drawn", times)
    found = [p for p in probes if p]
    row("chart first drawn (since navigation)",
        [p["drawn"] for p in found if p.get("drawn") is not None])
    for key, what in (("dcl", "DOMContentLoaded"), ("probe", "first health probe sent"),
                      ("message", "first WebSocket message"),
                      ("last", "last WebSocket message before the chart drew")):
        row(f"{what} (since navigation)", [p[key] for p in found if p.get(key) is not None])
    for key, what in WORK_ROWS:
        row(what, [p[key] for p in found if p.get(key) is not None])
    kinds = [p["kinds"] for p in found if p.get("kinds")]
    if kinds:
        print(f"<!-- {label}: elements when ready, first visit: "
              f"{', '.join(f'{k} {n}' for k, n in sorted(kinds[0].items()))} -->", file=out)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import contextlib
    import os
    import statistics
    import tempfile
    from pathlib import Path

    from benchmarks.common import ROOT, TRIVIAL, build_bank, entry
    from benchmarks.split import wait_quiet
    from tests.harness import CHROMIUM, CHROMIUM_ARGS, running

    parser = argparse.ArgumentParser(prog="python -m benchmarks.paint", description=__doc__)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--compare", action="append", default=[], type=Path, metavar="CHECKOUT",
                        help="also serve CHECKOUT/app.py, its repetitions interleaved with ours")
    parser.add_argument("--bank-dir", type=Path, metavar="DIR",
                        help="prepare the bench bank in DIR and reuse it on later runs")
    parser.add_argument("--network", action="store_true",
                        help="also print every request of one cold and one warm load of each")
    parser.add_argument("--profile", action="store_true",
                        help="also print where the renderer spent one cold load of each")
    parser.add_argument("--screenshots", type=Path, metavar="DIR",
                        help="save the drawn chart of each checkout as DIR/<name>.png")
    args = parser.parse_args(argv)
    roots = [ROOT, *(r.resolve() for r in args.compare)]
    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as name, contextlib.ExitStack() as stack:
        tmp = Path(name)
        (tmp / "trivial.py").write_text(TRIVIAL, encoding="utf-8")
        bank, _ = build_bank(args.bank_dir or tmp / "bank", sizes=(50,))
        servers = {}
        for i, root in enumerate(roots):
            env = dict(os.environ, PLEASQLARIFY_BANK=str(bank),
                       PLEASQLARIFY_DB_URL=f"sqlite:///{tmp / f'bench{i}.sqlite'}",
                       PLEASQLARIFY_STUDIES_DIR=str(tmp / "studies"),
                       PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio"))
            label = f"{root.name} ({root})"
            servers[label] = stack.enter_context(running(entry(root), env=env, log=tmp,
                                                         cwd=root))
        browser = stack.enter_context(sync_playwright()).chromium.launch(
            executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        for label, srv in servers.items():  # warm each server (imports, pool) untimed
            page = new_page(browser)
            _load(page, f"{srv.url}/workspace", workspace_ready)
            if args.screenshots:
                args.screenshots.mkdir(parents=True, exist_ok=True)
                page.wait_for_timeout(1000)
                shot = args.screenshots / f"{label.split(' ')[0]}.png"
                page.get_by_test_id("pq-action-space").screenshot(path=str(shot))
                print(f"chart of {label}: {shot}", file=sys.stderr)
            page.context.close()
            if args.network:
                timeline(browser, f"{srv.url}/workspace", workspace_ready, label)
            if args.profile:
                profile(browser, f"{srv.url}/workspace", workspace_ready, label)
        for label, srv in servers.items():  # the free page's UMAP warm-up is ~30-60 s of CPU
            waited = wait_quiet(srv.proc.pid)
            print(f"(waited {waited:.0f} s for {label.split(' ')[0]}'s warm-up)", file=sys.stderr)
        triv = stack.enter_context(running(tmp / "trivial.py", env=dict(os.environ), log=tmp))
        _load(new_page(browser), triv.url, trivial_ready)  # its first load compiles, untimed
        if args.profile:
            profile(browser, triv.url, trivial_ready, "trivial app")
        targets: dict[str, tuple[str, Callable[[Any], None], Callable[[Any], Any],
                                 Callable[[Any], None] | None]] = {
            "trivial app": (triv.url, trivial_ready, phases, None)}
        targets.update({label: (f"{srv.url}/workspace", workspace_ready, chart_timing,
                                workspace_settled) for label, srv in servers.items()})
        results: dict[tuple[str, bool], tuple[list[float], list[Any]]] = {
            (label, warm): ([], []) for label in targets for warm in (False, True)}
        order = list(results.items())
        for rep in range(args.reps):  # each rep starts one further along: no fixed position
            for (label, warm), (times, probes) in order[rep % len(order):] + order[
                    :rep % len(order)]:
                url, ready, probe, settle = targets[label]
                times.extend(first_paint(browser, url, ready, 1, warm=warm, probe=probe,
                                         probed=probes, settle=settle))
            print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
        browser.close()
    print("| what | reps | median ms | p95 ms |\n|---|---|---|---|")
    for (label, warm), (times, probes) in results.items():
        _summary(f"{label.split(' ')[0]}, {'warm' if warm else 'cold'} HTTP cache", times,
                 probes, sys.stdout, "first paint" if label == "trivial app" else None)
    for warm in (False, True):
        base = statistics.median(results[("trivial app", warm)][0])
        for label in servers:
            gap = statistics.median(results[(label, warm)][0]) - base
            print(f"{label.split(' ')[0]}, {'warm' if warm else 'cold'}: workspace + chart "
                  f"drawn = trivial app {gap:+.0f} ms (medians)")
    print(f"\nload average (1, 5, 15 min) at the start: {', '.join(f'{x:.2f}' for x in load_before)}"
          f"; at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
