"""Issue #22, observation 7: hostile study files give file:line errors (no alias expansion,
no RecursionError, no IsADirectoryError), every problem the upload check builds is reported,
and the check runs once per upload."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from study import registry, setup_files
from study.spec import StudySpecError, parse_study
from study.spec_check import MAX_YAML_DEPTH, line_map
from tests.limits_helpers import finishes
from tests.study_flow_fixtures import FILM_BANK, MINI

HANG_S = 10.0  # a hang detector: b320bc6 spent 16 s and 1.37 GB on the 491-byte bomb
BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{c}: &{c} [{','.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi",
                                                                strict=True)]) + "\n"
UPLOADED = MINI.replace(f"task_bank: {FILM_BANK}", "task_bank: tasks.jsonl")


def _finishes(fn: Callable[[], Any]) -> dict[str, Any]:
    return finishes(fn, HANG_S)


@pytest.mark.parametrize("text,line", [
    (BOMB, 2),
    ("id: x\ntitle: &t [1, *t]\n", 2),
    ("id: x\nconsent: " + "[" * 5000 + "]" * 5000 + "\n", 2),
    ("id: x\nconsent: " + "{a: " * 200_000 + "\n", 2),  # PyYAML's scanner is quadratic here
    ("id: x\nitems:\n" + "".join("  " * i + f"k{i}:\n" for i in range(60)), 2 + 40),
], ids=["alias-bomb", "recursive-alias", "5000-brackets", "200K-braces", "60-deep-block"])
def test_hostile_yaml_is_one_file_line_error(text: str, line: int, tmp_path):
    assert len(BOMB) < 600
    box = _finishes(lambda: parse_study(text, tmp_path / "study.yaml"))
    error = box.get("error")
    assert isinstance(error, StudySpecError), box
    (problem,) = error.problems
    assert problem.line == line and str(problem).startswith(f"{tmp_path / 'study.yaml'}:{line}:")
    assert "alias" in problem.message or f"{MAX_YAML_DEPTH} levels" in problem.message
    assert _finishes(lambda: line_map(text)) == {"value": {}}


def test_a_bomb_in_the_studies_folder_is_listed_not_raised(tmp_path, monkeypatch):
    (tmp_path / "bomb").mkdir()
    (tmp_path / "bomb" / "study.yaml").write_text(BOMB)
    box = _finishes(lambda: registry.scan(tmp_path))
    (entry,) = box["value"].values()
    assert entry.spec is None and entry.problems[0].line == 2


def test_task_bank_dot_is_a_file_line_error(tmp_path):
    """``task_bank: .`` raised IsADirectoryError when a bank was uploaded."""
    text = UPLOADED.replace("task_bank: tasks.jsonl", "task_bank: .")
    checked = setup_files.check("study.yaml", text.encode(), "tasks.jsonl",
                                FILM_BANK.read_bytes(), root=tmp_path)
    assert checked.spec is None
    assert any(p.where == "task_bank" and p.line == 5 for p in checked.problems), checked
    with pytest.raises(StudySpecError, match="is a folder"):
        parse_study(text, tmp_path / "study.yaml")


def test_an_absolute_bank_path_with_an_upload_is_reported(tmp_path):
    """``task_bank: /abs/path`` validated clean and the uploaded bank was silently dropped."""
    checked = setup_files.check("study.yaml", MINI.encode(), "tasks.jsonl",
                                FILM_BANK.read_bytes(), root=tmp_path)
    assert checked.spec is None
    (problem,) = checked.problems
    assert problem.where == "task_bank" and "relative path" in problem.message
    assert problem.line == 5


def test_a_bank_name_mismatch_is_said_and_the_study_still_saves(tmp_path):
    checked = setup_files.check("study.yaml", UPLOADED.encode(), "my-bank.jsonl",
                                FILM_BANK.read_bytes(), root=tmp_path)
    assert checked.spec is not None and not checked.problems
    assert any("my-bank.jsonl" in w.message for w in checked.spec.warnings)
    setup_files.save(checked, root=tmp_path)
    assert (tmp_path / "mini" / "tasks.jsonl").read_bytes() == FILM_BANK.read_bytes()


def test_the_check_runs_once_per_upload(tmp_path, monkeypatch):
    """Every rerun of Setup re-checked the file in the uploader; now once per content."""
    calls: list[str] = []
    real = setup_files.parse_study
    monkeypatch.setattr(setup_files, "parse_study",
                        lambda text, path: calls.append(text) or real(text, path))
    text = UPLOADED.replace("Mini study", "Mini study (memo)")
    for _ in range(3):
        checked = setup_files.check("study.yaml", text.encode(), "tasks.jsonl",
                                    FILM_BANK.read_bytes(), root=tmp_path)
        assert checked.spec is not None
    assert len(calls) == 1
    setup_files.check("study.yaml", (text + "description: changed\n").encode(), "tasks.jsonl",
                      FILM_BANK.read_bytes(), root=tmp_path)
    assert len(calls) == 2


@pytest.mark.parametrize("line", [
    '{"id": ' + "[" * 100_000 + "]" * 100_000 + "}",  # RecursionError in json.loads
    '{"id": ' + "1" * 5000 + "}",  # ValueError: Python's 4300-digit int limit
], ids=["deep-json", "5000-digit-number"])
def test_a_hostile_uploaded_bank_line_is_a_file_line_problem(line: str, tmp_path):
    checked = setup_files.check("study.yaml", UPLOADED.encode(), "tasks.jsonl",
                                (line + "\n").encode(), root=tmp_path)
    assert checked.spec is None
    text = " ".join(str(p) for p in checked.problems)
    assert "tasks.jsonl" in text and ":1" in text, text
