"""Recombination search: nested SELECTs as donors, set operations of two branches, edit priors."""

from __future__ import annotations

import pytest

from core.engine.atoms import _group_keys, nested_parts
from core.engine.guided import (
    EDIT_PENALTY,
    _group_values,
    compound_proposals,
    guided_proposals,
    spread_by_deviation,
)
from core.engine.pool import prepare_pool
from core.engine.recombine import _Recomposer
from core.engine.repair import recompose
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.engine.taskbank import load_tasks
from core.evaluation.evaluate import simulate
from core.evaluation.simulate import gold_target
from tests.conftest_core import VAL_BANK, make_task, run_read_only

# "Films with more than one review, with their count": the grouping is only inside an
# IN-subquery, the count only in a query that groups by title.
GROUPED = [
    ("SELECT title FROM film WHERE id IN "
     "(SELECT film_id FROM review GROUP BY film_id HAVING COUNT(*) > 1)", 2),
    ("SELECT film.title, COUNT(*) FROM film JOIN review ON review.film_id = film.id "
     "GROUP BY film.title", 2),
    ("SELECT title FROM film", 1),
]
GROUPED_GOLD = ("SELECT film.title, COUNT(*) FROM film JOIN review ON review.film_id = film.id "
                "GROUP BY review.film_id HAVING COUNT(*) > 1")

# Crime films or films with a five-star review: the pool unions action films with the latter.
UNIONS = [
    ("SELECT title FROM film WHERE genre = 'action' UNION SELECT film.title FROM film "
     "JOIN review ON review.film_id = film.id WHERE review.stars = 5", 2),
    ("SELECT title FROM film WHERE genre = 'crime'", 2),
    ("SELECT title, year FROM film", 1),
]
UNION_GOLD = ("SELECT title FROM film WHERE genre = 'crime' UNION SELECT film.title FROM film "
              "JOIN review ON review.film_id = film.id WHERE review.stars = 5")


def _setup(sqls, gold):
    task = make_task(sqls, gold=[gold])
    pool = prepare_pool(task)
    assert output_key(pool.gold_results[0]) not in pool.class_keys  # the pool lacks it
    return task, pool


def test_nested_selects_are_decomposed_as_donors():
    _, pool = _setup(GROUPED, GROUPED_GOLD)
    (inner,) = nested_parts(GROUPED[0][0], "sqlite", pool.schema)
    assert inner.source == "review" and inner.group == ("review.film_id",)
    assert inner.having == "COUNT(*) > 1"
    # a scalar subquery in a condition is an expression, not a donor
    assert nested_parts("SELECT title FROM film WHERE year = (SELECT MAX(year) FROM film)",
                        "sqlite", pool.schema) == []


def test_a_nested_grouping_reaches_the_grouped_join_reading():
    task, pool = _setup(GROUPED, GROUPED_GOLD)
    s = RepairSession(pool, database=task.database)
    s.answer_feature("SELECT COUNT(*)", True)
    outcome = recompose(s, rejected_outputs=[s.predicted_output_key()])
    assert output_key(pool.gold_results[0]) in s.pool.class_keys
    assert outcome.new_outputs >= 1


def test_set_operations_pair_branches_from_different_candidates():
    task, pool = _setup(UNIONS, UNION_GOLD)
    s = RepairSession(pool, database=task.database)
    s.answer_feature("WHERE film.genre = 'action'", False)
    rec = _Recomposer(s)
    proposed = compound_proposals(rec, pool.counts, [], s.no_sets())
    assert proposed and all(c.op == "UNION" for c, _ in proposed)
    scores = [score for _, score in proposed]
    assert scores == sorted(scores, reverse=True)
    # a "No" holds for both branches
    assert not any(b.where == ("film.genre = 'action'",) for c, _ in proposed for b in c.branches)
    outcome = recompose(s, rejected_outputs=[s.predicted_output_key()])
    assert output_key(pool.gold_results[0]) in s.pool.class_keys
    run_read_only(task.database, outcome.added)


def test_no_set_operations_without_one_in_the_pool():
    task, pool = _setup(GROUPED, GROUPED_GOLD)
    rec = _Recomposer(RepairSession(pool, database=task.database))
    assert compound_proposals(rec, pool.counts, [], []) == []


@pytest.mark.parametrize(("sqls", "gold"), [(GROUPED, GROUPED_GOLD), (UNIONS, UNION_GOLD)])
def test_proposals_are_deterministic_and_edits_share_the_edit_penalty(sqls, gold):
    task, pool = _setup(sqls, gold)
    runs = []
    for _ in range(2):
        rec = _Recomposer(RepairSession(pool, database=task.database))
        runs.append([(p.sql("sqlite"), score) for p, score in
                     guided_proposals(rec, pool.counts, [], [])])
    assert runs[0] == runs[1] and runs[0]
    # the one-atom edits of the SELECT lists together weigh at most EDIT_PENALTY of the lists
    # they edit: many edits do not crowd out one clause value the pool has
    values = _group_values(rec, pool.counts)["select"]
    lists = {tuple(sorted(p.select)) for p in rec.donors}
    pool_mass = sum(v[0] for k, v in values.items() if k in lists)
    edit_mass = sum(v[0] for k, v in values.items() if k not in lists)
    assert 0 < edit_mass <= EDIT_PENALTY * pool_mass + 1e-12


