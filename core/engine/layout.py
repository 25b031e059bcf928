"""2-D positions of candidates for the Action Space, and Voronoi cells around them.

Positions are computed once per pool from the functional distance matrix and then kept, so the
scatter stays stable while the user filters. Distinct functional classes are embedded with UMAP
(precomputed metric, fixed seed) when there are at least 5 of them and with metric MDS below
that (UMAP fails for n < 4 and is unstable just above); candidates of one class sit on a small
deterministic spiral around their class's point so every glyph stays visible. UMAP's ~7 s numba
compilation never sits on a request path: layouts are precomputed with the pool
(``python -m core.prepare``) and stored beside it.
"""

from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np
from scipy.spatial import Voronoi

BBOX = (0.0, 0.0, 1.0, 1.0)
_GOLDEN = np.pi * (3 - np.sqrt(5))


def _embed_classes(dist: np.ndarray, random_state: int) -> np.ndarray:
    m = dist.shape[0]
    if m == 0:
        return np.zeros((0, 2))
    if m == 1:
        return np.array([[0.5, 0.5]])
    if m == 2:
        return np.array([[0.25, 0.5], [0.75, 0.5]])
    if m < 5:
        from sklearn.manifold import MDS

        mds = MDS(n_components=2, metric="precomputed", random_state=random_state,
                  n_init=4, init="random")
        return mds.fit_transform(dist)
    os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(tempfile.gettempdir(), "numba-cache"))
    import umap  # deferred: importing umap compiles numba code

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reducer = umap.UMAP(n_components=2, metric="precomputed", random_state=random_state,
                            n_neighbors=max(2, min(15, m - 1)), min_dist=0.3, init="random")
        return reducer.fit_transform(dist)


def _normalise(points: np.ndarray, margin: float = 0.08) -> np.ndarray:
    if len(points) == 0:
        return points
    lo, hi = points.min(axis=0), points.max(axis=0)
    span = np.where(hi - lo > 1e-12, hi - lo, 1.0)
    unit = (points - lo) / span
    unit[:, (hi - lo) <= 1e-12] = 0.5
    return margin + unit * (1 - 2 * margin)


def compute_layout(class_index: np.ndarray, class_distance: np.ndarray,
                   weights: np.ndarray | None = None, random_state: int = 0) -> np.ndarray:
    """Candidate positions in the unit square (n × 2), deterministic given ``random_state``."""
    n = len(class_index)
    if n == 0:
        return np.zeros((0, 2))
    present = np.unique(class_index)
    centres = _normalise(_embed_classes(
        np.clip(class_distance[np.ix_(present, present)], 0, None), random_state))
    where = {int(c): i for i, c in enumerate(present)}
    if len(centres) > 1:
        gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
        gaps[gaps == 0] = np.inf
        radius = max(0.01, min(0.06, float(gaps.min()) / 3))
    else:
        radius = 0.06
    points = np.zeros((n, 2))
    seen: dict[int, int] = {}
    for i, c in enumerate(class_index):
        k = seen.get(int(c), 0)
        seen[int(c)] = k + 1
        r = 0.0 if k == 0 else radius * np.sqrt(k / max(1, np.sum(class_index == c)))
        angle = k * _GOLDEN
        points[i] = centres[where[int(c)]] + r * np.array([np.cos(angle), np.sin(angle)])
    return np.clip(points, 0.01, 0.99)


def _clip_polygon(poly: list[tuple[float, float]], bbox=BBOX) -> list[tuple[float, float]]:
    """Sutherland–Hodgman clipping of a convex polygon to the bounding box."""
    x0, y0, x1, y1 = bbox
    edges = [(lambda p: p[0] >= x0, lambda a, b: _cross_x(a, b, x0)),
             (lambda p: p[0] <= x1, lambda a, b: _cross_x(a, b, x1)),
             (lambda p: p[1] >= y0, lambda a, b: _cross_y(a, b, y0)),
             (lambda p: p[1] <= y1, lambda a, b: _cross_y(a, b, y1))]
    out = poly
    for inside, cross in edges:
        if not out:
            break
        src, out = out, []
        for i, cur in enumerate(src):
            prev = src[i - 1]
            if inside(cur):
                if not inside(prev):
                    out.append(cross(prev, cur))
                out.append(cur)
            elif inside(prev):
                out.append(cross(prev, cur))
    return out


def _cross_x(a, b, x):
    t = (x - a[0]) / (b[0] - a[0])
    return (x, a[1] + t * (b[1] - a[1]))


def _cross_y(a, b, y):
    t = (y - a[1]) / (b[1] - a[1])
    return (a[0] + t * (b[0] - a[0]), y)


def voronoi_cells(points: np.ndarray, bbox=BBOX) -> list[list[tuple[float, float]]]:
    """One polygon (list of (x, y)) per point, clipped to ``bbox``.

    Points are mirrored across the four box edges so every original cell is finite.
    """
    n = len(points)
    x0, y0, x1, y1 = bbox
    if n == 0:
        return []
    box = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    if n == 1:
        return [box]
    pts = np.asarray(points, dtype=float)
    mirrored = np.vstack([pts, pts * [-1, 1] + [2 * x0, 0], pts * [-1, 1] + [2 * x1, 0],
                          pts * [1, -1] + [0, 2 * y0], pts * [1, -1] + [0, 2 * y1]])
    try:
        vor = Voronoi(mirrored)
    except Exception:  # noqa: BLE001 - qhull fails on degenerate (collinear) inputs
        mirrored = mirrored + np.random.default_rng(0).normal(0, 1e-6, mirrored.shape)
        vor = Voronoi(mirrored)
    cells = []
    for i in range(n):
        region = vor.regions[vor.point_region[i]]
        if not region or -1 in region:
            cells.append([])
            continue
        poly = [tuple(map(float, vor.vertices[v])) for v in region]
        centre = pts[i]
        poly.sort(key=lambda p: np.arctan2(p[1] - centre[1], p[0] - centre[0]))
        cells.append(_clip_polygon(poly, bbox))
    return cells
