"""CPU accounting for benchmarks/rerun.py: what a key press costs the server and the renderer.

:func:`wait_quiet` holds timing back until the server is idle (its UMAP warm-up over);
:class:`Split` (``--split``) reads the server's CPU from /proc, the renderer main thread's from
the Chrome DevTools Protocol.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import CDPSession, Page

SPLIT: dict[str, int] = {}  # --split: {"on": 1, "pid": server pid} (see Split)


def cpu_ms(pid: int) -> float:
    """CPU time (user + system, ms) process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def wait_quiet(pid: int, busy_ms: float = 50, timeout: float = 300) -> float:
    """Wait until server ``pid`` uses < ``busy_ms`` of CPU per second; returns the s waited.

    Opening the free-exploration page starts UMAP's numba warm-up, ~30-60 s of CPU in the
    server (and its GIL): timing reruns meanwhile measures that compilation, not the rerun.
    """
    start = time.monotonic()
    if not Path(f"/proc/{pid}/stat").exists():
        return 0.0
    while time.monotonic() - start < timeout:
        before = cpu_ms(pid)
        time.sleep(1.0)
        if cpu_ms(pid) - before < busy_ms:
            break
    return time.monotonic() - start


class Split:
    """``--split``: per rep, server CPU (/proc), renderer main-thread CPU (CDP ThreadTime),
    and script time (CDP ScriptDuration); medians to stderr."""

    def __init__(self, page: Page | None) -> None:
        """Measure on ``page`` (None: a warm-up, not measured)."""
        self.page = page
        self.rows: list[dict[str, float]] = []
        self.cdp: CDPSession | None = None
        if SPLIT and page is not None:
            self.cdp = page.context.new_cdp_session(page)
            self.cdp.send("Performance.enable")

    def _now(self, cdp: CDPSession) -> dict[str, float]:
        """The renderer's CDP metrics and the server's CPU so far, in ms."""
        metrics = {m["name"]: m["value"] * 1000
                   for m in cdp.send("Performance.getMetrics")["metrics"]}
        metrics["server"] = cpu_ms(SPLIT["pid"]) if SPLIT.get("pid") else 0.0
        return metrics

    def start(self) -> None:
        if self.cdp is not None:
            self.before = self._now(self.cdp)

    def stop(self) -> None:
        if self.cdp is None:
            return
        after = self._now(self.cdp)
        self.rows.append({"server CPU": after["server"] - self.before["server"],
                          "renderer CPU": after["ThreadTime"] - self.before["ThreadTime"],
                          "renderer JS": after["ScriptDuration"] - self.before["ScriptDuration"]})

    def report(self) -> None:
        if self.rows:
            print("  split (median ms per rep): " + ", ".join(
                f"{k} {statistics.median(r[k] for r in self.rows):.0f}" for k in self.rows[0]),
                file=sys.stderr, flush=True)
