"""The built-in film task bank: loads strictly, golds are distinct readings, pools look real."""

from __future__ import annotations

import sqlite3
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from core.engine.taskbank import Task, load_task_bank
from studies.film import build_bank, tasks_src

BANK = Path(build_bank.__file__).resolve().parent / "tasks.jsonl"
TASK_IDS = [spec["id"] for spec in tasks_src.TASKS]

PAPER_TASKS = {  # Table 1 of the paper: question -> (ambiguity, complexity)
    "What was the review of Pulp Fiction?": ("vague", "low"),
    "What's the rating of the movies with Leonardo DiCaprio?": ("vague", "medium"),
    "Show me scripts and editors with a deadline of 21.04.03.": ("attachment", "high"),
    "Show all the action movies and romantic comedies lasting 2 hours.": ("attachment", "medium"),
    "What film categories does each film festival offer?": ("scope", "high"),
}

Rows = Counter[tuple[object, ...]]


@cache
def _tasks() -> dict[str, Task]:
    """The bank loaded strictly (any bad line raises), keyed by task id."""
    tasks, problems = load_task_bank(BANK)
    assert problems == []
    return {t.id: t for t in tasks}


@cache
def _connection(dump: str) -> sqlite3.Connection:
    """An in-memory SQLite database built from a task's inline dump (shared per dump)."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(dump)
    return conn


def _rows(task: Task, sql: str) -> Rows:
    """The output of ``sql`` on the task's database as a row multiset (column order kept)."""
    conn = _connection(task.database.value)
    return Counter(tuple(row) for row in conn.execute(sql).fetchall())


def _valid_outputs(task: Task) -> list[tuple[str, int, Rows]]:
    """(sql, count, rows) of every candidate that executes."""
    out = []
    for cand in task.candidates:
        try:
            out.append((cand.sql, cand.count, _rows(task, cand.sql)))
        except sqlite3.OperationalError:
            continue
    return out


def test_bank_loads_strictly_with_enough_tasks() -> None:
    """At least eight tasks load without a single problem, in the order of the sources."""
    tasks = _tasks()
    assert len(tasks) >= 8
    assert list(tasks) == TASK_IDS


def test_paper_questions_are_verbatim_with_their_table1_labels() -> None:
    """The five Table 1 questions appear word for word with their ambiguity and complexity."""
    by_question = {t.question: t for t in _tasks().values()}
    for question, (ambiguity, complexity) in PAPER_TASKS.items():
        assert question in by_question, f"missing paper question: {question}"
        task = by_question[question]
        assert (task.ambiguity, task.complexity) == (ambiguity, complexity)


def test_there_is_a_practice_task() -> None:
    """A practice task exists for learning the interface before the study tasks."""
    practice = [t for t in _tasks().values() if "practice" in t.id]
    assert practice
    assert practice[0].complexity == "low"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_fields_and_inline_database(task_id: str) -> None:
    """Each task has a title, valid labels, >= 2 golds and the dump of film.sql inlined."""
    task = _tasks()[task_id]
    assert task.title
    assert task.ambiguity in ("vague", "attachment", "scope")
    assert task.complexity in ("low", "medium", "high")
    assert len(task.gold) >= 2
    assert task.database.kind == "dump"
    assert task.database.value == build_bank.DUMP_PATH.read_text(encoding="utf-8")


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_golds_execute_and_have_pairwise_different_outputs(task_id: str) -> None:
    """Every gold runs, returns rows, and no two interpretations give the same output."""
    task = _tasks()[task_id]
    outputs = [_rows(task, gold) for gold in task.gold]
    assert all(outputs), "a gold returns no rows"
    for i, a in enumerate(outputs):
        for j in range(i + 1, len(outputs)):
            assert a != outputs[j], f"golds {i} and {j} give the same output"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_pool_size_and_weight(task_id: str) -> None:
    """About fifty samples: >= 40 distinct SQL strings whose counts sum to 48..55."""
    task = _tasks()[task_id]
    sqls = [c.sql for c in task.candidates]
    assert len(set(sqls)) == len(sqls) >= 40
    assert 48 <= sum(c.count for c in task.candidates) <= 55
    assert all(1 <= c.count <= 5 for c in task.candidates)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_every_gold_is_realised_by_popular_candidates(task_id: str) -> None:
    """Each gold output equals the output of >= 2 candidates carrying >= 3 samples together."""
    task = _tasks()[task_id]
    valid = _valid_outputs(task)
    for i, gold in enumerate(task.gold):
        target = _rows(task, gold)
        hits = [(sql, count) for sql, count, rows in valid if rows == target]
        assert hits, f"gold {i} is realised by no candidate"
        assert len(hits) >= 2 and sum(n for _, n in hits) >= 3, f"gold {i}: only {hits}"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_pool_has_two_to_four_invalid_candidates(task_id: str) -> None:
    """2-4 candidates fail with OperationalError (hallucinated schema); all others execute."""
    task = _tasks()[task_id]
    invalid = 0
    for cand in task.candidates:
        try:
            _rows(task, cand.sql)
        except sqlite3.OperationalError:
            invalid += 1
    assert 2 <= invalid <= 4


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_pool_spreads_over_several_outputs(task_id: str) -> None:
    """The pool is not one query repeated: valid candidates give >= 8 different outputs."""
    outputs = {frozenset(rows.items()) for _, _, rows in _valid_outputs(_tasks()[task_id])}
    assert len(outputs) >= 8


def test_bank_is_up_to_date_with_sources() -> None:
    """tasks.jsonl equals a fresh build; run `python -m studies.film.build_bank` if not."""
    assert BANK.read_text(encoding="utf-8") == build_bank.build_bank_text()


def test_block_layout_keeps_subqueries_inline() -> None:
    """Block layout breaks top-level clauses only, as models lay out their SQL."""
    sql = "SELECT a FROM t WHERE b IN (SELECT b FROM u WHERE c = 'x (FROM y)') ORDER BY a"
    assert tasks_src.layout(sql, "block") == (
        "SELECT a\nFROM t\nWHERE b IN (SELECT b FROM u WHERE c = 'x (FROM y)')\nORDER BY a"
    )
    with pytest.raises(ValueError, match="layout"):
        tasks_src.layout(sql, "zigzag")
