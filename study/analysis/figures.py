"""Plotly figures for the analysis page, as pure functions of the analysis tables."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from study.analysis.completion import CODE_LABELS, CODES
from study.analysis.questionnaires_agg import SUS_BENCHMARK, SusSummary

CODE_COLOURS = {"solved": "#1a9850", "partial-better": "#fee08b",
                "partial-not-original": "#fc8d59", "not-solved": "#d73027"}
LIKERT_COLOURS = ("#b2182b", "#d6604d", "#f4a582", "#dddddd", "#92c5de", "#4393c3", "#2166ac")


def completion_heatmap(table: pd.DataFrame, column: str = "final") -> go.Figure:
    """Table 1: rows task/subtask, columns participants, coloured by completion code.

    A cell shows the researcher's code, else the tool's suggestion (hover says which), else
    grey 'uncoded' (the verbal subtasks 2a/2b have no suggestion until someone codes them).
    """
    if table.empty:
        return go.Figure()
    t = table.copy()
    t["row"] = t["task"] + " · " + t["subtask"]
    rows = list(dict.fromkeys(t["row"]))
    cols = list(dict.fromkeys(t["label"]))
    cells = t.set_index(["row", "label"])
    states = list(CODES) + ["uncoded"]
    colours = {**CODE_COLOURS, "uncoded": "#e6e6e6"}
    z, text = [], []
    for r in rows:
        z_row, text_row = [], []
        for c in cols:
            final = cells[column].get((r, c)) if (r, c) in cells.index else None
            suggested = cells["suggested"].get((r, c)) if (r, c) in cells.index else None
            code = final if isinstance(final, str) else suggested if isinstance(
                suggested, str) else "uncoded"
            how = "coded" if isinstance(final, str) else "suggested" if code != "uncoded" else ""
            z_row.append(states.index(code) if code in states else len(states) - 1)
            text_row.append(f"{CODE_LABELS.get(code, code)} {f'({how})' if how else ''}")
        z.append(z_row)
        text.append(text_row)
    n = len(states)
    # a discrete scale: band i covers [i/n, (i+1)/n] (stops computed exactly, monotonic)
    scale = [[round(k / n, 9), colours[state]] for i, state in enumerate(states)
             for k in (i, i + 1)]
    fig = go.Figure(go.Heatmap(z=z, x=cols, y=rows, text=text, hoverinfo="x+y+text",
                               colorscale=scale, zmin=-0.5, zmax=n - 0.5, xgap=3, ygap=3,
                               showscale=False))
    for state in states:  # a legend of the codes, as in the paper's Table 1
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=CODE_LABELS.get(
            state, state), marker={"size": 12, "symbol": "square", "color": colours[state]}))
    many = len(cols) > 24  # participant labels turn upright; Plotly thins them when crowded
    fig.update_layout(yaxis={"autorange": "reversed", "tickmode": "array", "tickvals": rows,
                             "automargin": True},
                      xaxis={"side": "bottom", "tickangle": -90 if many else 0,
                             "automargin": True, "type": "category"},
                      title={"text": "Task completion (researcher codes; else the tool's "
                             "suggestion)", "y": 0.98, "yanchor": "top"},
                      height=heatmap_height(len(rows), many), plot_bgcolor="white",
                      margin={"t": 110},
                      legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"})
    return fig


ROW_PX = 30  # a heatmap or bar row, and a Likert bar, never thinner than this


def heatmap_height(rows: int, upright_labels: bool = False) -> int:
    """The completion grid's height: every row at least ROW_PX, at least three rows' worth (one
    participant and one task no longer collapse to a thin line), room above for the title and
    the legend and below for the participant labels."""
    return 110 + ROW_PX * max(3, rows) + (90 if upright_labels else 50)


def sus_strip(scores: pd.DataFrame, summary: SusSummary) -> go.Figure:
    """Per-participant SUS as points, the mean with its 95 % CI, and the 68 benchmark."""
    fig = go.Figure(go.Scatter(x=scores["sus"], y=[0] * len(scores), mode="markers",
                               text=scores["participant"], name="participants",
                               marker={"size": 10, "opacity": 0.7}))
    ci = summary.n >= 2  # one score has no interval: the mean alone, named so
    fig.add_trace(go.Scatter(x=[summary.mean], y=[0.3], mode="markers",
                             name="mean, 95 % CI" if ci else "mean (a CI needs 2 participants)",
                             error_x={"type": "data", "symmetric": False,
                                      "array": [summary.ci_high - summary.mean],
                                      "arrayminus": [summary.mean - summary.ci_low]}
                             if ci else None,
                             marker={"size": 14, "symbol": "diamond"}))
    fig.add_vline(x=SUS_BENCHMARK, line_dash="dash", annotation_text="68 benchmark",
                  annotation_position="bottom left")
    fig.update_layout(xaxis={"range": [0, 100], "title": "SUS"},
                      yaxis={"visible": False, "range": [-0.5, 0.8]}, height=300,
                      title=f"SUS M = {summary.mean:.1f} ({summary.grade}, "
                      f"{summary.adjective}, n = {summary.n})", margin={"t": 90},
                      legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"})
    return fig


def likert_diverging(dist: pd.DataFrame, facet: str = "group",
                     labels: dict[str, str] | None = None) -> go.Figure:
    """Diverging stacked bars (Figures 10/12): disagreement left of 0, agreement right,
    the neutral level split across 0; rows are items (their text when ``labels`` has it)."""
    fig = go.Figure()
    if dist.empty:
        return fig
    labels = labels or {}
    d = dist.copy()
    d["row"] = [" / ".join(str(x) for x in (f, c, labels.get(i, i)) if x) for f, c, i in
                zip(d.get(facet, ""), d.get("condition", ""), d["item"], strict=True)]
    d["row"] = [wrap(r) for r in d["row"]]  # whole item texts, on several lines if long
    lines = max((r.count("<br>") + 1 for r in d["row"]), default=1)
    points = int(d["points"].max())
    mid = (points + 1) / 2

    def colour(level: int) -> str:
        return LIKERT_COLOURS[min(6, round((level - 1) * 6 / max(1, points - 1)))]

    # relative bars stack outward in trace order: neutral halves first, then the levels
    # nearest to it, so 'strongly' disagree/agree end up at the outer ends
    order = ([mid] if mid.is_integer() else []) + [
        lvl for k in range(1, points) for lvl in (mid - k, mid + k) if 1 <= lvl <= points]
    for level in order:
        sub = d[d["level"] == level]
        share = sub["share"] * 100
        if level == mid:
            for sign in (-1, 1):
                fig.add_trace(go.Bar(y=sub["row"], x=sign * share / 2, orientation="h",
                                     name=str(int(level)), showlegend=sign > 0,
                                     legendrank=int(level), marker_color=colour(int(level))))
            continue
        fig.add_trace(go.Bar(y=sub["row"], x=-share if level < mid else share,
                             orientation="h", name=str(int(level)), legendrank=int(level),
                             marker_color=colour(int(level))))
    fig.update_layout(barmode="relative", xaxis_title="% of answers (disagree ← → agree)",
                      height=likert_height(d["row"].nunique(), lines),
                      yaxis={"autorange": "reversed", "automargin": True},
                      margin={"t": 70},  # the legend sits in this margin, above the top bar
                      legend={"orientation": "h", "title": "answer", "x": 0, "y": 1.0,
                              "yanchor": "bottom", "traceorder": "normal"})
    return fig


def likert_height(rows: int, lines: int = 1) -> int:
    """Room for every bar (each label's lines at 16 px, at least ROW_PX + 4), the legend above
    and the axis title below."""
    return 70 + 60 + max(2, rows) * max(ROW_PX + 4, 16 * lines + 8)


def wrap(text: str, width: int = 48) -> str:
    """An axis label broken into lines of at most ``width`` characters at spaces (``<br>``):
    item texts are read whole, never cut with an ellipsis."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def timing_box(timings: pd.DataFrame, subtasks: bool = True) -> go.Figure:
    """Active minutes per task (or task · subtask) as box plots with all points, by condition."""
    t = timings[timings["subtask"] != ""] if subtasks else timings[timings["subtask"] == ""]
    fig = go.Figure()
    for cond, grp in t.groupby("condition"):
        x = grp["task"] + (" · " + grp["subtask"] if subtasks else "")
        fig.add_trace(go.Box(x=x, y=grp["active_s"] / 60, name=str(cond), boxpoints="all",
                             text=grp["label"], jitter=0.4))
    fig.update_layout(boxmode="group", yaxis_title="active minutes")
    return fig


def workflow_sankey(links: pd.DataFrame) -> go.Figure:
    """Figure 11 style flow of observed action paths (nodes: step:action)."""
    nodes = list(dict.fromkeys([*links["source"], *links["target"]]))
    idx = {n: i for i, n in enumerate(nodes)}
    return go.Figure(go.Sankey(node={"label": nodes, "pad": 12},
                               link={"source": [idx[s] for s in links["source"]],
                                     "target": [idx[t] for t in links["target"]],
                                     "value": links["count"].tolist()}))


def transition_heatmap(matrix: pd.DataFrame) -> go.Figure:
    """A transition matrix (from rows to columns) with its counts."""
    fig = go.Figure(go.Heatmap(z=matrix.values, x=list(matrix.columns), y=list(matrix.index),
                               text=matrix.values, texttemplate="%{text}", colorscale="Blues"))
    fig.update_layout(xaxis_title="to", yaxis_title="from", yaxis_autorange="reversed")
    return fig


def swimlane(events: list[Any], timers: pd.DataFrame | None = None,
             marked: int | None = None) -> go.Figure:
    """A session timeline: one lane per event kind, subtask spans from the timer intervals."""
    fig = go.Figure()
    if timers is not None and not timers.empty:
        for _, r in timers.iterrows():
            fig.add_trace(go.Scatter(
                x=[pd.to_datetime(r["start_ts"], unit="ms"), pd.to_datetime(r["end_ts"],
                                                                            unit="ms")],
                y=["task"] * 2, mode="lines", line={"width": 12}, showlegend=False,
                name=f"{r['task']} {r['subtask']}", hoverinfo="name"))
    lanes: dict[str, list[Any]] = {}
    for e in events:
        lane = e.type.split(".", 1)[0]
        lanes.setdefault(lane, []).append(e)
    for lane, evs in lanes.items():
        fig.add_trace(go.Scatter(
            x=[pd.to_datetime(e.server_ts, unit="ms") for e in evs], y=[lane] * len(evs),
            mode="markers", name=lane, text=[f"{e.type} {e.task} {e.subtask}" for e in evs],
            hoverinfo="x+text"))
    fig.update_layout(height=380, xaxis_title="time", showlegend=False)
    return fig if marked is None else mark_time(fig, marked)


def mark_time(fig: go.Figure, marked: int) -> go.Figure:
    """A copy of a timeline ``fig`` with a red line at ``marked`` (epoch ms): the replay's step
    marks a swimlane drawn once per trace, which stays unchanged (it may be shared)."""
    out = go.Figure(fig)
    out.add_vline(x=pd.to_datetime(marked, unit="ms"), line_color="red")
    return out
