"""The Action Space figure, built as a pure function of a repair session (testable without Streamlit).

Survivors sit at the pool's stored positions inside Voronoi cells on fixed [0, 1] axes, so the
view stays stable while filtering; filtered-out candidates fade to small grey dots. Each
survivor is a glyph mimicking its output table (width ~ columns, height ~ rows, capped at 50 px)
drawn as pixel-sized rectangle markers in a few shared traces (not one layout shape per glyph:
Plotly.js draws many layout shapes slowly); invalid candidates are an
X. Cells and glyphs take their cluster's shade, red when the candidate contains the current decision variable and blue otherwise (§8.1).
A transparent marker per survivor carries the candidate id in ``customdata`` and the hover
tooltip, and is what lasso/box/click selection reports back.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np

from core.engine.execute import ExecutionResult
from core.engine.layout import voronoi_cells
from core.engine.session import RankedVariable, RepairSession

if TYPE_CHECKING:
    import plotly.graph_objects as go

REDS = ("#cb181d", "#ef6548", "#a50f15", "#fb6a4a", "#d7301f", "#fc9272", "#7f0000", "#e34a33")
BLUES = ("#2171b5", "#6baed6", "#08519c", "#4292c6", "#3182bd", "#9ecae1", "#08306b", "#1f78b4")
FADED = "#c8c8c8"
INVALID = "#444444"
GLYPH_CAP = 50
HEIGHT = 440
MARGIN = 4  # px around the plot area; glyph headers are offset in px of HEIGHT - 2 * MARGIN
GESTURES = ("lasso", "box", "click")


@dataclass(frozen=True)
class ClusterInfo:
    """A cluster of the survivors as the UI shows it: display number, members and weight."""

    label: int
    number: int  # 1-based, heaviest first
    members: tuple[int, ...]
    weight: float


REPAIR_ORIGINS = ("recompose", "resample")
NEW = "#e6a100"  # the star on candidates added by repair


def clusters(session: RepairSession) -> list[ClusterInfo]:
    """The current clusters, numbered 1.. by descending weight (stable display order)."""
    groups: dict[int, list[int]] = {}
    for cid, label in session.cluster_of().items():
        groups.setdefault(int(label), []).append(int(cid))
    counts = session.pool.counts
    ordered = sorted(groups.items(), key=lambda kv: (-float(counts[kv[1]].sum()), kv[0]))
    return [ClusterInfo(label, i + 1, tuple(sorted(m)), float(counts[m].sum()))
            for i, (label, m) in enumerate(ordered)]


def glyph_size(result: ExecutionResult, cap: int = GLYPH_CAP) -> tuple[int, int]:
    """Glyph (width, height) in px from the output's columns and rows, capped at ``cap``."""
    rows, cols = result.shape
    return min(cap, 6 + 7 * cols), min(cap, 4 + 3 * rows)


def contains_mask(session: RepairSession, variable: RankedVariable | None) -> np.ndarray:
    """Which pool candidates contain every feature of ``variable`` (all False for None)."""
    pool = session.pool
    if variable is None:
        return np.zeros(pool.n, dtype=bool)
    col = {f.key: j for j, f in enumerate(pool.vocabulary)}
    cols = [col[k] for k in variable.keys if k in col]
    if len(cols) != len(variable.keys):
        return np.zeros(pool.n, dtype=bool)
    return pool.x[:, cols].all(axis=1)


def shade(number: int, red: bool) -> str:
    """Colour of cluster ``number`` (1-based) on the red or blue scale."""
    palette = REDS if red else BLUES
    return palette[(number - 1) % len(palette)]


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _cell(value: Any, width: int = 22) -> str:
    text = "NULL" if value is None else str(value)
    return escape(text if len(text) <= width else text[: width - 1] + "…")


def output_preview(result: ExecutionResult, rows: int = 5, cols: int = 4) -> str:
    """A few rows of an output as tooltip HTML (Plotly hover labels accept <br> and <b>)."""
    if not result.ok:
        return f"<b>error</b>: {_cell(result.error, 60)}"
    n_rows, n_cols = result.shape
    head = " | ".join(f"<b>{_cell(c, 16)}</b>" for c in result.columns[:cols])
    more_cols = " | …" if n_cols > cols else ""
    lines = [head + more_cols]
    lines += [" | ".join(_cell(v) for v in r[:cols]) + more_cols for r in result.rows[:rows]]
    if n_rows > rows:
        lines.append(f"… {n_rows - rows} more rows")
    if n_rows == 0:
        lines.append("(no rows)")
    return "<br>".join(lines)


