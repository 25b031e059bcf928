"""A question about the answer in the workspace: drawn as what it is, answered and speculated
with the same Yes/No keys as a clause question."""

from __future__ import annotations

import numpy as np

from core.engine.answers import answer_question
from core.engine.features import Feature
from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from tests.conftest_core import FILM_BANK
from ui import actions, speculate
from ui.actions import no_log
from ui.state import workspace_state
from ui.views import KEYS_SEP, decision_html


def _pool():
    tasks, _ = load_task_bank(FILM_BANK)
    return load_prepared(tasks[1], default_pool_dir(FILM_BANK))


def test_an_answer_question_reads_as_words_and_an_excerpt_with_the_same_keys():
    pool = _pool()
    ws = workspace_state(pool, store={}, factory=lambda p: RepairSession(
        p, questions="outputs", values=True))
    variable = ws.session.next_variable()
    html = decision_html(ws)
    from html import escape

    assert escape(answer_question(variable.features)) in html
    assert "<table>" in html and "<th>" in html  # an excerpt of an answer that has it
    assert f'data-key="{KEYS_SEP.join(variable.keys)}"' in html
    assert 'aria-keyshortcuts="Y"' in html and 'aria-keyshortcuts="N"' in html
    # the speculated Yes is the state the answer leads to, adopted as for clauses
    speculate.speculate(ws, variable)
    twin = ws.extra[speculate.KEY]["forks"][True]
    assert actions.answer_variable(ws, True, no_log)
    assert np.array_equal(ws.session.alive, twin.alive)
    assert ws.session.history[-1].features == variable.keys


def test_a_clause_question_shows_its_example_query_without_answer_features():
    """Hybrid asks clauses first; the example query "in full" under the question listed the
    query's ANSWER features among its SQL chips (ANSWER SHAPE several rows, …), which are no
    part of any query. Found walking the participant's task 3 in Chromium."""
    pool = _pool()
    ws = workspace_state(pool, store={}, factory=lambda p: RepairSession(
        p, strategy="expected-depth", questions="hybrid"))
    variable = ws.session.next_variable()
    assert variable is not None and not any(f.keyword.startswith("ANSWER") for f in
                                            variable.features)
    example = decision_html(ws).split("in full:", 1)[1]
    assert "SELECT" in example and "ANSWER" not in example


def test_the_chip_key_goes_with_a_clause_question_and_not_with_one_about_the_answer():
    """The key to the chips' colours stood under the Decision Space whatever it asked; under a
    question about the answer (words and a table, no chip) it explained nothing on screen."""
    pool = _pool()
    about_answer = workspace_state(pool, store={}, factory=lambda p: RepairSession(
        p, questions="outputs", values=True))
    assert "pq-legend" not in decision_html(about_answer)
    clause = workspace_state(pool, store={}, factory=lambda p: RepairSession(
        p, strategy="expected-depth", questions="hybrid"))
    html = decision_html(clause)
    assert html.count('class="pq-legend') == 1
    # under the chips it explains (the example query), above the Yes/No buttons
    assert html.index("in full:") < html.index("pq-legend") < html.index("pq-answers")


def test_questions_in_words():
    assert answer_question((Feature("ANSWER COLUMN", "people.name"),
                            Feature("ANSWER COLUMNS", "1"))) == (
        "Should the answer have a column of people.name values and exactly one column?")
    assert answer_question((Feature("ANSWER HAS", "Heat"),)) == (
        "Should the answer have the value “Heat”?")
    assert answer_question((Feature("ANSWER COLUMN", "whole numbers"),)) == (
        "Should the answer have a column of whole numbers?")
