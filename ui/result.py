"""One candidate's SQL and output table, as the chat and single-shot conditions show it."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from core.engine.execute import ExecutionResult
from core.engine.pool import PreparedPool
from ui.chips import sql_block
from ui.components import clause_panel


def unique_columns(columns: list[str]) -> list[str]:
    """Column names made unique for a DataFrame ('title', 'title (2)')."""
    seen: dict[str, int] = {}
    out = []
    for c in columns:
        seen[c] = seen.get(c, 0) + 1
        out.append(c if seen[c] == 1 else f"{c} ({seen[c]})")
    return out


def show_result(pool: PreparedPool, candidate: int | None, *, show_sql: bool = True) -> None:
    """The SQL (optional) and the output table (or the error) of ``candidate``."""
    if candidate is None:
        st.info("No query could be proposed for this question.")
        return
    show_query(pool.sqls[candidate], pool.results[candidate], show_sql=show_sql)


def show_query(sql: str, result: ExecutionResult | None, *, show_sql: bool = True) -> None:
    """The SQL (optional) and the output table (or the error) of any query."""
    if show_sql:
        clause_panel(sql_block(sql), key=f"pleasqlarify.sql.{hashlib.sha1(sql.encode()).hexdigest()[:12]}",
                     testid="pq-sql", on={})
    if result is None:
        return
    if not result.ok:
        st.warning(f"This query does not run: {result.error}")
        return
    st.caption(f"Output: {len(result.rows)} rows × {len(result.columns)} columns")
    frame = pd.DataFrame([list(r) for r in result.rows], columns=unique_columns(result.columns))
    st.dataframe(frame, hide_index=True, height=min(38 + 35 * max(1, len(frame)), 300))
