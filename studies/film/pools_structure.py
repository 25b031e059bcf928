"""Shipped candidate pools of the film study's attachment and scope tasks (Table 1 #3–#5, extra).

Both readings of each attachment and scope ambiguity recur with their spelling variants, next to
mixed readings, date-format and literal near misses, wrong joins and failing columns.
"""

from __future__ import annotations

from studies.film.pool_style import Pool, block, variants

# --------------------------------------------------------------------------------------------
# Table 1 #3: Show me scripts and editors with a deadline of 21.04.03.  (attachment)
# --------------------------------------------------------------------------------------------

_D = "'2003-04-21'"
_BOTH = (f"SELECT title FROM scripts WHERE deadline = {_D} UNION SELECT name FROM editors "
         f"WHERE deadline = {_D}")
_ED_ONLY = f"SELECT title FROM scripts UNION SELECT name FROM editors WHERE deadline = {_D}"
_SE = {"s": "scripts", "e": "editors"}

SCRIPTS: Pool = [
    # both filtered (deadline attaches to scripts and editors)
    (_BOTH, 4),
    block(_BOTH, 3),
    (f"SELECT scripts.title FROM scripts WHERE scripts.deadline = {_D} UNION SELECT "
     f"editors.name FROM editors WHERE editors.deadline = {_D}", 2),
    block(f"SELECT title FROM scripts WHERE deadline = {_D} UNION ALL SELECT name FROM editors "
          f"WHERE deadline = {_D}", 2),
    block(f"SELECT title AS name FROM scripts WHERE deadline = {_D} UNION SELECT name FROM "
          f"editors WHERE deadline = {_D}"),
    block(f"SELECT s.title FROM scripts s WHERE s.deadline = {_D} UNION SELECT e.name FROM "
          f"editors e WHERE e.deadline = {_D}"),
    block(f"{_BOTH} ORDER BY 1"),
    block(f"SELECT name FROM (SELECT title AS name, deadline FROM scripts UNION ALL SELECT name, "
          f"deadline FROM editors) WHERE deadline = {_D}"),
    ("SELECT title FROM scripts WHERE strftime('%d.%m.%y', deadline) = '21.04.03' UNION SELECT "
     "name FROM editors WHERE strftime('%d.%m.%y', deadline) = '21.04.03'", 1),
    ("SELECT title FROM scripts WHERE deadline = DATE('2003-04-21') UNION SELECT name FROM "
     "editors WHERE deadline = DATE('2003-04-21')", 1),
    block(f"SELECT 'Script' AS type, title AS name, deadline FROM scripts WHERE deadline = {_D} "
          f"UNION ALL SELECT 'Editor' AS type, name, deadline FROM editors WHERE deadline = {_D}",
          2),
    block(f"SELECT 'script' AS kind, title FROM scripts WHERE deadline = {_D} UNION SELECT "
          f"'editor' AS kind, name FROM editors WHERE deadline = {_D}"),
    block(f"SELECT title, deadline FROM scripts WHERE deadline = {_D} UNION SELECT name, "
          f"deadline FROM editors WHERE deadline = {_D}"),
    block(f"SELECT s.title, p.name AS writer, s.deadline FROM scripts s JOIN people p ON "
          f"s.writer_id = p.id WHERE s.deadline = {_D} UNION SELECT f.title, e.name, e.deadline "
          f"FROM editors e JOIN films f ON e.film_id = f.id WHERE e.deadline = {_D}"),
    # only editors filtered (deadline attaches to editors)
    (_ED_ONLY, 2),
    block(_ED_ONLY),
    block(f"SELECT title, deadline FROM scripts UNION SELECT name, deadline FROM editors WHERE "
          f"deadline = {_D}"),
    (f"SELECT scripts.title FROM scripts UNION SELECT editors.name FROM editors WHERE "
     f"editors.deadline = {_D}", 1),
    block(f"SELECT 'Script' AS type, title AS name FROM scripts UNION ALL SELECT 'Editor' AS "
          f"type, name FROM editors WHERE deadline = {_D}"),
    # only scripts filtered / no filter
    block(f"SELECT title FROM scripts WHERE deadline = {_D} UNION SELECT name FROM editors"),
    ("SELECT title FROM scripts UNION SELECT name FROM editors", 1),
    # joined on the film instead of listed together
    *variants(f"SELECT {{s}}.title, {{e}}.name FROM {{S}} JOIN {{E}} ON {{s}}.film_id = "
              f"{{e}}.film_id WHERE {{s}}.deadline = {_D} AND {{e}}.deadline = {_D}", _SE,
              ("short", "block", 2), ("full", "line", 1)),
    *variants(f"SELECT {{s}}.title, {{e}}.name, {{s}}.deadline FROM {{S}} JOIN {{E}} ON "
              f"{{s}}.film_id = {{e}}.film_id WHERE {{s}}.deadline = {_D} AND "
              f"{{e}}.deadline = {_D}", _SE, ("as", "block", 1)),
    *variants(f"SELECT {{s}}.title, {{e}}.name FROM {{S}} JOIN {{E}} ON {{s}}.film_id = "
              f"{{e}}.film_id WHERE {{s}}.deadline = {_D} OR {{e}}.deadline = {_D}", _SE,
              ("short", "block", 1)),
    *variants(f"SELECT {{s}}.title, {{e}}.name FROM {{S}} LEFT JOIN {{E}} ON {{s}}.film_id = "
              f"{{e}}.film_id AND {{e}}.deadline = {_D} WHERE {{s}}.deadline = {_D}", _SE,
              ("short", "block", 1)),
    *variants(f"SELECT * FROM {{S}} JOIN {{E}} ON {{s}}.film_id = {{e}}.film_id WHERE "
              f"{{s}}.deadline = {_D} AND {{e}}.deadline = {_D}", _SE, ("short", "line", 1)),
    *variants(f"SELECT {{s}}.title, {{e}}.name FROM {{S}} CROSS JOIN {{E}} WHERE "
              f"{{s}}.deadline = {_D} AND {{e}}.deadline = {_D}", _SE, ("short", "block", 1)),
    block(f"SELECT f.title AS film, s.title AS script, e.name AS editor FROM films f LEFT JOIN "
          f"scripts s ON f.id = s.film_id LEFT JOIN editors e ON f.id = e.film_id WHERE "
          f"s.deadline = {_D} OR e.deadline = {_D}"),
    # one table only
    (f"SELECT * FROM scripts WHERE deadline = {_D}", 1),
    (f"SELECT * FROM editors WHERE deadline = {_D}", 1),
    (f"SELECT title, deadline FROM scripts WHERE deadline = {_D}", 1),
    block(f"SELECT s.title, p.name AS writer FROM scripts s JOIN people p ON s.writer_id = p.id "
          f"WHERE s.deadline = {_D}"),
    block(f"SELECT e.name, f.title AS film FROM editors e JOIN films f ON e.film_id = f.id WHERE "
          f"e.deadline = {_D}"),
    block(f"SELECT title FROM scripts WHERE deadline = {_D} OR film_id IN (SELECT film_id FROM "
          f"editors WHERE deadline = {_D})"),
    # date literal near misses
    ("SELECT title FROM scripts WHERE deadline = '21.04.03' UNION SELECT name FROM editors "
     "WHERE deadline = '21.04.03'", 1),
    block("SELECT title FROM scripts WHERE deadline = '2003-21-04' UNION SELECT name FROM "
          "editors WHERE deadline = '2003-21-04'"),
    block("SELECT title FROM scripts WHERE deadline LIKE '%04-21' UNION SELECT name FROM "
          "editors WHERE deadline LIKE '%04-21'"),
    (f"SELECT title FROM scripts WHERE deadline >= {_D} UNION SELECT name FROM editors WHERE "
     f"deadline >= {_D}", 1),
    # hallucinated schema / incompatible union
    block(f"SELECT * FROM scripts WHERE deadline = {_D} UNION SELECT * FROM editors WHERE "
          f"deadline = {_D}", 2),
    (f"SELECT script_title FROM scripts WHERE deadline = {_D} UNION SELECT editor_name FROM "
     f"editors WHERE deadline = {_D}", 1),
    block(f"SELECT title FROM scripts WHERE due_date = {_D} UNION SELECT name FROM editors "
          f"WHERE due_date = {_D}"),
]