def _per_pool(pool: Any) -> dict[Any, Any]:
    """A cache dict that lives as long as ``pool`` (pools are shared, read-only objects)."""
    key = id(pool)
    if key not in _POOL_CACHES:
        _POOL_CACHES[key] = {}
        weakref.finalize(pool, _POOL_CACHES.pop, key, None)
    return _POOL_CACHES[key]


_POOL_CACHES: dict[int, dict[Any, Any]] = {}
FIGURES_PER_POOL = 128


def hover_text(session: RepairSession, i: int, cluster_number: int, max_features: int = 10) -> str:
    """Tooltip of candidate ``i``: id, cluster, output shape, atomic features, output preview."""
    pool = session.pool
    res = pool.results[i]
    rows, cols = res.shape
    origin = pool.origins[i] if i < len(pool.origins) else ""
    made = (f"new ({origin})" if origin in REPAIR_ORIGINS
            else f"sampled ×{int(pool.counts[i])}")
    title = (f"<b>Query #{i}</b> · cluster {cluster_number} · {made}"
             f"<br>{rows} rows × {cols} columns" if res.ok else
             f"<b>Query #{i}</b> · cluster {cluster_number} · <b>invalid</b>")
    cache = _per_pool(pool)
    if ("hover", i, max_features) not in cache:
        cache["hover", i, max_features] = _hover_body(session, i, max_features)
    return title + cache["hover", i, max_features]


def _hover_body(session: RepairSession, i: int, max_features: int) -> str:
    pool = session.pool
    res = pool.results[i]
    keys = pool.feature_keys(i)
    feats = "<br>".join(escape(k if len(k) <= 60 else k[:59] + "…") for k in keys[:max_features])
    if len(keys) > max_features:
        feats += f"<br>… {len(keys) - max_features} more features"
    parts = ["", feats] if feats else [""]
    parts.append(output_preview(res))
    return "<br>──────────<br>".join(parts)


def _cells_trace(polys: list[list[tuple[float, float]]], colour: str, name: str) -> dict:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for poly in polys:
        if not poly:
            continue
        xs += [round(p[0], 5) for p in poly] + [round(poly[0][0], 5), None]
        ys += [round(p[1], 5) for p in poly] + [round(poly[0][1], 5), None]
    return {"type": "scatter", "x": xs, "y": ys, "mode": "lines", "fill": "toself",
            "fillcolor": _rgba(colour, 0.30), "line": {"color": "white", "width": 1.5},
            "hoverinfo": "skip", "name": name, "showlegend": False}


def _glyph_trace(x: np.ndarray, y: np.ndarray, w: np.ndarray, h: np.ndarray,
                 colours: list[str], plot_px: float) -> dict:
    """Table glyphs (white outline, body, dark header row each) as one marker trace.

    Plotly's ``line-ew`` symbol is a horizontal stroke ``1.4 * size`` px long, so with
    ``size = w / 1.4`` and ``line.width = h`` it is a w x h px rectangle: one SVG path per point,
    far cheaper for Plotly.js than a layout shape per glyph. The three parts of each glyph are
    consecutive points, so overlapping glyphs stack as whole tables. The header sits
    ``(h - header) / 2`` px above the centre, in data units of the fixed plot height ``plot_px``.
    """
    header = np.minimum(3.0, h / 2)
    xs = np.repeat(x, 3)
    ys = np.stack([y, y, y + (h - header) / 2 / plot_px], axis=1).ravel()
    lengths = np.stack([w + 2, w, w], axis=1).ravel()
    widths = np.stack([h + 2, h, header], axis=1).ravel()
    # colours as indices into a colour scale whose nodes are exactly the palette: numeric arrays
    # validate far faster in plotly.py than one colour string per point
    palette = sorted({"white", "#1f1f1f", *colours})
    index = {c: i for i, c in enumerate(palette)}
    colour = [index[c] for body in colours for c in ("white", body, "#1f1f1f")]
    scale = [[i / (len(palette) - 1), c] for i, c in enumerate(palette)]
    paint = {"color": colour, "colorscale": scale, "cmin": 0, "cmax": len(palette) - 1}
    return {"type": "scatter", "x": xs.tolist(), "y": np.round(ys, 6).tolist(),
            "mode": "markers", "name": "glyphs", "hoverinfo": "skip", "showlegend": False,
            "marker": {"symbol": "line-ew", "size": np.round(lengths / 1.4, 2).tolist(),
                       "opacity": 1, "showscale": False, **paint,
                       "line": {"width": widths.tolist(), **paint}},
            "selected": {"marker": {"opacity": 1}}, "unselected": {"marker": {"opacity": 1}}}


