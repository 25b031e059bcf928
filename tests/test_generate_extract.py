"""SQL extraction from model replies, normalisation and dedupe."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.generation.extract import dedupe, extract_sql, normalise_sql

Q = "SELECT name FROM room WHERE size = 500"


@pytest.mark.parametrize("reply", [
    f"```sql\n{Q};\n```",
    f"```SQL\n{Q}\n```\nThis returns the names.",
    f"```\n{Q}\n```",
    Q,
    f"{Q};",
    f"Here is the query:\n\n{Q}\n\nIt lists every room of size 500.",
    f"Sure! The answer is: {Q}. This lists all rooms.",
    f"Reasoning first.\n```text\nnot sql\n```\n```sql\n{Q}\n```",
])
def test_wrappers(reply):
    found = extract_sql(reply)
    assert found.ok and normalise_sql(found.sql) == normalise_sql(Q)


def test_with_query_is_found():
    found = extract_sql("```sql\nWITH big AS (SELECT * FROM room WHERE size > 450)\n"
                        "SELECT name FROM big\n```")
    assert found.ok and found.sql.startswith("WITH big")


@pytest.mark.parametrize("reply,reason", [
    ("", "empty reply"),
    ("I cannot tell which rooms you mean.", "no SELECT query"),
    ("```sql\nDELETE FROM room\n```", "DELETE"),
    ("```sql\nSELECT name FROM room WHERE\n```", "does not parse"),
    ("```sql\nSELECT 'unclosed FROM room\n```", "does not parse"),
])
def test_no_usable_sql_says_why(reply, reason):
    found = extract_sql(reply)
    assert not found.ok and reason in found.error


def test_dialect_is_used():
    found = extract_sql("```sql\nSELECT name FROM room WHERE name ILIKE 'a%'\n```", "postgres")
    assert found.ok and "ILIKE" in found.sql


def test_normalise_ignores_spacing_case_and_semicolon_not_literals():
    assert normalise_sql("select  Name\nfrom ROOM where size=500;") == normalise_sql(Q)
    assert normalise_sql("SELECT name FROM room WHERE kind = 'Lobby'") != \
        normalise_sql("SELECT name FROM room WHERE kind = 'lobby'")


def test_dedupe_keeps_first_spelling_and_orders_by_count():
    cands = dedupe(["SELECT b FROM t", "select a from t", "SELECT A FROM T;", "SELECT a FROM t"])
    assert [(c.sql, c.count) for c in cands] == [("select a from t", 3), ("SELECT b FROM t", 1)]
    weighted = dedupe(["SELECT a FROM t", "SELECT b FROM t"], counts=[2, 5])
    assert [c.count for c in weighted] == [5, 2]


@given(st.lists(st.sampled_from([Q, Q.lower(), "SELECT * FROM room", "SELECT id FROM room"]),
                max_size=30))
def test_dedupe_conserves_total_count(sqls):
    cands = dedupe(sqls)
    assert sum(c.count for c in cands) == len(sqls)
    assert len({normalise_sql(c.sql) for c in cands}) == len(cands)
