"""Benchmark: the Analysis page's waits on simulated studies (issue 24).

``python -m benchmarks.analysis [--participants 20] [--reps 6] [--db URL] [--no-apptest]
[--browser] [--compare CHECKOUT] [--fresh ROUNDS [--fresh-only]]`` simulates two demo studies (``study.simulate_demo``: film
and film-two-conditions, ``--participants`` each) into a temporary SQLite database (or reuses
``--db``) and prints median and p95 (ms) of:

- AppTest (server time only): the first run that shows the data, and a rerun after a widget in
  a tab (the Timings "Per subtask" toggle and the replay's step slider, in turn);
- ``--browser``, real Chromium against ``streamlit run app.py`` (benchmarks/analysis_browser.py,
  measured in the page from the user's event to the new state painted): the trivial app's first
  paint of the same run (cold and warm HTTP cache), a fresh server's Unlock → Completion, a
  new researcher session's first load (cold and warm HTTP cache), switching to each tab, the
  Timings toggle, and switching the study.
  ``--compare`` also serves another checkout's app.py (e.g. ``git worktree add /tmp/base
  main``): the first loads are interleaved round by round (the trivial app, this checkout, the
  other), each with a row of its difference to the trivial app of the same round, so a loaded
  machine slows all alike; the other rows follow per checkout. ``--fresh ROUNDS`` repeats the
  fresh server's Unlock (a new server per checkout and round, in a rotating order, beside the
  trivial app's cold first paint of the round) and times a study switch right after it, and
  navigation → the password form drawn; ``--typing SECONDS`` types the password that long after
  the form shows (a person; the default 0 is a password manager).

For the browser the participants are stored as real ones (the ``simulated`` flag cleared in the
benchmark's copy), so the page shows them on its first load as it does a live study's. Figures,
not assertions.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, print_table

STUDIES = ["film", "film-two-conditions"]


def _open(at, tab: str, kind: str, key: str) -> None:
    """Open ``tab`` (untimed) unless widget ``key`` is drawn already (a page that draws every
    tab on each run, as main before issue 24's fragments did)."""
    if not any(getattr(w, "key", None) == key for w in at.get(kind)):
        at.session_state["an_tabs"] = tab
        at.run()


def rerun_times(url: str, reps: int) -> tuple[list[float], list[float]]:
    """The first run with the data shown, then ``reps`` reruns after a widget in a tab, the
    Timings toggle and the replay's step in turn, that tab opened first (untimed) (ms)."""
    from streamlit.testing.v1 import AppTest

    os.environ["PLEASQLARIFY_DB_URL"] = url
    os.environ.setdefault("PLEASQLARIFY_RESEARCHER_PASSWORD", "bench")
    at = AppTest.from_file(str(ROOT / "pages" / "analysis.py"), default_timeout=300).run()
    at.text_input(key="analysis_pw").input(os.environ["PLEASQLARIFY_RESEARCHER_PASSWORD"])
    at.button[0].click().run()
    start = time.perf_counter()
    at.checkbox(key="an_sim_live").check().run()
    first = [(time.perf_counter() - start) * 1000]
    if at.exception or len(at.tabs) != 6:
        raise RuntimeError(f"the Analysis page did not show its tabs: {at.exception}")
    times = []
    for i in range(reps):
        if i % 2:
            _open(at, "Timings", "toggle", "an_tim_sub")
            start = time.perf_counter()
            at.toggle(key="an_tim_sub").set_value(i % 4 == 1).run()
        else:
            _open(at, "Timeline & replay", "slider", "an_rp_k")
            start = time.perf_counter()
            at.slider(key="an_rp_k").set_value(i % 3 + 1).run()
        times.append((time.perf_counter() - start) * 1000)
        if at.exception:
            raise RuntimeError(f"the rerun failed: {at.exception}")
    return first, times


def browser_times(url: str, reps: int, roots: list[Path], tmp: Path, fresh: int = 0,
                  fresh_only: bool = False, typing_s: float = 0.0
                  ) -> list[tuple[str, list[float]]]:
    """The Chromium rows (benchmarks.analysis_browser) for each checkout in ``roots``; with
    ``fresh``, first that many rounds of fresh servers (:func:`fresh_rows`), alone with
    ``fresh_only``."""
    from benchmarks.analysis_browser import browser_rows
    from benchmarks.rerun import TRIVIAL
    from tests.harness import running

    db = tmp / "live.sqlite"  # a copy whose participants count as real ones
    shutil.copy(url.removeprefix("sqlite:///"), db)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE participants SET simulated = 0")
    (tmp / "trivial.py").write_text(TRIVIAL, encoding="utf-8")
    env = dict(os.environ, PLEASQLARIFY_DB_URL=f"sqlite:///{db}",
               PLEASQLARIFY_DEMO_DB_URL=f"sqlite:///{tmp / 'no-demo.sqlite'}",
               PLEASQLARIFY_RESEARCHER_PASSWORD="bench",
               PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio"))
    labels = {("" if root == ROOT else f"[{root.name}] "): root for root in roots}
    rows: list[tuple[str, list[float]]] = []
    with contextlib.ExitStack() as servers:  # every checkout's server up at once: interleaved
        trivial = servers.enter_context(running(tmp / "trivial.py", env=env, log=tmp))
        if fresh:
            rows = fresh_rows(labels, env, tmp, trivial.url, fresh, typing_s)
            if fresh_only:
                return rows
        urls = {label: servers.enter_context(running("app.py", env=env, log=tmp, cwd=root)).url
                for label, root in labels.items()}
        rows += browser_rows(urls, trivial.url, STUDIES, reps)
    return rows


def fresh_rows(labels: dict[str, Path], env: dict[str, str], tmp: Path, trivial_url: str,
               reps: int, typing_s: float = 0.0) -> list[tuple[str, list[float]]]:
    """A new server per checkout and round (benchmarks.analysis_browser.fresh_unlocks): the
    researcher's Unlock on a server that has computed nothing yet, and the study switch after
    it, beside the trivial app's cold first paint of the same rounds."""
    from playwright.sync_api import sync_playwright

    from benchmarks.analysis_browser import fresh_unlocks
    from tests.harness import CHROMIUM, CHROMIUM_ARGS, running

    def start(label: str) -> contextlib.AbstractContextManager:
        return running("app.py", env=env, log=tmp, cwd=labels[label])

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        times = fresh_unlocks(browser, start, trivial_url, list(labels), STUDIES, reps, typing_s)
        browser.close()
    rows = [("trivial app: new session → drawn (cold HTTP cache), rounds of the fresh servers",
             times["trivial"])]
    for label in labels:
        rows += [(f"{label}Analysis, fresh server: navigation → password form drawn",
                  times[f"{label} form"]),
                 (f"{label}Analysis, fresh server: Unlock → Completion painted (password typed "
                  f"{typing_s:g} s after the form)", times[label]),
                 (f"{label}  the same minus the trivial app of its round", times[f"{label} gap"]),
                 (f"{label}  then another study → its Completion tab painted",
                  times[f"{label} switch"])]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.analysis", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=20, help="per study")
    parser.add_argument("--reps", type=int, default=6)
    parser.add_argument("--db", metavar="URL",
                        help="an existing demo database, SQLite (default: simulate into a temp one)")
    parser.add_argument("--no-apptest", action="store_true")
    parser.add_argument("--browser", action="store_true", help="also the Chromium rows")
    parser.add_argument("--compare", action="append", default=[], type=Path, metavar="CHECKOUT",
                        help="also measure CHECKOUT/app.py's Analysis page (--browser)")
    parser.add_argument("--fresh", type=int, default=0, metavar="ROUNDS",
                        help="also ROUNDS rounds of a new server per checkout: Unlock on a "
                             "server that has computed nothing, then a study switch (--browser)")
    parser.add_argument("--fresh-only", action="store_true",
                        help="with --fresh, only those rows")
    parser.add_argument("--typing", type=float, default=0.0, metavar="SECONDS",
                        help="with --fresh, type the password this long after the form shows "
                             "(a person; 0: a password manager)")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
    load_before = os.getloadavg()
    rows: list[tuple[str, list[float]]] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        url = args.db
        if url is None:
            from study.simulate_demo import simulate_participants
            from study.store import open_store

            url = f"sqlite:///{tmp / 'demo.sqlite'}"
            store = open_store(url)
            for study in STUDIES:
                simulate_participants(store, args.participants, study=study, seed=1)
            store.close()
        who = "the --db data" if args.db else f"{args.participants} simulated participants"
        if not args.no_apptest:
            first, reruns = rerun_times(url, args.reps)
            rows += [("AppTest: first run with the data (the open tab; all tabs before #24)",
                      first),
                     (f"AppTest: rerun after a tab's widget ({who})", reruns)]
        if args.browser:
            rows += browser_times(url, args.reps, [ROOT, *(r.resolve() for r in args.compare)],
                                  tmp, args.fresh, args.fresh_only, args.typing)
    print_table(rows, load_before, head=f"Analysis page, {who} per study\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
