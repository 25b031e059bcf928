"""2-D positions of candidates for the Action Space, and Voronoi cells around them.

Positions are computed once per pool from the functional distance matrix and then kept, so the
scatter stays stable while the user filters. Distinct functional classes are embedded with UMAP
(precomputed metric, fixed seed) when there are at least 5 of them and with metric MDS below
that (UMAP fails for n < 4 and is unstable just above); candidates of one class sit on a small
deterministic spiral around their class's point so every glyph stays visible.

UMAP's numba compilation (~30 s) never sits on a request path: shipped layouts are precomputed
with the pool (``python -m core.prepare``); numba's cache lives in ``logs/numba-cache`` (kept
across restarts, git-ignored; it saves only part of the compilation) and the free-exploration
page warms UMAP in a background thread (:func:`start_warm_up`). Inside :func:`request_budget` (a free question typed in the UI) a
layout that would wait longer for UMAP is a classical-MDS *provisional* one, replaced by the
UMAP layout from :func:`final_layout` once that is ready.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
import weakref
from collections.abc import Iterator
from concurrent.futures import Future

import numpy as np

from core import settings

BBOX = (0.0, 0.0, 1.0, 1.0)
_GOLDEN = np.pi * (3 - np.sqrt(5))
_READY = threading.Event()  # umap imported and its numba code compiled (or loaded) here
_WARM_LOCK = threading.Lock()
_WARM: list[threading.Thread] = []
_BUDGET = threading.local()  # seconds a layout may wait for UMAP in this thread (None: forever)
_PENDING: dict[int, Future] = {}  # id(provisional positions) -> the UMAP layout being computed


def use_numba_cache() -> str:
    """Point numba at the persistent cache under logs/ unless NUMBA_CACHE_DIR is already set."""
    if not os.environ.get(settings.NUMBA_ENV):
        settings.numba_cache_dir().mkdir(parents=True, exist_ok=True)
        os.environ[settings.NUMBA_ENV] = str(settings.numba_cache_dir())
    return os.environ[settings.NUMBA_ENV]


def warm_up() -> None:
    """Import umap and fit a tiny layout once, so numba's code is compiled (or loaded) now."""
    if _READY.is_set():
        return
    use_numba_cache()
    pts = np.random.default_rng(0).random((12, 2))
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    _umap(dist, 0)
    _READY.set()


def layout_ready() -> bool:
    """Whether UMAP is compiled in this process (a layout now costs no warm-up)."""
    return _READY.is_set()


def start_warm_up() -> threading.Thread:
    """Run :func:`warm_up` in one daemon thread per process (idempotent); returns the thread."""
    with _WARM_LOCK:
        if not _WARM:
            thread = threading.Thread(target=warm_up, name="pleasqlarify-umap-warm-up",
                                      daemon=True)
            thread.start()
            _WARM.append(thread)
        return _WARM[0]


@contextlib.contextmanager
def request_budget(seconds: float) -> Iterator[None]:
    """Within this block (this thread), a layout waits at most ``seconds`` for a cold UMAP."""
    old = getattr(_BUDGET, "seconds", None)
    _BUDGET.seconds = seconds
    try:
        yield
    finally:
        _BUDGET.seconds = old


def _umap(dist: np.ndarray, random_state: int) -> np.ndarray:
    use_numba_cache()
    import umap  # deferred: importing umap compiles numba code

    m = dist.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reducer = umap.UMAP(n_components=2, metric="precomputed", random_state=random_state,
                            n_neighbors=max(2, min(15, m - 1)), min_dist=0.3, init="random")
        out = reducer.fit_transform(dist)
    _READY.set()
    return out


def classical_mds(dist: np.ndarray) -> np.ndarray:
    """Classical (Torgerson) MDS in 2-D: milliseconds, no randomness; the provisional layout."""
    m = dist.shape[0]
    if m < 3:
        return _embed_classes(dist, 0)
    j = np.eye(m) - 1.0 / m
    b = -0.5 * j @ (dist ** 2) @ j
    vals, vecs = np.linalg.eigh(b)
    top = np.argsort(vals)[::-1][:2]
    coords = vecs[:, top] * np.sqrt(np.clip(vals[top], 1e-12, None))
    return coords * np.where(coords.sum(axis=0) < 0, -1.0, 1.0)  # fixed orientation


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
    return _umap(dist, random_state)


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
    """Candidate positions in the unit square (n × 2), deterministic given ``random_state``.

    Inside :func:`request_budget`, when UMAP is not warm within the budget, the positions are
    a provisional classical-MDS layout and :func:`final_layout` later gives the UMAP one.
    """
    budget = getattr(_BUDGET, "seconds", None)
    present = np.unique(class_index)
    if budget is None or len(present) < 5 or _READY.is_set():
        return _spread(class_index, class_distance, random_state, _embed_classes)
    start_warm_up()
    if _READY.wait(budget):
        return _spread(class_index, class_distance, random_state, _embed_classes)
    positions = _spread(class_index, class_distance, random_state,
                        lambda d, _rs: classical_mds(d))
    future: Future = Future()
    args = (np.array(class_index), np.array(class_distance), random_state)

    def final() -> None:
        try:
            future.set_result(_spread(*args, _embed_classes))
        except Exception as exc:  # handed to whoever asks for the final layout
            future.set_exception(exc)

    threading.Thread(target=final, name="pleasqlarify-final-layout", daemon=True).start()
    key = id(positions)
    _PENDING[key] = future
    weakref.finalize(positions, _PENDING.pop, key, None)
    return positions


