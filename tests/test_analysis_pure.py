"""Analysis functions on a small hand-made trace with answers computed by hand."""

from __future__ import annotations

import math

import pytest

from study.analysis import completion as C
from study.analysis import questionnaires_agg as Q
from study.analysis import workflows as W
from study.analysis.data import StudyData, filter_data
from study.analysis.timings import timer_intervals, timings_table
from study.questionnaires import BUILTINS
from study.trace import Event


def ev(pid: str, type: str, t: int, task: str = "t1", sub: str = "3", **payload) -> Event:
    return Event(event_id=f"{pid}-{t}", session_id=f"s-{pid}", participant=pid, type=type,
                 payload=payload, study="demo", condition="pleasqlarify", task=task,
                 subtask=sub, server_ts=t)


def participant(pid: str, number: int, **kw) -> dict:
    return {"participant": pid, "number": number, "condition": "pleasqlarify",
            "condition_order": ["pleasqlarify"], "task_order": ["t1"], "stage": "main",
            "simulated": False, "flagged": False, **kw}


# A: W1 (dv x3, one back); B: W2 (clauses); C: W3 (lasso + outputs); D: mixed
EVENTS = [
    ev("A", "timer.start", 0), ev("A", "space.hover", 1000), ev("A", "dv.accept", 2000),
    ev("A", "dv.reject", 3000), ev("A", "undo", 4000), ev("A", "dv.accept", 5000),
    ev("A", "submit", 6000, candidate=0), ev("A", "timer.stop", 10_000),
    ev("B", "timer.start", 0), ev("B", "clause.accept", 1000), ev("B", "clause.reject", 2000),
    ev("B", "clause.accept", 3000), ev("B", "submit", 4000, candidate=1),
    ev("B", "timer.pause", 5000), ev("B", "timer.resume", 8000), ev("B", "timer.stop", 9000),
    ev("C", "space.lasso", 1000, candidates=[1, 2]), ev("C", "output.view", 2000),
    ev("C", "output.view", 3000), ev("C", "submit", 4000),
    ev("D", "dv.accept", 1000), ev("D", "clause.accept", 2000), ev("D", "space.box", 3000),
]
DATA = StudyData(tuple(participant(p, i) for i, p in enumerate("ABCD", 1)), tuple(EVENTS))


def test_actions_and_transition_counts():
    seq = W.to_actions(DATA.events_of("A"))
    assert seq == ["explore", "dv", "dv", "back", "dv", "submit"]
    assert W.to_actions(DATA.events_of("A"), collapse=True) == [
        "explore", "dv", "back", "dv", "submit"]
    m = W.transition_matrix([seq])
    assert m.loc["dv", "dv"] == 1 and m.loc["dv", "back"] == 1 and m.loc["back", "dv"] == 1
    assert m.loc["explore", "dv"] == 1 and m.loc["dv", "submit"] == 1
    assert int(m.values.sum()) == len(seq) - 1
    assert int(W.session_matrices(DATA)["s-B"].loc["clause", "clause"]) == 2


def test_workflow_labels_and_override():
    table = W.workflow_table(DATA).set_index("participant")
    assert table["rule_label"].to_dict() == {"A": "W1", "B": "W2", "C": "W3", "D": "mixed"}
    # C: select 1 + 0.5 * 2 output views = 2 -> share 1.0
    assert "W3=2" in table.loc["C", "explanation"]
    strict = W.workflow_table(DATA, W.WorkflowRules(dominance=1.0)).set_index("participant")
    assert strict.loc["C", "rule_label"] == "W3" and strict.loc["B", "rule_label"] == "W2"
    codes = ({"id": 1, "participant": "D", "task": "t1", "subtask": "", "code": "workflow:W1",
              "coder": "ab", "ts": 5},)
    over = W.workflow_table(StudyData(DATA.participants, DATA.events, {}, codes))
    row = over.set_index("participant").loc["D"]
    assert (row["rule_label"], row["override"], row["final"]) == ("mixed", "W1", "W1")
    assert W.classify([])[0] == "none"


def test_practice_actions_are_counted_and_the_row_marked():
    """The practice is logged without subtasks: its actions count (they were read as none,
    the review's row of zeros) and its row says it is the practice, not a measured task."""
    practice = [ev("A", "dv.accept", 20_000, task="prac", sub=""),
                ev("A", "space.lasso", 21_000, task="prac", sub="", candidates=[1]),
                ev("A", "clause.reject", 22_000, task="prac", sub=""),
                ev("A", "dv.reject", 23_000, task="prac", sub="")]
    data = StudyData(DATA.participants, (*practice, *DATA.events))
    table = W.workflow_table(data).set_index(["participant", "task"])
    row = table.loc[("A", "prac")]
    assert bool(row["practice"]) and (row["n_dv"], row["n_select"], row["n_clause"]) == (2, 1, 1)
    assert row["rule_label"] == "mixed" and row["explanation"].startswith("practice")
    measured = table.loc[("A", "t1")]
    assert not measured["practice"] and measured["rule_label"] == "W1"
    assert not table.drop(index=("A", "prac"))["practice"].any()


