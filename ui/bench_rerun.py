"""Benchmark: workspace rerun time after Yes/No (AppTest) and key-press-to-rendered (Chromium).

``python -m ui.bench_rerun [--reps 7] [--no-browser]`` builds N = 50 and N = 200 pools by
pooling the candidates of every built-in film task (they share one database), prepares them
with layouts in a temporary folder, and prints a table. Figures, not assertions (STYLE.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from ui.bank_cache import BUILTIN_BANK

CHROMIUM = "/usr/bin/chromium"


def build_bank(dest: Path, sizes: tuple[int, ...] = (50, 200)) -> tuple[Path, dict[int, str]]:
    """A bank with one task per size, candidates pooled from all built-in film tasks."""
    from core.engine.prepare import main as prepare

    rows = [json.loads(line) for line in BUILTIN_BANK.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    seen: dict[str, int] = {}
    for row in rows:
        for cand in row["candidates"]:
            sql, count = (cand, 1) if isinstance(cand, str) else (cand["sql"], cand.get("count", 1))
            seen.setdefault(sql, count)
    pooled = [{"sql": s, "count": c} for s, c in seen.items()]
    out, ids = [], {}
    for n in sizes:
        if n > len(pooled):  # pad with harmless textual variants (distinct SQL, same output)
            extra = [{"sql": f"{c['sql'].rstrip().rstrip(';')} -- v{k}", "count": 1}
                     for k, c in enumerate(pooled * (n // len(pooled) + 1))]
            cands = (pooled + extra)[:n]
        else:
            cands = pooled[:n]
        task = dict(rows[1], id=f"bench-n{n}", candidates=cands, title=f"Bench N={n}")
        out.append(json.dumps(task))
        ids[n] = task["id"]
    dest.mkdir(parents=True, exist_ok=True)
    bank = dest / "tasks.jsonl"
    bank.write_text("\n".join(out) + "\n", encoding="utf-8")
    prepare([str(bank)])
    return bank, ids


def _app(bank: str, task_id: str) -> None:
    from ui.bank_cache import task_pool
    from ui.workspace import render_workspace

    render_workspace(task_pool(bank, task_id), mode="free")


def apptest_rerun_ms(bank: Path, task_id: str, reps: int) -> tuple[float, int]:
    """Median ms of an AppTest rerun after Yes or No (then Back, untimed), and the pool size."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_app, args=(str(bank), task_id), default_timeout=120)
    at.run()
    ws = at.session_state[f"pleasqlarify.workspace.free.{task_id}"]
    key = f"pleasqlarify.{task_id}"
    times = []
    for i in range(reps):
        which = "dv.yes" if i % 2 == 0 else "dv.no"
        at.button(key=f"{key}.{which}").click()
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1000)
        at.button(key=f"{key}.dv.back").click().run()
    return statistics.median(times), ws.session.pool.n


def browser_keypress_ms(bank: Path, task_ids: list[str], reps: int) -> dict[str, float]:
    """Median ms from pressing Y/N in Chromium until the survivor count has re-rendered."""
    import socket

    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PLEASQLARIFY_BANK=str(bank),
               NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache"))
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py",
                             "--server.headless", "true", "--server.port", str(port),
                             "--server.address", "127.0.0.1"], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    out: dict[str, float] = {}
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run"])
            for task_id in task_ids:
                page = browser.new_page(viewport={"width": 1600, "height": 1100})
                page.goto(f"{url}/workspace")
                page.get_by_text("queries remain").wait_for(timeout=120_000)
                page.get_by_role("combobox").first.click()
                page.get_by_role("option", name=task_id.replace("bench-n", "Bench N=")).click()
                page.get_by_text("queries remain").wait_for()
                page.wait_for_timeout(1500)
                page.locator("h3", has_text="Decision Space").click()
                times = []
                for i in range(reps):
                    before = page.locator('[data-testid="pq-survivors"]').inner_text()
                    start = time.perf_counter()
                    page.keyboard.press("y" if i % 2 == 0 else "n")
                    page.wait_for_function(
                        """b => { const e = document.querySelector('[data-testid="pq-survivors"]');
                                 return e && e.innerText !== b; }""", arg=before, timeout=90_000)
                    times.append((time.perf_counter() - start) * 1000)
                    page.wait_for_timeout(300)
                    page.locator(".st-key-pleasqlarify-" + task_id + "-dv-back button"
                                 " >> visible=true").first.wait_for()
                    page.keyboard.press("b")
                    page.wait_for_function(
                        """b => { const e = document.querySelector('[data-testid="pq-survivors"]');
                                 return e && e.innerText === b; }""", arg=before)
                    page.wait_for_timeout(300)
                out[task_id] = statistics.median(times)
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ui.bench_rerun", description=__doc__)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
    with tempfile.TemporaryDirectory() as tmp:
        bank, ids = build_bank(Path(tmp))
        rows = []
        for n, task_id in ids.items():
            ms, size = apptest_rerun_ms(bank, task_id, args.reps)
            rows.append([n, size, ms])
            print(f"AppTest N={size}: {ms:.0f} ms", file=sys.stderr)
        keys = ({} if args.no_browser or not Path(CHROMIUM).exists()
                else browser_keypress_ms(bank, list(ids.values()), args.reps))
    print(f"{'N':>5} {'pool':>5} {'AppTest rerun after Yes/No (median ms)':>40} "
          f"{'Chromium key→rendered (median ms)':>36}")
    for n, size, ms in rows:
        key_ms = keys.get(ids[n])
        print(f"{n:>5} {size:>5} {ms:>40.0f} {key_ms if key_ms is None else round(key_ms):>36}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
