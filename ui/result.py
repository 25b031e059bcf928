"""One candidate's SQL and output table, as the chat and single-shot conditions show it."""

from __future__ import annotations

import hashlib
import logging

import streamlit as st

from core.engine.execute import ExecutionResult
from core.engine.pool import PreparedPool
from ui.chips import output_table, shape_text, sql_block
from ui.components import clause_panel

LOG = logging.getLogger(__name__)
NO_OUTPUT = "This query stops with an error, so it has no output."


def notice(plain: str, detail: str | None = None, *, quote: bool = True) -> None:
    """Say that something did not go through: ``plain`` (what happened and what to do, free
    of SQL and of API words) as the notice, and the error's own words (``detail``, which may
    quote SQL, the database or the model's API) under it only where ``quote`` (the reader is
    shown SQL). Callers log ``detail`` (and trace it) for the researcher."""
    st.warning(plain)
    if detail and quote:
        st.code(detail, language=None, wrap_lines=True)


def show_result(pool: PreparedPool, candidate: int | None, *, show_sql: bool = True) -> None:
    """The SQL (optional) and the output table (or the error) of ``candidate``."""
    if candidate is None:
        st.info("No query could be proposed for this question.")
        return
    show_query(pool.sqls[candidate], pool.results[candidate], show_sql=show_sql)


def show_query(sql: str, result: ExecutionResult | None, *, show_sql: bool = True) -> None:
    """The SQL (optional) and the output table (or the error) of any query."""
    tag = hashlib.sha1(sql.encode()).hexdigest()[:12]  # panel keys: one query per page
    if show_sql:
        clause_panel(sql_block(sql), key=f"pleasqlarify.sql.{tag}", testid="pq-sql", on={})
    if result is None:
        return
    if not result.ok:  # the error names SQL: quoted only where the SQL is shown
        notice(NO_OUTPUT, result.error, quote=show_sql)
        return
    st.caption(f"Output: {shape_text(len(result.rows), len(result.columns))}")
    clause_panel(output_table(result.columns, result.rows, sql=sql),
                 key=f"pleasqlarify.output.{tag}",
                 testid="pq-output", on={})
