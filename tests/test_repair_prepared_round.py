"""Issue 24: the first state's repair round is stored with the prepared pool, so a "None of
these" pressed before its speculated round is done (or in a crowd, where none is speculated)
applies it at once, in any process, with exactly the queries a computed round adds."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import core.engine.repair as repair
from core.engine.pool import prepare_pool
from core.engine.prepare import default_pool_dir, load_prepared, with_first_round, write_prepared
from core.engine.repair import (
    REPAIR_VERSION,
    first_round,
    known_round,
    none_of_these_outputs,
    recompose,
)
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.engine.taskbank import load_task_bank
from study.store import REPO_ROOT
from ui import actions
from ui.state import WorkspaceState

BANK = REPO_ROOT / "studies" / "film" / "tasks.jsonl"
TASK = "film-dicaprio-rating"
# a fresh interpreter loads the written pool and presses None of these; computing is an error
CHILD = """
import json, sys
import core.engine.repair as repair
from core.engine.prepare import load_prepared
from core.engine.taskbank import load_task_bank
from core.engine.session import RepairSession
from ui import actions
from ui.state import WorkspaceState

def computed(*a):
    raise SystemExit("the round was computed")
repair._recompose = computed
tasks, _ = load_task_bank(sys.argv[1])
pool = load_prepared(next(t for t in tasks if t.id == sys.argv[2]), sys.argv[3], fit=False)
ws = WorkspaceState(RepairSession(pool), pool.question)
assert actions.none_of_these(ws, actions.no_log)
outcome = actions.run_repair(ws, actions.no_log)
print(json.dumps([list(outcome.added), list(ws.session.history[-1].weights)]))
"""


def _task(task_id: str = TASK):
    tasks, _ = load_task_bank(BANK)
    return next(t for t in tasks if t.id == task_id)


def _pressed(pool, questions: str = "clauses") -> RepairSession:
    """A session of ``pool`` with every output of its first state rejected (None of these)."""
    session = RepairSession(pool, questions=questions)
    session.reject_outputs(none_of_these_outputs(session))
    return session


def _same_state(a: RepairSession, b: RepairSession) -> None:
    """Two sessions show the same repaired state (queries, weights, features, outputs)."""
    assert a.history == b.history and a.pool.sqls == b.pool.sqls
    assert np.array_equal(a.pool.counts, b.pool.counts)
    assert a.pool.vocabulary == b.pool.vocabulary and np.array_equal(a.pool.x, b.pool.x)
    assert a.pool.class_keys == b.pool.class_keys
    assert np.array_equal(a.pool.class_index, b.pool.class_index)
    assert np.allclose(a.pool.class_similarity, b.pool.class_similarity)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple:
    """``TASK``'s pool prepared (no layout) and written as Setup and core.prepare write it."""
    folder = tmp_path_factory.mktemp("pools")
    task = _task()
    write_prepared(prepare_pool(task, layout=False), task, folder / f"{task.id}.json")
    return task, folder