# --------------------------------------------------------------------------------------------
# Table 1 #4: Show all the action movies and romantic comedies lasting 2 hours.  (attachment)
# --------------------------------------------------------------------------------------------

_G2 = "genre IN ('Action', 'Romantic Comedy')"
_OR2 = "(genre = 'Action' OR genre = 'Romantic Comedy')"

ACTION: Pool = [
    # both genres last two hours
    (f"SELECT title FROM films WHERE {_G2} AND duration = 120", 5),
    block(f"SELECT title FROM films WHERE {_G2} AND duration = 120"),
    (f"SELECT title FROM films WHERE {_OR2} AND duration = 120", 2),
    (f"SELECT title FROM films WHERE duration = 120 AND {_G2}", 1),
    (f"SELECT title FROM films WHERE {_OR2} AND duration = 120 ORDER BY title", 1),
    ("SELECT films.title FROM films WHERE (films.genre = 'Action' OR films.genre = "
     "'Romantic Comedy') AND films.duration = 120", 1),
    (f"SELECT title, genre FROM films WHERE {_G2} AND duration = 120", 3),
    block(f"SELECT title, genre FROM films WHERE {_OR2} AND duration = 120 ORDER BY genre"),
    (f"SELECT title, genre, duration FROM films WHERE {_G2} AND duration = 120", 2),
    ("SELECT f.title, f.genre, f.duration FROM films f WHERE (f.genre = 'Action' OR f.genre = "
     "'Romantic Comedy') AND f.duration = 120 ORDER BY f.title", 1),
    (f"SELECT title, duration FROM films WHERE {_G2} AND duration = 120", 1),
    (f"SELECT title, release_year FROM films WHERE {_G2} AND duration = 120", 1),
    (f"SELECT genre, title FROM films WHERE {_G2} AND duration = 120", 1),
    block(f"SELECT title, genre, duration, release_year FROM films WHERE {_OR2} "
          "AND duration = 120"),
    (f"SELECT * FROM films WHERE {_G2} AND duration = 120", 2),
    block("SELECT title FROM films WHERE genre = 'Action' AND duration = 120 UNION SELECT title "
          "FROM films WHERE genre = 'Romantic Comedy' AND duration = 120", 2),
    block("SELECT title, genre FROM films WHERE genre = 'Action' AND duration = 120 UNION ALL "
          "SELECT title, genre FROM films WHERE genre = 'Romantic Comedy' AND duration = 120"),
    ("SELECT f.title FROM films f WHERE f.genre IN ('Action', 'Romantic Comedy') AND "
     "f.duration = 120", 1),
    # only romantic comedies last two hours
    ("SELECT title FROM films WHERE genre = 'Action' OR genre = 'Romantic Comedy' AND "
     "duration = 120", 2),
    ("SELECT title FROM films WHERE genre = 'Action' OR (genre = 'Romantic Comedy' AND "
     "duration = 120)", 2),
    block("SELECT title, genre FROM films WHERE genre = 'Action' OR (genre = 'Romantic Comedy' "
          "AND duration = 120)"),
    block("SELECT title FROM films WHERE genre = 'Action' UNION SELECT title FROM films WHERE "
          "genre = 'Romantic Comedy' AND duration = 120"),
    block("SELECT title, genre, duration FROM films WHERE genre = 'Action' OR (genre = "
          "'Romantic Comedy' AND duration = 120) ORDER BY genre"),
    ("SELECT title FROM films WHERE genre = 'Action' AND duration = 120 OR genre = "
     "'Romantic Comedy'", 1),
    # duration near misses
    (f"SELECT title FROM films WHERE {_G2} AND duration >= 120", 1),
    (f"SELECT title, duration FROM films WHERE {_G2} AND duration BETWEEN 110 AND 130", 1),
    (f"SELECT title FROM films WHERE {_G2} AND duration = 2", 1),
    (f"SELECT title FROM films WHERE {_G2} AND duration / 60 = 2", 1),
    (f"SELECT title FROM films WHERE {_G2} AND duration <= 120", 1),
    # genre literal near misses
    ("SELECT title FROM films WHERE (genre LIKE '%action%' OR genre LIKE '%romantic%') AND "
     "duration = 120", 1),
    block("SELECT title, genre FROM films WHERE (genre LIKE '%Action%' OR genre LIKE '%Rom%') "
          "AND duration = 120"),
    ("SELECT title FROM films WHERE genre IN ('Action', 'Romance') AND duration = 120", 1),
    ("SELECT title FROM films WHERE genre IN ('action', 'romantic comedy') AND duration = 120",
     1),
    ("SELECT title FROM films WHERE genre IN ('Action', 'Romantic comedy') AND duration = 120",
     1),
    ("SELECT title FROM films WHERE genre IN ('Action', 'Rom-Com') AND duration = 120", 1),
    ("SELECT title FROM films WHERE genre = 'Action' AND genre = 'Romantic Comedy' AND "
     "duration = 120", 1),
    ("SELECT title FROM films WHERE duration = 120", 1),
    (f"SELECT COUNT(*) FROM films WHERE {_G2} AND duration = 120", 1),
    # hallucinated schema
    (f"SELECT title FROM films WHERE {_G2} AND runtime = 120", 2),
    block("SELECT f.title FROM films f JOIN genres g ON f.genre_id = g.id WHERE g.name IN "
          "('Action', 'Romantic Comedy') AND f.duration = 120"),
    (f"SELECT title FROM movies WHERE {_G2} AND duration = 120", 1),
]

