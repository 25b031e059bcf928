"""Questions about the answer (core.engine.answers): mined per output, never splitting a
functional class, answered by the honest user from the target's output alone; the evaluation's
``--questions``, ``--values`` and ``--causes``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.answers import (
    SPELLING_PENALTY,
    VALUE_PENALTY,
    answer_features,
    answer_keys,
    askable,
    column_type,
    is_answer,
    is_value,
    profile_of,
    question_penalties,
    with_answers,
)
from core.engine.execute import ExecutionResult
from core.engine.features import Feature
from core.engine.session import RepairSession
from core.evaluation import evaluate
from core.evaluation.causes import missing_pieces
from core.evaluation.simulate import GoldFeatureUser, gold_target, target_keys
from tests.conftest_core import FILM_BANK, FILM_DUMP, film_pools, make_pool, write_bank

CELLS = st.one_of(st.integers(-5, 30), st.sampled_from(["Heat", "Titanic", "x", "Pulp Fiction"]),
                  st.none(), st.sampled_from([1.5, 2.0, 0.25]))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.lists(st.lists(CELLS, min_size=k, max_size=k),
                                                    max_size=6)),
       st.randoms(use_true_random=False))
def test_answer_features_are_a_function_of_the_output_class(rows, rnd):
    """Row order, column order and column names never change what the answer questions say."""
    ncols = len(rows[0]) if rows else 1
    a = ExecutionResult([f"c{j}" for j in range(ncols)], [tuple(r) for r in rows])
    perm = list(range(ncols))
    rnd.shuffle(perm)
    shuffled = [tuple(r[j] for j in perm) for r in rows]
    rnd.shuffle(shuffled)
    b = ExecutionResult([f"alias_{j}" for j in range(ncols)], shuffled)
    profile = profile_of(make_pool(["SELECT title FROM film"]).database)
    assert answer_features(a, profile) == answer_features(b, profile)


def test_mined_answer_questions_never_split_a_functional_class():
    for pool in film_pools():
        for values in (False, True):
            aug = with_answers(pool, values=values)
            cols = np.array([is_answer(f) for f in aug.vocabulary])
            assert cols.any()
            xa = aug.x[:, cols]
            for c in np.unique(aug.class_index):
                members = xa[aug.class_index == c]
                assert (members == members[0]).all(), (pool.task_id, c)
            assert values or not any(is_value(f) for f in aug.vocabulary)
            # the prepared pool is never changed; the clause part is the same matrix
            assert not any(is_answer(f) for f in pool.vocabulary)
            assert (aug.x[:, ~cols] == pool.x).all()


def test_study_conditions_name_the_same_vocabularies():
    from core.engine.answers import QUESTIONS
    from study.conditions import QUESTION_VOCABULARIES

    assert QUESTION_VOCABULARIES == QUESTIONS


def test_column_types_come_from_the_database_values():
    pool = make_pool(["SELECT title FROM film"])
    profile = profile_of(pool.database)
    assert column_type(["Heat", "Titanic"], profile) == "film.title"
    assert column_type(["crime"], profile) == "film.genre"
    assert column_type([1994, 1997, 2010], profile) == "film.year"
    assert column_type([2], profile) == "whole numbers"  # too few numbers to name a column
    assert column_type([2.5], profile) == "decimal numbers"
    assert column_type(["nowhere"], profile) == "text"
    assert column_type([None], profile) == "empty"


def test_outputs_vocabulary_asks_only_about_the_answer_and_replays():
    pool = film_pools()[1]
    for questions, check in (("outputs", is_answer), ("clauses", lambda f: not is_answer(f))):
        session = RepairSession(pool, strategy="expected-depth", questions=questions)
        ranked = session.variables()
        assert ranked and all(check(f) for v in ranked for f in v.features)
        assert all(not is_answer(b.feature) for b in session.predicted_query())
    session = RepairSession(pool, strategy="planned", questions="mixed", values=True)
    session.answer(session.next_variable().keys, True)
    again = RepairSession.from_dict(session.to_dict(), pool)
    assert again.history == session.history and (again.alive == session.alive).all()
    assert askable(session.pool.vocabulary, "mixed").all()


def test_honest_user_answers_from_the_gold_output_never_from_the_pool():
    pool = film_pools()[1]
    target = gold_target(pool, 0)
    gold = pool.gold_results[0]
    assert answer_keys(gold, profile_of(pool.database)) <= target.own_keys
    assert f"ANSWER COLUMNS {len(gold.columns)}" in target.own_keys
    # another pool of the same task (other candidates) gives the same knowledge
    other = make_pool(["SELECT 1"], dump=FILM_DUMP)
    other.gold_sqls, other.gold_results = pool.gold_sqls, pool.gold_results
    other.schema, other.not_null, other.unique = pool.schema, pool.not_null, pool.unique
    other.database, other.dialect = pool.database, pool.dialect
    assert target_keys(pool.gold_sqls[0], gold, other, None) == target.own_keys
    # and its answers need no session at all: a realised gold is never answered away
    session = RepairSession(pool, strategy="expected-depth", questions="outputs", values=True)
    user = GoldFeatureUser(session, target)
    while (v := session.next_variable()) is not None and session.n_classes > 1:
        yes = user.answer(v)
        user.session = None  # the answer above did not read the session
        user.session = session
        session.answer(v.keys, yes)
        assert user.realisers[session.survivors].any()


def _bank(tmp_path):
    dump = FILM_DUMP
    spelled = {"id": "spelled", "question": "Films after 1995?", "ambiguity": "vague",
               "database": {"dump": dump},
               "gold": ["SELECT title FROM film WHERE year > 1995"],
               "candidates": [{"sql": "SELECT DISTINCT title FROM film WHERE year > 1995",
                               "count": 3},
                              {"sql": "SELECT title FROM film WHERE year < 1995", "count": 2}]}
    missing = {"id": "missing", "question": "The best review?", "ambiguity": "vague",
               "database": {"dump": dump}, "gold": ["SELECT MAX(stars) FROM review"],
               "candidates": [{"sql": "SELECT COUNT(*) FROM film", "count": 3},
                              {"sql": "SELECT COUNT(*) FROM film WHERE year > 1995",
                               "count": 2}]}
    return write_bank(tmp_path / "bank.jsonl", [spelled, missing])


def test_causes_name_why_each_pair_failed(tmp_path, capsys):
    bank = _bank(tmp_path)
    assert evaluate.main([str(bank), "--strategies", "expected-depth", "--repair", "none",
                          "--questions", "clauses", "outputs", "--causes"]) == 0
    out = capsys.readouterr().out
    block = out.split("why failed pairs failed")[1]
    rows = {line.split()[1]: line.split() for line in block.splitlines()
            if line.startswith("expected-depth ")}
    # clauses: the spelled-differently gold is answered away by DISTINCT, the other needs a table
    assert rows["clauses"][2:4] == ["2", "2"]
    assert rows["outputs"][2:4] == ["2", "1"]
    assert "spelled" in block and "removed by: DISTINCT" in block
    assert "needs-clause" in block and "missing: FROM review" in block
    table = out.split("why failed")[0]
    assert "expected-depth clauses" in table and "expected-depth outputs" in table


def test_missing_pieces_are_the_pieces_repair_combines():
    """A column list or a conjunction whose pieces some candidates have is not missing (repair
    composes both); a conjunct or a column no candidate has is, named on its own."""
    pool = make_pool(["SELECT title FROM film WHERE year > 1995",
                      "SELECT year FROM film WHERE genre = 'action'"])
    have = {f.key for f in pool.vocabulary}

    def keys(sql):
        return {f.key for f in pool.features_of(sql)}

    both = keys("SELECT title, year FROM film WHERE year > 1995 AND genre = 'action'")
    # the features alone would call this gold's list and WHERE missing
    assert {"SELECT ONLY film.title, film.year",
            "WHERE film.genre = 'action' AND film.year > 1995"} <= both - have
    assert missing_pieces(both, have, pool.dialect) == []
    between = keys("SELECT title, year FROM film WHERE year > 1995 AND year < 2005")
    assert missing_pieces(between, have, pool.dialect) == ["WHERE film.year < 2005"]
    genre = keys("SELECT genre FROM film WHERE genre = 'action'")
    assert missing_pieces(genre, have, pool.dialect) == ["SELECT film.genre"]
    # answers about the output are never pieces of a query
    assert missing_pieces({"ANSWER COLUMNS 2"}, have, pool.dialect) == []


def test_a_gold_whose_every_piece_exists_is_never_produced_not_needs_clause(tmp_path, capsys):
    composed = {"id": "composed", "question": "Recent action films?", "ambiguity": "vague",
                "database": {"dump": FILM_DUMP},
                "gold": ["SELECT title, year FROM film WHERE year > 1995 AND genre = 'action'"],
                "candidates": [{"sql": "SELECT title FROM film WHERE year > 1995", "count": 3},
                               {"sql": "SELECT year FROM film WHERE genre = 'action'",
                                "count": 2}]}
    bank = write_bank(tmp_path / "bank.jsonl", [composed])
    assert evaluate.main([str(bank), "--strategies", "expected-depth", "--repair", "none",
                          "--causes"]) == 0
    block = capsys.readouterr().out.split("why failed pairs failed")[1]
    assert "composed" in block and "never-produced" in block
    assert "needs-clause  " not in block.split("failed pairs,")[1]


def test_cli_flags_label_every_vocabulary_and_keep_both_users(capsys):
    assert evaluate.main([str(FILM_BANK), "--limit", "1", "--strategies", "expected-depth",
                          "--questions", "outputs", "mixed", "--values", "off", "on",
                          "--repair", "none"]) == 0
    out = capsys.readouterr().out
    for label in ("outputs ", "outputs+values", "mixed ", "mixed+values"):
        assert f"expected-depth {label}" in out
    assert "HONEST" in out and "OPTIMISTIC" in out
    with pytest.raises(SystemExit):
        evaluate.main([str(FILM_BANK), "--questions", "answers"])


def test_value_and_spelling_questions_pay_a_penalty_only_outside_clauses():
    f_val, f_col, f_cl = (Feature("ANSWER HAS", "Heat"), Feature("ANSWER COLUMNS", "1"),
                          Feature("DISTINCT"))
    qs = [(f_val,), (f_col,), (f_cl,)]
    classes = np.array([0, 0, 1])
    masks = np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=bool)  # DISTINCT splits output 0
    assert question_penalties(qs, masks, classes, "clauses").tolist() == [0, 0, 0]
    assert question_penalties(qs, masks, classes, "outputs").tolist() == [VALUE_PENALTY, 0, 0]
    assert question_penalties(qs, masks, classes, "mixed").tolist() == [
        VALUE_PENALTY, 0, SPELLING_PENALTY]


def test_the_resampling_prompt_states_answer_decisions_in_words():
    from core.engine.repair import decisions_text

    session = RepairSession(film_pools()[1], strategy="expected-depth", questions="outputs")
    first = session.next_variable()
    session.answer(first.keys, True)
    text = decisions_text(session)
    assert "The answer must have" in text and "ANSWER" not in text


def test_hybrid_asks_about_the_answer_where_its_clause_pick_is_about_spelling(monkeypatch):
    """Before a rejection ``hybrid`` asks a clause question, unless the one it would ask splits
    a surviving output (HYBRID_SPELLING): then a question about the answer; replayed alike."""
    from core.engine import answers as answers_module

    monkeypatch.setattr(answers_module, "HYBRID_SPELLING", "outputs")
    monkeypatch.setattr(answers_module, "HYBRID_SAME_SPLIT", None)  # this rule alone
    fired = 0
    for pool in film_pools():
        session = RepairSession(pool, strategy="expected-depth", questions="hybrid")
        for _ in range(6):
            top = session.next_variable()
            if top is None:
                break
            spelling = session._only_spelling()
            assert session.asking == ("outputs" if spelling else "clauses")
            assert all(is_answer(f) == spelling for f in top.features)
            fired += spelling
            again = RepairSession.from_dict(session.to_dict(), pool)
            assert again.next_variable() == top
            session.answer(top.keys, True)
        monkeypatch.setattr(answers_module, "HYBRID_SPELLING", None)
        plain = RepairSession(pool, strategy="expected-depth", questions="hybrid")
        assert plain.asking == "clauses"
        monkeypatch.setattr(answers_module, "HYBRID_SPELLING", "outputs")
    assert fired  # the rule acts on the film pools
