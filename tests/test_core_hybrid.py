"""The ``hybrid`` question vocabulary: clause questions until an output is rejected (repair
builds from clause answers), then questions about the answer (``outputs``), which never
split one output's spellings, so they cannot answer a repaired gold away by its spelling."""

from __future__ import annotations

import numpy as np
import pytest

from core.engine import session_views
from core.engine.answers import (
    HYBRID_AFTER,
    HYBRID_FALLBACK,
    HYBRID_GUESS,
    asked_vocabulary,
    is_answer,
)
from core.engine.session import RepairSession
from core.evaluation.evaluate import simulate
from core.evaluation.simulate import gold_target, make_user
from tests.conftest_core import dev_pool, dev_tasks, film_pools


def _ranked(session: RepairSession) -> list[tuple[str, ...]]:
    return [v.keys for v in session.variables()]


def test_hybrid_names_clauses_before_a_rejection_and_outputs_after():
    assert HYBRID_AFTER == "outputs"
    assert asked_vocabulary("hybrid", False) == "clauses"
    assert asked_vocabulary("hybrid", True) == "outputs"
    for q in ("clauses", "outputs", "mixed"):
        assert asked_vocabulary(q, False) == asked_vocabulary(q, True) == q


@pytest.mark.parametrize("which", ["film0", "film1", "dev4", "dev13"])
def test_hybrid_asks_as_clauses_then_as_outputs_and_back_returns_to_clauses(which):
    """Before a rejection a hybrid session ranks exactly as a clause session; after one, as an
    outputs session with the same decisions; Back over the rejection asks clauses again, and a
    reload replays to the same questions."""
    pool = film_pools()[int(which[-1])] if which.startswith("film") else dev_pool(int(which[3:]))
    hybrid = RepairSession(pool, strategy="expected-depth", questions="hybrid")
    clauses = RepairSession(pool, strategy="expected-depth", questions="clauses")
    after_one = RepairSession(pool, strategy="expected-depth", questions=HYBRID_AFTER)
    first = _ranked(hybrid)
    assert first == _ranked(clauses)
    assert not any(is_answer(k) for keys in first for k in keys)
    shown = hybrid.predicted_output_key()
    assert shown is not None
    for s in (hybrid, after_one):
        s.reject_output(shown)
    assert hybrid.asking == HYBRID_AFTER
    after = _ranked(hybrid)
    assert after == _ranked(after_one)
    again = RepairSession.from_dict(hybrid.to_dict(), pool)
    assert again.questions == "hybrid" and _ranked(again) == after
    hybrid.undo()
    assert hybrid.asking == "clauses" and _ranked(hybrid) == first


def test_hybrid_keeps_a_repaired_gold_that_clause_questions_answer_away():
    """"Horror films and thriller films with a budget of 20 million" (dev attachment task):
    with clause questions throughout, the honest user answers both golds away by spelling
    after repair (``GROUP BY films.title``, the budget written another way); asking about the
    answer after the first rejection reaches both within the 15 turns."""
    task = dev_tasks()[5]
    pool = dev_pool(5)
    for gold in range(len(pool.gold_sqls)):
        runs = {q: simulate(pool, gold, "expected-depth", user="gold-features",
                            repair="recompose", database=task.database, questions=q)
                for q in ("clauses", "hybrid")}
        assert not runs["clauses"].success, gold
        assert runs["clauses"].cause in ("answered-away", "added-then-answered-away")
        assert runs["hybrid"].success, gold
        assert runs["hybrid"].rejections >= 1
        assert runs["hybrid"].turns <= 15



def _after_two_answers(pool) -> RepairSession:
    """A hybrid session that rejected its first output, then said Yes to two questions about
    the answer (each of them one)."""
    session = RepairSession(pool, strategy="expected-depth", questions="hybrid")
    session.reject_output(session.predicted_output_key())
    for _ in range(2):
        assert session.asking == HYBRID_AFTER
        variable = session.next_variable()
        assert variable is not None and all(is_answer(k) for k in variable.keys)
        session.answer(variable.keys, True)
    return session


def _output_masses(session: RepairSession) -> list[float]:
    pool = session.pool
    valid = session.survivors[pool.valid[session.survivors]]
    masses = np.bincount(pool.class_index[valid], weights=pool.counts[valid])
    return sorted(masses[masses > 0].tolist())


