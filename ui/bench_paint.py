"""First-paint measurements for ui/bench_rerun.py: a new session with a cold or a warm HTTP cache.

*Cold*: a fresh browser context (empty HTTP cache, as a participant's first visit). *Warm*: the
same context after one untimed visit to the same address, whose tab is closed first; a new tab
is a new Streamlit session, as when a participant returns or opens a second tab.
:func:`timeline` lists every request of one load (start, end, size, cached, encoding,
Cache-Control) and the WebSocket's first and last message, from the Chrome DevTools Protocol.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

TIMEOUT_MS = 180_000  # a loaded 2-core machine can be very slow; figures, not a time limit
VIEWPORT = {"width": 1600, "height": 1100}


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
                warm: bool = False) -> list[float]:
    """ms from opening ``address`` in a new session until ``ready(page)`` holds, ``reps`` times."""
    times = []
    for _ in range(reps):
        context = browser.new_context(viewport=VIEWPORT)
        if warm:
            primer = new_page(browser, context)
            _load(primer, address, ready)
            primer.close()
        times.append(_load(new_page(browser, context), address, ready))
        context.close()
    return times


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
