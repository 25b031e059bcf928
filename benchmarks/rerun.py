"""Benchmark: how fast the studio feels in real Chromium, against a trivial app in the same run.

``python -m benchmarks.rerun [--reps 10] [--no-apptest] [--only TEXT] [--network] [--split]
[--bank-dir DIR]`` builds N = 50 and N = 200 pools by pooling the candidates of every built-in
film task (they share one database), prepares them in a temporary folder (or DIR, reused) with
a one-task study, starts the studio as ``python -m study.serve`` does (``streamlit run
asgi.py``) and a trivial one-button app, and prints
median and p95 (ms) of: key press → re-rendered (trivial app, workspace at N = 50 and 200: the
survivors line and the chart both show the new state, painted; measured in the page from the
key event), key press → the server's rerun done (the workspace shows the speculated state
before it, :mod:`ui.optimistic`), lasso → survivors updated, "None of these" (key X) → the
searching state painted and → the repaired state painted (repair after a rejection; pressed at
once on the first state, and after reading a converged state for 1.5 s; and, in servers of
their own, pressed at once on the first state in a crowd, where nothing is speculated and the
prepared pool's stored round answers, and with repair ahead off, where every press computes
its round: the wait of a press before its round is ready), first paint
of the trivial app, Home, consent and the workspace (a new session with a cold and with a warm
HTTP cache, see benchmarks/paint.py), participant Continue → next part, and a fresh process's
first layout. Reruns are timed once the server's UMAP warm-up is over (:func:`wait_quiet`).
``--network`` also prints each first paint's requests; ``--split`` the CPU each key press cost
the server and the renderer. Figures, not assertions (STYLE.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks.common import ROOT, TRIVIAL, build_bank, entry, print_table, stats
from benchmarks.paint import TIMEOUT_MS, first_paint, new_page, timeline, workspace_settled
from benchmarks.split import SPLIT, Split, wait_quiet
from core.settings import BUILTIN_BANK
from tests.harness import CHROMIUM, CHROMIUM_ARGS, running

COUNT_JS = """() => { const e = document.querySelector('[data-testid="pq-survivors"]');
                      return e ? e.innerText : null; }"""
# what a key press or lasso must change before it counts as re-rendered: the survivors line and,
# on the workspace, the chart's stamp (set once it has drawn the new state)
STATE_JS = f"""() => {{ const c = document.querySelector('[data-testid="pq-action-space"]');
                      return [({COUNT_JS})(), c ? c.dataset.revision : null]; }}"""
STUDY = """id: bench
title: Bench study
consent: Please read this and agree to take part.
conditions: [pleasqlarify]
task_bank: {bank}
subtasks:
  "1": Describe one interpretation.
tasks:
  - id: film-pulp-review
onboarding:
  intro: Welcome to the bench study.
  practice_task: film-practice-tarantino
questionnaires:
  - use: demographics