def test_sankey_links_count_every_path():
    links = W.path_links([["explore", "dv", "dv", "submit"], ["explore", "clause"]])
    counts = {(r.source, r.target): r.count for r in links.itertuples()}
    assert counts[("start", "1:explore")] == 2
    assert counts[("1:explore", "2:dv")] == 1 and counts[("2:dv", "3:submit")] == 1
    assert counts[("2:clause", "end")] == 1


def test_completion_suggestions_follow_the_rules():
    gold, realised = ["g0", "g1"], [True, False]
    assert C.suggest_code(None, gold, realised, 0).code == "not-solved"
    assert C.suggest_code("error", gold, realised, 0).code == "not-solved"
    assert C.suggest_code("g0", gold, realised, 0).code == "solved"
    assert C.suggest_code("g1", gold, realised, 0).code == "partial-better"
    assert C.suggest_code("g0", gold, realised, 1).code == "partial-not-original"
    assert C.suggest_code("g1", gold, realised, None).code == "solved"
    assert C.suggest_code("x", gold, realised, None).code == "partial-not-original"
    assert C.intended_gold({"gold": 1}) == 1 and C.intended_gold("free text") is None


def test_completion_table_joins_newest_code():
    keys = {0: "g0", 1: "zz"}
    data = StudyData(DATA.participants[:2], DATA.events,
                     {"A": {"task:t1/1": {"gold": 0}}, "B": {"task:t1/1": "the title"}})

    def outputs(task):
        return (lambda p: keys.get(p.get("candidate"))), ["g0", "g1"], [True, True]

    sugg = C.suggestions(data, {"t1": ["1", "2a", "3"]}, outputs)
    assert list(sugg["subtask"]) == ["2a", "3", "2a", "3"]
    s3 = sugg[sugg["subtask"] == "3"].set_index("participant")["suggested"].to_dict()
    assert s3 == {"A": "solved", "B": "partial-not-original"}
    codes = ({"id": 1, "participant": "B", "task": "t1", "subtask": "3",
              "code": "completion:not-solved", "coder": "x", "ts": 1},
             {"id": 2, "participant": "B", "task": "t1", "subtask": "3",
              "code": "completion:partial-better", "coder": "y", "ts": 2})
    table = C.completion_table(sugg, codes)
    row = table[(table["participant"] == "B") & (table["subtask"] == "3")].iloc[0]
    assert (row["final"], row["coder"], row["coded_at"]) == ("partial-better", "y", 2)
    assert C.completion_rate(table) == 1.0


def test_sus_mean_ci_grade_by_hand():
    q = BUILTINS["sus5"]
    best = {f"sus{i}": (5 if i % 2 else 1) for i in range(1, 11)}  # 100
    mid = {f"sus{i}": 3 for i in range(1, 11)}  # 50
    answers = {p: {f"sus5/{k}": v for k, v in a.items()} for p, a in
               {"A": best, "B": mid, "C": {**mid, "sus1": 5}}.items()}  # C: 55
    scores = Q.sus_scores(answers, q.id, 5)
    assert sorted(scores["sus"]) == [50.0, 55.0, 100.0]
    s = Q.sus_summary(scores["sus"], 5)
    assert s.mean == pytest.approx(205 / 3)
    sd = math.sqrt(((50 - 205 / 3) ** 2 + (55 - 205 / 3) ** 2 + (100 - 205 / 3) ** 2) / 2)
    half = 4.302652729911275 * sd / math.sqrt(3)  # t(0.975, 2)
    assert (s.ci_low, s.ci_high) == (pytest.approx(s.mean - half), pytest.approx(s.mean + half))
    assert s.grade == "C" and s.adjective == "Good" and s.note == ""
    assert Q.sus_grade(84.1) == "A+" and Q.sus_grade(51.6) == "F"
    assert Q.sus_adjective(20) == "Awful"
    assert "indicative" in Q.sus_summary([70, 80], 7).note


