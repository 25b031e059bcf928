"""The Action Space, built as a pure function of a repair session (testable without Streamlit).

Survivors sit at the pool's stored positions inside Voronoi cells on a fixed [0, 1] square, so
the view stays stable while filtering; filtered-out candidates fade to small grey dots. Each
survivor is a glyph mimicking its output table (width ~ columns, height ~ rows, capped at 50
px, a dark header row); invalid candidates are an X. Cells and glyphs take their cluster's
shade, red when the candidate contains the current decision variable and blue otherwise (§8.1).
:func:`space_spec` is the drawing as data; the mounted component (ui/components) draws it as
SVG, shows each glyph's tooltip and reports lasso, box and click selections by candidate id.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np

from core.engine.answers import is_answer
from core.engine.display import spellings, sql_value
from core.engine.execute import ExecutionResult
from core.engine.layout import spread_classes, voronoi_cells
from core.engine.session import RankedVariable, RepairSession
from study import limits
from ui.chips import plain_text, shape_text
from ui.headers import distinct_headers

REDS = ("#cb181d", "#ef6548", "#a50f15", "#fb6a4a", "#d7301f", "#fc9272", "#7f0000", "#e34a33")
BLUES = ("#2171b5", "#6baed6", "#08519c", "#4292c6", "#3182bd", "#9ecae1", "#08306b", "#1f78b4")
FADED = "#c8c8c8"
INVALID = "#444444"
HEADER = "#1f1f1f"  # the header row of a table glyph
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
    return np.asarray(pool.x[:, cols].all(axis=1))


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


def output_preview(result: ExecutionResult, rows: int = 5, cols: int = 4,
                   labels: str = "sql", sql: str | None = None) -> str:
    """A few rows of an output as tooltip HTML (the tooltip renders <br> and <b>); under
    ``plain`` labels headers are in words and an error is not quoted (it names SQL); repeated
    headers are told apart by their tables in ``sql`` (:func:`ui.headers.distinct_headers`)."""
    if not result.ok:
        if labels == "plain":
            return "It stops with an error, so it has no output."
        return f"<b>error</b>: {_cell(result.error, 60)}"
    n_rows, n_cols = result.shape
    headers = distinct_headers(result.columns, sql, labels)
    head = " | ".join(f"<b>{_cell(h, 24)}</b>" for h in headers[:cols])
    more_cols = " | …" if n_cols > cols else ""
    lines = [head + more_cols]
    lines += [" | ".join(_cell(v) for v in r[:cols]) + more_cols for r in result.rows[:rows]]
    if n_rows > rows:
        lines.append(f"… {n_rows - rows} more rows")
    if n_rows == 0:
        lines.append("(no rows)")
    return "<br>".join(lines)


def _per_pool(pool: Any) -> dict[Any, Any]:
    """A cache dict that lives as long as ``pool`` (pools are shared, read-only objects).

    Read and write it only through :func:`_cached` (scripts and speculation threads share it).
    """
    key = id(pool)
    with _LOCK:
        cache = _POOL_CACHES.get(key)
        if cache is None:
            cache = _POOL_CACHES[key] = {}
            weakref.finalize(pool, _POOL_CACHES.pop, key, None)
        return cache


def _cached(pool: Any, key: tuple, compute: Any, cap: int | None = None) -> Any:
    """``compute()`` kept in ``pool``'s cache under ``key`` (computed outside the lock; the
    first result stored wins). With ``cap``, at most that many entries of ``key[0]``'s kind
    are kept (the oldest go first)."""
    cache = _per_pool(pool)
    with _LOCK:
        if key in cache:
            return cache[key]
    value = compute()
    with _LOCK:
        if cap is not None and key not in cache:
            same = [k for k in list(cache) if k[0] == key[0]]
            for old in same[: max(0, len(same) - cap + 1)]:
                cache.pop(old, None)
        return cache.setdefault(key, value)


_POOL_CACHES: dict[int, dict[Any, Any]] = {}
_LOCK = threading.Lock()  # cached_space may run in a prefetch thread and a script at once
FIGURES_PER_POOL = 128


def names_of(pool: Any) -> dict[str, str]:
    """The pool's identifiers as its candidates spell them (lower-case -> e.g. camelCase), for
    display only (:func:`core.engine.display.spellings`); kept as long as the pool."""
    return _cached(pool, ("names",), lambda: spellings(pool.sqls, pool.schema))


def hover_text(session: RepairSession, i: int, cluster_number: int, max_features: int = 10,
               labels: str = "sql") -> str:
    """Tooltip of candidate ``i``: cluster, how it was made, output shape, atomic features as
    the schema spells them (under ``plain`` labels: the questions it answers Yes, and no SQL
    at all), output preview (no internal id: people read it)."""
    pool = session.pool
    res = pool.results[i]
    rows, cols = res.shape
    origin = pool.origins[i] if i < len(pool.origins) else ""
    made = (f"new ({origin})" if origin in REPAIR_ORIGINS
            else f"sampled ×{int(pool.counts[i])}")
    title = (f"<b>Query</b> in cluster {cluster_number} · {made}"
             f"<br>{shape_text(rows, cols)}" if res.ok else
             f"<b>Query</b> in cluster {cluster_number} · <b>does not run</b>")
    tip = title + _cached(pool, ("hover", i, max_features, labels == "plain"),
                          lambda: _hover_body(session, i, max_features, labels))
    return f'<div class="pq-tip-words">{tip}</div>' if labels == "plain" else tip


def _hover_body(session: RepairSession, i: int, max_features: int, labels: str = "sql") -> str:
    """The cached part of a tooltip: the candidate's clauses (SQL, or under ``plain`` labels
    the questions it answers Yes) and its output preview."""
    pool = session.pool
    res = pool.results[i]
    names = names_of(pool)
    # its clauses: the features about its answer (hybrid, outputs) are not part of the query,
    # and the preview under them shows the answer itself
    present = [f for f in (pool.vocabulary[j] for j in np.flatnonzero(pool.x[i]))
               if not is_answer(f)]
    if labels == "plain":
        lines = [plain_text(f, names) for f in present]
        head, unit = "<b>Answers Yes to</b><br>", "more questions"
    else:
        lines = [f"{f.keyword} {sql_value(f, names)}".strip() for f in present]
        head, unit = "", "more features"
    feats = "<br>".join(escape(k if len(k) <= 120 else k[:119] + "…")
                        for k in lines[:max_features])
    if len(lines) > max_features:
        feats += f"<br>… {len(lines) - max_features} {unit}"
    parts = ["", head + feats] if feats else [""]
    parts.append(output_preview(res, labels=labels, sql=pool.sqls[i]))
    return "<br>──────────<br>".join(parts)


def _unit(v: float) -> float:
    return round(float(v), 5)


def space_spec(session: RepairSession, variable: RankedVariable | None = None, *,
               height: int = HEIGHT, labels: str = "sql") -> dict[str, Any]:
    """What the Action Space component draws for this state, as plain JSON-ready data.

    Positions are in the fixed [0, 1] data square (y up); glyph sizes in px. ``cells``: the
    survivors' Voronoi cells grouped by fill (cluster shade, red or blue); ``dead``: the
    filtered-out candidates (faded, never selectable); ``glyphs``: one per survivor in pool
    order (``valid`` False draws an X), with its cluster number, the repair star flag and its
    tooltip HTML (``labels``: the study condition's, sql/both or plain); ``labels`` in the
    spec: one per cluster at its members' centroid. The component
    (ui/components/action_space.js) draws it as SVG and diffs per layer, so a decision costs
    a few DOM updates, not a chart library's full redraw (Plotly.react took 70 ms at N = 50
    and 220 ms at N = 200 here).
    """
    pool = session.pool
    positions = pool.positions  # read once: a provisional layout may be swapped meanwhile
    # each output's glyphs spread so every one can be hovered and clicked (same for the whole
    # pool, so nothing moves while the user filters)
    pos = (np.full((pool.n, 2), 0.5) if positions is None else _cached(
        pool, ("spread", id(positions)),
        lambda: np.round(spread_classes(positions, pool.class_index), 6),
        cap=FIGURES_PER_POOL))
    alive = session.alive
    survivors = session.survivors.tolist()
    infos = clusters(session)
    number = {cid: c.number for c in infos for cid in c.members}
    red = contains_mask(session, variable)
    valid = pool.valid

    polys = _cached(pool, ("cells", id(positions), alive.tobytes()),
                    lambda: voronoi_cells(pos[survivors]) if survivors else [],
                    cap=FIGURES_PER_POOL)
    groups: dict[tuple[int, bool], list[list[float]]] = {}
    for k, cid in enumerate(survivors):
        if polys[k]:
            groups.setdefault((number[cid], bool(red[cid])), []).append(
                [_unit(c) for p in polys[k] for c in p])
    cells = [{"fill": _rgba(shade(num, is_red), 0.30), "red": is_red, "cluster": num,
              "polys": cell_polys} for (num, is_red), cell_polys in sorted(groups.items())]

    glyphs = []
    for cid in survivors:
        num = number[cid]
        w, h = glyph_size(pool.results[cid])
        glyphs.append({"id": cid, "x": float(pos[cid, 0]), "y": float(pos[cid, 1]),
                       "w": w, "h": h, "valid": bool(valid[cid]), "cluster": num,
                       "colour": shade(num, bool(red[cid])) if valid[cid] else INVALID,
                       "contains": bool(red[cid]) and bool(valid[cid]),
                       "new": cid < len(pool.origins) and pool.origins[cid] in REPAIR_ORIGINS,
                       "tip": hover_text(session, cid, num, labels=labels)})
    marks = []
    for c in infos:
        xy = pos[list(c.members)].mean(axis=0)
        marks.append({"x": _unit(xy[0]), "y": _unit(xy[1]), "text": str(c.number)})
    dead = np.flatnonzero(~alive)
    return {"task": pool.task_id, "height": height, "margin": MARGIN, "dragmode": "lasso",
            "cells": cells, "dead": [[float(x), float(y)] for x, y in pos[dead]],
            "glyphs": glyphs, "labels": marks,
            "colours": {"faded": FADED, "invalid": INVALID, "new": NEW, "header": HEADER}}


def cached_space(session: RepairSession, variable: RankedVariable | None = None, *,
                 height: int = HEIGHT, labels: str = "sql") -> dict[str, Any]:
    """:func:`space_spec`, kept per pool and state (survivors, colouring variable, clustering)
    and tooltip wording (``plain`` labels or not).

    Shared between browser sessions: it holds only what the pool and the state determine. The
    dict is shared too, so callers must not mutate it.
    """
    plain = labels == "plain"
    key = ("space", id(session.pool.positions), session.alive.tobytes(),
           variable.keys if variable else None, height, session.strategy,
           session.max_clusters, session.min_support, session.random_state, plain)
    return _cached(session.pool, key, lambda: space_spec(
        session, variable, height=height, labels="plain" if plain else "sql"),
        cap=FIGURES_PER_POOL)


def selected_ids(selection: Any, n: int = limits.MAX_SELECTION) -> tuple[list[int], str]:
    """Candidate ids of a pool of ``n`` and gesture ('lasso', 'box' or 'click') from the chart's
    ``select`` trigger (``{"ids", "gesture", "seq"}``), bounded by :func:`study.limits.selection`
    (malformed ids are dropped); nothing for an empty or unknown selection."""
    if not isinstance(selection, dict):
        return [], ""
    ids = limits.selection(selection.get("ids") or [], n)
    gesture = str(selection.get("gesture") or "")
    return (ids, gesture) if ids and gesture in GESTURES else ([], "")