def _outputs_only(session: RepairSession) -> RepairSession:
    """The same decisions in a session asking only about the answer."""
    twin = RepairSession.from_dict(session.to_dict(), session.base_pool)
    twin.questions = HYBRID_AFTER
    return twin


def test_hybrid_asks_a_clause_where_no_answer_question_splits_unlikely_outputs(monkeypatch):
    """After a rejection, three outputs that every question about the answer describes alike
    (a scope task's readings): with none holding HYBRID_GUESS of their weight (the share set
    just above the heaviest's, 0.4), showing the heaviest would likely cost a rejection and a
    repair round, so hybrid asks a clause question that splits them; Back over the answer
    asks about the answer again."""
    session = _after_two_answers(dev_pool(19))
    masses = _output_masses(session)
    assert len(masses) == 3
    assert session.asking == HYBRID_AFTER  # 0.4 >= the shipped share: the heaviest is shown
    monkeypatch.setattr(session_views, "HYBRID_GUESS", masses[-1] / sum(masses) + 0.01)
    session = _after_two_answers(dev_pool(19))
    assert _outputs_only(session).next_variable() is None  # nothing about the answer splits
    assert session.asking == HYBRID_FALLBACK == "mixed"
    variable = session.next_variable()
    assert variable is not None and not all(is_answer(k) for k in variable.keys)
    assert variable.yes_count > 0 and variable.no_count > 0
    session.undo()
    assert session.asking == HYBRID_AFTER


def test_hybrid_shows_an_output_that_holds_half_the_weight():
    """Two outputs no answer question splits, the heavier holding half their weight or more:
    shown, it is accepted at least as often as not, so hybrid asks nothing more (as before)."""
    session = _after_two_answers(dev_pool(7))
    masses = _output_masses(session)
    assert len(masses) == 2 and masses[-1] >= HYBRID_GUESS * sum(masses)
    assert session.asking == HYBRID_AFTER
    assert session.next_variable() is None


def _dev_index(task_id: str) -> int:
    return next(i for i, t in enumerate(dev_tasks()) if t.id == task_id)


def test_hybrid_asks_about_the_answer_where_a_table_question_splits_outputs_alike(monkeypatch):
    """Before a rejection, a clause question naming only a table that splits the outputs
    exactly as a question about the answer does is asked about the answer (HYBRID_SAME_SPLIT):
    a gold reading the table elsewhere is not answered away. On this dev scope pair the table
    question removed the gold's only realiser (a rejection and a repair); with the rule the
    gold is reached without either."""
    from core.engine import answers as answers_module

    pool = dev_pool(_dev_index("ambrosia-dev-scope-d07f421b"))
    assert answers_module.HYBRID_SAME_SPLIT == "outputs"
    with_rule = simulate(pool, 0, "expected-depth", questions="hybrid")
    assert with_rule.success and with_rule.rejections == 0
    session = RepairSession(pool, strategy="expected-depth", questions="hybrid")
    user = make_user("gold-features", session, gold_target(pool, 0))
    fired = 0
    for _ in range(with_rule.turns):
        top = session.next_variable()
        assert top is not None
        same = session._same_split()
        if same and not session._only_spelling():
            fired += 1
            assert session.asking == "outputs" and all(is_answer(f) for f in top.features)
            session._asking_override = "clauses"
            try:
                clause = session.next_variable()
            finally:
                session._asking_override = None
            assert clause is not None
            assert all(answers_module.same_split_clause(f) for f in clause.features)
        session.answer(top.keys, user.answer(top))
    assert fired
    monkeypatch.setattr(answers_module, "HYBRID_SAME_SPLIT", None)
    without = simulate(pool, 0, "expected-depth", questions="hybrid")
    assert not without.success  # no repair here: the realiser answered away is lost
    assert without.lost_by.startswith("FROM")