def figure_spec(session: RepairSession, variable: RankedVariable | None = None, *,
                height: int = HEIGHT) -> dict[str, Any]:
    """The Action Space scatter as a plain Plotly.js figure dict (JSON-ready, no plotly.py).

    Plain dicts because plotly.py's validation was ~80 % of a rerun at N = 200; the mounted
    component applies the dict with ``Plotly.react``, tests read it through :func:`build_figure`.
    """
    pool = session.pool
    pos = pool.positions if pool.positions is not None else np.full((pool.n, 2), 0.5)
    pos = np.round(pos, 6)
    alive = session.alive
    survivors = session.survivors
    infos = clusters(session)
    number = {cid: c.number for c in infos for cid in c.members}
    red = contains_mask(session, variable)
    valid = pool.valid

    traces: list[dict[str, Any]] = []
    cache = _per_pool(pool)
    cells_key = ("cells", id(pool.positions), alive.tobytes())
    if cells_key not in cache:
        cache[cells_key] = voronoi_cells(pos[survivors]) if len(survivors) else []
    polys = cache[cells_key]
    groups: dict[tuple[int, bool], list[list[tuple[float, float]]]] = {}
    for k, cid in enumerate(survivors.tolist()):
        groups.setdefault((number[cid], bool(red[cid])), []).append(polys[k])
    for (num, is_red), cell_polys in sorted(groups.items()):
        traces.append(_cells_trace(cell_polys, shade(num, is_red),
                                   f"cells {num} {'red' if is_red else 'blue'}"))

    dead = np.flatnonzero(~alive)
    traces.append({"type": "scatter", "x": pos[dead, 0].tolist(), "y": pos[dead, 1].tolist(),
                   "mode": "markers", "name": "filtered out", "hoverinfo": "skip",
                   "marker": {"color": FADED, "size": 5, "opacity": 0.6}, "showlegend": False})

    sizes, texts, custom = [], [], []
    glyphs: list[tuple[int, int, int, str]] = []  # (cid, w, h, colour) of valid survivors
    for cid in survivors.tolist():
        num = number[cid]
        w, h = glyph_size(pool.results[cid])
        if valid[cid]:
            glyphs.append((cid, w, h, shade(num, bool(red[cid]))))
        sizes.append(max(w, h, 12) if valid[cid] else 14)
        texts.append(hover_text(session, cid, num))
        custom.append([cid, num])
    ok = [k for k, cid in enumerate(survivors.tolist()) if valid[cid]]
    bad = [k for k, cid in enumerate(survivors.tolist()) if not valid[cid]]
    surv = survivors
    for name, ks, marker in (
        ("candidates", ok, {"symbol": "square", "color": "rgba(0,0,0,0)",
                            "size": [sizes[k] for k in ok], "line": {"width": 0}}),
        ("invalid", bad, {"symbol": "x-thin", "color": INVALID, "size": 14,
                          "line": {"color": INVALID, "width": 3}}),
    ):
        traces.append({
            "type": "scatter", "x": pos[surv[ks], 0].tolist() if ks else [],
            "y": pos[surv[ks], 1].tolist() if ks else [], "mode": "markers", "name": name,
            "marker": marker, "customdata": [custom[k] for k in ks],
            "hovertext": [texts[k] for k in ks], "hovertemplate": "%{hovertext}<extra></extra>",
            "selected": {"marker": {"opacity": 1}}, "unselected": {"marker": {"opacity": 1}},
            "showlegend": False})
    # glyphs above every other trace (as layer-"above" shapes were); hover and selection come
    # from the transparent "candidates" markers, which sit at the same positions
    gid = [g[0] for g in glyphs]
    traces.append(_glyph_trace(pos[gid, 0], pos[gid, 1], np.array([g[1] for g in glyphs], float),
                               np.array([g[2] for g in glyphs], float), [g[3] for g in glyphs],
                               height - 2 * MARGIN))

    # candidates added by repair (after a "No" or "None of these") carry a small star
    new = [cid for cid in survivors.tolist() if cid < len(pool.origins)
           and pool.origins[cid] in REPAIR_ORIGINS]
    if new:
        traces.append({"type": "scatter", "x": np.clip(pos[new, 0] + 0.025, 0, 1).tolist(),
                       "y": np.clip(pos[new, 1] + 0.035, 0, 1).tolist(), "mode": "markers",
                       "name": "new", "hoverinfo": "skip", "showlegend": False,
                       "marker": {"symbol": "star", "size": 10, "color": NEW,
                                  "line": {"color": "white", "width": 1}}})

    annotations = []
    for c in infos:
        xy = pos[list(c.members)].mean(axis=0)
        annotations.append({"x": round(float(xy[0]), 6), "y": round(float(xy[1]), 6),
                            "text": f"<b>{c.number}</b>", "showarrow": False, "yshift": 30,
                            "font": {"size": 13, "color": "#1f1f1f"},
                            "bgcolor": "rgba(255,255,255,0.75)", "borderpad": 1})

    axis = {"range": [0, 1], "fixedrange": True, "visible": False, "showgrid": False,
            "zeroline": False}
    layout = {
        "height": height, "margin": {"l": MARGIN, "r": MARGIN, "t": MARGIN, "b": MARGIN},
        "dragmode": "lasso", "clickmode": "event", "hovermode": "closest", "showlegend": False,
        "plot_bgcolor": "white", "paper_bgcolor": "white", "xaxis": axis, "yaxis": dict(axis),
        "annotations": annotations, "uirevision": pool.task_id,
        "hoverlabel": {"align": "left", "font": {"size": 11, "family": "monospace"},
                       "bgcolor": "white"},
    }
    return {"data": traces, "layout": layout}


