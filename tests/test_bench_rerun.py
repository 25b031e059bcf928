"""benchmarks/rerun.py's helpers on real processes: CPU accounting and waiting for a quiet server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from benchmarks.common import ROOT, stats
from benchmarks.split import cpu_ms, wait_quiet

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def test_cpu_ms_counts_this_process_work() -> None:
    before = cpu_ms(os.getpid())
    end = time.process_time() + 0.2
    while time.process_time() < end:
        sum(range(1000))
    assert cpu_ms(os.getpid()) - before >= 100


def test_wait_quiet_waits_for_a_busy_process_to_settle() -> None:
    """A child that spins for ~2 s and then sleeps: the wait ends after the spin, not before."""
    code = ("import time\nend = time.monotonic() + 2\nwhile time.monotonic() < end: pass\n"
            "time.sleep(30)")
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.2)
        waited = wait_quiet(child.pid, timeout=20)
        assert 1.0 <= waited < 20
        idle = wait_quiet(child.pid, timeout=20)
        assert idle < 2.5  # already quiet: one 1 s sample
    finally:
        child.kill()
        child.wait()


def test_stats_median_and_nearest_rank_p95() -> None:
    assert stats([float(x) for x in range(1, 21)]) == (10.5, 19.0)


def test_every_benchmark_percentile_is_nearest_rank_from_one_helper() -> None:
    """capacity's p50/p95 are measured values (nearest rank), as stats' p95, never
    interpolated between two (the README calls them p50/p95)."""
    import math

    from benchmarks import capacity
    from benchmarks.common import percentile

    assert capacity.percentile is percentile
    values = [float(x) for x in range(1, 21)]
    assert (percentile(values, 0.5), percentile(values, 0.95)) == (10.0, 19.0)
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.0  # interpolation would give 2.5
    assert percentile([7.0], 0.95) == 7.0 and math.isnan(percentile([], 0.5))


def test_server_config_has_no_forced_gc_after_each_run() -> None:
    """The app's config turns off Streamlit's gc.collect(2) after every (fragment) rerun."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False


def test_a_row_asked_for_zero_reps_is_left_out_and_the_table_still_prints(capsys) -> None:
    from benchmarks.common import print_table
    from benchmarks.rerun import Rows

    rows = Rows()
    rows.add("a row nobody asked reps of", lambda: [])
    rows.add("one rep", lambda: [12.0])
    print_table(rows, (0.0, 0.0, 0.0))
    out = capsys.readouterr().out
    assert "| one rep | 1 | 12 | 12 |" in out and "nobody" not in out