def test_likert_distribution_counts_and_reverse():
    q = BUILTINS["component-utility"]
    answers = {"A": {"component-utility/ds_effort": 2, "component-utility/as_explore": 7},
               "B": {"component-utility/ds_effort": 2, "component-utility/as_explore": 5}}
    long = Q.likert_long(answers, [q], {"A": "x", "B": "x"})
    effort = long[long["item"] == "ds_effort"]
    assert list(effort["scored"]) == [6, 6] and effort["reverse"].all()
    dist = Q.likert_distribution(long)
    row = dist[(dist["item"] == "as_explore") & (dist["level"] == 7)].iloc[0]
    assert (row["count"], row["share"], row["mean"], row["group"]) == (1, 0.5, 6.0,
                                                                      "action_space")
    assert len(dist) == 2 * 7


def test_timings_and_filters():
    tim = timings_table(DATA).set_index("participant")
    assert tim.loc["A", "active_s"] == 10.0
    assert tim.loc["B", "active_s"] == 6.0 and tim.loc["B", "paused_s"] == 3.0
    iv = timer_intervals(DATA)
    assert list(iv[iv["participant"] == "B"]["duration_s"]) == [5.0, 1.0]
    parts = (participant("A", 1), participant("S", 2, simulated=True),
             participant("F", 3, flagged=True))
    data = StudyData(parts, ())
    assert filter_data(data).ids == ["A"]
    assert filter_data(data, include_simulated=True, include_flagged=True).ids == ["A", "S", "F"]


def test_completion_grid_shows_codes_suggestions_and_uncoded_cells_as_text_and_colour():
    import pandas as pd

    from study.analysis.figures import (
        CODE_COLOURS,
        UNCODED_COLOUR,
        code_style,
        completion_grid,
        completion_html,
        contrast,
    )
    from tests.html_tables import read_tables

    table = pd.DataFrame([
        {"label": "P1", "task": "t", "subtask": "2a", "suggested": None, "final": None},
        {"label": "P1", "task": "t", "subtask": "3", "suggested": "solved", "final": None},
        {"label": "P2", "task": "t", "subtask": "3", "suggested": "solved",
         "final": "not-solved"},
        {"label": "P2", "task": "t", "subtask": "2a", "suggested": None, "final": "solved"},
        {"label": "P3", "task": "t", "subtask": "3", "suggested": None,
         "final": "partial-better"},
    ])
    codes, texts = completion_grid(table)
    # rows P1, P2, P3; columns t · 3 (the outcome first), t · 2a; the researcher's code wins
    # over the suggestion; P3 has no 2a row at all: uncoded
    assert codes.to_dict("index") == {
        "P1": {"t · 2a": "uncoded", "t · 3": "solved"},
        "P2": {"t · 2a": "solved", "t · 3": "not-solved"},
        "P3": {"t · 2a": "uncoded", "t · 3": "partial-better"}}
    assert texts.to_dict("index") == {
        "P1": {"t · 2a": "uncoded", "t · 3": "solved *"},
        "P2": {"t · 2a": "solved", "t · 3": "not solved"},
        "P3": {"t · 2a": "uncoded", "t · 3": "partial: better"}}
    assert list(codes.columns) == list(texts.columns) == ["t · 3", "t · 2a"]
    # the same grid over the suggestions only
    assert completion_grid(table, "suggested")[0].loc["P2", "t · 3"] == "solved"
    page = completion_html(codes, texts)
    shown, classes = read_tables(page)[0]
    assert shown.to_dict("index") == texts.to_dict("index")  # the whole text of each cell
    # each cell's tooltip gives the code's full wording, a suggestion's says so
    assert 'title="solved: the tool&#x27;s suggestion">solved *</td>' in page
    assert 'title="partial (found better query)">partial: better</td>' in page
    assert classes.loc["P2", "t · 3"] == "pq-c-not-solved" and classes.loc["P1", "t · 2a"] == (
        "pq-c-uncoded")
    for code, bg in {**CODE_COLOURS, "uncoded": UNCODED_COLOUR}.items():  # readable text
        assert f".pq-grid td.pq-c-{code} {{ {code_style(code)} }}" in page  # the class's colour
        assert code_style(code).startswith(f"background-color: {bg}; ")
        fg = code_style(code).split("color: ")[-1]
        assert contrast(fg, bg) >= 4.5, code
    empty_codes, empty_texts = completion_grid(table.iloc[0:0])
    assert empty_codes.empty and empty_texts.empty