def cached_figure(session: RepairSession, variable: RankedVariable | None = None, *,
                  height: int = HEIGHT) -> dict[str, Any]:
    """:func:`figure_spec`, kept per pool and state (survivors, colouring variable, clustering).

    Shared between browser sessions: it holds only what the pool and the state determine. The
    dict is shared too, so callers must not mutate it.
    """
    cache = _per_pool(session.pool)
    key = ("figure", id(session.pool.positions), session.alive.tobytes(), variable.keys if variable else None, height,
           session.strategy, session.max_clusters, session.min_support, session.random_state)
    if key not in cache:
        figures = [k for k in cache if k[0] == "figure"]
        for old in figures[: max(0, len(figures) - FIGURES_PER_POOL + 1)]:
            del cache[old]
        cache[key] = figure_spec(session, variable, height=height)
    return cache[key]


def build_figure(session: RepairSession, variable: RankedVariable | None = None, *,
                 height: int = HEIGHT) -> go.Figure:
    """:func:`figure_spec` as a validated plotly.py figure (tests, exports; slow at large N)."""
    import plotly.graph_objects as go

    return go.Figure(figure_spec(session, variable, height=height))


def selected_ids(selection: Any) -> tuple[list[int], str]:
    """Candidate ids and gesture ('lasso', 'box' or 'click') from a chart selection.

    Reads the component's ``{"ids", "gesture"}`` and st.plotly_chart's ``{"points", "lasso",
    "box"}`` forms alike.
    """
    if not selection:
        return [], ""
    sel = selection.get("selection", selection)
    if "ids" in sel:
        ids = sorted({int(i) for i in sel.get("ids") or []})
        gesture = str(sel.get("gesture") or "")
        return (ids, gesture) if ids and gesture in GESTURES else ([], "")
    ids: list[int] = []
    for point in sel.get("points", []) or []:
        data = point.get("customdata")
        if isinstance(data, list | tuple) and data:
            ids.append(int(data[0]))
    if sel.get("lasso"):
        gesture = "lasso"
    elif sel.get("box"):
        gesture = "box"
    else:
        gesture = "click"
    return sorted(set(ids)), gesture if ids else ""