# "Action films, and crime films from before 1995": the pool reads it as (action OR crime) AND
# year < 1995; the other attachment, action OR (crime AND year < 1995), is in no candidate.
ATTACHED = [
    ("SELECT title FROM film WHERE genre IN ('action', 'crime') AND year < 1995", 3),
    ("SELECT title FROM film WHERE genre = 'action'", 1),
    ("SELECT title, year FROM film", 1),
]
ATTACHED_GOLD = "SELECT title FROM film WHERE genre = 'action' OR (genre = 'crime' AND year < 1995)"


def test_a_choice_splits_into_its_alternatives():
    task, pool = _setup(ATTACHED, ATTACHED_GOLD)
    rec = _Recomposer(RepairSession(pool, database=task.database))
    assert rec.disjuncts("film.genre IN ('action', 'crime')") == [
        "film.genre = 'action'", "film.genre = 'crime'"]
    assert rec.disjuncts("(film.year < 1990 OR film.year > 2000)") == [
        "film.year < 1990", "film.year > 2000"]
    assert rec.disjuncts("film.year < 1995") == []


def test_disjunctions_regroup_an_attachment():
    task, pool = _setup(ATTACHED, ATTACHED_GOLD)
    rec = _Recomposer(RepairSession(pool, database=task.database))
    wheres = {k[2] for k in _group_values(rec, pool.counts)["from"]}
    assert ("((film.genre = 'action') OR (film.genre = 'crime' AND film.year < 1995))",) in wheres
    # an operand restating an alternative of the other is not paired with it
    assert not any("(film.genre = 'action') OR (film.genre IN" in w[0] for w in wheres if w)
    s = RepairSession(pool, database=task.database)
    s.answer_feature("SELECT ONLY film.title", True)
    recompose(s, rejected_outputs=[s.predicted_output_key()])
    assert output_key(pool.gold_results[0]) in s.pool.class_keys


def test_spread_takes_turns_over_the_clause_groups_that_differ():
    task, pool = _setup(GROUPED, GROUPED_GOLD)
    rec = _Recomposer(RepairSession(pool, database=task.database))
    reference = rec.parts[1]
    proposals = guided_proposals(rec, pool.counts, [], [])
    spread = spread_by_deviation(proposals, reference)
    assert sorted(spread, key=str) == sorted(proposals, key=str)  # a reordering only

    def deviation(p):
        return tuple(g for g in ("select", "from", "group", "order")
                     if _group_keys(p)[g] != _group_keys(reference)[g]) + (
            ("distinct",) if p.distinct != reference.distinct else ())

    kinds = [deviation(p) for p, _ in spread]
    first = list(dict.fromkeys(kinds))
    assert kinds[:len(first)] == first  # each kind of change once before any twice
    for kind in first:  # within a kind the prior order stays
        mine = [sc for (p, sc) in spread if deviation(p) == kind]
        assert mine == sorted(mine, reverse=True)


# "Films with their id": the pool selects title with year and genre; the person says No to
# genre and year, so the reading is title with a column no candidate selects.
PROJECTED = [("SELECT title, year, genre FROM film", 3),
             ("SELECT title, genre FROM film WHERE year > 2000", 1)]
PROJECTED_GOLD = "SELECT id, title FROM film"


def test_answered_columns_compose_the_select_list_in_one_round():
    """A No to two columns of the likeliest SELECT list drops both at once (one composed
    value, not two rounds of one-column edits), and the table's key is offered on top: the
    gold's output is among the first proposals of one repair round, as SQLite returns it."""
    task, pool = _setup(PROJECTED, PROJECTED_GOLD)
    rec = _Recomposer(RepairSession(pool, strategy="expected-depth", database=task.database))
    no = [("SELECT film.genre",), ("SELECT film.year",)]
    assert rec.answered_columns([], no) == ([], {"film.genre", "film.year"})
    assert rec.answered_columns([("SELECT film.title", "ANSWER COLUMN film.id")], []) == (
        ["film.title", "film.id"], set())
    assert rec.composed_select(("film.title", "film.year", "film.genre"), ["film.id"],
                               {"film.genre", "film.year"}) == ("film.title", "film.id")
    proposals = [p.sql("sqlite") for p, _ in guided_proposals(rec, pool.counts, [], no)]
    assert proposals[0] == "SELECT film.title FROM film"  # the composed list itself
    heads = [sql.split(" FROM ")[0] for sql in proposals]
    assert all("film.genre" not in h and "film.year" not in h for h in heads)
    outputs = [output_key(r) for r in run_read_only(task.database, proposals[:24])]
    assert output_key(pool.gold_results[0]) in outputs