# --------------------------------------------------------------------------------------------
# Table 1 #5: What film categories does each film festival offer?  (scope)
# --------------------------------------------------------------------------------------------

_FES = {"f": "festivals", "fc": "festival_category", "c": "categories"}
_FES_JOIN = ("FROM {F} JOIN {FC} ON {f}.id = {fc}.festival_id JOIN {C} ON "
             "{fc}.category_id = {c}.id")
_ALL_FEST = "(SELECT COUNT(*) FROM festivals)"

FESTIVAL: Pool = [
    # each festival with its categories (distributive)
    *variants(f"SELECT {{f}}.name, {{c}}.name {_FES_JOIN}", _FES,
              ("short", "block", 4), ("full", "line", 2), ("as", "block", 2), ("tn", "line", 1)),
    *variants(f"SELECT DISTINCT {{f}}.name, {{c}}.name {_FES_JOIN}", _FES, ("short", "line", 1)),
    *variants(f"SELECT {{f}}.id, {{f}}.name, {{c}}.name {_FES_JOIN}", _FES, ("short", "block", 1)),
    *variants(f"SELECT {{c}}.name AS category, {{f}}.name AS festival {_FES_JOIN}", _FES,
              ("short", "block", 1)),
    block("SELECT f.name, c.name FROM festivals f JOIN categories c ON c.id IN (SELECT "
          "category_id FROM festival_category WHERE festival_id = f.id)"),
    block("SELECT f.name AS festival, c.name AS category FROM categories c JOIN "
          "festival_category fc ON c.id = fc.category_id JOIN festivals f ON f.id = "
          "fc.festival_id ORDER BY c.name"),
    block("SELECT f.name, c.name FROM festival_category fc JOIN festivals f ON f.id = "
          "fc.festival_id JOIN categories c ON c.id = fc.category_id ORDER BY f.id"),
    *variants(f"SELECT {{f}}.name AS festival, {{c}}.name AS category {_FES_JOIN}", _FES,
              ("short", "block", 3), ("upper", "line", 1)),
    *variants(f"SELECT {{f}}.name AS festival, {{c}}.name AS category {_FES_JOIN} "
              "ORDER BY {f}.name", _FES, ("short", "block", 2)),
    *variants(f"SELECT {{f}}.name, {{c}}.name {_FES_JOIN} ORDER BY {{f}}.name, {{c}}.name",
              _FES, ("short", "block", 1), ("full", "block", 1)),
    block("SELECT f.name, c.name FROM festivals f INNER JOIN festival_category fc ON "
          "f.id = fc.festival_id INNER JOIN categories c ON fc.category_id = c.id"),
    block("SELECT f.name AS festival_name, c.name AS category_name FROM festival_category fc "
          "JOIN festivals f ON fc.festival_id = f.id JOIN categories c ON fc.category_id = c.id"),
    block("SELECT f.name, c.name FROM festivals f LEFT JOIN festival_category fc ON "
          "f.id = fc.festival_id LEFT JOIN categories c ON fc.category_id = c.id"),
    block("SELECT f.name, f.city, c.name AS category FROM festivals f JOIN festival_category fc "
          "ON f.id = fc.festival_id JOIN categories c ON fc.category_id = c.id"),
    # one row per festival
    *variants(f"SELECT {{f}}.name, GROUP_CONCAT({{c}}.name, ', ') AS categories {_FES_JOIN} "
              "GROUP BY {f}.name", _FES, ("short", "block", 3)),
    *variants(f"SELECT {{f}}.name, GROUP_CONCAT({{c}}.name) {_FES_JOIN} GROUP BY {{f}}.id",
              _FES, ("upper", "block", 1)),
    *variants(f"SELECT {{f}}.name, COUNT({{fc}}.category_id) AS num_categories {_FES_JOIN} "
              "GROUP BY {f}.name", _FES, ("short", "block", 1)),
    *variants(f"SELECT {{f}}.name, COUNT(*) AS n, GROUP_CONCAT({{c}}.name) AS categories "
              f"{_FES_JOIN} GROUP BY {{f}}.name ORDER BY n DESC", _FES, ("short", "block", 1)),
    # categories every festival offers (collective)
    *variants(f"SELECT {{c}}.name {_FES_JOIN} GROUP BY {{c}}.id HAVING "
              f"COUNT(DISTINCT {{f}}.id) = {_ALL_FEST}", _FES,
              ("short", "block", 2), ("full", "line", 1)),
    ("SELECT category_id FROM festival_category GROUP BY category_id HAVING "
     f"COUNT(DISTINCT festival_id) = {_ALL_FEST}", 1),
    block(" INTERSECT ".join(
        "SELECT c.name FROM categories c JOIN festival_category fc ON c.id = fc.category_id "
        f"WHERE fc.festival_id = {i}" for i in range(1, 6))),
    block("SELECT c.name FROM categories c JOIN festival_category fc ON c.id = fc.category_id "
          f"GROUP BY c.name HAVING COUNT(DISTINCT fc.festival_id) = {_ALL_FEST}"),
    ("SELECT name FROM categories WHERE id IN (SELECT category_id FROM festival_category "
     f"GROUP BY category_id HAVING COUNT(*) = {_ALL_FEST})", 1),
    block("SELECT c.name FROM categories c WHERE NOT EXISTS (SELECT 1 FROM festivals f WHERE "
          "NOT EXISTS (SELECT 1 FROM festival_category fc WHERE fc.festival_id = f.id AND "
          "fc.category_id = c.id))"),
    block("SELECT c.name FROM categories c JOIN festival_category fc ON c.id = fc.category_id "
          "GROUP BY c.name HAVING COUNT(*) = 5"),
    block("SELECT c.name FROM categories c JOIN festival_category fc ON c.id = fc.category_id "
          "GROUP BY c.name HAVING COUNT(DISTINCT fc.festival_id) > 1"),
    # category lists without festivals
    ("SELECT DISTINCT c.name FROM categories c JOIN festival_category fc ON "
     "c.id = fc.category_id", 1),
    ("SELECT name FROM categories", 1),
    ("SELECT festival_id, category_id FROM festival_category", 1),
    block("SELECT c.name, COUNT(fc.festival_id) AS festivals FROM categories c LEFT JOIN "
          "festival_category fc ON c.id = fc.category_id GROUP BY c.name"),
    # wrong joins
    ("SELECT f.name, c.name FROM festivals f, categories c", 1),
    block("SELECT f.name, c.name FROM festivals f JOIN festival_category fc ON "
          "f.id = fc.festival_id JOIN categories c ON fc.festival_id = c.id"),
    # hallucinated schema
    block("SELECT f.festival_name, c.category_name FROM festivals f JOIN festival_category fc "
          "ON f.id = fc.festival_id JOIN categories c ON fc.category_id = c.id", 2),
    ("SELECT name, categories FROM festivals", 1),
    block("SELECT f.name, c.name FROM festivals f JOIN festival_categories fc ON "
          "f.id = fc.festival_id JOIN categories c ON fc.category_id = c.id"),
]

