"""The Action Space drawing spec, chips and gesture functions, tested without Streamlit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.engine.execute import ExecutionResult
from core.engine.features import Feature
from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from tests.bank_helpers import make_bank
from ui import actions
from ui.action_space import (
    GLYPH_CAP,
    REDS,
    cached_space,
    clusters,
    contains_mask,
    glyph_size,
    output_preview,
    selected_ids,
    space_spec,
)
from ui.chips import chip, chip_row, output_table, sql_block
from ui.state import WorkspaceState, workspace_state


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory):
    """The 30-candidate AMBROSIA task, prepared with its layout."""
    bank = make_bank(tmp_path_factory.mktemp("bank"), lines=(8,))
    tasks, _ = load_task_bank(bank)
    return load_prepared(tasks[0], default_pool_dir(bank))


def test_survivors_are_glyphs_with_their_ids_at_their_stored_positions(pool) -> None:
    session = RepairSession(pool)
    spec = space_spec(session, session.next_variable())
    assert [g["id"] for g in spec["glyphs"]] == list(range(pool.n))
    for g in spec["glyphs"]:
        assert (g["x"], g["y"]) == pytest.approx(tuple(pool.positions[g["id"]]))
        assert g["valid"] == bool(pool.valid[g["id"]])
    assert spec["dragmode"] == "lasso" and not spec["dead"]
    assert spec["task"] == pool.task_id


def test_filtering_keeps_positions_and_fades_the_rest(pool) -> None:
    session = RepairSession(pool)
    session.answer(session.next_variable().keys, True)
    spec = space_spec(session, session.next_variable())
    dead = np.flatnonzero(~session.alive)
    assert np.allclose(spec["dead"], pool.positions[dead], atol=1e-6)
    # faded candidates are dots, never glyphs: they can never be selected back in
    assert [g["id"] for g in spec["glyphs"]] == session.survivors.tolist()
    for g in spec["glyphs"]:
        assert g["x"] == pytest.approx(pool.positions[g["id"], 0])


def test_cells_are_red_exactly_for_candidates_with_the_variable(pool) -> None:
    session = RepairSession(pool)
    variable = session.next_variable()
    spec = space_spec(session, variable)
    red = contains_mask(session, variable)
    n_red = sum(len(c["polys"]) for c in spec["cells"] if c["red"])
    n_blue = sum(len(c["polys"]) for c in spec["cells"] if not c["red"])
    assert n_red == int(red[session.survivors].sum()) > 0
    assert n_blue == len(session.survivors) - n_red
    for cell in spec["cells"]:
        for poly in cell["polys"]:  # flat x, y pairs inside the unit square
            assert len(poly) >= 6 and len(poly) % 2 == 0
            assert min(poly) >= -1e-6 and max(poly) <= 1 + 1e-6
    bodies = {g["colour"] for g in spec["glyphs"] if g["valid"] and red[g["id"]]}
    assert bodies and bodies <= set(REDS)
    numbers = {c.number for c in clusters(session)}
    assert {c["cluster"] for c in spec["cells"]} == numbers
    assert sorted(int(label["text"]) for label in spec["labels"]) == sorted(numbers)


def test_glyphs_are_tables_sized_by_the_output(pool) -> None:
    session = RepairSession(pool)
    spec = space_spec(session, session.next_variable())
    for g in spec["glyphs"]:
        assert (g["w"], g["h"]) == glyph_size(pool.results[g["id"]])
        if not g["valid"]:
            assert g["colour"] == spec["colours"]["invalid"]  # drawn as an X


def test_glyph_mimics_the_table_and_is_capped() -> None:
    narrow = ExecutionResult(["a"], [(1,)] * 2)
    wide = ExecutionResult(list("abcdefghij"), [(0,) * 10] * 100)
    assert glyph_size(narrow)[0] < glyph_size(ExecutionResult(["a", "b"], [(1, 2)] * 2))[0]
    assert glyph_size(narrow)[1] < glyph_size(ExecutionResult(["a"], [(1,)] * 5))[1]
    assert glyph_size(wide) == (GLYPH_CAP, GLYPH_CAP)
    assert "error" in output_preview(ExecutionResult(error="no such column: x"))


def test_hover_shows_features_and_output_preview(pool) -> None:
    session = RepairSession(pool)
    spec = space_spec(session)
    glyph = next(g for g in spec["glyphs"] if g["valid"])
    cid, text = glyph["id"], glyph["tip"]
    assert f"in cluster {glyph['cluster']}" in text and f"#{cid}" not in text  # no internal id
    assert pool.feature_keys(cid)[0].split(" ")[0] in text
    assert pool.results[cid].columns[0] in text


def test_chip_encoding() -> None:
    f = Feature("SELECT", "film.title")
    assert 'class="kw">SELECT<' in chip(f) and 'class="val">film.<wbr>title<' in chip(f)
    row = chip_row([f, Feature("FROM", "film")], decision=["SELECT film.title"],
                   implicit=["FROM film"])
    assert 'pq-chip decision' in row and 'pq-chip implicit' in row
    assert "likely" in chip(f, bordered=True)
    assert "&lt;b&gt;" in chip(Feature("WHERE", "<b>"))
    with pytest.raises(ValueError, match="unknown chip role"):
        chip(f, "green")


def test_sql_block_escapes_and_bolds_only_keywords_outside_strings() -> None:
    import html
    import re

    sql = "SELECT title FROM films WHERE name = 'from <b>' AND x < 3 -- order by"
    block = sql_block(sql)
    assert "<b>SELECT</b>" in block and "<b>AND</b>" in block
    assert "&lt;b&gt;" in block and "<b>from" not in block  # a string stays text
    assert "<b>order</b>" not in block  # so does a comment
    pre = re.search(r"<pre>(.*)</pre>", block, re.S).group(1)
    assert html.unescape(re.sub(r"<[^>]+>", "", pre)) == sql  # the text is the query, exactly
    assert 'data-copy="pre"' in block and 'data-copy' not in sql_block(sql, copy=False)
    assert "<b>=</b>" not in block and "<b>title</b>" not in block


def test_sql_block_bolds_what_sqlglot_reads_as_keywords_and_leaves_comments_alone() -> None:
    import html
    import re

    sql = ("SELECT COALESCE(a.x, 'it''s') AS \"Order\" /* SELECT FROM here */ FROM t NATURAL JOIN u\n"
           "WHERE name ILIKE '%a%' -- trailing FROM\nAND EXISTS (SELECT 1 FROM LATERAL f(x)) "
           "ORDER BY count(*) DESC")
    block = sql_block(sql, copy=False)
    bold = re.findall(r"<b>(.*?)</b>", block)
    assert bold == ["SELECT", "COALESCE", "AS", "FROM", "NATURAL", "JOIN", "WHERE", "ILIKE", "AND",
                    "EXISTS", "SELECT", "FROM", "LATERAL", "ORDER BY", "count", "DESC"]
    assert '<span class="pq-sql-lit">/* SELECT FROM here */</span>' in block
    assert '<span class="pq-sql-lit">-- trailing FROM</span>' in block
    assert '<span class="pq-sql-lit">&quot;Order&quot;</span>' in block  # a quoted name
    pre = re.search(r"<pre>(.*)</pre>", block, re.S).group(1)
    assert html.unescape(re.sub(r"<[^>]+>", "", pre)) == sql
    broken = sql_block("SELECT 'unterminated", copy=False)  # untokenisable: plain, escaped
    assert "<b>" not in broken and "&#x27;unterminated" in broken


def test_output_table_escapes_marks_null_and_caps_rows() -> None:
    table = output_table(["title", "title"], [("<i>Pulp</i>", None), ("Jackie", 1994)])
    # a repeated name is told apart (numbered: no query to read its tables from)
    assert "<th>title</th><th>title (2)</th>" in table
    assert "&lt;i&gt;Pulp&lt;/i&gt;" in table and '<td class="pq-null">NULL</td>' in table
    assert "<td>1994</td>" in table and "more rows" not in table
    many = output_table(["n"], [(i,) for i in range(250)], max_rows=200)
    assert many.count("<tr>") == 201 and "50 more rows not shown" in many
    assert "(no rows)" in output_table(["n"], [])


def test_actions_log_one_event_each_and_replay(pool) -> None:
    events: list[tuple[str, dict]] = []
    ws = workspace_state(pool, store={})
    assert isinstance(ws, WorkspaceState)
    log = lambda t, p: events.append((t, p))  # noqa: E731
    assert actions.browse(ws, +1, log)
    assert actions.answer_variable(ws, True, log)
    first = clusters(ws.session)[0]
    assert actions.restrict(ws, list(first.members), "cluster", log, cluster=first.number)
    assert not actions.restrict(ws, [], "lasso", log) and ws.flash
    assert actions.undo(ws, log)
    assert [t for t, _ in events] == ["dv.browse", "dv.accept", "space.cluster", "undo"]
    assert events[1][1]["survivors_before"] == pool.n
    assert actions.survivor_counts(ws.session) == [len(ws.session.survivors)]
    replay = RepairSession.from_dict(ws.session.to_dict(), pool)
    assert np.array_equal(replay.alive, ws.session.alive)


def test_workspace_state_is_per_store(pool) -> None:
    a, b = {}, {}
    wa = workspace_state(pool, store=a)
    wa.session.answer(wa.session.next_variable().keys, True)
    assert workspace_state(pool, store=b).session.step == 0
    assert workspace_state(pool, store=a) is wa


def test_make_bank_writes_pools(tmp_path: Path) -> None:
    bank = make_bank(tmp_path, lines=(4,))
    assert len(list((tmp_path / "pools").glob("*.json"))) == 1 and bank.is_file()


def test_space_spec_is_plain_json_and_cached_per_state(pool) -> None:
    import json

    session = RepairSession(pool)
    variable = session.next_variable()
    spec = space_spec(session, variable)
    assert json.loads(json.dumps(spec)) == spec  # what the component receives, as is
    first = cached_space(session, variable)
    assert first == spec and cached_space(session, variable) is first
    session.answer(variable.keys, True)
    after = cached_space(session, session.next_variable())
    assert after is not first
    assert len(after["dead"]) == pool.n - len(session.survivors)
    session.undo()
    assert cached_space(session, variable) is first  # Back redraws a state already built


def test_selected_ids_reads_the_component_payload() -> None:
    assert selected_ids({"ids": [5, 3, 5], "gesture": "lasso", "seq": 2}) == ([3, 5], "lasso")
    assert selected_ids({"ids": [9], "gesture": "click"}) == ([9], "click")
    assert selected_ids({"ids": [], "gesture": "box"}) == ([], "")
    assert selected_ids({"ids": [1], "gesture": "drag"}) == ([], "")
    assert selected_ids(None) == ([], "")


def test_provisional_layout_within_a_budget_then_the_umap_one(monkeypatch) -> None:
    import threading

    from core.engine import layout

    rng = np.random.default_rng(3)
    pts = rng.random((9, 2))
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    index = np.repeat(np.arange(9), 2)
    monkeypatch.setattr(layout, "_READY", threading.Event())  # as in a fresh server
    monkeypatch.setattr(layout, "start_warm_up", lambda: None)
    with layout.request_budget(0.0):
        quick = layout.compute_layout(index, dist)
    assert quick.shape == (18, 2) and ((quick >= 0) & (quick <= 1)).all()
    assert layout.is_provisional(quick)
    for _ in range(1200):
        final = layout.final_layout(quick)
        if final is not None:
            break
        threading.Event().wait(0.1)
    assert final is not None and not layout.is_provisional(final)
    assert np.allclose(final, layout.compute_layout(index, dist))  # the layout prepare stores
    centres = layout.classical_mds(dist)
    assert centres.shape == (9, 2) and np.allclose(centres, layout.classical_mds(dist))