def is_provisional(positions: np.ndarray | None) -> bool:
    """Whether ``positions`` is a provisional layout whose UMAP replacement is pending."""
    return positions is not None and id(positions) in _PENDING


def final_layout(positions: np.ndarray | None) -> np.ndarray | None:
    """The UMAP layout replacing provisional ``positions`` once it is ready (else None).

    Only what the UI swaps in; the prepared-pool file cache keeps the layout it was written
    with, so a question asked again later shows its (provisional) stored layout.
    """
    future = _PENDING.get(id(positions)) if positions is not None else None
    if future is None or not future.done():
        return None
    # a failed UMAP keeps the provisional layout for good (a copy, so it is no longer pending)
    return future.result() if future.exception() is None else np.array(positions)


def _spread(class_index: np.ndarray, class_distance: np.ndarray, random_state: int,
            embed) -> np.ndarray:
    """Embed the classes with ``embed`` and spiral each class's candidates around its point."""
    n = len(class_index)
    if n == 0:
        return np.zeros((0, 2))
    present = np.unique(class_index)
    centres = _normalise(embed(
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


SPREAD_SPACING = 0.035  # a class's spiral radius per sqrt(member): its glyphs ~15-30 px apart
SPREAD_SHARE = 0.9  # of the gap between two class points that their two spirals may take


def spread_classes(positions: np.ndarray, class_index: np.ndarray,
                   spacing: float = SPREAD_SPACING, share: float = SPREAD_SHARE) -> np.ndarray:
    """Positions to draw: each class's candidates on a spiral wide enough to hover each glyph.

    A layout puts a class's candidates on a small spiral around the class's point (its first
    candidate's position) whatever the class's size, so 18 queries of one output sit in a
    knot. Here the spiral of a class of n grows to ``spacing`` · √n, as far as its neighbours
    allow (two classes' spirals together take at most ``share`` of the gap between their
    points, split in proportion to what each wants), never tighter than the layout's own.
    Class points stay where the layout put them, so the picture means what it meant; the
    result depends on the positions and classes alone (a stored layout draws the same way
    every time).
    """
    pos = np.asarray(positions, dtype=float)
    labels = np.asarray(class_index)
    if len(pos) == 0:
        return pos.copy()
    present, first, sizes = np.unique(labels, return_index=True, return_counts=True)
    centres = pos[first]
    want = np.where(sizes > 1, spacing * np.sqrt(sizes), 0.0)
    room = np.full(len(present), np.inf)
    if len(present) > 1:
        gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
        np.fill_diagonal(gaps, np.inf)
        claim = np.maximum(want, spacing)  # a single glyph keeps room around it too
        room = (share * gaps * claim[:, None] / (claim[:, None] + claim[None, :])).min(axis=1)
    out = pos.copy()
    for c, (label, size) in enumerate(zip(present, sizes, strict=True)):
        if size < 2:
            continue
        members = np.flatnonzero(labels == label)
        now = float(np.linalg.norm(pos[members] - centres[c], axis=1).max())
        radius = max(now, min(float(want[c]), float(room[c])))
        k = np.arange(size)
        r = radius * np.sqrt(k / size)
        out[members] = centres[c] + np.column_stack([r * np.cos(k * _GOLDEN),
                                                     r * np.sin(k * _GOLDEN)])
    return np.clip(out, 0.01, 0.99)


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
    from scipy.spatial import Voronoi  # deferred: scipy.spatial is ~0.5 s of a cold import

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
    except Exception:  # qhull fails on degenerate (collinear) inputs
        mirrored = mirrored + np.random.default_rng(0).normal(0, 1e-6, mirrored.shape)
        vor = Voronoi(mirrored)
    cells: list[list[tuple[float, float]]] = []
    for i in range(n):
        region = vor.regions[vor.point_region[i]]
        if not region or -1 in region:
            cells.append([])
            continue
        poly = [(float(vor.vertices[v][0]), float(vor.vertices[v][1])) for v in region]
        centre = pts[i]
        poly.sort(key=lambda p: np.arctan2(p[1] - centre[1], p[0] - centre[0]))
        cells.append(_clip_polygon(poly, bbox))
    return cells
