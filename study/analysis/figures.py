"""Plotly figures for the analysis page, and its first tab's tables as plain HTML (the
colour-coded completion grid and the per-cell table), as pure functions of the analysis tables.

The Completion tab opens first, so it loads neither Plotly nor Streamlit's data-grid component
(1.2 MB of JavaScript and a canvas per table) in the browser: its tables are HTML, every value
escaped, in a scroll box with a sticky header.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from study.analysis.completion import CODE_LABELS
from study.analysis.questionnaires_agg import SUS_BENCHMARK, SusSummary

CODE_COLOURS = {"solved": "#1a9850", "partial-better": "#fee08b",
                "partial-not-original": "#fc8d59", "not-solved": "#d73027"}
LIKERT_COLOURS = ("#b2182b", "#d6604d", "#f4a582", "#dddddd", "#92c5de", "#4393c3", "#2166ac")


UNCODED = "uncoded"
UNCODED_COLOUR = "#e6e6e6"


GRID_LABELS = {"solved": "solved", "partial-better": "partial: better",
               "partial-not-original": "partial: other", "not-solved": "not solved"}
SUGGESTED_MARK = " *"  # after a suggested code's text in the grid (the caption says what it is)
FIRST_SUBTASK = "3"  # the subtask the tool suggests codes for: its columns come first


def completion_grid(table: pd.DataFrame, column: str = "final"
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 as two aligned grids, a row per participant (label) and a column per
    'task · subtask': the state each cell shows, and its short text. The subtask-3 columns
    (the outcome, with the tool's suggestions) come first, then the others, each in table
    order, so at 1600 px the outcome of every task shows without scrolling sideways.

    A cell shows the researcher's code (``column``), else the tool's suggestion (its text then
    ends in :data:`SUGGESTED_MARK`), else 'uncoded' (the verbal subtasks 2a/2b have no
    suggestion until someone codes them); a pair missing from ``table`` is 'uncoded' too.
    Texts are the short :data:`GRID_LABELS`; :func:`completion_html` gives each cell the full
    :data:`CODE_LABELS` wording as its tooltip.
    """
    if table.empty:
        empty = pd.DataFrame(index=pd.Index([], name="participant"))
        return empty, empty.copy()
    final = table[column].where(table[column].map(lambda c: isinstance(c, str)))
    suggested = table["suggested"].where(table["suggested"].map(lambda c: isinstance(c, str)))
    code = final.fillna(suggested).fillna(UNCODED)
    label = code.map(lambda c: GRID_LABELS.get(c, c))
    text = label.where(final.notna() | (code == UNCODED), label + SUGGESTED_MARK)
    cells = pd.DataFrame({"participant": table["label"],
                          "part": table["task"] + " · " + table["subtask"],
                          "code": code, "text": text})
    rows = list(dict.fromkeys(cells["participant"]))
    parts = list(dict.fromkeys(zip(table["task"], table["subtask"], strict=True)))
    cols = [f"{t} · {s}" for t, s in sorted(parts, key=lambda p: p[1] != FIRST_SUBTASK)]
    codes, texts = (cells.pivot_table(index="participant", columns="part", values=value,
                                      aggfunc="last").reindex(index=rows, columns=cols)
                    .fillna(UNCODED).rename_axis(index="participant", columns=None)
                    for value in ("code", "text"))
    return codes, texts


def part_headers(parts: list[str], width: int = 24) -> list[tuple[str, str]]:
    """(short header, tooltip) of each 'task · subtask' column: the tasks' shared id prefix
    (e.g. 'film-') dropped and a longer id cut to ``width`` characters with '…'; the tooltip
    names the task and subtask in full."""
    tasks = [p.rpartition(" · ")[0] for p in parts]
    prefix = ""
    if len(set(tasks)) > 1:
        common = tasks[0]
        for t in tasks[1:]:
            while not t.startswith(common):
                common = common[:-1]
        prefix = common[:common.rfind("-") + 1]  # a whole word of the id, never a part of one
    out = []
    for part, task in zip(parts, tasks, strict=True):
        sub = part.rpartition(" · ")[2]
        name = task[len(prefix):] or task
        name = name if len(name) <= width else name[:width - 1] + "…"
        what = "the outcome (the tool suggests a code)" if sub == FIRST_SUBTASK else "verbal"
        out.append((f"{name} · {sub}", f"Task {task}, subtask {sub}: {what}"))
    return out


