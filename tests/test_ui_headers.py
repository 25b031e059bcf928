"""Output headers a reader can tell apart: ``SELECT f.name, c.name`` came back headed
``name | name`` in the Predicted Output, the Action Space tooltip and the chat's result."""

from __future__ import annotations

import re
from html import unescape

import pytest

from ui.headers import distinct_headers


@pytest.fixture(scope="module")
def film_pools():
    """Every prepared pool of the built-in film bank."""
    from core.engine.prepare import default_pool_dir, load_prepared
    from core.engine.taskbank import load_task_bank
    from ui.bank_cache import bank_path

    tasks, _ = load_task_bank(bank_path(), lenient=True)
    return {t.id: load_prepared(t, default_pool_dir(bank_path())) for t in tasks}


def _workspace(pool, candidate: int, labels: str):
    """The free workspace over ``pool`` with only ``candidate``'s output class left."""
    from ui.state import WorkspaceState, default_session
    from ui.views import LABELS

    ws = WorkspaceState(default_session(pool), pool.question, extra={LABELS: labels})
    same = [i for i in range(pool.n) if pool.class_index[i] == pool.class_index[candidate]]
    ws.session.restrict(same)
    return ws


def _heads(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r"<th>(.*?)</th>", html)]


@pytest.mark.parametrize(("labels", "expected"), [
    ("sql", ["festivals.name", "categories.name"]),
    ("both", ["festivals.name", "categories.name"]),
    ("plain", ["festival's name", "category's name"])])
def test_two_name_columns_are_headed_by_their_tables(film_pools, labels, expected) -> None:
    """The festival task's readings that list festivals with their categories: the Predicted
    Output and the glyph's tooltip name the table of each ``name`` column."""
    from ui.action_space import hover_text
    from ui.views import output_data

    pool = film_pools["film-festival-categories"]
    candidate = next(i for i, r in enumerate(pool.results)
                     if r.ok and list(r.columns) == ["name", "name"])
    ws = _workspace(pool, candidate, labels)
    assert _heads(output_data(ws)["html"]) == expected
    tip = hover_text(ws.session, candidate, 1, labels=labels)
    assert all(h in unescape(tip) for h in expected)


def test_every_film_output_has_distinct_headers(film_pools) -> None:
    """No output of any film task shows two headers alike (a ``SELECT *`` over a join is
    numbered: its select list does not say which table a column is read from)."""
    checked = 0
    for pool in film_pools.values():
        for sql, result in zip(pool.sqls, pool.results, strict=True):
            if result.ok:
                heads = distinct_headers(result.columns, sql)
                assert len(set(heads)) == len(heads), (pool.task_id, sql, heads)
                checked += len(heads) > len(set(result.columns))
    assert checked >= 3  # the bank has repeated headers to tell apart


def test_headers_without_a_select_list_are_numbered_and_unique_ones_kept() -> None:
    assert distinct_headers(["id", "title", "id"], "SELECT * FROM a JOIN b") == [
        "id", "title", "id (2)"]
    assert distinct_headers(["name", "n"], "SELECT a.name, COUNT(*) AS n FROM a") == [
        "name", "n"]
    assert distinct_headers(["name", "name"], "SELECT x.name, name FROM people AS x JOIN b") == [
        "people.name", "name"]
    assert distinct_headers(["name", "name"]) == ["name", "name (2)"]
