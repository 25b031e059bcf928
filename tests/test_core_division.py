"""Scope repair through a link table: relational division and its distributive reading."""

from __future__ import annotations

import pytest

from core.engine import guided
from core.engine.division import division_proposals, link_edges
from core.engine.pool import prepare_pool
from core.engine.recombine import _Recomposer
from core.engine.repair import recompose
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.evaluation.evaluate import simulate
from tests.conftest_core import dev_tasks, make_task, run_read_only

# Students, courses and a many-to-many enrolment table; reviews are one-to-many (no link).
SCHOOL = """
CREATE TABLE students(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE courses(course_id INTEGER PRIMARY KEY, title TEXT, credits INT);
CREATE TABLE enrolments(student_id INT REFERENCES students(id),
                        course_id INT REFERENCES courses(course_id));
CREATE TABLE reviews(id INTEGER PRIMARY KEY, course_id INT REFERENCES courses(course_id),
                     stars INT);
INSERT INTO students VALUES (1, 'Ada'), (2, 'Ben'), (3, 'Cy');
INSERT INTO courses VALUES (10, 'Logic', 5), (11, 'Poetry', 3), (12, 'Chess', 2), (13, 'Art', 1);
INSERT INTO enrolments VALUES (1, 10), (2, 10), (3, 10), (1, 11), (2, 11), (1, 12), (2, 12),
                              (3, 12), (3, 12), (1, 13), (2, 99);
INSERT INTO reviews VALUES (1, 10, 5), (2, 11, 4);
"""
ENROLMENTS = [(1, 10), (2, 10), (3, 10), (1, 11), (2, 11), (1, 12), (2, 12), (3, 12), (3, 12),
              (1, 13), (2, 99)]
STUDENTS = {1: "Ada", 2: "Ben", 3: "Cy"}
COURSES = {10: "Logic", 11: "Poetry", 12: "Chess", 13: "Art"}

# "Which courses does every student take?": the pool holds only each student's courses
DISTRIBUTIVE = [
    ("SELECT s.name, c.title FROM students s JOIN enrolments e ON s.id = e.student_id "
     "JOIN courses c ON e.course_id = c.course_id", 3),
    ("SELECT courses.title FROM enrolments JOIN courses "
     "ON enrolments.course_id = courses.course_id", 1),
]
# the collective reading, spelled another way than repair builds it (operands swapped)
COLLECTIVE_GOLD = ("SELECT c.title FROM enrolments e JOIN courses c ON e.course_id = c.course_id "
                   "JOIN students s ON e.student_id = s.id GROUP BY e.course_id "
                   "HAVING (SELECT COUNT(*) FROM students) = COUNT(DISTINCT e.student_id)")


def _rec(sqls, gold=None):
    task = make_task(sqls, gold=gold, dump=SCHOOL)
    pool = prepare_pool(task, layout=False)
    return task, pool, _Recomposer(RepairSession(pool, database=task.database))


def _rows(task, sql):
    (result,) = run_read_only(task.database, [sql])
    return sorted(tuple(r) for r in result.rows)


def test_link_tables_come_from_the_pool_joins_and_the_keys():
    _, _, rec = _rec([*DISTRIBUTIVE, ("SELECT courses.title, reviews.stars FROM reviews "
                                      "JOIN courses ON reviews.course_id = courses.course_id", 1)])
    links = link_edges(rec)
    # enrolments joins two unique keys on columns of its own: a link; reviews joins one only
    assert set(links) == {"enrolments"}
    assert {(e.column, e.table, e.key) for e in links["enrolments"]} == {
        ("student_id", "students", "id"), ("course_id", "courses", "course_id")}


def test_a_distributive_pool_gets_its_division_in_both_directions():
    task, pool, rec = _rec(DISTRIBUTIVE, [COLLECTIVE_GOLD])
    proposals = division_proposals(rec, pool.counts)
    assert proposals and [s for _, s in proposals] == sorted((s for _, s in proposals),
                                                             reverse=True)
    sqls = [p.sql(pool.dialect) for p, _ in proposals]
    # every proposal passes the read-only allow-list and runs
    run_read_only(task.database, sqls)
    every_student = {COURSES[c] for c in COURSES
                     if {s for s, k in ENROLMENTS if k == c} == set(STUDENTS)}
    every_course = {STUDENTS[s] for s in STUDENTS
                    if {k for t, k in ENROLMENTS if t == s and k in COURSES} >= set(COURSES)}
    assert every_student == {"Chess", "Logic"} and every_course == {"Ada"}
    outputs = {tuple(r[0] for r in _rows(task, sql)) for sql in sqls}
    assert ("Chess", "Logic") in outputs and ("Ada",) in outputs
    # the gold's features (spelled otherwise) are exactly one proposal's: its HAVING is the
    # canonical feature, its GROUP BY the link's column, its frame the candidate's
    gold_keys = {f.key for f in pool.features_of(COLLECTIVE_GOLD)}
    assert any(set(rec.approx_features(p)) == gold_keys for p, _ in proposals)
    assert output_key(pool.gold_results[0]) not in pool.class_keys  # the pool lacks it
    # the other direction (students taking every course) is proposed too
    assert any(p.group == ("enrolments.student_id",) and "FROM courses" in p.having
               for p, _ in proposals)


