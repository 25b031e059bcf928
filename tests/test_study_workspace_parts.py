"""What a participant sees in each part: one primary action, honest notices, unbroken chips."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.engine.features import Feature
from tests.study_flow_fixtures import FILM_BANK, TASK
from ui.chips import CSS, breakable, chip


def _app(bank: str, task: str, submit: bool, errors_only: bool, submitted: bool,
         question: bool) -> None:
    from ui import actions
    from ui.bank_cache import task_pool
    from ui.state import WorkspaceOptions, workspace_state
    from ui.workspace import render_workspace

    pool = task_pool(bank, task)
    ws = workspace_state(pool, "study")
    if errors_only and ws.session.step == 0:  # "Keep cluster" on the queries that all fail
        fails = [i for i in range(pool.n) if pool.class_keys[pool.class_index[i]] == "error"]
        actions.restrict(ws, fails, "cluster", lambda t, p: None, cluster=9)
    if submitted:
        ws.submitted = 0
    render_workspace(pool, mode="study", namespace="study", on_submit=lambda i, s: None,
                     options=WorkspaceOptions(submit=submit, show_question=question))


def _run(submit: bool = True, errors_only: bool = False, submitted: bool = False,
         question: bool = False) -> AppTest:
    at = AppTest.from_function(_app, args=(str(FILM_BANK), TASK, submit, errors_only,
                                           submitted, question), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    return at


def _buttons(at: AppTest, label: str) -> list:
    return [b for b in at.button if b.label == label]


def test_exploration_parts_offer_no_submit_and_no_question_heading() -> None:
    at = _run(submit=False)
    assert not _buttons(at, "Submit this query")
    assert not any(m.value.startswith("### ") for m in at.markdown)
    shown = _run(submit=False, question=True)  # the heading the parts leave out, when asked for
    assert any(m.value.startswith("### ") for m in shown.markdown)


def test_submit_is_primary_until_submitted_then_secondary() -> None:
    (before,) = _buttons(_run(), "Submit this query")
    (after,) = _buttons(_run(submitted=True), "Submit this query")
    assert before.proto.type == "primary" and after.proto.type == "secondary"


def test_a_cluster_of_failing_queries_is_not_called_done() -> None:
    at = _run(errors_only=True)
    assert not any("Done" in s.value for s in at.success)
    shown = " ".join(str(c.proto.json) for c in at.get("bidi_component"))
    assert "None of the remaining queries runs." in shown  # the Decision Space says so
    assert "No valid query remains" in shown and "Done." not in shown
    assert not any("Still open" in m.value for m in at.markdown)
    assert not any("Still open" in str(c.proto.json) for c in at.get("bidi_component"))


def test_chips_wrap_only_after_dots_and_commas() -> None:
    assert breakable("films.release_year, x") == "films.<wbr>release_year,<wbr> x"
    html = chip(Feature("SELECT", "reviews.review_text"))
    assert "reviews.<wbr>review_text" in html
    # a name is split only when it alone is wider than its column (it overlapped the next
    # element before); word-break stays normal, so no split happens where it would fit
    assert "overflow-wrap: anywhere" in CSS and "word-break: normal" in CSS
    assert breakable("<b>") == "&lt;b&gt;"
