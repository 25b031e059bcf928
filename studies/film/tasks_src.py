"""Source of truth for the film study's tasks: questions, gold SQL and shipped candidate pools.

The pools imitate what an LLM sampled ~50 times at temperature 0.7 returns for each question:
the intended readings recur with alias, join-style, column-set and layout variants; the tail
holds one-off rewrites, near misses (literal case, date format, LIKE), wrong joins and a few
hallucinated columns or tables that fail to execute. Alias and layout variants of hand-written
bases are rendered by :func:`variants`; everything else is written out by hand.
``python -m studies.film.build_bank`` turns this module into ``tasks.jsonl``.
"""

from __future__ import annotations

import re
from typing import Any

Pool = list[tuple[str, int]]

SOURCE = (
    "PleaSQLarify Studio built-in film study. The five Table 1 questions follow the paper's user "
    "study (Filmmaking samples from AMBROSIA, Saparina & Lapata 2024, CC BY 4.0); database, gold "
    "SQL and candidate pools were written for this study (synthetic pools in the style of LLM "
    "samples at T=0.7, not recorded model output)."
)

_CLAUSE = re.compile(
    r" (FROM|(?:INNER |LEFT |CROSS )?JOIN|WHERE|GROUP BY|HAVING|ORDER BY|LIMIT"
    r"|UNION(?: ALL)?|INTERSECT|EXCEPT) "
)
_SET_OPS = ("UNION", "INTERSECT", "EXCEPT")


def _depths(sql: str) -> list[int]:
    """Parenthesis depth at each character, ignoring parentheses inside string literals."""
    depths: list[int] = []
    depth, quoted = 0, False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        depths.append(depth)
    return depths


def layout(sql: str, style: str) -> str:
    """Lay out a one-line query as 'line' (unchanged) or 'block' (one top-level clause per line).

    Subqueries stay inline, as models usually write them; set operations get a line of their own.
    """
    if style == "line":
        return sql
    if style != "block":
        raise ValueError(f"unknown layout '{style}'; use 'line' or 'block'")
    depths = _depths(sql)
    out: list[str] = []
    last = 0
    for m in _CLAUSE.finditer(sql):
        if depths[m.start()] != 0:
            continue
        word = m.group(1)
        out.append(sql[last:m.start()])
        out.append(f"\n{word}\n" if word.startswith(_SET_OPS) else f"\n{word} ")
        last = m.end()
    out.append(sql[last:])
    return "".join(out)


def render(template: str, tables: dict[str, str], alias: str) -> str:
    """Fill ``{k}`` (qualifier) and ``{K}`` (table declaration) slots in one alias style.

    Styles: 'full' (table names), 'short' (``films f``), 'as' (``films AS f``), 'upper'
    (``films F``), 'tn' (``films AS T1`` numbered in the order of ``tables``).
    """
    slots: dict[str, str] = {}
    for i, (key, table) in enumerate(tables.items(), start=1):
        if alias == "full":
            qual, decl = table, table
        elif alias == "short":
            qual, decl = key, f"{table} {key}"
        elif alias == "as":
            qual, decl = key, f"{table} AS {key}"
        elif alias == "upper":
            qual, decl = key.upper(), f"{table} {key.upper()}"
        elif alias == "tn":
            qual, decl = f"T{i}", f"{table} AS T{i}"
        else:
            raise ValueError(f"unknown alias style '{alias}'")
        slots[key] = qual
        slots[key.upper()] = decl
    return template.format(**slots)


def variants(template: str, tables: dict[str, str], *forms: tuple[str, str, int]) -> Pool:
    """Render one base query in several (alias style, layout, count) forms."""
    return [(layout(render(template, tables, a), lay), n) for a, lay, n in forms]


def block(sql: str, count: int = 1) -> tuple[str, int]:
    """A hand-written one-line query shown in block layout, with its count."""
    return layout(sql, "block"), count


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

# --------------------------------------------------------------------------------------------
# Tasks (gold SQL in the AMBROSIA style: fully qualified, one string per interpretation)
# --------------------------------------------------------------------------------------------

_G_DIR = ("FROM films JOIN directors ON films.id = directors.film_id JOIN people ON "
          "directors.person_id = people.id WHERE people.name = 'Quentin Tarantino'")
_G_REV = ("FROM reviews JOIN films ON reviews.film_id = films.id "
          "WHERE films.title = 'Pulp Fiction'")
_G_RAT = ("FROM ratings JOIN casting ON ratings.film_id = casting.film_id JOIN people ON "
          "casting.person_id = people.id WHERE people.name = 'Leonardo DiCaprio'")
_G_FES = ("FROM festival_category JOIN categories ON festival_category.category_id = "
          "categories.id JOIN festivals ON festival_category.festival_id = festivals.id")
_G_QT = ("(SELECT people.id FROM people WHERE people.name = 'Quentin Tarantino')")
_G_CAST = ("FROM casting JOIN people ON casting.person_id = people.id JOIN films ON "
           "casting.film_id = films.id JOIN directors ON films.id = directors.film_id "
           f"WHERE directors.person_id = {_G_QT}")