def test_same_split_modes_widen_from_tables_and_never_reach_the_select_list():
    """HYBRID_SAME_SPLIT_CLAUSES: tables in every mode ("tables" only them); "clauses" (the
    default) adds GROUP BY, HAVING, ORDER BY, LIMIT, DISTINCT and ON; "spelling" adds
    conditions holding a disjunction or an IN list; "all" every condition; the SELECT list
    never (repair builds unrealised golds from its answers)."""
    from core.engine import answers as answers_module
    from core.engine.features import Feature

    assert answers_module.HYBRID_SAME_SPLIT_CLAUSES == "clauses"
    cases = [  # feature, tables, clauses, spelling, all
        (Feature("FROM", "t"), True, True, True, True),
        (Feature("JOIN", "u"), True, True, True, True),
        (Feature("GROUP BY", "t.id"), False, True, True, True),
        (Feature("LIMIT", "1"), False, True, True, True),
        (Feature("DISTINCT", ""), False, True, True, True),
        (Feature("WHERE", "t.a IN ('x', 'y')"), False, False, True, True),
        (Feature("WHERE", "(t.a = 1 OR t.b = 2)"), False, False, True, True),
        (Feature("WHERE", "t.a = 'Inner'"), False, False, False, True),  # "in" inside a word
        (Feature("WHERE", "t.origin = 'Order'"), False, False, False, True),
        (Feature("SELECT", "t.id"), False, False, False, False),
        (Feature("SELECT ONLY", "t.a, t.b"), False, False, False, False),
    ]
    for feature, *expected in cases:
        got = [answers_module.same_split_clause(feature, mode)
               for mode in answers_module.SAME_SPLIT_MODES]
        assert got == expected, feature
    with pytest.raises(ValueError, match="same-split mode"):
        answers_module.same_split_clause(Feature("FROM", "t"), "every")


def test_hybrid_asks_about_the_answer_where_a_condition_with_in_splits_outputs_alike(
        monkeypatch):
    """On this dev attachment task the first clause question is a condition holding an IN
    list, and a question about the answer splits the outputs exactly as it does: "spelling"
    asks that one instead (measured on turns7 and not the default: it loses a val attachment
    pair), the default "clauses" asks the clause."""
    from core.engine import answers as answers_module

    pool = dev_pool(_dev_index("ambrosia-dev-attachment-f1395928"))
    tables = RepairSession(pool, strategy="expected-depth", questions="hybrid")
    clause = tables.next_variable()
    assert tables.asking == "clauses" and not tables._same_split()
    assert clause is not None and [f.keyword for f in clause.features] == ["WHERE"]
    assert " IN (" in clause.features[0].value
    monkeypatch.setattr(answers_module, "HYBRID_SAME_SPLIT_CLAUSES", "spelling")
    session = RepairSession(pool, strategy="expected-depth", questions="hybrid")
    assert session._same_split() and session.asking == "outputs"
    top = session.next_variable()
    assert top is not None and all(is_answer(f) for f in top.features)
    seen = session.pool  # the pool with its questions about the answer
    idx = session.survivors[seen.valid[session.survivors]]
    where = {f: j for j, f in enumerate(seen.vocabulary)}

    def split(variable) -> set[tuple[int, bool]]:
        cols = [where[f] for f in variable.features]
        has = np.asarray(seen.x[np.ix_(idx, cols)], dtype=bool).all(axis=1)
        return {(int(c), bool(h)) for c, h in zip(seen.class_index[idx], has, strict=True)}

    a, b = split(clause), split(top)
    assert a == b or a == {(c, not h) for c, h in b}  # the same partition of the outputs


def test_hybrid_asks_about_the_answer_where_a_group_by_question_splits_outputs_alike(
        monkeypatch):
    """By default the rule also acts on a GROUP BY question (a gold may group by another key
    with the same output): on this dev scope pair it fires on one, the gold is reached in the
    same turns with no rejection, and under "tables" the GROUP BY question is asked."""
    from core.engine import answers as answers_module

    pool = dev_pool(_dev_index("ambrosia-dev-scope-b267e220"))
    run = simulate(pool, 1, "expected-depth", questions="hybrid")
    assert run.success and run.rejections == 0
    session = RepairSession(pool, strategy="expected-depth", questions="hybrid")
    user = make_user("gold-features", session, gold_target(pool, 1))
    fired = []
    for _ in range(run.turns):
        top = session.next_variable()
        assert top is not None
        if session._same_split() and not session._only_spelling():
            session._asking_override = "clauses"
            try:
                clause = session.next_variable()
            finally:
                session._asking_override = None
            assert clause is not None and all(is_answer(f) for f in top.features)
            fired.extend(f.keyword for f in clause.features)
        session.answer(top.keys, user.answer(top))
    assert "GROUP BY" in fired
    monkeypatch.setattr(answers_module, "HYBRID_SAME_SPLIT_CLAUSES", "tables")
    tables = simulate(pool, 1, "expected-depth", questions="hybrid")
    assert tables.success and tables.turns == run.turns
    assert any(q.startswith("GROUP BY") for q in tables.questions)
    assert not any(q.startswith("GROUP BY") for q in run.questions)
