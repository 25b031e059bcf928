"""Atomic features: fixture pairs (tests/fixtures/features/<case>.sql → <case>.expected).

Each ``.sql`` holds one query (an optional first line ``-- options: conjuncts`` turns on the
WHERE-conjunct features); its ``.expected`` lists the expected feature keys, one per line, in
display order. All cases use the schema in ``schema.json`` and the NOT NULL / unique columns in
``constraints.json``. Below them, each equivalence the features must see (equal features) and
each non-equivalence (different features) is listed as a pair.
"""

from __future__ import annotations

import json

import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st

from core.engine.features import KEYWORD_ORDER, Feature, extract_features
from tests.conftest_core import FIXTURES

CASES_DIR = FIXTURES / "features"
SCHEMA = json.loads((CASES_DIR / "schema.json").read_text(encoding="utf-8"))
CONSTRAINTS = json.loads((CASES_DIR / "constraints.json").read_text(encoding="utf-8"))
CASES = sorted(p.stem for p in CASES_DIR.glob("*.sql"))


def _load(case: str) -> tuple[str, bool, list[str]]:
    text = (CASES_DIR / f"{case}.sql").read_text(encoding="utf-8")
    conjuncts = False
    if text.startswith("-- options:"):
        header, text = text.split("\n", 1)
        conjuncts = "conjuncts" in header
    expected = [line for line in (CASES_DIR / f"{case}.expected").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    return text.strip(), conjuncts, expected


def keys(sql: str, schema=SCHEMA, **kw) -> list[str]:
    kw = {**CONSTRAINTS, **kw} if schema is SCHEMA else kw
    return [f.key for f in extract_features(sql, "sqlite", schema, **kw)]


def test_fixture_set_is_complete():
    assert len(CASES) >= 40
    for case in CASES:
        assert (CASES_DIR / f"{case}.expected").is_file(), case


@pytest.mark.parametrize("case", CASES)
def test_feature_fixture(case):
    sql, conjuncts, expected = _load(case)
    assert keys(sql, conjuncts=conjuncts) == expected


def test_set_operations_visit_both_branches():
    """Attachment readings differ only in the second branch: they must not collapse."""
    a = keys("SELECT title FROM film WHERE genre = 'action' UNION "
             "SELECT title FROM film WHERE genre = 'crime' AND year > 1995")
    b = keys("SELECT title FROM film WHERE genre = 'action' AND year > 1995 UNION "
             "SELECT title FROM film WHERE genre = 'crime' AND year > 1995")
    assert a != b
    # over one frame the UNION is the OR of its branches: the grouping shows in the predicate
    assert "WHERE (film.genre = 'action' OR film.year > 1995) AND " \
           "film.genre IN ('action', 'crime')" in a
    assert "WHERE film.genre IN ('action', 'crime') AND film.year > 1995" in b
    c = keys("SELECT title FROM film WHERE genre = 'action' UNION "
             "SELECT f.title FROM film f JOIN person p ON p.id = f.director_id WHERE p.name = 'N'")
    assert "UNION" in c and "WHERE film.genre = 'action'" in c and "WHERE person.name = 'N'" in c


@pytest.mark.parametrize(("left", "right"), [
    ("SELECT f.title FROM film AS f", "SELECT title FROM film"),
    ("SELECT TITLE FROM FILM", "select title from film"),
    ("SELECT name FROM room WHERE indoor_outdoor_space = \"Lobby\"",
     "SELECT room.name FROM room WHERE room.indoor_outdoor_space = 'Lobby'"),
    ("SELECT * FROM film f JOIN person p ON f.director_id = p.id",
     "SELECT * FROM film JOIN person ON person.id = film.director_id"),
    ("SELECT title AS t FROM film ORDER BY t", "SELECT title FROM film ORDER BY title ASC"),
    ("SELECT title FROM film WHERE genre LIKE '%Action%'",
     "SELECT title FROM film WHERE genre LIKE '%action%'"),
    # join order and the table a join starts from
    ("SELECT f.title FROM film f JOIN person p ON p.id = f.director_id",
     "SELECT film.title FROM person JOIN film ON film.director_id = person.id"),
    ("SELECT p.name FROM person p JOIN film f ON p.id = f.director_id "
     "JOIN review r ON r.film_id = f.id",
     "SELECT person.name FROM review JOIN film ON film.id = review.film_id "
     "JOIN person ON person.id = film.director_id"),
    # an inner join's ON and WHERE are one predicate; a comma join is an inner join
    ("SELECT title FROM film JOIN person ON person.id = director_id AND name = 'Nolan'",
     "SELECT title FROM film, person WHERE film.director_id = person.id AND name = 'Nolan'"),
    # column equalities are transitive
    ("SELECT f.title FROM film f JOIN review r ON r.film_id = f.id "
     "JOIN person p ON p.id = r.film_id",
     "SELECT f.title FROM film f JOIN review r ON r.film_id = f.id "
     "JOIN person p ON p.id = f.id"),
    # IN (subquery on a unique key) is the join; under DISTINCT any key will do
    ("SELECT title FROM film WHERE director_id IN (SELECT id FROM person WHERE name = 'N')",
     "SELECT film.title FROM film JOIN person ON film.director_id = person.id "
     "WHERE person.name = 'N'"),
    ("SELECT DISTINCT name FROM person WHERE id IN (SELECT director_id FROM film)",
     "SELECT DISTINCT person.name FROM person JOIN film ON film.director_id = person.id"),
    # COUNT of a column that can never be NULL counts every row
    ("SELECT genre, COUNT(id) FROM film GROUP BY genre",
     "SELECT genre, COUNT(*) FROM film GROUP BY genre"),
    ("SELECT genre, COUNT(f.title) FROM film f GROUP BY genre",
     "SELECT genre, COUNT(*) FROM film GROUP BY genre"),
    # aliases everywhere: output aliases in GROUP BY, HAVING, ORDER BY; table aliases
    ("SELECT genre AS g, COUNT(*) AS n FROM film GROUP BY g HAVING n > 1 ORDER BY n DESC",
     "SELECT genre, COUNT(*) FROM film GROUP BY genre HAVING COUNT(*) > 1 "
     "ORDER BY COUNT(*) DESC"),
    ("SELECT x.title FROM film AS x WHERE x.year > 2000",
     "SELECT film.title FROM film WHERE 2000 < film.year"),
    # SELECT * is its columns
    ("SELECT * FROM person", "SELECT id, name FROM person"),
    # predicates: factoring, redundant bounds, constant conditions (sqlglot normalize/simplify)
    ("SELECT title FROM film WHERE (genre = 'crime' AND year > 1990) "
     "OR (genre = 'crime' AND year < 1980)",
     "SELECT title FROM film WHERE genre = 'crime' AND (year < 1980 OR year > 1990)"),
    ("SELECT title FROM film WHERE year > 2000 AND year > 1990",
     "SELECT title FROM film WHERE year > 2000"),
    ("SELECT title FROM film WHERE 1 = 1 AND genre = 'crime'",
     "SELECT title FROM film WHERE genre = 'crime'"),
    ("SELECT title FROM film WHERE NOT year > 2000", "SELECT title FROM film WHERE year <= 2000"),
    # a UNION of two queries over one join frame is one DISTINCT query with the OR of their
    # conditions (whatever the aliases and the table the joins start from)
    ("SELECT f.title FROM film f WHERE f.genre = 'a' AND f.year = 3 "
     "UNION SELECT title FROM film WHERE genre = 'b' AND year = 3",
     "SELECT DISTINCT title FROM film WHERE genre IN ('a', 'b') AND year = 3"),
    ("SELECT f.title FROM film f JOIN person p ON p.id = f.director_id WHERE p.name = 'N' "
     "UNION SELECT film.title FROM person JOIN film ON film.director_id = person.id "
     "WHERE film.year > 3",
     "SELECT DISTINCT film.title FROM film JOIN person ON film.director_id = person.id "
     "WHERE person.name = 'N' OR film.year > 3"),
    ("SELECT title FROM film WHERE genre = 'a' UNION SELECT title FROM film",
     "SELECT DISTINCT title FROM film"),
])
def test_equivalent_spellings_have_equal_features(left, right):
    assert keys(left) == keys(right)


@pytest.mark.parametrize(("left", "right"), [
    ("SELECT title FROM film ORDER BY year", "SELECT title FROM film ORDER BY year DESC"),
    ("SELECT title FROM film", "SELECT DISTINCT title FROM film"),
    ("SELECT f.title FROM film f JOIN review r ON r.film_id = f.id",
     "SELECT f.title FROM film f LEFT JOIN review r ON r.film_id = f.id"),
    ("SELECT title FROM film UNION SELECT name FROM person",
     "SELECT title FROM film UNION ALL SELECT name FROM person"),
    ("SELECT title FROM film LIMIT 1", "SELECT title FROM film LIMIT 2"),
    ("SELECT title FROM film LIMIT 1", "SELECT title FROM film LIMIT 1 OFFSET 1"),
    # a column selected twice gives one more output column
    ("SELECT title, title FROM film", "SELECT title FROM film"),
    # COUNT of a nullable column, or of an outer-joined one, skips NULLs
    ("SELECT genre, COUNT(year) FROM film GROUP BY genre",
     "SELECT genre, COUNT(*) FROM film GROUP BY genre"),
    ("SELECT f.title, COUNT(r.id) FROM film f LEFT JOIN review r ON r.film_id = f.id "
     "GROUP BY f.title",
     "SELECT f.title, COUNT(*) FROM film f LEFT JOIN review r ON r.film_id = f.id "
     "GROUP BY f.title"),
    # IN on a non-unique column is a semi-join: a plain join would repeat rows
    ("SELECT name FROM person WHERE id IN (SELECT director_id FROM film)",
     "SELECT person.name FROM person JOIN film ON film.director_id = person.id"),
    # a LEFT JOIN keeps its order and differs from the inner join
    ("SELECT f.title FROM film f LEFT JOIN review r ON r.film_id = f.id",
     "SELECT f.title FROM review r LEFT JOIN film f ON r.film_id = f.id"),
    # predicate grouping (attachment) and the join graph stay apart
    ("SELECT title FROM film WHERE genre = 'a' OR genre = 'b' AND year > 2000",
     "SELECT title FROM film WHERE (genre = 'a' OR genre = 'b') AND year > 2000"),
    ("SELECT f.title FROM film f JOIN review r ON r.film_id = f.id",
     "SELECT f.title FROM film f JOIN review r ON r.id = f.id"),
    ("SELECT f.title FROM film f JOIN person p ON p.id = f.director_id",
     "SELECT f.title FROM film f"),
    # UNION ALL keeps duplicate rows; a UNION whose branches list columns in another order
    # pairs different columns; over different join frames it is no single query's OR
    ("SELECT title FROM film WHERE genre = 'a' UNION ALL SELECT title FROM film WHERE genre = 'b'",
     "SELECT DISTINCT title FROM film WHERE genre IN ('a', 'b')"),
    ("SELECT title, year FROM film WHERE genre = 'a' "
     "UNION SELECT year, title FROM film WHERE genre = 'b'",
     "SELECT DISTINCT title, year FROM film WHERE genre IN ('a', 'b')"),
    ("SELECT f.title FROM film f JOIN person p ON p.id = f.director_id WHERE p.name = 'N' "
     "UNION SELECT title FROM film WHERE year > 3",
     "SELECT DISTINCT f.title FROM film f JOIN person p ON p.id = f.director_id "
     "WHERE p.name = 'N' OR f.year > 3"),
    ("SELECT title FROM film WHERE genre = 'a' UNION SELECT title FROM film WHERE genre = 'b'",
     "SELECT title FROM film WHERE genre IN ('a', 'b')"),
])
def test_different_queries_have_different_features(left, right):
    assert keys(left) != keys(right)


def test_literal_case_is_kept_where_it_changes_rows():
    # SQLite's = is case-sensitive: 'Action' and 'action' select different rows
    assert keys("SELECT title FROM film WHERE genre = 'Action'") != keys(
        "SELECT title FROM film WHERE genre = 'action'")


def test_double_quoted_string_without_schema_is_a_column():
    # without a schema the loader cannot know "Lobby" is not a column: it stays an identifier
    plain = keys('SELECT name FROM room WHERE kind = "Lobby"', schema=None)
    assert plain == ["SELECT room.name", "SELECT ONLY room.name", "FROM room",
                     "WHERE room.kind = room.lobby"]


def test_double_quoted_existing_column_stays_a_column():
    assert keys('SELECT id FROM room WHERE "name" = "size"') == [
        "SELECT room.id", "SELECT ONLY room.id", "FROM room", "WHERE room.name = room.size"]


def test_conjuncts_option_adds_parts_besides_the_whole():
    sql = "SELECT title FROM film WHERE year > 2000 AND genre = 'action' AND id < 9"
    whole = keys(sql)
    parts = keys(sql, conjuncts=True)
    assert set(whole) < set(parts)
    assert [k for k in parts if k.startswith("WHERE …")] == [
        "WHERE … film.genre = 'action'", "WHERE … film.id < 9", "WHERE … film.year > 2000"]
    assert sum(k.startswith("WHERE ") and not k.startswith("WHERE …") for k in parts) == 1


def test_features_are_sorted_unique_and_render_keyword_value():
    feats = extract_features("SELECT title, title FROM film ORDER BY year DESC LIMIT 2",
                             "sqlite", SCHEMA)
    assert len(feats) == len(set(feats))
    assert feats == sorted(feats, key=Feature.sort_key)
    ranks = [KEYWORD_ORDER.index(f.keyword) for f in feats]
    assert ranks == sorted(ranks)
    order = next(f for f in feats if f.keyword == "ORDER BY")
    assert (order.keyword, order.value, order.key) == ("ORDER BY", "film.year DESC",
                                                       "ORDER BY film.year DESC")
    assert Feature("DISTINCT").key == "DISTINCT"


@pytest.mark.parametrize("sql", [
    "SELECT FROM WHERE", "SELECT (title FROM film", "SELECT title FROM film WHERE",
    "SELECT title FROM film ORDER BY", "SELEC title FROM film",
    "SELECT * FROM film f JOIN", "SELECT title FROM film WHERE year >", "SELECT 1 UNION",
])
def test_invalid_sql_raises_parse_error(sql):
    with pytest.raises(sqlglot.errors.ParseError):
        extract_features(sql, "sqlite", SCHEMA)


def test_real_pool_candidates_all_featurise():
    """Every parsable AMBROSIA dev candidate yields at least a SELECT and a FROM feature."""
    from tests.conftest_core import dev_pool

    pool = dev_pool(0)
    for i in range(pool.n):
        if pool.results[i].ok:
            ks = pool.feature_keys(i)
            assert any(k.startswith("SELECT") for k in ks), pool.sqls[i]
            assert any(k.startswith("FROM") for k in ks), pool.sqls[i]
        else:
            assert not pool.x[i].any()  # invalid candidates carry no features



@given(st.lists(st.tuples(st.sampled_from("abcdefg"), st.sampled_from("abcdefg")), max_size=12))
def test_equality_classes_are_the_transitive_closure_of_the_pairs(
        pairs: list[tuple[str, str]]) -> None:
    """The join classes (shared by features and repair's atoms): two columns share a class
    exactly when a chain of pairs links them; a column equated only with itself has none."""
    from core.engine.joins import equality_classes

    classes = equality_classes(pairs)
    where = {c: i for i, members in enumerate(classes) for c in members}
    assert sum(map(len, classes)) == len(where)  # a column in one class only
    near: dict[str, set[str]] = {}
    for a, b in pairs:
        near.setdefault(a, set()).add(b)
        near.setdefault(b, set()).add(a)
    for a in near:
        reach, todo = {a}, [a]
        while todo:
            for b in near[todo.pop()] - reach:
                reach.add(b)
                todo.append(b)
        expected = reach if len(reach) > 1 else set()
        got = {b for b in where if a in where and where[b] == where[a]}
        assert got == expected, (a, pairs, classes)
