"""Shipped candidate pools of the film study's vague tasks (practice, Table 1 #1 and #2, extra).

Each pool imitates ~50 LLM samples at temperature 0.7: the intended readings recur with alias,
join-style, column-set and layout variants; the tail holds near misses, wrong joins and a few
hallucinated columns that fail to execute.
"""

from __future__ import annotations

from studies.film.pool_style import Pool, block, variants

# --------------------------------------------------------------------------------------------
# Practice: Which films were directed by Quentin Tarantino?  (vague: title vs title + year)
# --------------------------------------------------------------------------------------------

_DIR = {"f": "films", "d": "directors", "p": "people"}
_DIR_JOIN = "FROM {F} JOIN {D} ON {f}.id = {d}.film_id JOIN {P} ON {d}.person_id = {p}.id"
_QT = "WHERE {p}.name = 'Quentin Tarantino'"

PRACTICE: Pool = [
    *variants(f"SELECT {{f}}.title {_DIR_JOIN} {_QT}", _DIR,
              ("short", "block", 4), ("full", "line", 2), ("as", "block", 2),
              ("tn", "line", 1), ("upper", "block", 1)),
    block("SELECT f.title FROM films f INNER JOIN directors d ON f.id = d.film_id "
          "INNER JOIN people p ON d.person_id = p.id WHERE p.name = 'Quentin Tarantino'"),
    ("SELECT title FROM films WHERE id IN (SELECT film_id FROM directors WHERE person_id = "
     "(SELECT id FROM people WHERE name = 'Quentin Tarantino'))", 2),
    ("SELECT title\nFROM films\nWHERE id IN (\n    SELECT film_id\n    FROM directors\n"
     "    WHERE person_id = (SELECT id FROM people WHERE name = 'Quentin Tarantino')\n)", 1),
    ("SELECT title FROM films WHERE id IN (SELECT d.film_id FROM directors d JOIN people p ON "
     "d.person_id = p.id WHERE p.name = 'Quentin Tarantino')", 1),
    block("SELECT f.title FROM films f WHERE EXISTS (SELECT 1 FROM directors d JOIN people p ON "
          "p.id = d.person_id WHERE d.film_id = f.id AND p.name = 'Quentin Tarantino')"),
    ("SELECT title FROM films JOIN directors ON films.id = directors.film_id WHERE "
     "directors.person_id = 1", 1),
    *variants(f"SELECT {{f}}.title AS film_title {_DIR_JOIN} {_QT}", _DIR, ("as", "line", 1)),
    *variants(f"SELECT DISTINCT {{f}}.title {_DIR_JOIN} {_QT}", _DIR, ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title {_DIR_JOIN} {_QT} ORDER BY {{f}}.release_year", _DIR,
              ("short", "block", 2)),
    *variants(f"SELECT {{f}}.title {_DIR_JOIN} {_QT} ORDER BY {{f}}.title", _DIR,
              ("full", "line", 1)),
    *variants(f"SELECT {{f}}.title {_DIR_JOIN} WHERE {{p}}.name LIKE '%Tarantino%'", _DIR,
              ("short", "line", 1)),
    *variants(f"SELECT {{f}}.title, {{f}}.release_year {_DIR_JOIN} "
              "WHERE {p}.name LIKE 'Quentin%'", _DIR, ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title {_DIR_JOIN} {_QT} GROUP BY {{f}}.title", _DIR,
              ("upper", "line", 1)),
    # title + release year
    *variants(f"SELECT {{f}}.title, {{f}}.release_year {_DIR_JOIN} {_QT}", _DIR,
              ("short", "block", 3), ("full", "line", 2), ("as", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{f}}.release_year {_DIR_JOIN} {_QT} "
              "ORDER BY {f}.release_year", _DIR, ("short", "block", 2)),
    *variants(f"SELECT {{f}}.title, {{f}}.release_year {_DIR_JOIN} {_QT} "
              "ORDER BY {f}.release_year DESC", _DIR, ("upper", "block", 1)),
    *variants(f"SELECT {{f}}.release_year, {{f}}.title {_DIR_JOIN} {_QT}", _DIR,
              ("short", "line", 1)),
    # other column sets
    *variants(f"SELECT {{f}}.title, {{f}}.genre {_DIR_JOIN} {_QT}", _DIR, ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{f}}.release_year, {{f}}.duration {_DIR_JOIN} {_QT}", _DIR,
              ("upper", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{f}}.release_year, {{f}}.genre {_DIR_JOIN} {_QT}", _DIR,
              ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{f}}.genre, {{f}}.release_year, {{f}}.duration "
              f"{_DIR_JOIN} {_QT}", _DIR, ("as", "block", 1)),
    *variants(f"SELECT {{f}}.id, {{f}}.title {_DIR_JOIN} {_QT}", _DIR, ("full", "line", 1)),
    *variants(f"SELECT {{f}}.title, {{p}}.name AS director {_DIR_JOIN} {_QT}", _DIR,
              ("short", "block", 1)),
    *variants(f"SELECT {{f}}.* {_DIR_JOIN} {_QT}", _DIR, ("short", "line", 1)),
    ("SELECT * FROM films JOIN directors ON films.id = directors.film_id JOIN people ON "
     "directors.person_id = people.id WHERE people.name = 'Quentin Tarantino'", 1),
    *variants(f"SELECT COUNT(*) {_DIR_JOIN} {_QT}", _DIR, ("short", "line", 1)),
    # literal near misses
    *variants(f"SELECT {{f}}.title {_DIR_JOIN} WHERE {{p}}.name = 'quentin tarantino'", _DIR,
              ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title {_DIR_JOIN} WHERE {{p}}.name = 'Tarantino'", _DIR,
              ("full", "line", 1)),
    # wrong relation: films he acted in
    block("SELECT f.title FROM films f JOIN casting c ON f.id = c.film_id JOIN people p ON "
          "c.person_id = p.id WHERE p.name = 'Quentin Tarantino'"),
    ("SELECT f.title FROM films f JOIN directors d ON f.id = d.film_id WHERE d.person_id = 1 "
     "UNION SELECT f.title FROM films f JOIN casting c ON f.id = c.film_id WHERE "
     "c.person_id = 1", 1),
    ("SELECT title, release_year FROM films WHERE id IN (SELECT film_id FROM directors WHERE "
     "person_id = (SELECT id FROM people WHERE name = 'Quentin Tarantino')) ORDER BY "
     "release_year", 1),
    # hallucinated schema
    ("SELECT title FROM films WHERE director = 'Quentin Tarantino'", 2),
    block("SELECT f.title FROM films f JOIN people p ON f.director_id = p.id "
          "WHERE p.name = 'Quentin Tarantino'"),
    block("SELECT m.title FROM movies m JOIN directors d ON m.id = d.film_id JOIN people p ON "
          "d.person_id = p.id WHERE p.name = 'Quentin Tarantino'"),
]

