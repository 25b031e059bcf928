"""Task bank loading: the AMBROSIA banks load strictly; bad lines are reported precisely."""

from __future__ import annotations

import sqlite3

import pytest

from core.engine.errors import TaskBankError
from core.engine.taskbank import Candidate, DatabaseSpec, load_task_bank, load_tasks
from tests.conftest_core import DEV_BANK, VAL_BANK, write_bank

GOOD = {
    "id": "good-1", "question": "Which films?", "ambiguity": "scope",
    "database": {"dump": "CREATE TABLE t(a INT);"},
    "gold": ["SELECT a FROM t"], "candidates": ["SELECT a FROM t"],
}


def _good(**changes):
    task = dict(GOOD)
    task.update(changes)
    return task


def test_ambrosia_banks_load_strictly():
    for path, expected in ((DEV_BANK, 71), (VAL_BANK, 112)):
        tasks, problems = load_task_bank(path)
        assert problems == []
        assert len(tasks) == expected
        assert len({t.id for t in tasks}) == len(tasks)
        for t in tasks:
            assert t.database.kind == "dump" and t.dialect == "sqlite"
            assert t.candidates and all(c.count >= 1 for c in t.candidates)
            assert len({c.sql for c in t.candidates}) == len(t.candidates)
            assert t.gold, t.id
            assert t.origin.startswith(f"{path}:")
    ambiguities = {t.ambiguity for t in load_tasks(DEV_BANK, VAL_BANK)}
    assert ambiguities <= {"scope", "attachment", "vague"}
    assert len(load_tasks(DEV_BANK, VAL_BANK)) == 183


