"""Benchmark: the participant's whole path and first paints, timed inside the page.

``python -m benchmarks.steps [--reps 5] [--root DIR]`` starts ``streamlit run app.py`` (from
``--root``, default this checkout, so an older checkout can be measured with the same bench)
and a trivial one-button app, and prints median and p95 (ms) of every step a participant waits
for: consent → About you, questionnaire → onboarding, onboarding → practice workspace (chart
drawn), practice → task part 1, part → next part (workspace drawn), Submit → submitted,
task → end questionnaire, questionnaire → completion code; a new session's first paint of
the trivial app, Home, consent and the free-exploration workspace (its question, then its
chart drawn; cold and warm HTTP cache, once the server's start-up work is over); and the
consent page of the first visitor of a just-started server (imports and warm-up included).

Times are taken in the page (``performance.now()``): from the ``pointerdown`` of the click (or
navigation start, for a first paint) to the first animation frame in which the next part is in
the DOM. Playwright's own waits poll with a back-off (0, 20, 50, 100, 100, then every 500 ms),
so ``locator.wait_for`` adds up to 500 ms to anything slower than ~270 ms; the rows of
benchmarks/rerun.py that use it (first paints) read high by that much (its Continue rows use
:func:`input_to_drawn`). Figures, not assertions (STYLE.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT
from benchmarks.paint import TIMEOUT_MS, VIEWPORT
from benchmarks.split import cpu_ms, wait_quiet
from core.settings import BUILTIN_BANK
from tests.harness import CHROMIUM, CHROMIUM_ARGS, running

TASK = "film-pulp-review"
STUDY = f"""id: steps
title: Steps bench study
consent: Please read this and agree to take part.
conditions: [pleasqlarify]
task_bank: {BUILTIN_BANK}
subtasks:
  "1": Describe one interpretation.
  2a: Which clusters do you see?
  2b: Explain the differences between the clusters.
  "3": Navigate to your interpretation and submit it.
tasks:
  - id: {TASK}
onboarding:
  intro: Welcome to the steps bench study.
  practice_task: film-practice-tarantino
questionnaires:
  - use: demographics
  - id: end
    title: Your opinion
    items:
      - {{id: useful, text: "The system was useful.", kind: likert}}