TASKS: list[dict[str, Any]] = [
    {
        "id": "film-practice-tarantino",
        "title": "Practice: Tarantino films",
        "question": "Which films were directed by Quentin Tarantino?",
        "ambiguity": "vague",
        "complexity": "low",
        "gold": [
            f"SELECT films.title {_G_DIR}",
            f"SELECT films.title, films.release_year {_G_DIR}",
        ],
        "candidates": PRACTICE,
    },
    {
        "id": "film-pulp-review",
        "title": "Review of Pulp Fiction",
        "question": "What was the review of Pulp Fiction?",
        "ambiguity": "vague",
        "complexity": "low",
        "gold": [
            f"SELECT reviews.review_text {_G_REV}",
            f"SELECT reviews.score {_G_REV}",
            f"SELECT reviews.review_text, reviews.score {_G_REV}",
        ],
        "candidates": PULP,
    },
    {
        "id": "film-dicaprio-rating",
        "title": "Ratings of DiCaprio movies",
        "question": "What's the rating of the movies with Leonardo DiCaprio?",
        "ambiguity": "vague",
        "complexity": "medium",
        "gold": [
            f"SELECT ratings.imdb_rating {_G_RAT}",
            f"SELECT ratings.critics_rating {_G_RAT}",
            f"SELECT ratings.imdb_rating, ratings.critics_rating, ratings.audience_rating "
            f"{_G_RAT}",
        ],
        "candidates": DICAPRIO,
    },
    {
        "id": "film-script-editor-deadline",
        "title": "Scripts and editors due 21.04.03",
        "question": "Show me scripts and editors with a deadline of 21.04.03.",
        "ambiguity": "attachment",
        "complexity": "high",
        "gold": [
            "SELECT scripts.title FROM scripts WHERE scripts.deadline = '2003-04-21' UNION "
            "SELECT editors.name FROM editors WHERE editors.deadline = '2003-04-21'",
            "SELECT scripts.title FROM scripts UNION "
            "SELECT editors.name FROM editors WHERE editors.deadline = '2003-04-21'",
        ],
        "candidates": SCRIPTS,
    },
    {
        "id": "film-action-romcom-2h",
        "title": "Two-hour action and romcoms",
        "question": "Show all the action movies and romantic comedies lasting 2 hours.",
        "ambiguity": "attachment",
        "complexity": "medium",
        "gold": [
            "SELECT films.title FROM films WHERE (films.genre = 'Action' OR films.genre = "
            "'Romantic Comedy') AND films.duration = 120",
            "SELECT films.title FROM films WHERE films.genre = 'Action' OR films.genre = "
            "'Romantic Comedy' AND films.duration = 120",
        ],
        "candidates": ACTION,
    },
    {
        "id": "film-festival-categories",
        "title": "Festival categories",
        "question": "What film categories does each film festival offer?",
        "ambiguity": "scope",
        "complexity": "high",
        "gold": [
            f"SELECT categories.name {_G_FES} GROUP BY festival_category.category_id HAVING "
            "COUNT(DISTINCT festival_category.festival_id) = (SELECT COUNT(*) FROM festivals)",
            f"SELECT festivals.name, categories.name {_G_FES}",
        ],
        "candidates": FESTIVAL,
    },
    {
        "id": "film-tarantino-cast",
        "title": "Actors in Tarantino films",
        "question": "Which actors appear in each film directed by Quentin Tarantino?",
        "ambiguity": "scope",
        "complexity": "high",
        "gold": [
            f"SELECT people.name {_G_CAST} GROUP BY casting.person_id HAVING "
            "COUNT(DISTINCT casting.film_id) = (SELECT COUNT(*) FROM directors WHERE "
            f"directors.person_id = {_G_QT})",
            f"SELECT films.title, people.name {_G_CAST}",
        ],
        "candidates": TARANTINO,
    },
    {
        "id": "film-departed-makers",
        "title": "Who made The Departed",
        "question": "Who made The Departed?",
        "ambiguity": "vague",
        "complexity": "medium",
        "gold": [
            "SELECT people.name FROM directors JOIN people ON directors.person_id = people.id "
            "JOIN films ON directors.film_id = films.id WHERE films.title = 'The Departed'",
            "SELECT people.name FROM scripts JOIN people ON scripts.writer_id = people.id "
            "JOIN films ON scripts.film_id = films.id WHERE films.title = 'The Departed'",
            "SELECT director.name, writer.name FROM films "
            "JOIN directors ON films.id = directors.film_id "
            "JOIN people AS director ON directors.person_id = director.id "
            "JOIN scripts ON films.id = scripts.film_id "
            "JOIN people AS writer ON scripts.writer_id = writer.id "
            "WHERE films.title = 'The Departed'",
        ],
        "candidates": DEPARTED,
    },
]
