"""The load benchmark runs end to end on both backends and verifies 0 lost, 0 duplicated."""

from __future__ import annotations

from benchmarks.store_load import main, report, run_bench


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


def test_an_unreachable_db_is_one_usage_error_with_the_password_hidden(capsys):
    import pytest

    with pytest.raises(SystemExit) as done:
        main(["--db", "postgresql+psycopg://u:hunter2@127.0.0.1:1/x", "--participants", "1",
              "--events", "1"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "--db postgresql+psycopg://u:***@127.0.0.1:1/x: " in err
    assert "hunter2" not in err and "Traceback" not in err
