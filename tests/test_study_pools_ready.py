"""Issue #22, observation 8: a study stays closed to participants until every task's pool is
prepared, and a participant's request never fits a layout."""

from __future__ import annotations

import json
import shutil

import pytest

from core.engine import prepare
from core.engine.taskbank import load_task_bank
from study.registry import pool_problems
from study.spec import load_study
from study.store import open_store
from tests.study_flow_fixtures import (
    FILM_BANK,
    MINI,
    PRACTICE,
    TASK,
    open_page,
    study_env,
    write_mini,
)


@pytest.fixture()
def study(tmp_path, monkeypatch):
    """The mini study with its own two-task bank and no prepared pools yet."""
    path = write_mini(tmp_path / "studies", text=MINI.replace(f"task_bank: {FILM_BANK}",
                                                              "task_bank: tasks.jsonl"))
    lines = [line for line in FILM_BANK.read_text().splitlines()
             if json.loads(line)["id"] in (TASK, PRACTICE)]
    (path.parent / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    open_store(study_env(tmp_path, monkeypatch))
    return load_study(path)


def _prepare_by_copy(spec) -> None:
    """The shipped prepared pools of the same tasks (what Prepare would write, without the
    minute of UMAP per pool)."""
    folder = spec.task_bank.parent / "pools"
    folder.mkdir(exist_ok=True)
    for tid in (TASK, PRACTICE):
        shutil.copy(FILM_BANK.parent / "pools" / f"{tid}.json", folder / f"{tid}.json")


def test_a_study_with_unprepared_pools_is_closed_until_they_are_prepared(study) -> None:
    """Setup showed 'is open' beside 'Prepare 5 missing pool(s)', and the first participant
    waited ~78 s on Continue while the server fitted layouts."""
    (problem,) = pool_problems(study)
    assert problem.where == "task_bank" and problem.line == 5
    assert TASK in problem.message and PRACTICE in problem.message
    at = open_page("participant", study="mini")
    assert not at.exception, at.exception
    assert [h.value for h in at.header] == ["This study is not open yet"]
    assert not at.button  # no consent: nobody can join
    _prepare_by_copy(study)
    assert pool_problems(study) == []
    at = open_page("participant", study="mini")
    assert at.button(key="pq.consent.yes")


def test_an_outdated_pool_counts_as_missing(study) -> None:
    _prepare_by_copy(study)
    bank = study.task_bank
    lines = bank.read_text().splitlines()
    first = json.loads(lines[0])
    first["candidates"] = first["candidates"][:-1]  # the bank changed after preparing
    bank.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    (problem,) = pool_problems(study)
    assert first["id"] in problem.message


def test_a_participant_request_never_fits_a_layout(study, monkeypatch) -> None:
    def no_fit(*args, **kwargs):
        raise AssertionError("a layout was fitted on a participant's request")

    monkeypatch.setattr(prepare, "prepare_pool", no_fit)
    monkeypatch.setenv("PLEASQLARIFY_CACHE_DIR", str(study.task_bank.parent / "cache"))
    tasks, _ = load_task_bank(study.task_bank, lenient=True)
    with pytest.raises(prepare.PoolNotPreparedError, match=f"'{tasks[0].id}' is not prepared"):
        prepare.load_prepared(tasks[0], prepare.default_pool_dir(study.task_bank), fit=False)


def test_a_bank_saved_again_is_read_again_by_the_running_server(tmp_path):
    """Setup saves a new version of a study's bank and prepares its pools in the running
    server: the participant pages' caches (keyed by the bank's path alone) kept serving the
    old task and pool until a restart."""
    from types import SimpleNamespace

    from ui import study_cache

    line = json.loads(FILM_BANK.read_text(encoding="utf-8").splitlines()[0])
    bank = tmp_path / "tasks.jsonl"
    bank.write_text(json.dumps(line) + "\n", encoding="utf-8")
    spec = SimpleNamespace(task_bank=bank)
    assert study_cache.task(spec, line["id"]).question == line["question"]
    bank.write_text(json.dumps({**line, "question": "Which films did Tarantino write?"}) + "\n",
                    encoding="utf-8")
    assert study_cache.task(spec, line["id"]).question == "Which films did Tarantino write?"
