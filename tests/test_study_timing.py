"""Timers from events: start/pause/resume/stop and hidden-tab time, as pure functions."""

from __future__ import annotations

from study.timing import compute_timers, hidden_intervals, task_active_ms
from study.trace import Event


def ev(type: str, t: int, task: str = "t1", subtask: str = "2a", client: int | None = None):
    return Event(event_id=f"{type}-{t}", session_id="s", participant="p", type=type,
                 task=task, subtask=subtask, server_ts=t, client_ts=client)


def test_start_pause_resume_stop():
    timers = compute_timers([ev("timer.start", 1000), ev("timer.pause", 4000),
                             ev("timer.resume", 10_000), ev("timer.stop", 12_000)])
    t = timers[("t1", "2a")]
    assert (t.active_ms, t.paused_ms, t.hidden_ms) == (5000, 6000, 0)
    assert (t.started, t.stopped, t.running, t.pauses) == (1000, 12_000, False, 1)


def test_hidden_tab_time_is_excluded_even_out_of_order():
    events = [ev("tab.visible", 5000, task=""), ev("timer.stop", 9000),
              ev("timer.start", 1000), ev("tab.hidden", 3000, task="")]
    t = compute_timers(events)[("t1", "2a")]
    assert (t.active_ms, t.hidden_ms) == (6000, 2000)


def test_hidden_during_pause_is_not_double_counted():
    events = [ev("timer.start", 0), ev("timer.pause", 1000), ev("tab.hidden", 1500),
              ev("tab.visible", 2500), ev("timer.resume", 3000), ev("timer.stop", 4000)]
    t = compute_timers(events)[("t1", "2a")]
    assert (t.active_ms, t.hidden_ms, t.paused_ms) == (2000, 0, 2000)


def test_running_timer_measured_up_to_now_and_open_hidden_interval():
    events = [ev("timer.start", 0), ev("tab.hidden", 7000)]
    t = compute_timers(events, now=10_000)[("t1", "2a")]
    assert t.running and (t.active_ms, t.hidden_ms) == (7000, 3000)
    assert hidden_intervals(events, now=10_000) == [(7000, 10_000)]


def test_anomalies_are_ignored_and_reported():
    events = [ev("timer.pause", 0), ev("timer.start", 100), ev("timer.start", 200),
              ev("timer.stop", 1100)]
    t = compute_timers(events)[("t1", "2a")]
    assert t.active_ms == 1000 and len(t.anomalies) == 2
    assert "timer.pause at 0 while not running" in t.anomalies


def test_stop_while_paused_closes_the_pause():
    t = compute_timers([ev("timer.start", 0), ev("timer.pause", 10),
                        ev("timer.stop", 50)])[("t1", "2a")]
    assert (t.active_ms, t.paused_ms, t.stopped, t.anomalies) == (10, 40, 50, ())


def test_task_time_sums_subtasks_unless_task_timer_exists():
    events = [ev("timer.start", 0, subtask="1"), ev("timer.stop", 100, subtask="1"),
              ev("timer.start", 100, subtask="3"), ev("timer.stop", 400, subtask="3")]
    timers = compute_timers(events)
    assert task_active_ms(timers, "t1") == 400
    events += [ev("timer.start", 0, subtask=""), ev("timer.stop", 500, subtask="")]
    assert task_active_ms(compute_timers(events), "t1") == 500


def test_rows_and_client_clock_are_accepted():
    rows = [{"type": "timer.start", "task": "t", "subtask": "", "server_ts": 0,
             "client_ts": 100},
            {"type": "timer.stop", "task": "t", "subtask": "", "server_ts": 900,
             "client_ts": 600}]
    assert compute_timers(rows)[("t", "")].active_ms == 900
    assert compute_timers(rows, use_client_ts=True)[("t", "")].active_ms == 500
