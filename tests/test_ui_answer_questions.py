"""A question about the answer in the workspace: drawn as what it is, answered and speculated
with the same Yes/No keys as a clause question."""

from __future__ import annotations

import re

import numpy as np

from core.engine.answers import answer_question
from core.engine.features import Feature
from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from core.planpool.questions import render_question
from tests.conftest_core import FILM_BANK
from ui import actions, speculate
from ui.action_space import names_of
from ui.actions import no_log
from ui.state import workspace_state
from ui.views import KEYS_SEP, LABELS, decision_html, space_footer


def _pool(index: int = 1):
    tasks, _ = load_task_bank(FILM_BANK)
    return load_prepared(tasks[index], default_pool_dir(FILM_BANK))


def test_an_answer_question_reads_as_words_and_an_excerpt_with_the_same_keys():
    pool = _pool()
    ws = workspace_state(pool, store={}, factory=lambda p: RepairSession(
        p, questions="outputs", values=True))
    variable = ws.session.next_variable()
    html = decision_html(ws)
    from html import escape

    words = render_question(variable.features, names=names_of(pool))
    assert escape(words) in html  # default labels (both): the question in words
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
    assert answer_question((Feature("ANSWER COLUMN", "empty"),)) == (
        "Should the answer have a column with no value in any row?")


def _answer_first(labels: str, index: int = 1):
    """A workspace on a film task asking about the answer first, under ``labels``."""
    pool = _pool(index)
    ws = workspace_state(pool, store={}, factory=lambda p: RepairSession(p, questions="outputs"))
    ws.extra[LABELS] = labels
    variable = ws.session.next_variable()
    assert variable is not None and all(f.keyword.startswith("ANSWER") for f in
                                        variable.features)
    return ws, variable


def test_an_answer_question_names_no_sql_column_unless_sql_labels():
    """Under the default labels (both) the question read "a column of films.release_year
    values": an answer question has no chips to carry the SQL, so SQL-only wording left a
    participant without SQL with nothing in words. Found walking the practice in Chromium."""

    for labels in ("both", "plain"):
        ws, variable = _answer_first(labels, index=0)  # "a column of films.title …"
        question = decision_html(ws).split('class="pq-answer-question"><b>', 1)[1].split("</b>")[0]
        assert not re.search(r"\b[a-z_]+\.[a-z_]+\b", question), (labels, question)
    ws, variable = _answer_first("sql", index=0)
    from html import escape

    assert escape(answer_question(variable.features)) in decision_html(ws)


def test_counts_under_an_answer_excerpt_and_on_cluster_buttons_are_singular_for_one():
    """"… and 1 more rows" under an excerpt and "Keep only the 1 queries of cluster 7" on a
    Keep-cluster button (its label for screen readers) were seen on the film tasks."""
    ws, _ = _answer_first("both", index=0)  # the practice: an excerpt of 3 of 4 rows
    html = decision_html(ws) + space_footer(ws, True)["html"]
    assert "… and 1 more row<" in html and "1 more rows" not in html
    assert "Keep only the 1 query of cluster" in html and "the 1 queries" not in html
    assert "Keep only the 35 queries of cluster 1" in html


def test_the_chart_caption_says_what_red_means_for_a_question_about_the_answer():
    """With a question about the answer shown, the caption under the chart said red glyphs
    "contain the red clause(s) of the Decision Space", but no clause is red then."""
    ws, _ = _answer_first("both")
    caption = space_footer(ws, True)["html"]
    assert "red clause" not in caption and "Yes to the question" in caption
    clause_ws = workspace_state(_pool(), store={}, factory=lambda p: RepairSession(
        p, questions="clauses"))
    assert "red clause" in space_footer(clause_ws, True)["html"]


def test_a_decision_on_the_answer_is_listed_in_words_not_engine_keywords():
    """After a Yes to a question about the answer, the Decisions list under the Predicted
    Query showed chips "ANSWER COLUMN films.title", "ANSWER COLUMNS 1", "ANSWER SHAPE several
    rows": the engine's feature keywords, which no participant wrote or was asked in."""
    from ui.views import query_data

    ws, variable = _answer_first("both", index=0)
    assert actions.answer_variable(ws, True, no_log)
    decisions = query_data(ws)["html"].split("<b>Decisions</b>", 1)[1]
    assert "ANSWER" not in decisions
    by_key = {f.key: f for f in ws.session.pool.vocabulary}
    words = render_question([by_key[k] for k in ws.session.history[-1].features],
                            names=names_of(ws.session.pool))
    from html import escape

    assert escape(words) in decisions and "Yes to" in decisions
    sql_ws, _ = _answer_first("sql", index=0)
    assert actions.answer_variable(sql_ws, True, no_log)
    assert "ANSWER COLUMN" in query_data(sql_ws)["html"].split("<b>Decisions</b>", 1)[1]


def test_an_example_answer_with_no_rows_is_said_not_drawn_as_an_empty_table():
    """"Should the answer have an empty column?" showed, as its example, an answer with no
    rows: a table of column names over nothing. It now says the answer has no rows and names
    its columns; an example with rows keeps its table."""
    pool = _pool()  # the Pulp Fiction review: one query's answer has no rows
    ws = workspace_state(pool, store={}, factory=lambda p: RepairSession(
        p, questions="outputs", values=True))
    ranked = ws.session.variables()
    empty = [i for i, v in enumerate(ranked) if not pool.results[v.example].rows]
    full = [i for i, v in enumerate(ranked) if pool.results[v.example].rows]
    assert empty and full
    ws.browse = empty[0]
    html = decision_html(ws)
    example = pool.results[ranked[empty[0]].example]
    assert "<table>" not in html and "no rows at all" in html
    assert f"<b>{', '.join(example.columns)}</b>" in html
    ws.browse = full[0]
    html = decision_html(ws)
    assert "<table>" in html and "no rows at all" not in html