def test_a_written_pool_carries_its_first_round_and_a_new_process_applies_it(written,
                                                                             monkeypatch):
    """The pool file holds the round; a newly loaded pool (nothing remembered) and a fresh
    interpreter answer the first None of these from it, with the SQL, weights, features and
    outputs a computed round gives, for clause and mixed vocabularies alike."""
    task, folder = written
    stored = json.loads((folder / f"{task.id}.json").read_text(encoding="utf-8"))["first_round"]
    assert stored["version"] == REPAIR_VERSION and stored["sqls"]
    for questions in ("clauses", "mixed"):
        reference = _pressed(prepare_pool(task, layout=False), questions)
        computed = recompose(reference, cached=False)
        pool = load_prepared(task, folder, fit=False)
        session = _pressed(pool, questions)
        with monkeypatch.context() as m:
            m.setattr(repair, "_recompose", lambda *a: pytest.fail("the round was computed"))
            assert recompose(session) == computed
        _same_state(session, reference)
    child = subprocess.run([sys.executable, "-c", CHILD, str(BANK), task.id, str(folder)],
                           cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    added, weights = json.loads(child.stdout.strip().splitlines()[-1])
    assert added == list(computed.added) and weights == list(reference.history[-1].weights)


def test_a_stored_round_serves_only_its_state_and_its_version(written, monkeypatch):
    """Another state (a Yes, then None of these) and a round stored by another version of
    recomposition are computed; ``cached=False`` computes too (the benchmarks' switch)."""
    task, folder = written
    pool = load_prepared(task, folder, fit=False)
    assert pool.first_round is not None
    calls: list[int] = []
    real = repair._recompose
    monkeypatch.setattr(repair, "_recompose", lambda *a: calls.append(1) or real(*a))
    later = RepairSession(pool)
    later.answer(later.variables()[0].keys, True)
    later.reject_outputs(none_of_these_outputs(later))
    assert known_round(later) is None and later.history[-1].kind == "reject"
    recompose(_pressed(pool), cached=False)
    assert calls == [1]
    monkeypatch.setattr(repair, "REPAIR_VERSION", REPAIR_VERSION + 1)
    fresh = load_prepared(task, folder, fit=False)  # nothing remembered for this copy
    stale = _pressed(fresh)
    assert known_round(stale) is None and stale.pool is fresh
    with_first_round(fresh)  # what core.prepare --rounds and Setup do: stored again
    assert fresh.first_round is not None and fresh.first_round.version == REPAIR_VERSION + 1


def test_the_shipped_film_pools_carry_their_current_first_round():
    """Every shipped film pool stores the round recomposition computes now for its first
    state (after a change to recomposition: bump REPAIR_VERSION and run
    ``python -m core.prepare studies/film/tasks.jsonl --rounds``)."""
    tasks, _ = load_task_bank(BANK)
    for task in tasks:
        pool = load_prepared(task, default_pool_dir(BANK), fit=False)
        stored = pool.first_round
        assert stored is not None and stored.version == REPAIR_VERSION, task.id
        pool.first_round = None
        now = first_round(pool)
        assert now is not None, task.id
        assert (stored.outputs, stored.sqls, stored.weights, stored.new_outputs,
                stored.features) == (now.outputs, now.sqls, now.weights, now.new_outputs,
                                     now.features), task.id
        assert [output_key(r) for r in stored.results] == [output_key(r) for r in now.results]


def test_a_press_in_a_crowd_draws_the_prepared_round_in_its_own_run(monkeypatch):
    """In a crowded process nothing is speculated, yet the first None of these needs no
    search: start_repair applies the stored round before the press's run draws."""
    pool = load_prepared(_task("film-departed-makers"), default_pool_dir(BANK), fit=False)
    monkeypatch.setattr(actions, "_active_sessions", lambda: actions.CROWD_SESSIONS + 1)
    ws = WorkspaceState(RepairSession(pool), pool.question)
    assert actions.speculate_repair(ws, "recompose", delay=0) is None
    events: list[str] = []
    log = lambda t, p: events.append(t)  # noqa: E731
    assert actions.none_of_these(ws, log) and actions.start_repair(ws, log, "recompose")
    search = actions.searching(ws)
    assert search is not None and search.done.is_set()
    outcome = actions.finish_repair(ws, log)
    assert outcome is not None and outcome.added == pool.first_round.sqls
    assert events == ["output.reject", "repair"] and ws.session.pool.n == pool.n + len(
        outcome.added)


def test_a_round_that_fails_is_not_stored_and_the_pool_is_written(tmp_path):
    """Preparing a pool never fails for its round: without the database (moved after the
    candidates ran) the file is written without one, and a press computes the round."""
    from core.engine.taskbank import DatabaseSpec

    task = _task("film-pulp-review")
    pool = prepare_pool(task, layout=False)
    pool.database = DatabaseSpec("sqlite", str(tmp_path / "gone.sqlite"))
    write_prepared(pool, task, tmp_path / f"{task.id}.json")
    loaded = load_prepared(task, tmp_path, fit=False)
    assert loaded.first_round is None and loaded.sqls == pool.sqls
