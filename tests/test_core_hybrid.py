"""The ``hybrid`` question vocabulary: clause questions until an output is rejected (repair
builds from clause answers), then questions about the answer (``outputs``), which never
split one output's spellings, so they cannot answer a repaired gold away by its spelling."""

from __future__ import annotations

import pytest

from core.engine.answers import HYBRID_AFTER, asked_vocabulary, is_answer
from core.engine.session import RepairSession
from core.evaluation.evaluate import simulate
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
