"""Benchmark: Setup's "Prepare pools" for a 5-task study at N = 50, in Chromium.

``python -m benchmarks.setup_pools [--reps 3] [--root DIR]`` writes a study of five tasks, each
50 distinct candidates pooled from the built-in film tasks (a different slice per task), starts
``streamlit run app.py`` from ``--root`` (default this checkout, so an older one can be measured
with the same bench), unlocks Setup and prints median and p95 (ms), in the page, from the
click on "Prepare 5 missing pools" to: the first progress drawn, and everything done (every
pool prepared, the readiness check drawn, nothing running); and the latter per task. The first
press on a fresh server (its UMAP warm-up possibly still running) is its own row; then the
pools are deleted and prepared again ``reps`` times. Figures, not assertions (STYLE.md).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.paint import TIMEOUT_MS, VIEWPORT
from benchmarks.steps import ARM, DRAWN, WATCH, bench_main, has_text
from core.settings import BUILTIN_BANK
from tests.harness import CHROMIUM, CHROMIUM_ARGS, running

TASKS = 5
N = 50
PASSWORD = "bench-setup-pw"
STUDY = """id: prep
title: Prepare bench study
consent: Please read this and agree to take part.
conditions: [pleasqlarify]
task_bank: tasks.jsonl
subtasks:
  "1": Describe one interpretation.
tasks:
{tasks}
"""
PROGRESS = "document.querySelector('[data-testid=\"stProgress\"]') !== null"
# nothing running: the app's script state (a spinner shows only after 0.5 s, and until then
# the previous run's elements are still on the page)
IDLE = ("document.querySelector('[data-testid=\"stApp\"]').dataset.testScriptState"
        " === 'notRunning'"
        " && !document.querySelector('[data-testid=\"stProgress\"]')"
        " && !document.querySelector('[data-testid=\"stSpinner\"]')"
        " && !document.querySelector('[data-testid=\"stStatusWidget\"]')")
DONE = (f"{has_text('Every pool is prepared.')} && {has_text('What the study can do')}"
        # the studies, the pools and the readiness tables
        " && document.querySelectorAll('[data-testid=\"stDataFrame\"]').length >= 3"
        f" && {IDLE}")


def write_study(folder: Path) -> Path:
    """The 5-task study and its bank (no prepared pools) under ``folder``; its bank's path."""
    rows = [json.loads(line) for line in BUILTIN_BANK.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    seen: dict[str, int] = {}
    for row in rows:
        for cand in row["candidates"]:
            seen.setdefault(cand if isinstance(cand, str) else cand["sql"], 1)
    pooled = list(seen)
    assert len(pooled) >= N, f"the built-in bank has only {len(pooled)} distinct candidates"
    lines = []
    for k in range(TASKS):
        sqls = (pooled[k * 7:] + pooled[:k * 7])[:N]
        lines.append(json.dumps(dict(rows[1], id=f"prep-{k + 1}", title=f"Prep {k + 1}",
                                     candidates=[{"sql": s, "count": 1} for s in sqls])))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "study.yaml").write_text(STUDY.format(tasks="\n".join(
        f"  - id: prep-{k + 1}" for k in range(TASKS))), encoding="utf-8")
    return folder / "tasks.jsonl"


def press(page: Any) -> tuple[float, float]:
    """Click Prepare; ms to the first progress drawn and to everything done."""
    button = page.get_by_role("button", name=f"Prepare {TASKS} missing pools")
    button.wait_for()
    page.wait_for_function(f"() => {IDLE}", timeout=TIMEOUT_MS)  # the check of the old pools
    page.evaluate(ARM, PROGRESS)
    button.click()
    page.wait_for_function(DRAWN, timeout=TIMEOUT_MS)
    first = float(page.evaluate("window.__pq.drawn - window.__pq.input"))
    t0 = page.evaluate("window.__pq.input")
    page.evaluate(ARM, DONE)
    page.evaluate(f"() => {{ window.__pq.input = {t0}; }}")
    page.wait_for_function(DRAWN, timeout=TIMEOUT_MS)
    return first, float(page.evaluate("window.__pq.drawn - window.__pq.input"))


def measure(reps: int, root: Path) -> list[tuple[str, list[float]]]:
    """Every row of this bench as (what, times)."""
    from playwright.sync_api import sync_playwright

    rows: list[tuple[str, list[float]]] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        bank = write_study(tmp / "studies" / "prep")
        env = dict(os.environ, PLEASQLARIFY_DB_URL=f"sqlite:///{tmp / 'prep.sqlite'}",
                   PLEASQLARIFY_STUDIES_DIR=str(tmp / "studies"),
                   PLEASQLARIFY_AUDIO_DIR=str(tmp / "audio"),
                   PLEASQLARIFY_RESEARCHER_PASSWORD=PASSWORD,
                   NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"))
        with sync_playwright() as p, running("app.py", env=env, log=tmp, cwd=root) as srv:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(WATCH)
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(f"{srv.url}/setup")
            page.get_by_label("Researcher password").fill(PASSWORD)
            page.get_by_role("button", name="Unlock").click()
            firsts, dones = [], []
            for rep in range(reps + 1):
                if rep:
                    shutil.rmtree(bank.parent / "pools", ignore_errors=True)
                    page.reload()
                first, done = press(page)
                print(f"rep {rep}: first progress {first:.0f} ms, all done {done:.0f} ms",
                      file=sys.stderr, flush=True)
                if rep == 0:
                    rows.append(("fresh server: Prepare → all done", [done]))
                else:
                    firsts.append(first)
                    dones.append(done)
            browser.close()
    rows.append(("Prepare → first progress drawn", firsts))
    rows.append((f"Prepare → all done ({TASKS} tasks, N = {N})", dones))
    rows.append(("Prepare → all done, per task", [d / TASKS for d in dones]))
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.setup_pools``."""
    return bench_main("benchmarks.setup_pools", __doc__, measure, argv, reps=3)


if __name__ == "__main__":
    raise SystemExit(main())
