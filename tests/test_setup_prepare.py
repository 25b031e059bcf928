"""Setup's "Prepare pools" and readiness check (issue 24): progress per task, each task's check
computed once per bank line and pool file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from study.spec import load_study
from tests.study_flow_fixtures import FILM_BANK, MINI, PRACTICE, TASK, study_env, write_mini


@pytest.fixture()
def spec_path(tmp_path, monkeypatch) -> Path:
    """The mini study with its own bank: its two film tasks cut to 4 candidates each (fewer than
    5 distinct outputs, so preparing lays them out without UMAP), and no prepared pools."""
    path = write_mini(tmp_path / "studies", text=MINI.replace(f"task_bank: {FILM_BANK}",
                                                              "task_bank: tasks.jsonl"))
    rows = [json.loads(line) for line in FILM_BANK.read_text().splitlines()
            if json.loads(line)["id"] in (TASK, PRACTICE)]
    for row in rows:
        row["candidates"] = row["candidates"][:4]
    (path.parent / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study_env(tmp_path, monkeypatch)
    return path


def _prepare(path: str) -> None:
    from pathlib import Path

    from study.spec import load_study
    from ui.setup_views import prepare_pools

    prepare_pools(load_study(Path(path)))


def _readiness(path: str) -> None:
    from pathlib import Path

    from study.spec import load_study
    from ui.setup_views import readiness

    readiness(load_study(Path(path)))


def test_prepare_pools_reports_each_task_and_writes_every_pool(spec_path) -> None:
    at = AppTest.from_function(_prepare, args=(str(spec_path),), default_timeout=120).run()
    assert not at.exception, at.exception
    pools = spec_path.parent / "pools"
    assert sorted(p.name for p in pools.glob("*.json")) == [f"{PRACTICE}.json", f"{TASK}.json"]
    (status,) = at.status
    assert status.label == "Prepared 2 pools" and status.icon == ":material/check:"
    lines = [m.value for m in at.markdown if m.value.startswith("Prepared **")]
    assert [line.split("**")[1] for line in lines] == [PRACTICE, TASK]
    assert all(line.endswith(" s)") for line in lines)  # each with its time
    (bar,) = at.get("progress")
    assert bar.proto.value == 100 and bar.proto.text == "2 pools prepared"
    again = AppTest.from_function(_prepare, args=(str(spec_path),), default_timeout=60).run()
    assert again.status[0].label == "Prepared 0 pools"  # nothing left to prepare


def test_readiness_checks_again_only_the_task_whose_pool_changed(spec_path) -> None:
    from study.readiness import readiness_tasks
    from ui.setup_views import is_checked

    AppTest.from_function(_prepare, args=(str(spec_path),), default_timeout=120).run()
    todo = readiness_tasks(load_study(spec_path))
    assert [(t.id, role) for t, role, _ in todo] == [(PRACTICE, "practice"), (TASK, "task")]
    at = AppTest.from_function(_readiness, args=(str(spec_path),), default_timeout=120).run()
    assert not at.exception, at.exception
    frame = at.dataframe[0].value
    assert list(frame["task"]) == [PRACTICE, TASK]
    assert list(frame["candidates"]) == [4, 4]
    assert all(is_checked(*t) for t in todo)
    assert not at.get("progress")  # the bar is gone once every task is checked
    pool = todo[1][2]
    assert pool is not None
    stat = pool.stat()
    os.utime(pool, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # pool rewritten
    assert [is_checked(*t) for t in todo] == [True, False]
    at = AppTest.from_function(_readiness, args=(str(spec_path),), default_timeout=120).run()
    assert list(at.dataframe[0].value["task"]) == [PRACTICE, TASK]
    assert all(is_checked(*t) for t in todo)
