"""Issue 24: the Analysis page computes a study's data once per data version (ui.analysis_cache,
Store.data_version) instead of on every rerun; a change of any data it reads is a new version."""

from __future__ import annotations

from study.analysis.data import filter_data, load_study_data
from study.assignment import assign_participant
from study.export import build_tables, find_spec
from study.store import open_store
from study.trace import log_event
from ui import analysis_cache as cache


def test_data_version_changes_with_every_kind_of_data_the_page_reads(tmp_path) -> None:
    """Events, participants (join, flag), answers and codes each make a new version; reads,
    and another study's events, do not."""
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    spec = find_spec("film")
    assert spec is not None
    versions = [store.data_version("film")]

    def changed() -> bool:
        versions.append(store.data_version("film"))
        return versions[-1] != versions[-2]

    pid = assign_participant(store, spec, now=1000).participant
    assert changed()
    log_event(store, session_id="s1", participant=pid, type="dv.accept", event_id="e1",
              study="film", task="film-pulp-review", subtask="3", clock=lambda: 2.0)
    assert changed()
    load_study_data(store, "film")
    assert not changed()
    log_event(store, session_id="s2", participant="other", type="dv.accept", event_id="e2",
              study="elsewhere", clock=lambda: 3.0)
    assert not changed()
    store.put_answer(pid, "sus7/sus1", 4, now=4000)
    assert changed()
    store.set_flagged(pid, True, "left early")
    assert changed()
    store.add_code(pid, "completion:solved", "AB", 5000, task="film-pulp-review", subtask="3")
    assert changed()
    assert len(set(versions)) == 6


def test_memo_computes_once_per_version_and_inputs(tmp_path) -> None:
    """The same loaded data gives the same filtered data and tables (no recomputation); new
    data is loaded and computed afresh; lists are keys by value; the cache stays bounded."""
    cache.clear()
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    spec = find_spec("film")
    pid = assign_participant(store, spec, now=1000).participant
    raw = cache.study_data(store, "film")
    assert cache.study_data(store, "film") is raw and raw.ids == [pid]
    calls: list[int] = []

    def tables(data):
        calls.append(1)
        return build_tables(data, spec)

    data = cache.memo(filter_data, raw, conditions=["pleasqlarify"], include_simulated=True)
    assert cache.memo(filter_data, raw, conditions=["pleasqlarify"],
                      include_simulated=True) is data
    assert cache.memo(filter_data, raw, conditions=None) is not data
    first = cache.memo(tables, data)
    assert cache.memo(tables, data) is first and len(calls) == 1
    log_event(store, session_id="s1", participant=pid, type="dv.accept", event_id="e1",
              study="film", task="film-pulp-review", subtask="3", clock=lambda: 2.0)
    fresh = cache.study_data(store, "film")
    assert fresh is not raw and len(fresh.events) == len(raw.events) + 1
    cache.memo(tables, cache.memo(filter_data, fresh, include_simulated=True))
    assert len(calls) == 2
    for i in range(cache.MAX_ENTRIES + 5):
        cache.memo(str, i)
    assert len(cache._MEMO) == cache.MAX_ENTRIES
    cache.clear()


def test_warm_prepares_what_the_page_then_finds(tmp_path, monkeypatch) -> None:
    """Another study prepared in the background is the very object the page gets on switching
    to it; a study file edited on disk is parsed again, an unchanged one is not."""
    from tests.study_flow_fixtures import study_env, write_mini

    cache.clear()
    store = open_store(study_env(tmp_path, monkeypatch))
    path = write_mini(tmp_path / "studies")
    pid = assign_participant(store, cache.study_spec("mini", cache.study_data(store, "mini"))
                             .spec, now=1000).participant
    filters = {"conditions": None, "stages": None, "include_flagged": False,
               "include_simulated": False}
    cache.warm(store, ["mini"], filters)
    cache._WARMER[0].result(timeout=60)
    computed = dict(cache._MEMO)
    shown = cache.prepare(store, "mini", filters)
    assert shown.data.ids == [pid] and shown.tables
    assert cache._MEMO.keys() == computed.keys()  # every step found, none computed again
    assert any(shown.tables is result for result, _ in computed.values())
    assert cache.prepare(store, "mini", filters).lookup is shown.lookup
    path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert cache.study_spec("mini", shown.raw) is not shown.lookup
    cache.clear()


def test_events_of_groups_each_participants_events_in_trace_order() -> None:
    """The per-participant index gives what a scan of the whole trace gives."""
    from study.analysis.data import StudyData
    from study.trace import Event

    evs = tuple(Event(event_id=f"e{i}", session_id="s", participant=f"p{i % 3}",
                      type="dv.accept", client_ts=i, server_ts=i, payload={},
                      task=f"t{i % 2}") for i in range(12))
    data = StudyData((), evs)
    for pid in ("p0", "p1", "p2", "nobody"):
        for task in (None, "t0", "t1"):
            assert data.events_of(pid, task) == [
                e for e in evs if e.participant == pid and (task is None or e.task == task)]


def test_a_warm_up_under_way_does_not_hold_the_process_at_exit() -> None:
    """A process that started a long warm-up round and exits returns at once: the warm-up
    thread is a daemon, not an executor worker that interpreter exit joins. The bound, 60 s
    counted from the process's last line against a 600 s round, is generous (imports, however
    slow on a loaded machine, come before that line)."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import time\n"
            "from ui import analysis_cache as c\n"
            "c.prepare = lambda *a, **k: time.sleep(600)\n"
            "c.warm(None, ['slow'], {})\n"
            "time.sleep(0.2)\n"  # the round is running when the process exits
            "assert not c._WARMER[0].done()\n"
            "print('exiting', flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parent.parent)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "exiting"
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