# --------------------------------------------------------------------------------------------
# Table 1 #1: What was the review of Pulp Fiction?  (vague column: text vs score vs both)
# --------------------------------------------------------------------------------------------

_REV = {"r": "reviews", "f": "films"}
_REV_JOIN = "FROM {R} JOIN {F} ON {r}.film_id = {f}.id"
_PF = "WHERE {f}.title = 'Pulp Fiction'"
_PF_SUB = "FROM reviews WHERE film_id = (SELECT id FROM films WHERE title = 'Pulp Fiction')"

PULP: Pool = [
    *variants(f"SELECT {{r}}.review_text {_REV_JOIN} {_PF}", _REV,
              ("short", "block", 3), ("full", "line", 2), ("as", "block", 1), ("tn", "line", 1)),
    (f"SELECT review_text {_PF_SUB}", 2),
    block(f"SELECT review_text {_PF_SUB}"),
    ("SELECT review_text FROM reviews WHERE film_id IN (SELECT id FROM films WHERE title = "
     "'Pulp Fiction')", 1),
    # text + score
    *variants(f"SELECT {{r}}.review_text, {{r}}.score {_REV_JOIN} {_PF}", _REV,
              ("short", "block", 3), ("full", "line", 2), ("upper", "line", 1)),
    (f"SELECT review_text, score {_PF_SUB}", 2),
    ("SELECT review_text, score FROM reviews WHERE film_id = 1", 1),
    block("SELECT r.review_text, r.score FROM reviews r INNER JOIN films f ON f.id = r.film_id "
          "WHERE f.title LIKE 'Pulp Fiction'"),
    *variants(f"SELECT {{f}}.title, {{r}}.review_text {_REV_JOIN} {_PF}", _REV,
              ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{r}}.reviewer, {{r}}.review_text, {{r}}.score {_REV_JOIN} "
              f"{_PF}", _REV, ("upper", "block", 1)),
    *variants(f"SELECT {{r}}.reviewer, {{r}}.review_text, {{r}}.score, {{r}}.review_date "
              f"{_REV_JOIN} {_PF} ORDER BY {{r}}.review_date", _REV, ("short", "block", 1)),
    *variants(f"SELECT {{r}}.reviewer, {{r}}.review_text, {{r}}.score {_REV_JOIN} {_PF}", _REV,
              ("short", "block", 2), ("full", "line", 1)),
    *variants(f"SELECT {{r}}.score, {{r}}.review_text {_REV_JOIN} {_PF}", _REV,
              ("short", "line", 1)),
    *variants(f"SELECT {{r}}.review_text, {{r}}.score, {{r}}.review_date {_REV_JOIN} {_PF}",
              _REV, ("as", "block", 1)),
    *variants(f"SELECT {{r}}.reviewer, {{r}}.review_text {_REV_JOIN} {_PF}", _REV,
              ("short", "block", 1)),
    # score only
    *variants(f"SELECT {{r}}.score {_REV_JOIN} {_PF}", _REV,
              ("short", "block", 2), ("full", "line", 1)),
    (f"SELECT score {_PF_SUB}", 1),
    *variants(f"SELECT {{r}}.reviewer, {{r}}.score {_REV_JOIN} {_PF}", _REV, ("short", "line", 1)),
    *variants(f"SELECT AVG({{r}}.score) AS average_score {_REV_JOIN} {_PF}", _REV,
              ("short", "block", 1)),
    *variants(f"SELECT MAX({{r}}.score) {_REV_JOIN} {_PF}", _REV, ("full", "line", 1)),
    # one review only
    *variants(f"SELECT {{r}}.review_text {_REV_JOIN} {_PF} ORDER BY {{r}}.review_date DESC "
              "LIMIT 1", _REV, ("short", "block", 1)),
    (f"SELECT review_text {_PF_SUB} LIMIT 1", 1),
    (f"SELECT GROUP_CONCAT(review_text, ' | ') AS reviews {_PF_SUB}", 1),
    *variants(f"SELECT {{r}}.review_text, {{r}}.score {_REV_JOIN} {_PF} ORDER BY {{r}}.score DESC",
              _REV, ("short", "block", 1)),
    # whole rows
    (f"SELECT * {_PF_SUB}", 2),
    block(f"SELECT reviewer, review_text, score {_PF_SUB} ORDER BY score DESC"),
    *variants(f"SELECT {{r}}.* {_REV_JOIN} {_PF}", _REV, ("short", "line", 1)),
    # literal near misses
    *variants(f"SELECT {{r}}.review_text {_REV_JOIN} WHERE {{f}}.title LIKE '%pulp fiction%'",
              _REV, ("short", "block", 1)),
    *variants(f"SELECT {{r}}.review_text {_REV_JOIN} WHERE {{f}}.title = 'pulp fiction'", _REV,
              ("full", "line", 1)),
    # other tables
    block("SELECT r.review_text, ra.imdb_rating FROM reviews r JOIN films f ON r.film_id = f.id "
          "JOIN ratings ra ON ra.film_id = f.id WHERE f.title = 'Pulp Fiction'"),
    block("SELECT imdb_rating, critics_rating FROM ratings WHERE film_id = "
          "(SELECT id FROM films WHERE title = 'Pulp Fiction')"),
    # hallucinated schema
    ("SELECT review FROM films WHERE title = 'Pulp Fiction'", 2),
    *variants(f"SELECT {{r}}.review {_REV_JOIN} {_PF}", _REV, ("short", "block", 1)),
    (f"SELECT review_text, rating {_PF_SUB}", 1),
]