def test_first_tab_html_tables_escape_every_value_and_show_missing_ones_empty():
    """The Completion tab's tables are HTML: a value with markup or entities reads back as the
    very text, never as markup; None and NaN are empty cells, other values their str()."""
    import pandas as pd

    from study.analysis.figures import completion_html, table_html
    from tests.html_tables import read_tables

    nasty = '<script>alert("x")</script> & <b>'
    frame = pd.DataFrame({"label": ["P1", "P<2>"], "reason": [nasty, None],
                          "n": [1.5, float("nan")], "confirmed": [True, False]})
    page = table_html(frame, 'cells "of" <all>')
    assert "<script>" not in page and "<b>" not in page
    assert 'aria-label="cells &quot;of&quot; &lt;all&gt;"' in page
    texts, _ = read_tables(page)[0]
    assert list(texts.index) == ["P1", "P<2>"] and list(texts.columns) == ["reason", "n",
                                                                           "confirmed"]
    assert texts.to_dict("index") == {"P1": {"reason": nasty, "n": "1.5", "confirmed": "True"},
                                      "P<2>": {"reason": "", "n": "", "confirmed": "False"}}
    codes = pd.DataFrame({"t · 3": ["solved"]}, index=pd.Index([nasty], name="participant"))
    grid = completion_html(codes, codes.replace("solved", nasty))
    assert "<script>" not in grid.split("</style>")[-1]
    assert read_tables(grid)[0][0].loc[nasty, "t · 3"] == nasty


def test_likert_bars_split_neutral_and_stack_strongest_answers_outermost():
    import pandas as pd

    from study.analysis.figures import likert_diverging

    rows = [{"group": "g", "condition": "c", "item": "q1", "points": 5, "level": lvl,
             "count": 1, "share": 0.2, "n": 5, "mean": 3.0} for lvl in range(1, 6)]
    fig = likert_diverging(pd.DataFrame(rows), labels={"q1": "The interface was useful"})
    names = [t.name for t in fig.data]
    # neutral halves first (one each side of 0), then outward: 2 and 4 before 1 and 5
    assert names == ["3", "3", "2", "4", "1", "5"]
    assert fig.data[0].x[0] == -10 and fig.data[1].x[0] == 10
    assert fig.data[2].x[0] < 0 < fig.data[3].x[0]
    assert fig.data[0].y[0] == "g / c / The interface was useful"


def test_likert_axis_diverges_around_zero_even_when_every_answer_agrees():
    """Every answer 5 of 7 (the review's chart): the bars sit right of 0, and the axis still
    spans -100..100 with unsigned ticks, so the chart reads as diverging, not as 0..100."""
    import pandas as pd

    from study.analysis.figures import likert_diverging

    rows = [{"group": "g", "condition": "c", "item": "q1", "points": 7, "level": lvl,
             "count": int(lvl == 5), "share": float(lvl == 5), "n": 1, "mean": 5.0}
            for lvl in range(1, 8)]
    fig = likert_diverging(pd.DataFrame(rows))
    five = next(t for t in fig.data if t.name == "5")
    assert five.x[0] == 100 and all(t.x[0] <= 0 for t in fig.data if t.name in "123")
    axis = fig.layout.xaxis
    assert tuple(axis.range) == (-100, 100) and axis.zeroline
    assert dict(zip(axis.tickvals, axis.ticktext, strict=True)) == {
        -100: "100", -50: "50", 0: "0", 50: "50", 100: "100"}
    assert "disagree" in axis.title.text and "agree →" in axis.title.text


def test_a_runners_practice_events_reach_the_workflow_table(tmp_path):
    """End to end through the participant runner: what a participant does in the practice
    step is logged without a subtask and counted in a row marked practice; the measured
    task's subtask-3 actions stay in their own, unmarked row."""
    from study.analysis.data import load_study_data
    from study.runner import join
    from study.spec import load_study
    from study.store import open_store
    from tests.study_flow_fixtures import PRACTICE, TASK, write_mini

    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}", sqlite_synchronous="OFF")
    runner = join(store, load_study(write_mini(tmp_path / "studies")))
    while runner.current().kind != "practice":
        runner.advance(runner.current().id)
    for t in ("dv.accept", "clause.reject", "output.view", "undo"):
        runner.log(t, {})
    while runner.current().id != f"task:{TASK}/3":
        runner.advance(runner.current().id)
    runner.log("clause.accept", {})
    table = W.workflow_table(load_study_data(store, "mini")).set_index("task")
    prac, task = table.loc[PRACTICE], table.loc[TASK]
    assert bool(prac["practice"]) and not bool(task["practice"])
    assert (prac["n_dv"], prac["n_clause"], prac["n_output"], prac["n_back"]) == (1, 1, 1, 1)
    assert (task["n_clause"], task["rule_label"]) == (1, "W2")
