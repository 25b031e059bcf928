"""Source of truth for the film study's tasks: questions, gold SQL and shipped candidate pools.

The pools imitate what an LLM sampled ~50 times at temperature 0.7 returns for each question:
the intended readings recur with alias, join-style, column-set and layout variants; the tail
holds one-off rewrites, near misses (literal case, date format, LIKE), wrong joins and a few
hallucinated columns or tables that fail to execute. Alias and layout variants of hand-written
bases are rendered by :func:`studies.film.pool_style.variants`; the pools live in
``pools_vague.py`` and ``pools_structure.py``, the tasks and their gold SQL here.
``python -m studies.film.build_bank`` turns this module into ``tasks.jsonl``.
"""

from __future__ import annotations

from typing import Any

from studies.film.pool_style import layout
from studies.film.pools_structure import ACTION, FESTIVAL, SCRIPTS, TARANTINO
from studies.film.pools_vague import DEPARTED, DICAPRIO, PRACTICE, PULP

__all__ = ["SOURCE", "TASKS", "layout"]

SOURCE = (
    "PleaSQLarify Studio built-in film study. The five Table 1 questions follow the paper's user "
    "study (Filmmaking samples from AMBROSIA, Saparina & Lapata 2024, CC BY 4.0); database, gold "
    "SQL and candidate pools were written for this study (synthetic pools in the style of LLM "
    "samples at T=0.7, not recorded model output)."
)


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