BAD_LINES = {
    "bad-json": ('{"id": "x", "question": ', "(line)", "not valid JSON"),
    "not-an-object": ("[1, 2]", "(line)", "JSON object"),
    "missing-id": ({k: v for k, v in GOOD.items() if k != "id"}, "id", "required"),
    "missing-question": (_good(question="  "), "question", "non-empty"),
    "missing-database": ({k: v for k, v in GOOD.items() if k != "database"}, "database",
                         "required"),
    "database-two-keys": (_good(database={"dump": "CREATE TABLE t(a)", "url": "sqlite://"}),
                          "database", "exactly one key"),
    "unknown-database-kind": (_good(database={"mysql": "x"}), "database", "unknown kind 'mysql'"),
    "empty-dump": (_good(database={"dump": " "}), "database.dump", "non-empty"),
    "missing-sqlite-file": (_good(database={"sqlite": "nowhere/missing.sqlite"}),
                            "database.sqlite", "does not exist"),
    "count-zero": (_good(candidates=[{"sql": "SELECT 1", "count": 0}]), "candidates[0].count",
                   "positive integer"),
    "count-bool": (_good(candidates=["SELECT 2", {"sql": "SELECT 1", "count": True}]),
                   "candidates[1].count", "positive integer"),
    "candidate-not-sql": (_good(candidates=[{"count": 2}]), "candidates[0]", "'sql' string"),
    "empty-candidate": (_good(candidates=["  "]), "candidates[0]", "empty SQL"),
    "gold-not-list": (_good(gold="SELECT 1"), "gold", "list"),
    "ambiguity-not-string": (_good(ambiguity=3), "ambiguity", "string"),
    "duplicate-id": (_good(), "id", "duplicate id 'good-1'"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_line_gives_one_error_with_file_line_field_reason(tmp_path, case):
    line, fld, reason = BAD_LINES[case]
    bank = write_bank(tmp_path / "bank.jsonl", [GOOD, line])
    with pytest.raises(TaskBankError) as info:
        load_task_bank(bank)
    problems = info.value.problems
    assert len(problems) == 1
    (p,) = problems
    assert p.path == str(bank)
    assert p.line == 2
    assert p.field == fld
    assert reason in p.reason
    # the message names all four, so a researcher can find the line
    assert f"{bank}:2" in str(info.value) and f"'{fld}'" in str(info.value)


def test_duplicate_id_names_first_line(tmp_path):
    bank = write_bank(tmp_path / "bank.jsonl", [GOOD, _good(id="other"), _good()])
    with pytest.raises(TaskBankError) as info:
        load_task_bank(bank)
    (p,) = info.value.problems
    assert p.line == 3 and "first on line 1" in p.reason


def test_lenient_returns_good_tasks_and_every_problem(tmp_path):
    bank = write_bank(tmp_path / "bank.jsonl", [
        GOOD, "{not json", _good(id="ok-2"), _good(id="bad", database={"x": "y"}),
        "", _good(id="ok-3"), _good(id="ok-2"),
    ])
    tasks, problems = load_task_bank(bank, lenient=True)
    assert [t.id for t in tasks] == ["good-1", "ok-2", "ok-3"]
    # blank line 5 is skipped but still counted in line numbers
    assert [(p.line, p.field) for p in problems] == [(2, "(line)"), (4, "database"), (7, "id")]
    assert [t.origin for t in tasks] == [f"{bank}:1", f"{bank}:3", f"{bank}:6"]
    # strict loading of the same file lists the same three problems in one error
    with pytest.raises(TaskBankError) as info:
        load_task_bank(bank)
    assert len(info.value.problems) == 3
    assert len(load_tasks(bank, lenient=True)) == 3


def test_missing_bank_file_is_a_task_bank_error(tmp_path):
    with pytest.raises(TaskBankError) as info:
        load_task_bank(tmp_path / "nope.jsonl")
    assert info.value.problems[0].field == "(file)"


def test_unknown_keys_are_kept_and_round_trip(tmp_path):
    bank = write_bank(tmp_path / "bank.jsonl", [
        _good(notes={"author": "me"}, difficulty=3, source="ambrosia", title="T"),
    ])
    (task,), _ = load_task_bank(bank)
    assert task.extra == {"notes": {"author": "me"}, "difficulty": 3}
    assert task.source == "ambrosia" and task.title == "T"
    line = task.to_json()
    assert line["notes"] == {"author": "me"} and line["difficulty"] == 3
    again = write_bank(tmp_path / "again.jsonl", [line])
    (task2,), _ = load_task_bank(again)
    assert task2.to_json() == line


def test_candidates_merged_by_sql_with_summed_counts(tmp_path):
    bank = write_bank(tmp_path / "bank.jsonl", [_good(candidates=[
        "SELECT 1", {"sql": "SELECT 2", "count": 2}, {"sql": "SELECT 1", "count": 3},
        "SELECT 2", "SELECT 3",
    ])])
    (task,), _ = load_task_bank(bank)
    assert task.candidates == [Candidate("SELECT 1", 4), Candidate("SELECT 2", 3),
                               Candidate("SELECT 3", 1)]


def test_sqlite_path_relative_to_bank_folder(tmp_path):
    sub = tmp_path / "study"
    sub.mkdir()
    con = sqlite3.connect(sub / "db.sqlite")
    con.execute("CREATE TABLE t(a INT)")
    con.close()
    bank = write_bank(sub / "bank.jsonl", [_good(database={"sqlite": "db.sqlite"})])
    (task,), _ = load_task_bank(bank)
    assert task.database == DatabaseSpec("sqlite", str((sub / "db.sqlite").resolve()))
    assert task.database.fingerprint() == DatabaseSpec("sqlite", str(sub / "db.sqlite")).fingerprint()


@pytest.mark.parametrize(("url", "dialect"), [
    ("postgresql+psycopg://u@h/db", "postgres"), ("postgres://h/db", "postgres"),
    ("mysql+pymysql://h/db", "mysql"), ("sqlite:///x.db", "sqlite"),
])
def test_url_dialect(url, dialect):
    assert DatabaseSpec("url", url).dialect == dialect
    assert DatabaseSpec("dump", "CREATE TABLE t(a)").dialect == "sqlite"


def test_bank_with_only_blank_lines_is_empty(tmp_path):
    bank = tmp_path / "empty.jsonl"
    bank.write_text("\n\n   \n", encoding="utf-8")
    assert load_task_bank(bank) == ([], [])


def test_problem_lines_match_json_decoder_column(tmp_path):
    bank = write_bank(tmp_path / "bank.jsonl", ['{"id": "a",}'])
    _, problems = load_task_bank(bank, lenient=True)
    (p,) = problems
    assert p.line == 1 and p.field == "(line)"
    assert "column 12" in p.reason  # the trailing comma's position
