"""The offline variant generator on the AMBROSIA dev bank."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import sqlglot

from core.engine.execute import open_database
from core.engine.taskbank import Candidate, load_task_bank
from core.generation.extract import normalise_sql
from core.generation.variants import RULES, generate_variants, schema_from_ddl, schema_info, scope

DEV = Path(__file__).resolve().parents[1] / "data" / "ambrosia" / "dev.jsonl"


@pytest.fixture(scope="module")
def pools():
    tasks, _ = load_task_bank(DEV)
    out = []
    for task in tasks:
        db = open_database(task.database)
        out.append((task, db, generate_variants(task.gold, schema_info(db), n=50,
                                                 dialect=task.dialect, random_state=7)))
    return out


def test_every_variant_parses_and_most_execute(pools):
    total = ok = 0
    for task, db, pool in pools:
        for cand in pool.candidates:
            sqlglot.parse_one(cand.sql, read=task.dialect)
            total += 1
            ok += db.execute(cand.sql).ok
    assert total > 10 * len(pools) and ok / total >= 0.9


def test_pools_look_like_fifty_samples_with_seeds_heaviest(pools):
    for task, _, pool in pools:
        assert all(isinstance(c, Candidate) for c in pool.candidates)
        assert 50 <= sum(c.count for c in pool.candidates) <= 50 + len(task.gold)
        assert len(pool.candidates) >= 5
        seeds = {normalise_sql(g) for g in task.gold}
        found = {normalise_sql(c.sql) for c in pool.candidates}
        assert seeds <= found
        assert pool.labels[0] == "seed"  # the seeds carry the most weight


def test_origins_are_labelled_and_rules_cover_the_ambiguity_types(pools):
    labels = Counter(label for _, _, pool in pools for label in pool.labels)
    names = {name for name, _, _ in RULES}
    assert all(label == "seed" or label.split(":", 1)[1].split("+")[0] in names
               for label in labels)
    firsts = {label.split(":", 1)[1].split("+")[0] for label in labels if ":" in label}
    for rule in ("add_column", "swap_column", "select_star", "distinct", "order_by",
                 "join_kind", "comparison", "regroup", "branch_filter", "scope"):
        assert rule in firsts, rule


def test_deterministic_for_a_seed(pools):
    task, db, pool = pools[0]
    again = generate_variants(task.gold, schema_info(db), n=50, random_state=7)
    other = generate_variants(task.gold, schema_info(db), n=50, random_state=8)
    assert (again.candidates, again.labels) == (pool.candidates, pool.labels)
    assert other.candidates != pool.candidates


def test_attachment_regrouping_and_union_branch_filters():
    info = schema_from_ddl("CREATE TABLE room (name TEXT, kind TEXT, size INT);"
                           "CREATE TABLE hall (name TEXT, kind TEXT, size INT);")
    grouped = "SELECT name FROM room WHERE (kind = 'Lobby' OR kind = 'Terrace') AND size = 500"
    pool = generate_variants([grouped], info, n=60, random_state=0)
    sqls = {c.sql: label for c, label in zip(pool.candidates, pool.labels, strict=True)}
    assert any(label == "variant:regroup" and "OR (kind = 'Terrace' AND size = 500)" in sql
               for sql, label in sqls.items())
    union = "SELECT name FROM room UNION SELECT name FROM hall WHERE size = 500"
    made = generate_variants([union], info, n=60, random_state=0)
    texts = [c.sql for c, lab in zip(made.candidates, made.labels, strict=True)
             if lab.startswith("variant:branch_filter")]
    assert any("FROM room WHERE room.size = 500 UNION" in t for t in texts)


def test_scope_variants_add_and_drop_the_for_all_grouping(pools):
    task, db, _ = next(p for p in pools if p[0].ambiguity == "scope")
    info = schema_info(db)
    for_all, per_pair = (sqlglot.parse_one(g, read="sqlite") for g in task.gold[:2])
    dropped = [v.sql() for v in scope(for_all, info)]
    assert len(dropped) == 1 and "HAVING" not in dropped[0] and "GROUP BY" not in dropped[0]
    added = [v.sql() for v in scope(per_pair, info)]
    assert added and all("GROUP BY" in s and "HAVING COUNT(DISTINCT" in s and
                         "(SELECT COUNT(*) FROM" in s for s in added)
    assert all(db.execute(s).ok for s in dropped + added)