# --------------------------------------------------------------------------------------------
# Extra scope: Which actors appear in each film directed by Quentin Tarantino?
# --------------------------------------------------------------------------------------------

_CAST = {"f": "films", "d": "directors", "c": "casting", "a": "people"}
_CAST_JOIN = ("FROM {F} JOIN {D} ON {f}.id = {d}.film_id JOIN {C} ON {f}.id = {c}.film_id "
              "JOIN {A} ON {c}.person_id = {a}.id")
_QT_ID = "(SELECT id FROM people WHERE name = 'Quentin Tarantino')"
_QT_SUB = f"WHERE {{d}}.person_id = {_QT_ID}"
_QT_FILMS = f"(SELECT COUNT(*) FROM directors WHERE person_id = {_QT_ID})"
_DIRP = ("FROM films f JOIN directors d ON f.id = d.film_id JOIN people dp ON "
         "d.person_id = dp.id JOIN casting c ON f.id = c.film_id JOIN people a ON "
         "c.person_id = a.id WHERE dp.name = 'Quentin Tarantino'")

_DIRP_LIKE = _DIRP.replace("= 'Quentin Tarantino'", "LIKE '%Tarantino%'")

TARANTINO: Pool = [
    # each film with its actors (distributive)
    block(f"SELECT f.title, a.name {_DIRP}", 4),
    (f"SELECT f.title, a.name AS actor {_DIRP}", 2),
    block(f"SELECT f.title, a.name AS actor, c.role {_DIRP}", 2),
    block(f"SELECT f.title, a.name {_DIRP} ORDER BY f.title", 2),
    block(f"SELECT f.title, a.name {_DIRP} ORDER BY f.release_year, a.name"),
    block(f"SELECT f.title, f.release_year, a.name, c.role {_DIRP} ORDER BY f.release_year"),
    block(f"SELECT a.name, f.title {_DIRP} ORDER BY a.name"),
    *variants(f"SELECT {{f}}.title, {{a}}.name {_CAST_JOIN} {_QT_SUB}", _CAST,
              ("short", "block", 3), ("full", "line", 1), ("tn", "block", 1),
              ("as", "line", 1), ("upper", "block", 1)),
    *variants("SELECT {f}.title, {a}.name FROM {F} JOIN {D} ON {f}.id = {d}.film_id LEFT JOIN "
              "{C} ON {f}.id = {c}.film_id LEFT JOIN {A} ON {c}.person_id = {a}.id "
              f"{_QT_SUB}", _CAST, ("short", "block", 1)),
    block(f"SELECT f.title, a.name {_DIRP_LIKE}"),
    block("SELECT f.title, p.name FROM films f JOIN casting c ON f.id = c.film_id JOIN people p "
          "ON c.person_id = p.id WHERE f.id IN (SELECT film_id FROM directors WHERE person_id = "
          f"{_QT_ID})", 2),
    block("SELECT f.title, p.name FROM films f JOIN casting c ON f.id = c.film_id JOIN people p "
          "ON c.person_id = p.id WHERE f.id IN (SELECT d.film_id FROM directors d JOIN people q ON "
          "d.person_id = q.id WHERE q.name LIKE '%Tarantino%')"),
    ("SELECT a.name, f.title FROM films f JOIN directors d ON f.id = d.film_id JOIN people dp "
     "ON d.person_id = dp.id JOIN casting c ON f.id = c.film_id JOIN people a ON "
     "c.person_id = a.id WHERE dp.name = 'Quentin Tarantino'", 1),
    # one row per film
    block(f"SELECT f.title, GROUP_CONCAT(a.name, ', ') AS actors {_DIRP} GROUP BY f.title", 2),
    block(f"SELECT f.title, GROUP_CONCAT(a.name) {_DIRP} GROUP BY f.id ORDER BY f.release_year"),
    block(f"SELECT f.title, COUNT(*) AS num_actors {_DIRP} GROUP BY f.title"),
    block(f"SELECT f.title AS film, GROUP_CONCAT(a.name || ' (' || c.role || ')', '; ') AS cast "
          f"{_DIRP} GROUP BY f.title"),
    (f"SELECT COUNT(DISTINCT a.id) AS actors {_DIRP}", 1),
    # actors over all Tarantino films
    block(f"SELECT DISTINCT a.name {_DIRP}", 2),
    (f"SELECT a.name {_DIRP}", 1),
    block("SELECT DISTINCT p.name FROM people p JOIN casting c ON p.id = c.person_id JOIN "
          "directors d ON c.film_id = d.film_id WHERE d.person_id = 1 ORDER BY p.name"),
    block(f"SELECT a.name, COUNT(*) AS films {_DIRP} GROUP BY a.name ORDER BY films DESC"),
    # actors in every Tarantino film (collective)
    *variants(f"SELECT {{a}}.name {_CAST_JOIN} {_QT_SUB} GROUP BY {{a}}.id HAVING "
              f"COUNT(DISTINCT {{f}}.id) = {_QT_FILMS}", _CAST, ("short", "block", 2)),
    block(f"SELECT a.name {_DIRP} GROUP BY a.name HAVING COUNT(DISTINCT f.id) = "
          "(SELECT COUNT(*) FROM directors d2 JOIN people p2 ON d2.person_id = p2.id WHERE "
          "p2.name = 'Quentin Tarantino')"),
    block(f"SELECT a.name {_DIRP} GROUP BY a.name HAVING COUNT(*) = 4"),
    block("SELECT p.name FROM people p JOIN casting c ON p.id = c.person_id WHERE c.film_id IN "
          "(SELECT film_id FROM directors WHERE person_id = 1) GROUP BY p.id HAVING COUNT(*) = "
          "(SELECT COUNT(*) FROM directors WHERE person_id = 1)"),
    (" INTERSECT ".join(f"SELECT person_id FROM casting WHERE film_id = {i}" for i in range(1, 5)),
     1),
    block(f"SELECT a.name {_DIRP} GROUP BY a.name HAVING COUNT(*) > 1"),
    block("SELECT p.name FROM people p WHERE NOT EXISTS (SELECT 1 FROM directors d WHERE "
          f"d.person_id = {_QT_ID} AND NOT EXISTS (SELECT 1 FROM casting c WHERE "
          "c.film_id = d.film_id AND c.person_id = p.id))"),
    # wrong readings
    block("SELECT f.title FROM films f JOIN directors d ON f.id = d.film_id JOIN people p ON "
          "d.person_id = p.id WHERE p.name = 'Quentin Tarantino'"),
    block("SELECT f.title, p.name FROM films f JOIN casting c ON f.id = c.film_id JOIN people p "
          "ON c.person_id = p.id WHERE p.name = 'Quentin Tarantino'"),
    block(f"SELECT f.title, a.name {_DIRP} AND a.name != 'Quentin Tarantino'"),
    block("SELECT f.title, a.name FROM films f JOIN directors d ON f.id = d.film_id JOIN people "
          "dp ON d.person_id = dp.id JOIN casting c ON f.id = c.film_id JOIN people a ON "
          "c.person_id = a.id WHERE dp.name = 'quentin tarantino'"),
    block("SELECT f.title, a.name FROM films f JOIN directors d ON f.id = d.film_id JOIN casting "
          "c ON f.id = c.film_id JOIN people a ON c.person_id = a.id WHERE d.person_id = 1 AND "
          "f.release_year > 1995"),
    # hallucinated schema
    ("SELECT f.title, a.name FROM films f JOIN casting c ON f.id = c.film_id JOIN people a ON "
     "c.person_id = a.id WHERE f.director = 'Quentin Tarantino'", 2),
    block("SELECT f.title, c.actor_name FROM films f JOIN casting c ON f.id = c.film_id JOIN "
          "directors d ON f.id = d.film_id WHERE d.person_id = 1"),
    block("SELECT m.title, ac.name FROM movies m JOIN actors ac ON m.id = ac.movie_id JOIN "
          "directors d ON m.id = d.film_id WHERE d.person_id = 1"),
]