# --------------------------------------------------------------------------------------------
# Table 1 #2: What's the rating of the movies with Leonardo DiCaprio?  (vague: which rating)
# --------------------------------------------------------------------------------------------

_RAT = {"r": "ratings", "c": "casting", "p": "people"}
_RAT_JOIN = "FROM {R} JOIN {C} ON {r}.film_id = {c}.film_id JOIN {P} ON {c}.person_id = {p}.id"
_FRAT = {"f": "films", "c": "casting", "p": "people", "r": "ratings"}
_FRAT_JOIN = ("FROM {F} JOIN {C} ON {f}.id = {c}.film_id JOIN {P} ON {c}.person_id = {p}.id "
              "JOIN {R} ON {f}.id = {r}.film_id")
_LD = "WHERE {p}.name = 'Leonardo DiCaprio'"
_LD_SUB = ("WHERE film_id IN (SELECT film_id FROM casting WHERE person_id = "
           "(SELECT id FROM people WHERE name = 'Leonardo DiCaprio'))")

DICAPRIO: Pool = [
    # IMDb rating
    *variants(f"SELECT {{r}}.imdb_rating {_RAT_JOIN} {_LD}", _RAT,
              ("short", "block", 2), ("full", "line", 2), ("tn", "block", 1)),
    (f"SELECT imdb_rating FROM ratings {_LD_SUB}", 2),
    *variants(f"SELECT DISTINCT {{r}}.imdb_rating {_RAT_JOIN} {_LD}", _RAT, ("short", "line", 1)),
    *variants(f"SELECT {{f}}.title, {{r}}.imdb_rating {_FRAT_JOIN} {_LD}", _FRAT,
              ("short", "block", 3), ("full", "line", 2), ("as", "block", 1)),
    block("SELECT films.title, ratings.imdb_rating FROM films INNER JOIN casting ON films.id = "
          "casting.film_id INNER JOIN people ON casting.person_id = people.id INNER JOIN ratings "
          "ON films.id = ratings.film_id WHERE people.name = 'Leonardo DiCaprio'"),
    block("SELECT f.title, r.imdb_rating FROM films f JOIN ratings r ON f.id = r.film_id WHERE "
          "f.id IN (SELECT c.film_id FROM casting c JOIN people p ON c.person_id = p.id WHERE "
          "p.name = 'Leonardo DiCaprio')"),
    *variants(f"SELECT {{f}}.title, {{f}}.release_year, {{r}}.imdb_rating {_FRAT_JOIN} {_LD}",
              _FRAT, ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{c}}.role, {{r}}.imdb_rating {_FRAT_JOIN} {_LD}", _FRAT,
              ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{r}}.imdb_rating {_FRAT_JOIN} {_LD} "
              "ORDER BY {r}.imdb_rating DESC", _FRAT, ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{r}}.imdb_rating {_FRAT_JOIN} "
              "WHERE {p}.name LIKE '%DiCaprio%'", _FRAT, ("short", "line", 1)),
    *variants("SELECT {f}.title, {r}.imdb_rating FROM {F} JOIN {C} ON {f}.id = {c}.film_id "
              "JOIN {P} ON {c}.person_id = {p}.id LEFT JOIN {R} ON {f}.id = {r}.film_id "
              f"{_LD}", _FRAT, ("upper", "block", 1)),
    *variants(f"SELECT AVG({{r}}.imdb_rating) AS avg_rating {_RAT_JOIN} {_LD}", _RAT,
              ("short", "block", 2)),
    *variants(f"SELECT MAX({{r}}.imdb_rating) {_RAT_JOIN} {_LD}", _RAT, ("short", "line", 1)),
    # critics rating
    *variants(f"SELECT {{r}}.critics_rating {_RAT_JOIN} {_LD}", _RAT,
              ("short", "block", 2), ("full", "line", 1)),
    (f"SELECT critics_rating FROM ratings {_LD_SUB}", 1),
    *variants(f"SELECT {{f}}.title, {{r}}.critics_rating {_FRAT_JOIN} {_LD}", _FRAT,
              ("short", "block", 1)),
    # audience rating
    *variants(f"SELECT {{r}}.audience_rating {_RAT_JOIN} {_LD}", _RAT, ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{r}}.audience_rating {_FRAT_JOIN} {_LD}", _FRAT,
              ("full", "line", 1)),
    # all three
    *variants(f"SELECT {{r}}.imdb_rating, {{r}}.critics_rating, {{r}}.audience_rating "
              f"{_RAT_JOIN} {_LD}", _RAT,
              ("short", "block", 2), ("full", "line", 1), ("as", "block", 1)),
    *variants(f"SELECT {{r}}.imdb_rating, {{r}}.critics_rating {_RAT_JOIN} {_LD}", _RAT,
              ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{r}}.imdb_rating, {{r}}.critics_rating {_FRAT_JOIN} {_LD}",
              _FRAT, ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, ({{r}}.imdb_rating * 10 + {{r}}.critics_rating + "
              f"{{r}}.audience_rating) / 3.0 AS avg_rating {_FRAT_JOIN} {_LD}", _FRAT,
              ("short", "block", 1)),
    (f"SELECT imdb_rating, critics_rating, audience_rating FROM ratings {_LD_SUB}", 1),
    *variants(f"SELECT {{f}}.title, {{r}}.imdb_rating, {{r}}.critics_rating, "
              f"{{r}}.audience_rating {_FRAT_JOIN} {_LD}", _FRAT,
              ("short", "block", 2), ("full", "line", 2)),
    *variants(f"SELECT {{f}}.title, {{r}}.imdb_rating, {{r}}.critics_rating, "
              f"{{r}}.audience_rating {_FRAT_JOIN} {_LD} ORDER BY {{f}}.title", _FRAT,
              ("upper", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{r}}.* {_FRAT_JOIN} {_LD}", _FRAT, ("short", "line", 1)),
    (f"SELECT * FROM ratings {_LD_SUB}", 1),
    *variants(f"SELECT AVG({{r}}.imdb_rating), AVG({{r}}.critics_rating), "
              f"AVG({{r}}.audience_rating) {_RAT_JOIN} {_LD}", _RAT, ("short", "block", 1)),
    # literal near misses and wrong joins
    *variants(f"SELECT {{f}}.title, {{r}}.imdb_rating {_FRAT_JOIN} "
              "WHERE {p}.name = 'Leonardo Dicaprio'", _FRAT, ("short", "block", 1)),
    block("SELECT f.title, r.imdb_rating FROM films f JOIN directors d ON f.id = d.film_id "
          "JOIN people p ON d.person_id = p.id JOIN ratings r ON f.id = r.film_id "
          "WHERE p.name = 'Leonardo DiCaprio'"),
    # hallucinated schema
    ("SELECT title, rating FROM films WHERE actor = 'Leonardo DiCaprio'", 2),
    *variants(f"SELECT {{f}}.title, {{r}}.rating {_FRAT_JOIN} {_LD}", _FRAT,
              ("short", "block", 1)),
    block("SELECT m.title, r.imdb_rating FROM movies m JOIN actors a ON m.id = a.movie_id "
          "JOIN ratings r ON m.id = r.film_id WHERE a.name = 'Leonardo DiCaprio'"),
]


