"""Every Analysis chart builder at 1, 2 and 200 participants: the Plotly layout keeps room for
every row, the legend outside the bars, whole item texts, and statistics that say what they
need instead of 'nan' (issue 25)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from study.analysis import figures as F
from study.analysis.completion import CODES
from study.analysis.questionnaires_agg import likert_distribution, sus_summary
from tests.html_tables import read_tables

SIZES = (1, 2, 200)
TASKS = ("film-pulp-review", "film-dicaprio-rating")
SUBS = ("1", "2a", "2b", "3")
LONG_ITEM = ("I found the Decision Space helpful for understanding how the candidate queries "
             "differ from each other")


def _labels(n: int) -> list[str]:
    return [f"P{i + 1}" for i in range(n)]


def _legend_outside(fig, min_top: int) -> None:
    """A horizontal legend above the plot area, in a top margin that has room for it."""
    legend = fig.layout.legend
    assert legend.orientation == "h" and legend.y >= 1 and legend.yanchor == "bottom"
    assert fig.layout.margin.t >= min_top


@pytest.mark.parametrize("n", SIZES)
def test_completion_grid_keeps_every_participant_and_part(n: int) -> None:
    rng = np.random.default_rng(n)
    rows = [{"task": t, "subtask": s, "label": lab, "final": None,
             "suggested": str(rng.choice(CODES)) if s == "3" else None}
            for lab in _labels(n) for t in TASKS[: 1 if n == 1 else 2] for s in SUBS]
    codes, texts = F.completion_grid(pd.DataFrame(rows))
    parts = list(dict.fromkeys(
        [p for p in (f"{r['task']} · {r['subtask']}" for r in rows) if p.endswith(" · 3")]
        + [f"{r['task']} · {r['subtask']}" for r in rows]))  # the outcome (subtask 3) first
    assert list(codes.index) == list(texts.index) == _labels(n)  # a row per participant
    assert list(codes.columns) == list(texts.columns) == parts  # a column per task · subtask
    for r in rows:  # each cell says the suggested code in words, or 'uncoded'
        part = f"{r['task']} · {r['subtask']}"
        want = r["suggested"] or "uncoded"
        assert codes.loc[r["label"], part] == want
        assert texts.loc[r["label"], part] == (
            "uncoded" if want == "uncoded" else F.GRID_LABELS[want] + F.SUGGESTED_MARK)
    shown, classes = read_tables(F.completion_html(codes, texts))[0]
    assert list(shown.index) == _labels(n)
    assert list(shown.columns) == [h for h, _ in F.part_headers(parts)]
    shown.columns = classes.columns = parts
    assert shown.to_dict("index") == texts.to_dict("index")  # every cell's whole text
    assert classes.to_dict("index") == ("pq-c-" + codes).to_dict("index")  # and colour


@pytest.mark.parametrize("n", SIZES)
def test_likert_bars_keep_whole_item_texts_and_the_legend_above(n: int) -> None:
    rng = np.random.default_rng(n)
    long = pd.DataFrame([{"participant": f"p{i}", "condition": "pleasqlarify",
                          "questionnaire": "cu", "item": item, "points": 7,
                          "value": int(rng.integers(1, 8)), "group": "Decision Space"}
                         for i in range(n) for item in ("long", "short")])
    dist = likert_distribution(long)
    fig = F.likert_diverging(dist, labels={"long": LONG_ITEM, "short": "It was easy."})
    labels = {y for trace in fig.data for y in trace.y}
    assert not any("…" in y for y in labels)  # never truncated …
    long_label = next(y for y in labels if "Decision Space helpful" in y)
    assert long_label.replace("<br>", " ").endswith(LONG_ITEM)  # … but wrapped, whole
    lines = max(y.count("<br>") + 1 for y in labels)
    assert max(len(line) for y in labels for line in y.split("<br>")) <= 48
    assert fig.layout.height >= 130 + len(labels) * max(F.ROW_PX + 4, 16 * lines + 8)
    _legend_outside(fig, 60)
    shares = dist.groupby("item")["share"].sum()
    assert np.allclose(shares, 1.0)


@pytest.mark.parametrize("n", SIZES)
def test_sus_strip_and_statistics_say_what_they_need(n: int) -> None:
    rng = np.random.default_rng(n)
    scores = pd.DataFrame({"participant": _labels(n), "condition": "pleasqlarify",
                           "sus": rng.uniform(40, 95, n).round(1)})
    summary = sus_summary(scores["sus"], 7)
    fig = F.sus_strip(scores, summary)
    mean = fig.data[1]
    if n == 1:
        assert summary.ci_text() == "needs at least 2 participants (have 1)"
        assert summary.test_text() == "needs at least 2 participants (have 1)"
        assert mean.error_x.array is None and "needs 2" in mean.name
        assert summary.needs().startswith("The 95 % CI and the t-test against 68 need at least 2")
    else:
        low, high = (float(x) for x in summary.ci_text().split("–"))
        assert low <= summary.mean <= high
        t, p = (float(x) for x in summary.test_text().split(", "))
        assert not math.isnan(t) and 0 <= p <= 1
        assert all(not math.isnan(v) for v in (*mean.error_x.array, *mean.error_x.arrayminus))
        assert summary.needs() == ""
    assert f"n = {n}" in fig.layout.title.text
    _legend_outside(fig, 80)
    same = sus_summary([70.0, 70.0])
    assert same.test_text() == "needs scores that differ (all are equal)"


@pytest.mark.parametrize("n", SIZES)
def test_timing_boxes_hold_every_participant(n: int) -> None:
    rows = [{"participant": f"p{i}", "label": f"P{i + 1}", "condition": "pleasqlarify",
             "task": t, "subtask": s, "active_s": 30.0 + i} for i in range(n) for t in TASKS
            for s in ("", *SUBS)]
    fig = F.timing_box(pd.DataFrame(rows))
    assert sum(len(trace.y) for trace in fig.data) == n * len(TASKS) * len(SUBS)


def test_the_timeline_has_no_empty_band_above_its_lanes() -> None:
    """The Timeline & replay chart drew ~90 px of nothing above its first lane (Plotly's
    default top margin, with no title or legend to fill it), also in the replay's marked copy."""
    from types import SimpleNamespace

    events = [SimpleNamespace(type=t, server_ts=1_750_000_000_000 + 1000 * i, task="t",
                              subtask="3") for i, t in enumerate(["dv.accept", "submit"])]
    timers = pd.DataFrame({"start_ts": [1_750_000_000_000], "end_ts": [1_750_000_005_000],
                           "task": ["t"], "subtask": ["3"]})
    for fig in (F.swimlane(events, timers), F.swimlane(events, timers, 1_750_000_001_000)):
        assert fig.layout.margin.t is not None and fig.layout.margin.t <= 30
        assert {tr.name for tr in fig.data} >= {"dv", "submit"}


def test_the_workflow_sankey_labels_are_dark_and_legible() -> None:
    """The Sankey's node labels were the theme's light 10 px grey on coloured nodes."""
    links = pd.DataFrame({"source": ["start", "1:dv", "1:dv"],
                          "target": ["1:dv", "2:submit", "end"], "count": [3, 2, 1]})
    sankey = F.workflow_sankey(links).data[0]
    assert list(sankey.node.label) == ["start", "1:dv", "2:submit", "end"]
    assert sankey.textfont.size >= 12 and sankey.textfont.color == "#1f1f1f"