def test_a_star_is_expanded_before_columns_are_ruled_out():
    """``SELECT *`` with a No to one column composes every other column of the table."""
    task, pool = _setup([("SELECT * FROM film", 2), ("SELECT title FROM film", 1)],
                        "SELECT id, title, genre FROM film")
    rec = _Recomposer(RepairSession(pool, database=task.database))
    assert rec.composed_select(("*",), [], {"film.year"}) == ("film.id", "film.title",
                                                             "film.genre")


def test_a_flipped_order_is_one_order_value():
    """An ORDER BY the pool only has the other way round is offered at an edit's prior."""
    task, pool = _setup([("SELECT title FROM film ORDER BY year DESC LIMIT 1", 2),
                         ("SELECT title, year FROM film", 1)],
                        "SELECT title FROM film ORDER BY year LIMIT 1")
    rec = _Recomposer(RepairSession(pool, database=task.database))
    orders = _group_values(rec, pool.counts)["order"]
    assert orders[(("film.year DESC",), "1")][0] == pytest.approx(
        orders[(("film.year",), "1")][0] / EDIT_PENALTY)


@pytest.mark.parametrize(("task_id", "gold"), [("ambrosia-val-vague-95aed9ae", 1),
                                               ("ambrosia-val-vague-4533e5c6", 1)])
def test_honest_user_reaches_a_projection_gold_no_candidate_selects(task_id, gold):
    """Real AMBROSIA val tasks whose golds select a column set no candidate selects (every
    column of the table; one column the candidates compute with): the gold-features user,
    who knows only the gold's own features and output, reaches it through repair within the
    budget, the output judged by SQLite's rows."""
    task = next(t for t in load_tasks(VAL_BANK) if t.id == task_id)
    pool = prepare_pool(task, layout=False)
    assert output_key(pool.gold_results[gold]) not in pool.class_keys  # needs repair
    run = simulate(pool, gold_target(pool, gold), "expected-depth", user="gold-features",
                   repair="recompose", database=task.database)
    assert run.success and run.repair_rounds >= 1, (run.end, run.cause, run.questions)
    assert run.turns <= 15


# Titles of five-star reviewed films: no candidate joins ``film`` (reviews reference it).
UNJOINED = [("SELECT stars FROM review WHERE stars = 5", 2),
            ("SELECT id, film_id FROM review WHERE stars = 5", 1)]
UNJOINED_GOLD = ("SELECT film.title FROM review JOIN film ON review.film_id = film.id "
                 "WHERE review.stars = 5")


def test_a_foreign_key_neighbour_is_joined_and_its_columns_offered():
    """A table only the DDL's foreign key connects to the pool's tables becomes a neighbour:
    its columns are SELECT values (below the pool's own), a query using one is joined along
    the key, and the proposal passes the allow-list and returns the gold's rows in SQLite."""
    task, pool = _setup(UNJOINED, UNJOINED_GOLD)
    rec = _Recomposer(RepairSession(pool, database=task.database))
    assert rec.neighbours() == ["film"]
    assert ("review", "review.film_id = film.id") in rec.schema_edges()["film"]
    assert "film" not in rec.edges()  # the pool's own join graph is unchanged
    selects = _group_values(rec, pool.counts)["select"]
    neighbour = selects[("film.title",)][0]
    assert 0 < neighbour < min(v[0] for k, v in selects.items() if k in (
        ("review.stars",), ("review.film_id", "review.id")))
    # the user has rejected the pool's outputs: the neighbour's title is proposed, joined
    no = [("SELECT ONLY review.stars",), ("SELECT ONLY review.film_id, review.id",)]
    props = [p for p, _ in guided_proposals(rec, pool.counts, [], no)]
    joined = [p for p in props if "film" in p.tables and p.select == ("film.title",)]
    assert joined, [p.sql("sqlite") for p in props[:10]]
    got = run_read_only(task.database, [joined[0].sql("sqlite"), UNJOINED_GOLD])
    assert output_key(got[0]) == output_key(got[1])


def test_honest_user_reaches_a_gold_once_repair_joins_along_foreign_keys():
    """A real AMBROSIA val task ("list all the chefs in alphabetical order") whose candidates
    join no tables at all: combinations mixing the sous chef's frame with the executive chef's
    clauses can only be joined through ``restaurant``, along the DDL's foreign keys (on main
    830c8fc the round added nothing and the session failed). The gold-features user reaches
    gold 1 (sous chefs by name) through repair, the output judged by SQLite's rows."""
    task = next(t for t in load_tasks(VAL_BANK) if t.id == "ambrosia-val-vague-416f088c")
    pool = prepare_pool(task, layout=False)
    assert output_key(pool.gold_results[1]) not in pool.class_keys  # needs repair
    rec = _Recomposer(RepairSession(pool, database=task.database))
    assert rec.schema_edges() != rec.edges()  # the DDL declares joins the pool lacks
    run = simulate(pool, gold_target(pool, 1), "expected-depth", user="gold-features",
                   repair="recompose", database=task.database)
    assert run.success and run.repair_rounds >= 1, (run.end, run.cause, run.questions)
    assert run.turns <= 15