def _luminance(colour: str) -> float:
    """WCAG relative luminance of a '#rrggbb' colour."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: str, bg: str) -> float:
    """WCAG contrast ratio of two '#rrggbb' colours (1 … 21; body text needs 4.5)."""
    hi, lo = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def code_style(code: str) -> str:
    """The CSS of a completion cell showing ``code``: its code colour behind black or white
    text, whichever reads better on it."""
    bg = {**CODE_COLOURS, UNCODED: UNCODED_COLOUR}.get(code, UNCODED_COLOUR)
    fg = max(("#000000", "#ffffff"), key=lambda c: contrast(c, bg))
    return f"background-color: {bg}; color: {fg}"


# a table in a box that scrolls both ways under a sticky header (and, for the grid, a sticky
# participant column); as Streamlit's light theme draws its tables, headers at 7:1 contrast
TABLE_CSS = """<style>
.pq-tbl { overflow: auto; border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; }
.pq-tbl table { border-collapse: separate; border-spacing: 0; font-size: 0.875rem;
  width: max-content; min-width: 100%; }
.pq-tbl th, .pq-tbl td { padding: 0.25rem 0.5rem; text-align: left; vertical-align: top;
  border-bottom: 1px solid rgba(49, 51, 63, 0.1); border-right: 1px solid rgba(49, 51, 63, 0.1);
  white-space: nowrap; }
