"""The LLM agent's tools: prompts per variant, tool schemas and the read-only datasource tools.

Datasource tools (``get_schema``, ``describe_columns``, ``probe_values``, ``run_sql``) run
through :mod:`core.engine.execute`; clarification is ``ask`` for ``naive`` and ``plan-prompt``, and for
``planpool`` it is masked and replaced by the pool tools ``init_pool``, ``add_question``,
``drop_question``, ``ask_next``, ``show_pool``; every variant has ``submit``.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from core.engine.execute import TaskDatabase

_BASE = ("You are a data analyst agent answering a user's question over a {dialect} database. "
         "Explore the database with the tools, clarify what the user means where the request "
         "is underspecified, then call submit(sql) with exactly one SQL query.")
SYSTEM = {
    "naive": _BASE + " Ask the user with ask(question) whenever you need to.",
    "plan-prompt": _BASE + " Before asking, write a ranked plan of the clarification "
                   "questions you need, then ask them with ask(question).",
    "planpool": _BASE + " Keep your clarification plan in the question pool: init_pool with "
                "a ranked list of questions, add_question when you discover a new need, "
                "drop_question(id, reason) when one becomes irrelevant, and ask_next to ask the "
                "highest-priority one. submit is refused while any question is pending.",
}


def _tool(name: str, description: str, **props: Any) -> dict[str, Any]:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": props, "required": list(props)}}


_S = {"type": "string"}
DATASOURCE_TOOLS = [
    _tool("get_schema", "The CREATE TABLE statements of the database."),
    _tool("describe_columns", "Columns of a table with a few sample rows.", table=_S),
    _tool("probe_values", "Up to 20 distinct values of a column.", table=_S, column=_S),
    _tool("run_sql", "Run one read-only SELECT and see up to 20 rows.", sql=_S),
]
ASK_TOOL = _tool("ask", "Ask the user one clarification question.", question=_S)
POOL_TOOLS = [
    _tool("init_pool", "Initialise the pool with a ranked list of questions (best first).",
          questions={"type": "array", "items": _S}),
    _tool("add_question", "Add a newly discovered clarification question.", question=_S),
    _tool("drop_question", "Drop a pending question, stating why.", id=_S, reason=_S),
    _tool("ask_next", "Ask the user the highest-priority pending question."),
    _tool("show_pool", "Show the pool: pending, asked and dropped questions."),
]
SUBMIT_TOOL = _tool("submit", "Submit the final SQL query and end the task.", sql=_S)
DATASOURCE = {"get_schema", "describe_columns", "probe_values", "run_sql"}
POOL_OPS = {"init_pool", "add_question", "drop_question", "ask_next", "show_pool"}


def tools_for(variant: str) -> list[dict[str, Any]]:
    """The tool list of a variant (planpool masks ``ask`` behind the pool)."""
    if variant not in SYSTEM:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(SYSTEM)}")
    clarify = POOL_TOOLS if variant == "planpool" else [ASK_TOOL]
    return [*DATASOURCE_TOOLS, *clarify, SUBMIT_TOOL]


def table_text(result: Any, limit: int = 20) -> str:
    """An execution result as the text a tool returns (columns, up to ``limit`` rows)."""
    if not result.ok:
        return f"error: {result.error}"
    rows = "\n".join(repr(tuple(r)) for r in result.rows[:limit])
    more = f"\n… ({len(result.rows)} rows)" if len(result.rows) > limit else ""
    return f"columns: {', '.join(result.columns)}\n{rows or '(no rows)'}{more}"


def _known(db: TaskDatabase, table: str, column: str | None = None) -> tuple[str, str | None]:
    schema = db.schema()
    t = table.lower()
    if t not in schema:
        raise ValueError(f"no table {table!r}; tables: {', '.join(sorted(schema))}")
    if column is not None and column.lower() not in schema[t]:
        raise ValueError(f"no column {column!r} in {t}; columns: {', '.join(schema[t])}")
    return t, None if column is None else column.lower()


def datasource(name: str, args: dict[str, Any], db: TaskDatabase) -> str:
    """Run one read-only datasource tool; raises ValueError/KeyError for bad arguments."""
    if name == "get_schema":
        return db.ddl()
    if name == "describe_columns":
        t, _ = _known(db, str(args["table"]))
        return f"{t}: {', '.join(db.schema()[t])}\n" + table_text(db.sample_rows(t, 3))
    if name == "probe_values":
        t, c = _known(db, str(args["table"]), str(args["column"]))
        assert c is not None  # _known returns the column it was asked for
        col, tab = exp.to_identifier(c).sql(db.dialect), exp.to_identifier(t).sql(db.dialect)
        return table_text(db.execute(f"SELECT DISTINCT {col} FROM {tab} LIMIT 20"))
    return table_text(db.execute(str(args["sql"])))


def block_dict(b: Any) -> dict[str, Any]:
    """An SDK content block as plain JSON (text or tool_use)."""
    if b.type == "tool_use":
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": dict(b.input)}
    return {"type": "text", "text": getattr(b, "text", "")}


__all__ = ["ASK_TOOL", "DATASOURCE", "DATASOURCE_TOOLS", "POOL_OPS", "POOL_TOOLS", "SUBMIT_TOOL",
           "SYSTEM", "block_dict", "datasource", "table_text", "tools_for"]
