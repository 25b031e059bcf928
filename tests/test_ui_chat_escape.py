"""The chat's question pool shows LLM question texts, typed answers and drop reasons literally."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.chat import safe


def _panel() -> None:
    from pathlib import Path

    from core.engine.pool import prepare_pool
    from core.engine.session import RepairSession
    from core.engine.taskbank import load_tasks
    from core.planpool.chat_agent import ChatAgent
    from core.planpool.pool import QuestionPool
    from ui.chat import pool_panel

    bank = Path.cwd() / "studies" / "film" / "tasks.jsonl"
    agent = ChatAgent(RepairSession(prepare_pool(load_tasks(bank)[0], layout=False)))
    pool = QuestionPool()
    pool.init([{"text": "<script>alert('x')</script> Pending?"},
               {"text": "Asked <b>bold</b>?"}, {"text": "Dropped [link](http://evil)"}])
    asked = pool.next()  # highest priority first: the <script> one
    pool.answer(asked.id, "<b>yes</b> **really**")
    pool.drop("q3", "<img src=x onerror=alert(1)> ~~gone~~")
    agent.pool_ = pool
    pool_panel(agent)


def test_pool_panel_escapes_html_and_markdown(monkeypatch) -> None:
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    at = AppTest.from_function(_panel, default_timeout=60).run()
    assert not at.exception, at.exception
    shown = "\n".join(m.value for m in at.markdown)
    assert "<script>" not in shown and "<b>" not in shown and "<img" not in shown
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in shown
    assert "&lt;b&gt;yes&lt;/b&gt; \\*\\*really\\*\\*" in shown
    assert "\\[link\\](http://evil)" in shown and "\\~\\~gone\\~\\~" in shown
    assert "<small>" in shown  # the panel's own markup still renders


def test_safe_keeps_plain_text_readable() -> None:
    assert safe("Is the year 2003?") == "Is the year 2003?"
    assert safe("a & b") == "a &amp; b"
    assert safe("line\nbreak") == "line break"
    assert safe("# big") == "\\# big" and safe("1. item") == "1\\. item"
    assert safe("- x") == "\\- x" and safe("-5 degrees") == "-5 degrees"
    assert safe("![x](http://evil/?leak)") == "!\\[x\\](http://evil/?leak)"
    assert safe("costs $5 and $6") == "costs \\$5 and \\$6"


def _failing_query(show_sql: bool) -> None:
    from core.engine.execute import ExecutionResult
    from ui.result import show_query

    show_query("SELECT nope FROM films", ExecutionResult(error="no such column: nope"),
               show_sql=show_sql)


def test_a_failing_query_is_a_plain_notice_its_error_quoted_only_beside_its_sql() -> None:
    """The chat and single-shot conditions: a query that does not run says so in plain words;
    the database's error (it names SQL) is shown only where the condition shows the SQL."""
    from ui.result import NO_OUTPUT

    for show_sql in (False, True):
        at = AppTest.from_function(_failing_query, args=(show_sql,)).run()
        assert not at.exception, at.exception
        assert [w.value for w in at.warning] == [NO_OUTPUT]
        quoted = [c.value for c in at.code]
        assert quoted == (["no such column: nope"] if show_sql else [])


def test_counts_read_as_words_not_with_a_parenthesised_plural() -> None:
    """Participants read "1 decision is" and "2 decisions are", never "decision(s)"."""
    from ui.chips import counted, shape_text

    assert (counted(1, "decision"), counted(2, "decision"), counted(0, "task")) == (
        "1 decision", "2 decisions", "0 tasks")
    assert shape_text(1, 2) == "1 row × 2 columns"