"""


def _timed(action: Callable[[], None], until: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    until()
    return (time.perf_counter() - start) * 1000


def _settle(page) -> None:
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           timeout=TIMEOUT_MS)
    page.wait_for_timeout(250)


# Armed before a key press (or a lasso's release): the event's time, then the time after the frame that first
# shows the new state was painted (rAF, then a task), then the same once the server has
# confirmed it (the carrier's ack changed, nothing running). Measured in the page, so neither
# includes Playwright's polling.
ARM_JS = f"""b => {{
  const w = window.__pqKey = {{ t0: null, shown: null, confirmed: null }};
  const ack = () => {{ const c = document.querySelector('[data-testid="pq-ack"]');
                      return c ? c.dataset.ack : null; }};
  const ack0 = ack();
  const painted = (k) => requestAnimationFrame(() => setTimeout(() => {{
    if (w[k] === null) w[k] = performance.now(); }}, 0));
  for (const type of ["keydown", "pointerup"]) {{
    document.addEventListener(type, (e) => {{ if (w.t0 === null) w.t0 = e.timeStamp; }},
                              {{ capture: true, once: true }});
  }}
  let seen = false, done = false;
  const check = () => {{
    const [n, r] = ({STATE_JS})();
    if (!seen && n !== b[0] && (b[1] === null || r !== b[1])) {{ seen = true; painted("shown"); }}
    if (seen && !done && (ack0 === null || ack() !== ack0)
        && !document.querySelector('[data-testid="stStatusWidget"]')) {{
      done = true; painted("confirmed"); obs.disconnect(); }}
  }};
  const obs = new MutationObserver(check);
  obs.observe(document.body, {{ subtree: true, childList: true, attributes: true,
                               characterData: true }});
}}"""


def keypress(page, reps: int, back: str | None, warm_up: bool = False
             ) -> tuple[list[float], list[float]]:
    """Key press (y/n, or y on the trivial app) → the new state painted, and → confirmed by the
    server (the same on an app without speculation), ``reps`` times each."""
    shown, confirmed = [], []
    split = Split(None if warm_up else page)
    for i in range(reps):
        before = page.evaluate(STATE_JS)
        page.evaluate(ARM_JS, before)
        split.start()
        page.keyboard.press("y" if i % 2 == 0 or not back else "n")
        page.wait_for_function("() => window.__pqKey.confirmed !== null", timeout=TIMEOUT_MS)
        t = page.evaluate("() => window.__pqKey")
        shown.append(t["shown"] - t["t0"])
        confirmed.append(t["confirmed"] - t["t0"])
        _settle(page)
        split.stop()
        if back:
            page.locator(f"{back}:enabled >> visible=true").first.wait_for()  # else b is lost
            page.keyboard.press("b")
            page.wait_for_function(f"b => ({COUNT_JS})() === b", arg=before[0])
            _settle(page)
    split.report()
    return shown, confirmed


# Armed before "None of these" (key X): the key's time; the time after the frame that first
# shows its answer (the "Looking for other readings" state, or the repaired state if the round
# ended before the rerun drew); and the time after the frame that first shows the repaired state
# (the survivors line counts a larger pool and the chart changed, no searching status, nothing
# running). Measured in the page, like ARM_JS.
ARM_REPAIR_JS = f"""b => {{
  const w = window.__pqRepair = {{ t0: null, first: null, shown: null }};
  document.addEventListener("keydown", (e) => {{ if (w.t0 === null) w.t0 = e.timeStamp; }},
                            {{ capture: true, once: true }});
  const at = (k) => requestAnimationFrame(() => setTimeout(() => {{
    if (w[k] === null) w[k] = performance.now(); }}, 0));
  let searching = false;
  const size = (t) => {{ const m = /of (\\d+) quer/.exec(t || ""); return m ? +m[1] : 0; }};
  const check = () => {{
    const [n, r] = ({STATE_JS})();
    const status = document.body.innerText.includes("Looking for other readings");
    if (!searching && status) {{ searching = true; at("first"); }}
    // the repaired state, or the notice that repair found no other reading (then the count
    // stays: e.g. a converged state reached by a question about the answer)
    const none = document.body.innerText.includes("Repair found no other reading");
    if (w.shown === null && ((size(n) > size(b[0]) && r !== b[1]) || none) && !status
        && !document.querySelector('[data-testid="stStatusWidget"]')) {{
      obs.disconnect();
      at("first");
      at("shown");
    }}
  }};
  const obs = new MutationObserver(check);
  obs.observe(document.body, {{ subtree: true, childList: true, attributes: true,
                               characterData: true }});
}}"""


READ_MS = 1500  # how long the person reads a converged state before "None of these"


def repair_press(page, reps: int, back: str, read_ms: int = 0
                 ) -> tuple[list[float], list[float]]:
    """"None of these" (key X) → its first answer painted (the searching state) and → the
    repaired state painted (or repair's notice that it found no other reading), then Back
    (untimed), ``reps`` times: the waits a person sees after
    rejecting the outputs (issue 24). Each press comes ``read_ms`` after the state is drawn
    (0: at once, before the repair speculated while a person reads could be ready)."""
    first, shown = [], []
    for _ in range(reps):
        page.wait_for_timeout(read_ms)
        before = page.evaluate(STATE_JS)
        page.evaluate(ARM_REPAIR_JS, before)
        page.keyboard.press("x")
        page.wait_for_function("() => window.__pqRepair.shown !== null", timeout=TIMEOUT_MS)
        t = page.evaluate("() => window.__pqRepair")
        first.append(t["first"] - t["t0"])
        shown.append(t["shown"] - t["t0"])
        _settle(page)
        page.locator(f"{back}:enabled >> visible=true").first.wait_for()
        page.keyboard.press("b")
        page.wait_for_function(f"b => ({COUNT_JS})() === b", arg=before[0])
        _settle(page)
        page.locator("h3", has_text="Decision Space").click()  # keys go to the page again
    return first, shown


def converge(page, most: int = 20) -> int:
    """Answer Yes until the workspace is done (one output left) or no question splits the
    survivors: the state where a person judges the output; returns the answers given."""
    for k in range(most):
        if page.get_by_text("Done:").count() or page.get_by_text("No clause separates").count():
            return k
        before = page.evaluate(COUNT_JS)
        page.keyboard.press("y")
        page.wait_for_function(f"b => ({COUNT_JS})() !== b", arg=before, timeout=TIMEOUT_MS)
        _settle(page)
    raise RuntimeError(f"the workspace did not converge in {most} Yes answers")


def open_task(page, url: str, task_id: str) -> None:
    page.goto(f"{url}/workspace")
    page.get_by_text("queries remain").wait_for(timeout=120_000)
    page.get_by_role("combobox").first.click()
    page.get_by_role("option", name=task_id.replace("bench-n", "Bench N=")).click()
    page.get_by_text(f"of {task_id.removeprefix('bench-n')} queries remain").wait_for()
    page.locator(".pq-space[data-revision]").first.wait_for()
    _settle(page)
    page.locator("h3", has_text="Decision Space").click()


def repaired_ms(page, reps: int, back: str) -> list[float]:
    """"None of these" → the repaired state painted, ``reps`` times (``repair_press``)."""
    return repair_press(page, reps, back)[1]


def lasso(page, reps: int, back: str) -> list[float]:
    """Lasso the left 40 % of the plot → survivors updated, then Back (untimed)."""
    times = []
    split = Split(page)
    for _ in range(reps):
        box = page.locator(".pq-plot").first.bounding_box()
        pts = [(0.005, 0.005), (0.4, 0.005), (0.4, 0.995), (0.005, 0.995), (0.005, 0.005)]
        px = [(box["x"] + x * box["width"], box["y"] + (1 - y) * box["height"]) for x, y in pts]
        before = page.evaluate(STATE_JS)
        page.mouse.move(*px[0])
        page.mouse.down()
        for (ax, ay), (bx, by) in zip(px, px[1:], strict=False):
            for t in (0.25, 0.5, 0.75, 1.0):
                page.mouse.move(ax + t * (bx - ax), ay + t * (by - ay))
        page.evaluate(ARM_JS, before)
        split.start()
        page.mouse.up()
        page.wait_for_function("() => window.__pqKey.shown !== null", timeout=TIMEOUT_MS)
        t = page.evaluate("() => window.__pqKey")
        times.append(t["shown"] - t["t0"])
        _settle(page)
        split.stop()
        page.locator(f"{back} >> visible=true").first.click()
        page.wait_for_function(f"b => ({COUNT_JS})() === b", arg=before[0])
        _settle(page)
    split.report()
    return times


def participant_steps(browser, url: str, reps: int) -> tuple[list[float], list[float]]:
    """Consent → demographics, then Continue → onboarding drawn and → practice workspace drawn,
    timed in the page (:func:`benchmarks.steps.input_to_drawn`: from the click's pointerdown
    to the first frame showing the new part, without Playwright's polling)."""
    from benchmarks.steps import WATCH, has_text, input_to_drawn, workspace_drawn

    onboarding, practice = [], []
    for _ in range(reps):
        page = new_page(browser)
        context = page.context
        page.add_init_script(WATCH)
        page.goto(f"{url}/participant?study=bench")
        page.get_by_role("button", name="I agree").click()
        page.get_by_text("About you").first.wait_for()
        page.get_by_text("intermediate", exact=True).click()
        page.get_by_text("weekly", exact=True).click()
        _settle(page)
        cont = page.get_by_role("button", name="Continue").locator("visible=true").first
        onboarding.append(input_to_drawn(page, has_text("Welcome to the bench study"),
                                         cont.click))
        _settle(page)
        go = page.get_by_role("button", name="Continue to the practice task")
        practice.append(input_to_drawn(page, workspace_drawn("Practice task"),
                                       go.locator("visible=true").first.click))
        context.close()
    return onboarding, practice


def layout_ms(cold: bool, budget: bool = False) -> float:
    """A fresh process's first layout of a 30-class pool (cold: an empty numba cache).

    With ``budget`` it is laid out as a free question typed in the UI is (within
    ``request_budget(1.0)``: a provisional layout when UMAP is not ready in time).
    """
    call = ("from core.engine.layout import request_budget\nwith request_budget(1.0):\n"
            " compute_layout(np.arange(30),d)" if budget else "compute_layout(np.arange(30),d)")
    code = ("import time,numpy as np\nfrom core.engine.layout import compute_layout\n"
            "rng=np.random.default_rng(0);d=rng.random((30,30));d=(d+d.T)/2\n"
            f"np.fill_diagonal(d,0);t=time.perf_counter()\n{call}\n"
            "print((time.perf_counter()-t)*1000,flush=True)\n"
            # the budget case leaves UMAP compiling in a background thread; exiting through
            # interpreter finalization while numba compiles aborts the process (SIGABRT)
            "import os;os._exit(0)")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, **({"NUMBA_CACHE_DIR": tmp} if cold else {}))
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                             capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


ONLY: list[str] = []  # --only: measure just the rows whose name contains one of these


class Rows(list):
    """Measured rows; each is printed to stderr as it arrives, and a failed one is kept as such."""

    @staticmethod
    def wanted(what: str) -> bool:
        """Whether row ``what`` is measured in this run (``--only``)."""
        return not ONLY or any(part.lower() in what.lower() for part in ONLY)

    def add(self, what: str, measure: Callable[[], list[float]]) -> None:
        if not self.wanted(what):
            return
        try:
            times = measure()
        except Exception as exc:  # a benchmark row failing must not lose the rest
            print(f"{what}: FAILED {type(exc).__name__}: {str(exc).splitlines()[0]}",
                  file=sys.stderr)
            self.append((what, []))
            return
        if not times:  # asked for 0 reps (e.g. --layout-reps 0): no row
            return
        med, p95 = stats(times)
        print(f"{what}: median {med:.0f} ms, p95 {p95:.0f} ms ({len(times)} reps)",
              file=sys.stderr, flush=True)
        self.append((what, times))


def browser_rows(bank: Path, ids: dict[int, str], tmp: Path, reps: int,
                 network: bool = False) -> Rows:
    """Every Chromium measurement, as (what, times) rows."""
    from playwright.sync_api import sync_playwright

    studies = tmp / "studies" / "bench"
    studies.mkdir(parents=True)
    (studies / "study.yaml").write_text(STUDY.format(bank=BUILTIN_BANK), encoding="utf-8")
    (tmp / "trivial.py").write_text(TRIVIAL, encoding="utf-8")
    env = dict(os.environ, PLEASQLARIFY_BANK=str(bank),
               PLEASQLARIFY_DB_URL=f"sqlite:///{tmp / 'bench.sqlite'}",
               PLEASQLARIFY_STUDIES_DIR=str(tmp / "studies"),
               PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio"))
    rows = Rows()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        with running(tmp / "trivial.py", env=env, log=tmp) as srv:
            if SPLIT:
                SPLIT["pid"] = srv.proc.pid
            page = new_page(browser)
            page.goto(srv.url)
            page.get_by_text("0 of 1").wait_for(timeout=60_000)
            keypress(page, 2, None, warm_up=True)
            rows.add("trivial app: key → rendered", lambda: keypress(page, reps, None)[0])
            page.context.close()
            paint_rows(rows, browser, "trivial app", srv.url,
                       lambda pg: pg.get_by_text("0 of 1").wait_for(), reps, network)
        with running(entry(ROOT), env=env, log=tmp) as srv:
            if SPLIT:
                SPLIT["pid"] = srv.proc.pid
            url = srv.url
            warm = new_page(browser)
            for task_id in ids.values():  # warm the server (pools, imports) before timing
                open_task(warm, url, task_id)
            warm.context.close()
            waited = wait_quiet(srv.proc.pid)
            print(f"(waited {waited:.0f} s for the server's warm-up to finish)", file=sys.stderr)
            for n, task_id in ids.items():
                page = new_page(browser)
                open_task(page, url, task_id)
                back = f".st-key-pleasqlarify-{task_id}-dv-back button"
                keypress(page, 2, back, warm_up=True)
                keys: dict[str, tuple[list[float], list[float]]] = {}

                def key_times(i: int, page=page, back=back, keys=keys) -> list[float]:
                    if "all" not in keys:  # both rows come from one set of presses
                        keys["all"] = keypress(page, reps, back)
                    return keys["all"][i]
                rows.add(f"workspace N={n}: key → new state painted", partial(key_times, 0))
                rows.add(f"workspace N={n}: key → server's rerun done", partial(key_times, 1))
                if n == 50:
                    rows.add(f"workspace N={n}: lasso → survivors updated",
                             partial(lasso, page, reps, back))
                presses: dict[str, tuple[list[float], list[float]]] = {}

                def repair_times(i: int, page=page, back=back, presses=presses
                                 ) -> list[float]:
                    if "all" not in presses:  # both rows come from one set of presses
                        presses["all"] = repair_press(page, reps, back)
                    return presses["all"][i]
                rows.add(f"workspace N={n}: None of these → repaired state painted",
                         partial(repair_times, 1))
                rows.add(f"workspace N={n}: None of these → searching state painted",
                         partial(repair_times, 0))
                read: dict[str, tuple[list[float], list[float]]] = {}

                def read_times(i: int, page=page, back=back, read=read) -> list[float]:
                    if "all" not in read:  # on the converged state, read 1.5 s each time
                        converge(page)
                        page.locator("h3", has_text="Decision Space").click()
                        read["all"] = repair_press(page, reps, back, READ_MS)
                    return read["all"][i]
                rows.add(f"workspace N={n}: converged, read 1.5 s, None of these → repaired "
                         "state painted", partial(read_times, 1))
                rows.add(f"workspace N={n}: converged, read 1.5 s, None of these → first "
                         "answer painted", partial(read_times, 0))
                page.context.close()
            paint_rows(rows, browser, "Home", f"{url}/",
                       lambda pg: pg.get_by_text("Built-in tasks").wait_for(), reps, network)
            paint_rows(rows, browser, "consent", f"{url}/participant?study=bench",
                       lambda pg: pg.get_by_role("button", name="I agree").wait_for(), reps,
                       network)
            paint_rows(rows, browser, "workspace + chart", f"{url}/workspace", lambda pg: (
                pg.get_by_text("queries remain").wait_for(),
                pg.locator(".pq-space[data-revision]").first.wait_for()), reps, network,
                settle=workspace_settled)
            steps: dict[str, tuple[list[float], list[float]]] = {}

            def step_times(i: int) -> list[float]:  # both rows come from one set of runs
                if "all" not in steps:
                    steps["all"] = participant_steps(browser, url, reps)
                return steps["all"][i]
            rows.add("participant Continue → onboarding drawn", lambda: step_times(0))
            rows.add("participant Continue → practice workspace drawn", lambda: step_times(1))
        for label, extra in FIRST_PRESS.items():
            first_press_rows(rows, browser, dict(env, **extra), tmp, ids, reps, label)
        browser.close()
    return rows


# A "None of these" pressed before the round a person's reading would have speculated is
# ready: in a crowd nothing is speculated (the prepared pool's stored first round answers);
# with repair ahead off every press computes its round (what such a press waited for before
# rounds were stored). Each in a server of its own, same run.
FIRST_PRESS = {
    "crowd (nothing speculated), first state": {"PLEASQLARIFY_REPAIR_AHEAD_MAX_SESSIONS": "0"},
    "round computed at the press (PLEASQLARIFY_REPAIR_AHEAD=0), first state": {
        "PLEASQLARIFY_REPAIR_AHEAD": "0"},
}


def first_press_rows(rows: Rows, browser, env: dict[str, str], tmp: Path, ids: dict[int, str],
                     reps: int, label: str) -> None:
    """"None of these" at once on the first state → repaired state painted, per pool size,
    in a server started with ``env`` (warmed and quiet first, like the main server)."""
    names = {n: f"workspace N={n}: {label}, None of these at once → repaired state painted"
             for n in ids}
    if not any(rows.wanted(name) for name in names.values()):
        return
    with running("app.py", env=env, log=tmp) as srv:
        warm = new_page(browser)
        for task_id in ids.values():
            open_task(warm, srv.url, task_id)
        warm.context.close()
        wait_quiet(srv.proc.pid)
        for n, task_id in ids.items():
            page = new_page(browser)
            open_task(page, srv.url, task_id)
            back = f".st-key-pleasqlarify-{task_id}-dv-back button"
            rows.add(names[n], partial(repaired_ms, page, reps, back))
            page.context.close()


def paint_rows(rows: Rows, browser, what: str, address: str, ready: Callable, reps: int,
               network: bool, settle: Callable | None = None) -> None:
    """A new session's first paint of ``address``, with a cold and with a warm HTTP cache
    (``settle``: see :func:`benchmarks.paint.first_paint`)."""
    cold = f"new session → {what} drawn (cold HTTP cache)"
    warm = f"new session → {what} drawn (warm HTTP cache: new tab after one visit)"
    if network and (rows.wanted(cold) or rows.wanted(warm)):
        timeline(browser, address, ready, what)
    rows.add(cold, lambda: first_paint(browser, address, ready, reps, settle=settle))
    rows.add(warm, lambda: first_paint(browser, address, ready, reps, warm=True,
                                       settle=settle))


def apptest_ms(bank: Path, task_id: str, reps: int) -> list[float]:
    """Server-side only: an AppTest rerun after Yes or No (then Back, untimed)."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id
    from streamlit.proto.WidgetStates_pb2 import WidgetState
    from streamlit.testing.v1 import AppTest

    from ui.views import KEYS_SEP

    at = AppTest.from_function(_app, args=(str(bank), task_id), default_timeout=120)
    at.run()
    key = f"pleasqlarify.{task_id}"
    times = []
    for i in range(reps):
        panel = next(el for el in at.get("bidi_component") if el.key == f"{key}.dv.chips")
        ws = at.session_state[f"pleasqlarify.workspace.free.{task_id}"]
        states = at._tree.get_widget_states()  # what the Decision Space sends on Yes / No
        state = WidgetState(id=_make_trigger_id(panel.proto.id, "events"))
        state.json_trigger_value = json.dumps([{"event": "answer", "value": {
            "key": KEYS_SEP.join(ws.session.variables()[ws.browse].keys), "yes": i % 2 == 0,
            "seq": i + 1}}])
        states.widgets.append(state)
        start = time.perf_counter()
        at._run(states)
        times.append((time.perf_counter() - start) * 1000)
        at.button(key=f"{key}.dv.back").click().run()
    return times


def _app(bank: str, task_id: str) -> None:
    from ui.bank_cache import task_pool
    from ui.workspace import render_workspace

    render_workspace(task_pool(bank, task_id), mode="free")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rerun", description=__doc__)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-apptest", action="store_true")
    parser.add_argument("--layout-reps", type=int, default=2)
    parser.add_argument("--network", action="store_true",
                        help="also print every request of each first paint (cold and warm)")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="measure only rows whose name contains TEXT (repeatable), "
                             "e.g. --only 'N=50' --only Home")
    parser.add_argument("--bank-dir", type=Path, metavar="DIR",
                        help="prepare the bench bank in DIR and reuse it on later runs "
                             "(default: a fresh temporary folder)")
    parser.add_argument("--split", action="store_true",
                        help="also print, per key-press row, the median server CPU, renderer "
                             "CPU and JS time per rep")
    args = parser.parse_args(argv)
    ONLY[:] = args.only
    if args.split:
        SPLIT["on"] = 1
    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        bank, ids = build_bank(args.bank_dir or tmp / "bank")
        rows = Rows()
        if not args.no_apptest:
            for n, task_id in ids.items():
                rows.add(f"AppTest N={n}: script rerun after Yes/No",
                         partial(apptest_ms, bank, task_id, args.reps))
        if not args.no_browser and Path(CHROMIUM).exists():
            rows.extend(browser_rows(bank, ids, tmp, args.reps, args.network))
    rows.add("fresh process: first layout, warm numba cache",
             lambda: [layout_ms(False) for _ in range(args.layout_reps)])
    rows.add("fresh process: first layout, empty numba cache",
             lambda: [layout_ms(True) for _ in range(args.layout_reps)])
    rows.add("fresh process: free question's layout (UI budget), empty numba cache",
             lambda: [layout_ms(True, budget=True) for _ in range(args.layout_reps)])
    print_table(rows, load_before)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
