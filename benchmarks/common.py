"""What the browser benchmarks share: the repository root, the pooled film bank, figures.

Kept apart from benchmarks/rerun.py and benchmarks/paint.py so that neither imports the other.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import TypedDict

from core.settings import BUILTIN_BANK, REPO_ROOT

ROOT = REPO_ROOT

# the baseline of the Chromium benchmarks: a one-button Streamlit app (ready once "0 of 1" shows)
TRIVIAL = """import streamlit as st
st.session_state.setdefault("n", 0)
def bump():
    st.session_state.n += 1
st.button("Yes", shortcut="Y", on_click=bump)
st.markdown(f'<span data-testid="pq-survivors">{st.session_state.n} of 1</span>',
            unsafe_allow_html=True)
"""


def entry(root: Path = ROOT) -> str:
    """The script ``python -m study.serve`` serves in checkout ``root``: ``asgi.py`` (app.py as
    an ``st.App`` with the studio's routes and page shell), or ``app.py`` where there is none."""
    return "asgi.py" if (root / "asgi.py").is_file() else "app.py"


class Candidate(TypedDict):
    """One candidate of a bank task as written to the task bank."""

    sql: str
    count: int


def build_bank(dest: Path, sizes: tuple[int, ...] = (50, 200)) -> tuple[Path, dict[int, str]]:
    """A bank with one task per size, candidates pooled from all built-in film tasks.

    A ``dest`` already holding this bank and its prepared pools is reused as it is.
    """
    from core.engine.prepare import main as prepare

    rows = [json.loads(line) for line in BUILTIN_BANK.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    seen: dict[str, int] = {}
    for row in rows:
        for cand in row["candidates"]:
            sql, count = (cand, 1) if isinstance(cand, str) else (cand["sql"], cand.get("count", 1))
            seen.setdefault(sql, count)
    pooled: list[Candidate] = [{"sql": s, "count": c} for s, c in seen.items()]
    out, ids = [], {}
    for n in sizes:
        if n > len(pooled):  # pad with harmless textual variants (distinct SQL, same output)
            extra: list[Candidate] = [
                {"sql": f"{c['sql'].rstrip().rstrip(';')} -- v{k}", "count": 1}
                for k, c in enumerate(pooled * (n // len(pooled) + 1))]
            cands = (pooled + extra)[:n]
        else:
            cands = pooled[:n]
        task = dict(rows[1], id=f"bench-n{n}", candidates=cands, title=f"Bench N={n}")
        out.append(json.dumps(task))
        ids[n] = task["id"]
    dest.mkdir(parents=True, exist_ok=True)
    bank = dest / "tasks.jsonl"
    text = "\n".join(out) + "\n"
    if not (bank.exists() and bank.read_text(encoding="utf-8") == text
            and all((dest / "pools" / f"{t}.json").exists()
                    and '"first_round"' in (dest / "pools" / f"{t}.json").read_text(
                        encoding="utf-8") for t in ids.values())):
        bank.write_text(text, encoding="utf-8")
        prepare([str(bank)])
    return bank, ids


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q`` percentile (0 < q <= 1) of ``values`` by nearest rank (a value that was
    measured, never interpolated: every benchmark's p50/p95 is this), NaN when there are none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def stats(times: list[float]) -> tuple[float, float]:
    """Median and 95th percentile (nearest rank, :func:`percentile`) of ``times``."""
    return statistics.median(times), percentile(times, 0.95)


def print_table(rows: Iterable[tuple[str, list[float]]], load_before: tuple[float, float, float], head: str = "") -> None:
    """The rows (what, times) as a Markdown table of median and p95, then the load averages."""
    print(f"{head}| what | reps | median ms | p95 ms |\n|---|---|---|---|")
    for what, times in rows:
        med, p95 = stats(times) if times else (float("nan"), float("nan"))
        print(f"| {what} | {len(times)} | {med:.0f} | {p95:.0f} |")
    print("\nload average (1, 5, 15 min) at the start: "
          f"{', '.join(f'{x:.2f}' for x in load_before)}; at the end: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