def test_a_division_pool_gets_its_distributive_reading():
    task, pool, rec = _rec([(COLLECTIVE_GOLD, 2)])
    proposals = division_proposals(rec, pool.counts)
    plain = [p for p, _ in proposals if not p.group]
    assert plain
    rows = _rows(task, plain[0].sql(pool.dialect))
    # each student with each of their courses: the join's rows, students' names added
    expected = sorted((STUDENTS[s], COURSES[c]) for s, c in ENROLMENTS if c in COURSES)
    assert rows == expected


def test_a_condition_on_the_quantified_table_restricts_every():
    task, pool, rec = _rec([("SELECT s.name, c.title FROM students s JOIN enrolments e "
                             "ON s.id = e.student_id JOIN courses c ON e.course_id = c.course_id "
                             "WHERE s.name <> 'Cy'", 1)])
    proposals = division_proposals(rec, pool.counts)
    grouped = [p for p, _ in proposals if p.group == ("enrolments.course_id",)]
    assert grouped and all("WHERE students.name <> 'Cy'" in p.having for p in grouped)
    # the courses every student but Cy takes (Ada and Ben share Logic, Poetry and Chess)
    assert [r[0] for r in _rows(task, grouped[0].sql(pool.dialect))] == [
        "Chess", "Logic", "Poetry"]


def test_foreign_keys_name_a_link_the_pool_never_joins_through():
    # the pool never joins students: only the schema's foreign keys say enrolments links them
    task, pool, rec = _rec([("SELECT DISTINCT courses.title FROM enrolments JOIN courses "
                             "ON enrolments.course_id = courses.course_id", 1)])
    assert {e.table for e in link_edges(rec)["enrolments"]} == {"students", "courses"}
    proposals = [p for p, _ in division_proposals(rec, pool.counts)]
    plain = [p for p in proposals if not p.group]
    assert plain and plain[0].select == ("students.name", "courses.title")
    assert _rows(task, plain[0].sql(pool.dialect)) == sorted(
        (STUDENTS[s], COURSES[c]) for s, c in ENROLMENTS if c in COURSES)
    division = next(p for p in proposals if p.group == ("enrolments.course_id",))
    assert [r[0] for r in _rows(task, division.sql(pool.dialect))] == ["Chess", "Logic"]


def test_no_link_table_no_proposals():
    _, pool, rec = _rec([("SELECT courses.title, reviews.stars FROM reviews "
                          "JOIN courses ON reviews.course_id = courses.course_id", 1)])
    # reviews joins one key only: no link; enrolments links (its foreign keys say so), but no
    # candidate joins through it, so there is nothing to read otherwise
    assert "reviews" not in link_edges(rec) and "enrolments" in link_edges(rec)
    assert division_proposals(rec, pool.counts) == []


def test_repair_adds_the_collective_reading_after_a_rejection():
    task, pool, _ = _rec(DISTRIBUTIVE, [COLLECTIVE_GOLD])
    s = RepairSession(pool, database=task.database)
    recompose(s, rejected_outputs=[s.predicted_output_key()])
    assert output_key(pool.gold_results[0]) in s.pool.class_keys


def _dev_scope_task():
    return next(t for t in dev_tasks() if t.id == "ambrosia-dev-scope-7e532133")


@pytest.mark.parametrize("hooked", [True, False])
def test_the_honest_user_reaches_a_collective_gold_on_a_dev_task(hooked, monkeypatch):
    """"What type of equipment do we have for each facility": the pool has only distributive
    readings; the honest gold-features user reaches the collective gold through repair, and
    does not without the division proposals (so this can fail)."""
    if not hooked:
        monkeypatch.setattr(guided, "division_readings", lambda rec, weights, yes, no: [])
    task = _dev_scope_task()
    pool = prepare_pool(task, layout=False)
    gold = next(g for g, sql in enumerate(pool.gold_sqls) if "HAVING" in sql.upper())
    assert pool.gold_class(gold) is None  # no candidate produces it
    run = simulate(pool, gold, "expected-depth", user="gold-features", repair="recompose",
                   database=task.database)
    assert run.success is hooked
    if hooked:
        assert run.repair_rounds >= 1 and run.turns <= 15