"""
TRIVIAL = """import streamlit as st
st.button("Yes")
st.markdown("trivial app drawn")
"""
# Installed before any page script: a rAF loop that stamps the first frame in which the armed
# predicate holds, after the armed input (pointerdown/keydown) or, for a load, from navigation.
WATCH = """
(() => {
  const q = window.__pq = window.__pq || {input: null, drawn: null, pred: null};
  const stamp = () => { if (q.pred && q.input === null) q.input = performance.now(); };
  addEventListener('pointerdown', stamp, true);
  addEventListener('keydown', stamp, true);
  const tick = () => {
    if (q.pred && q.drawn === null && q.input !== null) {
      try { if (q.pred()) q.drawn = performance.now(); } catch (e) { /* not yet */ }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();
"""
ARM = """p => { const q = window.__pq; q.input = null; q.drawn = null;
                q.pred = new Function('return (' + p + ');'); }"""
DRAWN = "() => window.__pq && window.__pq.drawn !== null"
CHART = "document.querySelector('.pq-space[data-revision]') !== null"
# the free-exploration workspace's frame: its task picker and editable question are drawn
QUESTION = ("document.querySelector('[data-testid=\"stTextInput\"] input') !== null"
            " && document.querySelector('[data-testid=\"stSelectbox\"]') !== null")


def has_text(text: str) -> str:
    """A page predicate: ``text`` is in the document (textContent: no layout forced)."""
    return f"document.body.textContent.includes({json.dumps(text)})"


def workspace_drawn(text: str) -> str:
    """A page predicate: ``text`` and the workspace with its chart are in the document."""
    return f"{has_text(text)} && {has_text('queries remain')} && {CHART}"


def input_to_drawn(page: Any, predicate: str, act: Callable[[], None],
                   timeout_ms: float = 60_000) -> float:
    """ms from the input ``act`` makes (pointerdown/keydown) to the frame ``predicate`` holds."""
    page.evaluate(ARM, predicate)
    act()
    page.wait_for_function(DRAWN, timeout=timeout_ms)
    return float(page.evaluate("window.__pq.drawn - window.__pq.input"))


def load_to_drawn(context: Any, address: str, predicate: str) -> float:
    """A new tab (a new Streamlit session): ms from navigation start until ``predicate`` holds."""
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(WATCH + f"window.__pq.input = 0; window.__pq.pred = () => ({predicate});")
    page.goto(address)
    page.wait_for_function(DRAWN, timeout=TIMEOUT_MS)
    ms = float(page.evaluate("window.__pq.drawn"))
    page.close()
    return ms


def first_paints(browser: Any, address: str, predicate: str, reps: int,
                 warm: bool) -> list[float]:
    """``reps`` first paints of ``address``: a fresh context each, after one visit if ``warm``."""
    times = []
    for _ in range(reps):
        context = browser.new_context(viewport=VIEWPORT)
        if warm:
            load_to_drawn(context, address, predicate)
        times.append(load_to_drawn(context, address, predicate))
        context.close()
    return times


def _idle(page: Any) -> None:
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           timeout=TIMEOUT_MS)
    page.wait_for_timeout(400)


def _button(page: Any, name: str) -> Any:
    return page.get_by_role("button", name=name).locator("visible=true").first


def _answer(page: Any, store: Any, pid: str, item: str, text: str) -> None:
    """Type an answer and wait until the store holds it (untimed; retried if a rerun ate it)."""
    for _ in range(5):
        _idle(page)
        box = page.locator("textarea[aria-label^=Your] >> visible=true").first
        box.fill(text)
        box.press("Control+Enter")
        page.get_by_text("Task 1 of 1").click()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if store.answers(pid).get(item) == text:
                return
            time.sleep(0.1)
    raise RuntimeError(f"the answer to {item} was not saved")


PATH = ("consent → About you", "questionnaire Continue → onboarding",
        "onboarding → practice workspace (chart drawn)", "practice → task part 1",
        "part 1 → part 2a workspace (chart drawn)", "part 2a → part 2b workspace (chart drawn)",
        "part 2b → part 3 workspace (chart drawn)", "Submit → submitted",
        "task done → end questionnaire", "questionnaire → completion code")


def _count_frames(page: Any) -> list[int]:
    """[messages, bytes] the server has sent ``page`` over its WebSockets so far (kept live)."""
    seen = [0, 0]

    def frame(payload: Any) -> None:
        seen[0] += 1
        seen[1] += len(payload)
    page.on("websocket", lambda ws: ws.on("framereceived", frame))
    return seen


Sent = tuple[int, int, float, float]  # messages, bytes, server CPU ms, renderer CPU ms


def participant_path(browser: Any, url: str, store: Any, sent: list[Sent] | None = None,
                     server_pid: int | None = None) -> list[float]:
    """One participant through the whole study; ms of each step of :data:`PATH`.

    ``sent``, if given, receives per step what the step cost from the click until the page was
    idle again (the new part's deltas, plus the follow-up reruns it asks for): messages and
    bytes the server sent, the CPU of process ``server_pid`` (all its threads: the next part
    prepared in the background too) and of the renderer's main thread (CDP ThreadTime).
    """
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(WATCH)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    frames = _count_frames(page)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    out: list[float] = []

    def cpu() -> tuple[float, float]:
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        return (cpu_ms(server_pid) if server_pid else 0.0), metrics["ThreadTime"] * 1000

    def step(button: str, predicate: str) -> None:
        _idle(page)
        before = list(frames)
        server0, renderer0 = cpu()
        try:
            out.append(input_to_drawn(page, predicate, _button(page, button).click,
                                      TIMEOUT_MS))
        except Exception as exc:
            shown = page.evaluate("() => document.body.innerText.slice(0, 300)")
            raise RuntimeError(f"{PATH[len(out)]}: not drawn ({type(exc).__name__}); the page "
                               f"shows {shown!r}") from exc
        if sent is not None:
            _idle(page)
            server1, renderer1 = cpu()
            sent.append((frames[0] - before[0], frames[1] - before[1], server1 - server0,
                         renderer1 - renderer0))

    try:
        page.goto(f"{url}/participant?study=steps")
        page.get_by_role("button", name="I agree").wait_for()
        step("I agree", has_text("About you"))
        page.wait_for_url("**p=*")
        pid = page.url.split("p=")[1].split("&")[0]
        page.get_by_text("intermediate", exact=True).click()
        page.get_by_text("weekly", exact=True).click()
        step("Continue", has_text("Welcome to the steps bench study"))
        step("Continue to the practice task", workspace_drawn("Practice task"))
        step("I feel comfortable: start the tasks", has_text("Describe one interpretation."))
        for sub, nxt in (("1", "Which clusters do you see?"),
                         ("2a", "Explain the differences"), ("2b", "Navigate to your")):
            _answer(page, store, pid, f"task:{TASK}/{sub}", f"answer to {sub}")
            step("Continue to the next part", workspace_drawn(nxt))
        step("Submit this query", has_text("You submitted the query"))
        step("Finish this task", has_text("Your opinion"))
        page.get_by_test_id("stRadioGroup").get_by_text("6", exact=True).click()
        step("Continue", has_text("completion code"))
    finally:
        context.close()
    return out


def measure(reps: int, root: Path, out: Any = sys.stderr) -> list[tuple[str, list[float]]]:
    """Every row of this bench as (what, times); each is printed to ``out`` as it arrives."""
    from playwright.sync_api import sync_playwright

    from benchmarks.common import stats
    from study.store import open_store

    rows: list[tuple[str, list[float]]] = []

    def add(what: str, times: list[float]) -> None:
        if not times:
            print(f"{what}: no measurement", file=out, flush=True)
            return
        med, p95 = stats(times)
        print(f"{what}: median {med:.0f} ms, p95 {p95:.0f} ms ({len(times)} reps)", file=out,
              flush=True)
        rows.append((what, times))

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "studies" / "steps").mkdir(parents=True)
        (tmp / "studies" / "steps" / "study.yaml").write_text(STUDY, encoding="utf-8")
        (tmp / "trivial.py").write_text(TRIVIAL, encoding="utf-8")
        db = f"sqlite:///{tmp / 'steps.sqlite'}"
        env = dict(os.environ, PLEASQLARIFY_DB_URL=db,
                   PLEASQLARIFY_STUDIES_DIR=str(tmp / "studies"),
                   PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio"),
                   NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            with running(tmp / "trivial.py", env=env, log=tmp, cwd=root) as srv:
                first_paints(browser, srv.url, has_text("trivial app drawn"), 1, False)
                for warm in (False, True):
                    add(f"first paint: trivial app ({'warm' if warm else 'cold'} HTTP cache)",
                        first_paints(browser, srv.url, has_text("trivial app drawn"), reps,
                                     warm))
            with running("app.py", env=env, log=tmp, cwd=root) as srv:
                store = open_store(db)
                paths = []
                for _ in range(reps + 1):  # the first one warms the server: pools, imports
                    try:
                        paths.append(participant_path(browser, srv.url, store))
                    except RuntimeError as exc:  # a lost run must not lose the others
                        print(f"participant path FAILED: {exc}", file=out, flush=True)
                for i, what in enumerate(PATH):
                    add(f"participant: {what}", [path[i] for path in paths[1:]])
                first_paints(browser, f"{srv.url}/workspace", CHART, 1, False)  # untimed
                wait_quiet(srv.proc.pid)  # the free page's UMAP warm-up (30-60 s of CPU)
                for what, address, predicate in (
                        ("Home", f"{srv.url}/", has_text("Built-in tasks")),
                        ("consent", f"{srv.url}/participant?study=steps", has_text("I agree")),
                        ("workspace question", f"{srv.url}/workspace", QUESTION),
                        ("workspace + chart", f"{srv.url}/workspace", workspace_drawn(""))):
                    for warm in (False, True):
                        add(f"first paint: {what} ({'warm' if warm else 'cold'} HTTP cache)",
                            first_paints(browser, address, predicate, reps, warm))
            add("first paint: consent, first visitor of a fresh server (cold HTTP cache)",
                fresh_server_paints(browser, root, env, tmp, min(reps, 3)))
            browser.close()
    return rows


def fresh_server_paints(browser: Any, root: Path, env: dict[str, str], tmp: Path,
                        reps: int) -> list[float]:
    """The consent page's first paint for the first visitor of a just-started server."""
    times = []
    for _ in range(reps):
        with running("app.py", env=env, log=tmp, cwd=root) as srv:
            context = browser.new_context(viewport=VIEWPORT)
            times.append(load_to_drawn(context, f"{srv.url}/participant?study=steps",
                                       has_text("I agree")))
            context.close()
    return times


def bench_main(prog: str, doc: str | None, measure_rows: Callable[[int, Path], list],
               argv: list[str] | None, reps: int) -> int:
    """A bench's command line (``--reps``, ``--root``): measure, then print the table."""
    from benchmarks.common import print_table

    parser = argparse.ArgumentParser(prog=f"python -m {prog}", description=doc)
    parser.add_argument("--reps", type=int, default=reps)
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="checkout whose app.py is served (default: this one)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    rows = measure_rows(args.reps, args.root.resolve())
    print_table(rows, load_before, head=f"served from {args.root.resolve()}\n")
    return 0


def compare_paths(reps: int, roots: list[Path], out: Any = sys.stderr
                  ) -> tuple[list[tuple[str, list[float]]], list[tuple[str, list[Sent]]]]:
    """The participant path on each checkout of ``roots``, served side by side, their
    repetitions interleaved (so each is measured under the same load): the rows (what, times),
    and per row what each step cost (:data:`Sent`)."""
    from playwright.sync_api import sync_playwright

    from study.store import open_store

    with tempfile.TemporaryDirectory() as name, contextlib.ExitStack() as stack:
        tmp = Path(name)
        (tmp / "studies" / "steps").mkdir(parents=True)
        (tmp / "studies" / "steps" / "study.yaml").write_text(STUDY, encoding="utf-8")
        servers = {}
        for i, root in enumerate(roots):
            db = f"sqlite:///{tmp / f'steps{i}.sqlite'}"
            env = dict(os.environ, PLEASQLARIFY_DB_URL=db,
                       PLEASQLARIFY_STUDIES_DIR=str(tmp / "studies"),
                       PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio"),
                       NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"))
            label = (root.name if root.name not in servers else f"{root.name}#{i}"
                     ) if len(roots) > 1 else ""
            srv = stack.enter_context(running("app.py", env=env, log=tmp, cwd=root))
            servers[label] = (srv, open_store(db))
        browser = stack.enter_context(sync_playwright()).chromium.launch(
            executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        for srv, store in servers.values():  # the first path warms each server (untimed)
            try:
                participant_path(browser, srv.url, store)
            except RuntimeError as exc:  # e.g. a first import slower than a step's timeout
                print(f"warm-up path: {exc}", file=out, flush=True)
        times: dict[str, list[list[float]]] = {label: [] for label in servers}
        sent: dict[str, list[list[Sent]]] = {label: [] for label in servers}
        for rep in range(reps):
            for label, (srv, store) in servers.items():
                got: list[Sent] = []
                try:
                    times[label].append(participant_path(browser, srv.url, store, got,
                                                         srv.proc.pid))
                    sent[label].append(got)
                except RuntimeError as exc:  # a lost run must not lose the others
                    print(f"{label} participant path FAILED: {exc}", file=out, flush=True)
            print(f"rep {rep + 1}/{reps} done", file=out, flush=True)
        browser.close()
    rows, counts = [], []
    for i, what in enumerate(PATH):
        for label in servers:
            name = f"{label}: participant: {what}" if label else f"participant: {what}"
            rows.append((name, [path[i] for path in times[label]]))
            counts.append((name, [path[i] for path in sent[label]]))
    return rows, counts


def print_sent(counts: list[tuple[str, list[Sent]]]) -> None:
    """Per step (click until idle again), medians: messages and KB the server sent, server
    CPU and the renderer main thread's CPU."""
    import statistics

    print("\n| step | messages | KB sent | server CPU ms | renderer CPU ms |\n|---|---|---|---|---|")
    for what, got in counts:
        if got:
            med = [statistics.median(g[i] for g in got) for i in range(4)]
            print(f"| {what} | {med[0]:.0f} | {med[1] / 1024:.1f} | {med[2]:.0f} | {med[3]:.0f} |")


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.steps [--reps 5] [--root DIR] [--compare CHECKOUT] [--path]``."""
    from benchmarks.common import print_table

    parser = argparse.ArgumentParser(prog="python -m benchmarks.steps", description=__doc__)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="checkout whose app.py is served (default: this one)")
    parser.add_argument("--compare", action="append", default=[], type=Path, metavar="CHECKOUT",
                        help="also serve CHECKOUT/app.py, the participant paths interleaved "
                             "with ours (only the participant's path is measured)")
    parser.add_argument("--path", action="store_true",
                        help="only the participant's path (with the messages each step sent)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    roots = [args.root.resolve(), *(r.resolve() for r in args.compare)]
    if len(roots) == 1 and not args.path:
        rows = measure(args.reps, roots[0])
        print_table(rows, load_before, head=f"served from {roots[0]}\n")
        return 0
    rows, counts = compare_paths(args.reps, roots)
    print_table(rows, load_before, head="".join(f"served from {r}\n" for r in roots))
    print_sent(counts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