# --------------------------------------------------------------------------------------------
# Extra vague: Who made The Departed?  (director vs writer vs both)
# --------------------------------------------------------------------------------------------

_MK = {"f": "films", "d": "directors", "p": "people"}
_MK_JOIN = "FROM {F} JOIN {D} ON {f}.id = {d}.film_id JOIN {P} ON {d}.person_id = {p}.id"
_WR = {"f": "films", "s": "scripts", "p": "people"}
_WR_JOIN = "FROM {F} JOIN {S} ON {f}.id = {s}.film_id JOIN {P} ON {s}.writer_id = {p}.id"
_TD = "WHERE {f}.title = 'The Departed'"
_TD_ID = "(SELECT id FROM films WHERE title = 'The Departed')"
_BOTH_MK = ("FROM films f JOIN directors d ON f.id = d.film_id JOIN people dp ON "
            "d.person_id = dp.id JOIN scripts s ON f.id = s.film_id JOIN people w ON "
            "s.writer_id = w.id WHERE f.title = 'The Departed'")

_ALL_CREW = _BOTH_MK.replace(" WHERE", " JOIN editors e ON f.id = e.film_id WHERE")

DEPARTED: Pool = [
    # director
    *variants(f"SELECT {{p}}.name {_MK_JOIN} {_TD}", _MK,
              ("short", "block", 4), ("full", "line", 3), ("as", "block", 2), ("tn", "line", 1)),
    *variants(f"SELECT {{p}}.name AS director {_MK_JOIN} {_TD}", _MK,
              ("short", "block", 2), ("upper", "block", 1)),
    *variants(f"SELECT DISTINCT {{p}}.name {_MK_JOIN} {_TD}", _MK, ("short", "line", 1)),
    ("SELECT p.name FROM people p WHERE p.id IN (SELECT d.person_id FROM directors d JOIN films "
     "f ON d.film_id = f.id WHERE f.title = 'The Departed')", 1),
    *variants(f"SELECT {{p}}.name, {{p}}.birth_year {_MK_JOIN} {_TD} AND "
              "{f}.release_year = 2006", _MK, ("short", "block", 1)),
    *variants(f"SELECT {{p}}.name, 'Director' AS role {_MK_JOIN} {_TD}", _MK,
              ("short", "block", 1)),
    ("SELECT name FROM people WHERE id IN (SELECT person_id FROM directors WHERE film_id = "
     f"{_TD_ID})", 2),
    block("SELECT p.name FROM people p JOIN directors d ON p.id = d.person_id WHERE d.film_id = "
          f"{_TD_ID}"),
    *variants(f"SELECT {{f}}.title, {{p}}.name AS director {_MK_JOIN} {_TD}", _MK,
              ("short", "block", 1)),
    *variants(f"SELECT {{f}}.title, {{f}}.release_year, {{p}}.name AS director {_MK_JOIN} {_TD}",
              _MK, ("as", "block", 1)),
    *variants(f"SELECT {{p}}.name, {{p}}.country {_MK_JOIN} {_TD}", _MK, ("full", "line", 1)),
    *variants(f"SELECT {{p}}.name {_MK_JOIN} WHERE {{f}}.title LIKE '%Departed%'", _MK,
              ("short", "line", 1)),
    # writer
    *variants(f"SELECT {{p}}.name {_WR_JOIN} {_TD}", _WR,
              ("short", "block", 2), ("full", "line", 1), ("tn", "line", 1)),
    *variants(f"SELECT {{s}}.title, {{p}}.name AS writer, {{s}}.deadline {_WR_JOIN} {_TD}", _WR,
              ("short", "block", 1)),
    *variants(f"SELECT {{p}}.name AS writer {_WR_JOIN} {_TD}", _WR, ("as", "block", 1)),
    ("SELECT name FROM people WHERE id = (SELECT writer_id FROM scripts WHERE film_id = "
     f"{_TD_ID})", 1),
    *variants(f"SELECT {{p}}.name, {{s}}.title {_WR_JOIN} {_TD}", _WR, ("short", "block", 1)),
    ("SELECT p.name, p.country FROM people p WHERE p.id IN (SELECT writer_id FROM scripts WHERE "
     f"film_id = {_TD_ID})", 1),
    # director and writer
    block(f"SELECT dp.name AS director, w.name AS writer {_BOTH_MK}", 3),
    (f"SELECT dp.name, w.name {_BOTH_MK}", 1),
    block("SELECT (SELECT p.name FROM people p JOIN directors d ON p.id = d.person_id WHERE "
          "d.film_id = f.id) AS director, (SELECT p.name FROM people p JOIN scripts s ON "
          "p.id = s.writer_id WHERE s.film_id = f.id) AS writer FROM films f WHERE "
          "f.title = 'The Departed'"),
    block(f"SELECT f.title, dp.name AS director, w.name AS writer {_BOTH_MK}", 1),
    block("SELECT p.name, 'Director' AS role FROM people p JOIN directors d ON p.id = "
          f"d.person_id WHERE d.film_id = {_TD_ID} UNION SELECT p.name, 'Writer' FROM people p "
          f"JOIN scripts s ON p.id = s.writer_id WHERE s.film_id = {_TD_ID}", 2),
    block("SELECT p.name FROM people p JOIN directors d ON p.id = d.person_id WHERE d.film_id = "
          f"{_TD_ID} UNION SELECT p.name FROM people p JOIN scripts s ON p.id = s.writer_id "
          f"WHERE s.film_id = {_TD_ID}"),
    # other crew and cast
    (f"SELECT name FROM editors WHERE film_id = {_TD_ID}", 1),
    block("SELECT dp.name AS director, e.name AS editor FROM films f JOIN directors d ON "
          "f.id = d.film_id JOIN people dp ON d.person_id = dp.id JOIN editors e ON "
          "f.id = e.film_id WHERE f.title = 'The Departed'"),
    block(f"SELECT dp.name AS director, w.name AS writer, e.name AS editor {_ALL_CREW}"),
    block("SELECT p.name, c.role FROM casting c JOIN people p ON c.person_id = p.id JOIN films f "
          "ON c.film_id = f.id WHERE f.title = 'The Departed'"),
    block("SELECT p.name FROM people p JOIN directors d ON p.id = d.person_id WHERE d.film_id = "
          f"{_TD_ID} UNION SELECT p.name FROM people p JOIN casting c ON p.id = c.person_id "
          f"WHERE c.film_id = {_TD_ID}"),
    ("SELECT * FROM films WHERE title = 'The Departed'", 1),
    # literal near miss
    *variants(f"SELECT {{p}}.name {_MK_JOIN} WHERE {{f}}.title = 'the departed'", _MK,
              ("short", "block", 1)),
    *variants(f"SELECT {{p}}.name {_MK_JOIN} WHERE {{f}}.title = 'Departed'", _MK,
              ("full", "line", 1)),
    # hallucinated schema
    ("SELECT director FROM films WHERE title = 'The Departed'", 2),
    ("SELECT director, writer, studio FROM films WHERE title = 'The Departed'", 1),
    block("SELECT p.name FROM producers pr JOIN people p ON pr.person_id = p.id JOIN films f ON "
          "pr.film_id = f.id WHERE f.title = 'The Departed'"),
]
