"""The class-invariant floor: only questions every spelling of an output answers alike."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest

from core.evaluation.floors import format_floors, main, task_floors
from core.evaluation.optimal import tree_floor
from core.evaluation.populations import (
    class_weights,
    huffman_floor,
    invariant_answers,
    invariant_floor,
    vocabulary_answers,
)
from tests.conftest_core import FILM_DUMP, make_pool, write_bank

# one output spelled two ways (with and without DISTINCT), two other outputs
SPELLED_TWICE = [("SELECT title FROM film WHERE genre = 'action'", 3),
                 ("SELECT DISTINCT title FROM film WHERE genre = 'action'", 2),
                 ("SELECT title FROM film WHERE year > 1996", 2),
                 ("SELECT COUNT(*) FROM film WHERE genre = 'action'", 1)]


def brute_force_invariant(pool, max_group: int = 3) -> set[bytes]:
    """Class rows of every conjunction of up to ``max_group`` clause features that each class's
    candidates all answer alike, by plain loops over candidates."""
    cls = list(class_weights(pool))
    found = set()
    feats = range(len(pool.vocabulary))
    for size in range(1, max_group + 1):
        for combo in combinations(feats, size):
            row = []
            for c in cls:
                said = {all(pool.x[i, j] for j in combo)
                        for i in np.flatnonzero(pool.class_index == c)}
                if len(said) > 1:
                    break
                row.append(said.pop())
            else:
                r = np.array(row, dtype=bool)
                if r.any() and not r.all():
                    found.add(r.tobytes())
    return found


def test_class_invariant_clause_questions_are_exactly_those_no_output_splits():
    pool = make_pool(SPELLED_TWICE)
    assert len(class_weights(pool)) == 3
    # DISTINCT splits the 'action' titles' output (one spelling has it, the other not)
    distinct = [j for j, f in enumerate(pool.vocabulary) if "DISTINCT" in f.key]
    assert distinct and pool.x[0, distinct[0]] != pool.x[1, distinct[0]]
    got = {r.tobytes() for r in invariant_answers(pool, answers=False)}
    assert got == brute_force_invariant(pool)
    # the answers add questions a class's spellings cannot disagree on: counts vs titles
    answers = invariant_answers(pool, clauses=False)
    count = list(class_weights(pool)).index(int(pool.class_index[3]))
    assert any(r[count] != r[(count + 1) % 3] for r in answers)


def test_the_invariant_floor_is_a_tree_floor_over_fewer_questions():
    pool = make_pool(SPELLED_TWICE)
    weights = list(class_weights(pool).values())
    inv = invariant_floor(pool)
    assert inv.exact
    assert inv.expected == pytest.approx(tree_floor(invariant_answers(pool), weights).expected)
    # three outputs, every one separable by a question about the answer: Huffman is reached
    assert inv.expected == pytest.approx(huffman_floor(pool))
    # no clauses, no answers: nothing separates the outputs, they are shown heaviest first
    none = tree_floor(np.zeros((0, 3), dtype=bool), weights).expected
    assert invariant_floor(pool, clauses=False, answers=False).expected == pytest.approx(none)
    # weights 5, 2, 1: shown heaviest first, an accepted output costs no turn: (0·5 + 1·2 + 2·1)
    # / 8 = 0.5, below Huffman's 1.375 — the floors count questions, a right guess is free
    assert none == pytest.approx(0.5) and huffman_floor(pool) == pytest.approx(1.375)
    assert vocabulary_answers(pool).shape[1] == invariant_answers(pool).shape[1] == 3


def test_the_floors_table_lists_every_floor_and_its_mean():
    pool = make_pool(SPELLED_TWICE)
    row = task_floors(pool)
    assert set(row) >= {"huffman", "tree", "clauses", "answers", "invariant", "values"}
    assert row["values"] <= row["invariant"] + 1e-9 or row["values"] >= row["huffman"] - 1e-9
    text = format_floors({"t": row, "u": row})
    assert "(mean over tasks)" in text and "inv÷H" in text


def test_the_floors_command_prints_every_task_and_the_mean(tmp_path, capsys):
    task = {"id": "spelled-twice", "question": "q?", "database": {"dump": FILM_DUMP},
            "gold": [SPELLED_TWICE[0][0]],
            "candidates": [{"sql": s, "count": c} for s, c in SPELLED_TWICE]}
    bank = write_bank(tmp_path / "bank.jsonl", [task])
    out = tmp_path / "floors.json"
    assert main([str(bank), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "spelled-twice" in text and "(mean over tasks)" in text
    row = json.loads(out.read_text())["spelled-twice"]
    assert row["classes"] == 3 and row["invariant"] == pytest.approx(row["huffman"])