.pq-tbl th { background: #f8f9fb; color: #55575f; font-weight: 400; }
.pq-tbl thead th { position: sticky; top: 0; z-index: 2; }
.pq-tbl tbody th { position: sticky; left: 0; z-index: 1; }
.pq-tbl thead th:first-child { left: 0; z-index: 3; }
</style>"""


def _table(head: list[str], rows: Sequence[tuple[str, Sequence[tuple[str, ...]]]], label: str,
           max_height: int, classes: str = "", titles: list[str] | None = None) -> str:
    """An HTML table in a scroll box: ``head`` the column titles (``titles``: their tooltips),
    each row a header cell and (text, CSS class[, tooltip]) cells; every text escaped. The box
    is a labelled, focusable region, so it scrolls by keyboard too."""
    esc = html.escape

    def attrs(cls: str = "", title: str = "") -> str:
        return (f' class="{esc(cls)}"' if cls else "") + (f' title="{esc(title)}"' if title
                                                            else "")
    tips = titles or [""] * len(head)
    out = [f'<div class="pq-tbl {classes}" role="region" aria-label="{esc(label)}" '
           f'tabindex="0" style="max-height: {max_height}px"><table><thead><tr>',
           *(f'<th scope="col"{attrs("", tip)}>{esc(h)}</th>'
             for h, tip in zip(head, tips, strict=True)), "</tr></thead><tbody>"]
    for name, cells in rows:
        out.append(f'<tr><th scope="row">{esc(name)}</th>')
        out.extend(f"<td{attrs(*cell[1:])}>{esc(cell[0])}</td>" for cell in cells)
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _cell(value: Any) -> str:
    """How a table cell shows ``value``: missing values (None, NaN) as an empty cell."""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


# the grid's headers wrap (at a hyphen or space) into a narrow column: a column is as wide as
# its cells' short texts, not its task's id
GRID_CSS = (".pq-grid thead th { white-space: normal; overflow-wrap: normal; max-width: 6.5rem; "
            "vertical-align: bottom; }")


def completion_html(codes: pd.DataFrame, texts: pd.DataFrame, max_height: int = 740) -> str:
    """The completion grid (:func:`completion_grid`) as an HTML table: a row per participant
    (its column pinned while the grid scrolls sideways), each cell's short text on its code's
    colour (black or white text, :func:`code_style`) with the code's full wording as its
    tooltip, the headers short (:func:`part_headers`) with the task's full id as theirs."""
    known = [*CODE_COLOURS, UNCODED]
    css = "".join(f".pq-grid td.pq-c-{code} {{ {code_style(code)} }}\n" for code in known)
    cls = {code: f"pq-c-{code}" for code in known}

    def tip(text: str, code: str) -> str:
        full = CODE_LABELS.get(code, code)
        return f"{full}: the tool's suggestion" if text.endswith(SUGGESTED_MARK) else full
    rows = [(str(name), [(text, cls.get(code, cls[UNCODED]), tip(text, code))
                         for text, code in zip(texts.loc[name], codes.loc[name], strict=True)])
            for name in texts.index]
    heads = part_headers([str(c) for c in texts.columns])
    return (f"{TABLE_CSS}<style>{css}{GRID_CSS}</style>"
            + _table(["participant", *(h for h, _ in heads)], rows,
                     "Task completion per participant", max_height, "pq-grid",
                     ["", *(t for _, t in heads)]))


# labelled figures laid out as Streamlit's st.metric draws them (its label, value and help),
# as plain HTML: the metric element's JavaScript (and the number-formatting chunks it pulls)
# loaded after the rest of the page and was the last thing the Analysis page's first load
# waited for
STATS_CSS = """<style>
.pq-stats { display: flex; flex-wrap: wrap; gap: 1rem; }
.pq-stat { flex: 1 1 14rem; min-width: 0; }
.pq-stat-label { font-size: 0.875rem; color: #31333f; }
.pq-stat-value { font-size: 2.25rem; line-height: 1.3; color: #31333f; }
.pq-stat-help { font-size: 0.875rem; color: #55575f; }
.pq-note { font-size: 0.875rem; color: #55575f; margin: 0.5rem 0; }
</style>"""


def stats_html(stats: list[tuple[str, str, str]]) -> str:
    """Labelled figures side by side, each (label, value, help) escaped, the help shown below
    its value (a tooltip would need a pointer)."""
    esc = html.escape
    cells = "".join(f'<div class="pq-stat"><div class="pq-stat-label">{esc(label)}</div>'
                    f'<div class="pq-stat-value">{esc(value)}</div>'
                    f'<div class="pq-stat-help">{esc(help_)}</div></div>'
                    for label, value, help_ in stats)
    return f'{STATS_CSS}<div class="pq-stats">{cells}</div>'


def note_html(text: str) -> str:
    """``text`` escaped, as a caption (small, muted) in an HTML block."""
    return f'<p class="pq-note">{html.escape(text)}</p>'


def table_html(frame: pd.DataFrame, label: str, max_height: int = 400) -> str:
    """``frame`` as an HTML table, its first column as the row headers (sticky when the box
    scrolls sideways) and missing values as empty cells: a table readable without a data-grid
    component."""
    first, *rest = frame.columns
    rows = [(_cell(row[0]), [(_cell(v), "") for v in row[1:]])
            for row in frame[[first, *rest]].itertuples(index=False, name=None)]
    return TABLE_CSS + _table([str(c) for c in frame.columns], rows, label, max_height)


ROW_PX = 30  # a bar row, and a Likert bar, never thinner than this


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
    hover = "%{y}<br>answer %{fullData.name}: %{customdata:.0f} % of answers<extra></extra>"
    for level in order:
        sub = d[d["level"] == level]
        share = sub["share"] * 100
        if level == mid:
            for sign in (-1, 1):
                fig.add_trace(go.Bar(y=sub["row"], x=sign * share / 2, orientation="h",
                                     name=str(int(level)), showlegend=sign > 0,
                                     legendrank=int(level), marker_color=colour(int(level)),
                                     customdata=share, hovertemplate=hover))
            continue
        fig.add_trace(go.Bar(y=sub["row"], x=-share if level < mid else share,
                             orientation="h", name=str(int(level)), legendrank=int(level),
                             marker_color=colour(int(level)), customdata=share,
                             hovertemplate=hover))
    # the axis always spans -100..100 around a marked 0 (neutral), whatever the answers: with
    # every answer on one side the bars used to fill a 0..100 axis and read as a plain bar
    # chart; ticks are unsigned shares, each side's title says which way it points
    ticks = [-100, -50, 0, 50, 100]
    fig.update_layout(barmode="relative",
                      xaxis={"title": "% of answers: ← disagree · neutral split at 0 · agree →",
                             "range": [-100, 100], "tickvals": ticks,
                             "ticktext": [str(abs(t)) for t in ticks], "zeroline": True,
                             "zerolinecolor": "#444", "zerolinewidth": 2},
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
    # node labels dark and 13 px: the theme's light 10 px grey on the coloured nodes was hard
    # to read ("2:select", "3:submit")
    return go.Figure(go.Sankey(node={"label": nodes, "pad": 12},
                               textfont={"size": 13, "color": "#1f1f1f"},
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
    # no title and no legend above the lanes: Plotly's default 100 px top margin was an empty
    # band between the replay's step caption and the first lane
    fig.update_layout(height=380, xaxis_title="time", showlegend=False,
                      margin={"t": 20, "b": 40})
    return fig if marked is None else mark_time(fig, marked)


def mark_time(fig: go.Figure, marked: int) -> go.Figure:
    """A copy of a timeline ``fig`` with a red line at ``marked`` (epoch ms): the replay's step
    marks a swimlane drawn once per trace, which stays unchanged (it may be shared)."""
    out = go.Figure(fig)
    out.add_vline(x=pd.to_datetime(marked, unit="ms"), line_color="red")
    return out
