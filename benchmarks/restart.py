"""Benchmark: what the first people after a server restart wait for (issue 24).

``python -m benchmarks.restart [--rounds 3] [--compare CHECKOUT] [--numba cold warm]
[--settle SECONDS]`` starts a new server per checkout, NUMBA cache mode and round (``streamlit
run app.py`` on the steps bench study of :mod:`benchmarks.steps`), then, at once, walks the
first participant from the consent page to the practice workspace (chart drawn), a
researcher's first Setup page after it, the free-exploration workspace (which starts UMAP's
numba warm-up) and three new participants' consent pages one after the other meanwhile, and
prints median and p95 (ms) of:

- since the server process was started: consent painted, the practice workspace painted
  (the participant's clicks and answers included) and Setup painted after Unlock;
- the in-page waits of the same steps (from the click or navigation to the first frame that
  shows the next part, as :mod:`benchmarks.steps` times them), and of the free workspace and
  the consent pages after it.

``--numba cold`` gives each server an empty ``NUMBA_CACHE_DIR`` (a new machine, or a cleared
cache: UMAP's numba code compiles from scratch), ``warm`` the shared ``/tmp/numba-cache``.
``--settle`` waits that long after the server is healthy before the first visitor (0: a
visitor who was already waiting). Checkouts are served in a rotating order, one at a time, so
a loaded machine slows all alike. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, print_table
from benchmarks.paint import TIMEOUT_MS, VIEWPORT
from benchmarks.steps import (
    CHART,
    STUDY,
    WATCH,
    _button,
    _idle,
    has_text,
    input_to_drawn,
    load_to_drawn,
    workspace_drawn,
)
from tests.harness import CHROMIUM, CHROMIUM_ARGS, start

PASSWORD = "bench"


def first_visitors(browser: Any, url: str, t0: float) -> dict[str, float]:
    """The first participant's consent → practice, then a researcher's Setup, on a server
    started at ``t0`` (monotonic s): ms since ``t0`` and in-page ms of each step."""
    out: dict[str, float] = {}
    since = lambda: (time.monotonic() - t0) * 1000  # noqa: E731
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(WATCH + f"window.__pq.input = 0; window.__pq.pred = () => "
                                    f"({has_text('I agree')});")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{url}/participant?study=steps")
    page.wait_for_function("() => window.__pq.drawn !== null", timeout=TIMEOUT_MS)
    out["consent since start"] = since()
    out["consent: navigation → painted"] = float(page.evaluate("window.__pq.drawn"))
    out["consent → About you"] = input_to_drawn(page, has_text("About you"),
                                                _button(page, "I agree").click, TIMEOUT_MS)
    page.get_by_text("intermediate", exact=True).click()
    page.get_by_text("weekly", exact=True).click()
    _idle(page)
    out["About you → onboarding"] = input_to_drawn(
        page, has_text("Welcome to the steps bench study"), _button(page, "Continue").click,
        TIMEOUT_MS)
    _idle(page)
    out["onboarding → practice workspace (chart drawn)"] = input_to_drawn(
        page, workspace_drawn("Practice task"),
        _button(page, "Continue to the practice task").click, TIMEOUT_MS)
    out["practice workspace since start"] = since()
    context.close()
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(WATCH)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{url}/setup")
    page.get_by_label("Researcher password").fill(PASSWORD)
    out["Setup: Unlock → studies listed"] = input_to_drawn(
        page, has_text("Tasks and pools"), _button(page, "Unlock").click, TIMEOUT_MS)
    out["Setup since start"] = since()
    context.close()
    # the free-exploration page starts UMAP's warm-up (numba); the next visitors meanwhile
    context = browser.new_context(viewport=VIEWPORT)
    out["free workspace: navigation → chart drawn"] = load_to_drawn(
        context, f"{url}/workspace", CHART)
    context.close()
    for i in (1, 2, 3):
        context = browser.new_context(viewport=VIEWPORT)
        out[f"then new participant {i}: consent painted (UMAP warming up)"] = load_to_drawn(
            context, f"{url}/participant?study=steps", has_text("I agree"))
        context.close()
    return out


def measure(rounds: int, roots: list[Path], modes: list[str], settle: float
            ) -> list[tuple[str, list[float]]]:
    """Every (checkout, numba mode, step) row over ``rounds`` rounds of fresh servers."""
    from playwright.sync_api import sync_playwright

    labels = {("" if root == ROOT else f"[{root.name}] "): root for root in roots}
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as name, sync_playwright() as p:
        tmp = Path(name)
        (tmp / "studies" / "steps").mkdir(parents=True)
        (tmp / "studies" / "steps" / "study.yaml").write_text(STUDY, encoding="utf-8")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        order = [(label, mode) for mode in modes for label in labels]
        for r in range(rounds):
            shift = r % len(order)
            for label, mode in order[shift:] + order[:shift]:
                numba = (tempfile.mkdtemp(prefix="numba-", dir=tmp) if mode == "cold"
                         else os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"))
                env = dict(os.environ, PLEASQLARIFY_DB_URL=f"sqlite:///{tmp / f'r{r}.sqlite'}",
                           PLEASQLARIFY_STUDIES_DIR=str(tmp / "studies"),
                           PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio"),
                           PLEASQLARIFY_RESEARCHER_PASSWORD=PASSWORD, NUMBA_CACHE_DIR=numba)
                t0 = time.monotonic()
                server = start("app.py", env=env, log=tmp, cwd=labels[label], timeout=600)
                try:
                    healthy = (time.monotonic() - t0) * 1000
                    time.sleep(settle)
                    steps = {"server healthy since start": healthy,
                             **first_visitors(browser, server.url, t0)}
                except Exception as exc:  # a lost round must not lose the others
                    print(f"{label}{mode} round {r}: FAILED {type(exc).__name__}: {exc}",
                          flush=True)
                    steps = {}
                finally:
                    server.stop()
                for what, ms in steps.items():
                    key = f"{label}NUMBA cache {mode}: {what}"
                    times.setdefault(key, []).append(ms)
                    print(f"{key}: {ms:.0f} ms", flush=True)
        browser.close()
    return sorted(times.items(), key=lambda kv: kv[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.restart", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", action="append", default=[], type=Path,
                        metavar="CHECKOUT", help="also serve CHECKOUT/app.py, interleaved")
    parser.add_argument("--numba", nargs="+", choices=["cold", "warm"],
                        default=["cold", "warm"])
    parser.add_argument("--settle", type=float, default=0.0, metavar="SECONDS",
                        help="wait after the server is healthy before the first visitor")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
    load_before = os.getloadavg()
    rows = measure(args.rounds, [ROOT, *(r.resolve() for r in args.compare)], args.numba,
                   args.settle)
    print_table(rows, load_before, head="First visitors of a restarted server\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
