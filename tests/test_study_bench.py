"""The load benchmark runs end to end on both backends and verifies 0 lost, 0 duplicated."""

from __future__ import annotations

from study.bench_load import main, report, run_bench


def test_bench_small_run_verifies_the_trace(store_url):
    result = run_bench(store_url, participants=5, events=40)
    assert result.ok, report(result)
    assert (result.stored, result.lost, result.duplicated, result.resend_inserted) == (
        200, 0, 0, 0)
    assert "lost 0, duplicated 0" in report(result)


def test_bench_command_line_prints_figures(capsys):
    assert main(["--participants", "3", "--events", "10"]) == 0
    out = capsys.readouterr().out
    assert "3 participants x 10 events" in out and "events/s" in out and "-> OK" in out
