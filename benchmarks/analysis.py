"""Benchmark: the Analysis page's server-side rerun on a simulated study (issue 24).

``python -m benchmarks.analysis [--participants 20] [--reps 6] [--db URL]`` simulates a demo
study (``study.simulate_demo``, participants stored as simulated) into a temporary SQLite
database (or reuses ``--db``), opens ``pages/analysis.py`` in Streamlit's AppTest, and prints
median and p95 (ms) of: the first run that shows the data (every tab computed), and a rerun
after a widget in a tab (the Timings "Per subtask" toggle and the replay's step slider, in
turn) — what a researcher waits for on each change. Server time only (no browser); figures,
not assertions.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, print_table


def rerun_times(url: str, reps: int) -> tuple[list[float], list[float]]:
    """The first run with the data shown, then ``reps`` reruns after a tab's widget (ms)."""
    from streamlit.testing.v1 import AppTest

    os.environ["PLEASQLARIFY_DB_URL"] = url
    os.environ.setdefault("PLEASQLARIFY_RESEARCHER_PASSWORD", "bench")
    at = AppTest.from_file(str(ROOT / "pages" / "analysis.py"), default_timeout=300).run()
    at.text_input(key="analysis_pw").input(os.environ["PLEASQLARIFY_RESEARCHER_PASSWORD"])
    at.button[0].click().run()
    start = time.perf_counter()
    at.checkbox(key="an_sim").check().run()
    first = [(time.perf_counter() - start) * 1000]
    if at.exception or len(at.tabs) != 6:
        raise RuntimeError(f"the Analysis page did not show its tabs: {at.exception}")
    times = []
    for i in range(reps):
        start = time.perf_counter()
        if i % 2:
            at.toggle(key="an_tim_sub").set_value(i % 4 == 1).run()
        else:
            at.slider(key="an_rp_k").set_value(i % 3 + 1).run()
        times.append((time.perf_counter() - start) * 1000)
        if at.exception:
            raise RuntimeError(f"the rerun failed: {at.exception}")
    return first, times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.analysis", description=__doc__)
    parser.add_argument("--participants", type=int, default=20)
    parser.add_argument("--reps", type=int, default=6)
    parser.add_argument("--db", metavar="URL",
                        help="an existing demo database (default: simulate into a temp one)")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db
        if url is None:
            from study.simulate_demo import simulate_participants
            from study.store import open_store

            url = f"sqlite:///{Path(tmp) / 'demo.sqlite'}"
            simulate_participants(open_store(url), args.participants, seed=1)
        first, reruns = rerun_times(url, args.reps)
    who = "the --db study" if args.db else f"{args.participants} simulated participants"
    print_table([("Analysis: first run with the data (all tabs)", first),
                 (f"Analysis: rerun after a tab's widget ({who})", reruns)], load_before)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
