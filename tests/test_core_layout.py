"""Layout: positions in the unit square, deterministic per seed; Voronoi cells tile the box.

n = 5 and 6 distinct classes go through UMAP (numba compiles on first use, ~10-20 s once per
process); everything else uses MDS or fixed positions. Keep the UMAP cases few.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from core.engine.layout import SPREAD_SHARE, compute_layout, spread_classes, voronoi_cells
from tests.conftest_core import make_pool


def _distances(n: int, seed: int = 0) -> np.ndarray:
    pts = np.random.default_rng(seed).random((n, 2))
    return cdist(pts, pts)


def _area(poly) -> float:
    if len(poly) < 3:
        return 0.0
    p = np.asarray(poly)
    return 0.5 * abs(float(np.dot(p[:, 0], np.roll(p[:, 1], 1))
                           - np.dot(p[:, 1], np.roll(p[:, 0], 1))))


def _contains(poly, point, tol=1e-9) -> bool:
    """Point in a convex polygon (either orientation)."""
    p = np.asarray(poly)
    signs = []
    for a, b in zip(p, np.roll(p, -1, axis=0), strict=True):
        cross = (b[0] - a[0]) * (point[1] - a[1]) - (b[1] - a[1]) * (point[0] - a[0])
        if abs(cross) > tol:
            signs.append(cross > 0)
    return all(signs) or not any(signs)


def _check_cells(points, cells):
    assert len(cells) == len(points)
    for point, poly in zip(points, cells, strict=True):
        assert len(poly) >= 3
        p = np.asarray(poly)
        assert (p >= -1e-9).all() and (p <= 1 + 1e-9).all()  # inside the box
        assert _area(poly) > 0
        assert _contains(poly, point)
    assert sum(_area(c) for c in cells) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("n", range(7))
def test_positions_shape_bounds_and_determinism(n):
    d = _distances(n, seed=n)
    pos = compute_layout(np.arange(n), d, random_state=0)
    assert pos.shape == (n, 2)
    assert np.isfinite(pos).all()
    assert (pos >= 0).all() and (pos <= 1).all()
    assert np.array_equal(pos, compute_layout(np.arange(n), d, random_state=0))
    if n >= 2:
        assert len({tuple(p) for p in np.round(pos, 9)}) == n  # no two classes on one spot
        _check_cells(pos, voronoi_cells(pos))


def test_candidates_of_one_class_sit_apart_near_their_class():
    class_index = np.array([0, 0, 0, 1, 1, 2, 0])
    d = np.array([[0, 0.2, 1.0], [0.2, 0, 1.0], [1.0, 1.0, 0]])
    pos = compute_layout(class_index, d, random_state=0)
    assert pos.shape == (7, 2)
    assert len({tuple(p) for p in np.round(pos, 9)}) == 7  # every glyph visible
    for c in range(3):
        members = pos[class_index == c]
        assert np.linalg.norm(members - members[0], axis=1).max() <= 0.06 + 1e-9
    _check_cells(pos, voronoi_cells(pos))


def test_layout_reflects_distances():
    # two tight pairs far from each other (MDS path, 4 classes)
    d = np.array([[0, 0.05, 1, 1], [0.05, 0, 1, 1], [1, 1, 0, 0.05], [1, 1, 0.05, 0]])
    pos = compute_layout(np.arange(4), d, random_state=0)
    near = np.linalg.norm(pos[0] - pos[1]) + np.linalg.norm(pos[2] - pos[3])
    far = np.linalg.norm(pos[0] - pos[2]) + np.linalg.norm(pos[1] - pos[3])
    assert near < far / 3


def test_voronoi_degenerate_inputs():
    assert voronoi_cells(np.zeros((0, 2))) == []
    (box,) = voronoi_cells(np.array([[0.3, 0.7]]))
    assert _area(box) == pytest.approx(1.0)
    collinear = np.array([[0.1, 0.5], [0.5, 0.5], [0.9, 0.5]])
    _check_cells(collinear, voronoi_cells(collinear))
    corners = np.array([[0.01, 0.01], [0.99, 0.99], [0.01, 0.99], [0.99, 0.01]])
    _check_cells(corners, voronoi_cells(corners))


@pytest.mark.parametrize("seed", range(8))
def test_voronoi_cells_tile_the_box(seed):
    rng = np.random.default_rng(seed)
    pts = rng.uniform(0.01, 0.99, size=(int(rng.integers(2, 60)), 2))
    _check_cells(pts, voronoi_cells(pts))


def test_voronoi_respects_a_custom_box():
    pts = np.array([[1.0, 1.0], [3.0, 2.0], [2.0, 3.5]])
    cells = voronoi_cells(pts, bbox=(0.0, 0.0, 4.0, 4.0))
    assert sum(_area(c) for c in cells) == pytest.approx(16.0)
    for c in cells:
        p = np.asarray(c)
        assert (p >= -1e-9).all() and (p <= 4 + 1e-9).all()


def test_prepared_pool_carries_positions():
    pool = make_pool(["SELECT title FROM film", "SELECT f.title FROM film f",
                      "SELECT title FROM film WHERE year > 1996", "SELECT nope FROM film"],
                     layout=True)
    assert pool.positions.shape == (4, 2)
    assert (pool.positions >= 0).all() and (pool.positions <= 1).all()
    assert not np.array_equal(pool.positions[0], pool.positions[1])  # same class, apart
    assert make_pool([], layout=True).positions.shape == (0, 2)


def _nearest(points: np.ndarray) -> np.ndarray:
    d = cdist(points, points)
    np.fill_diagonal(d, np.inf)
    return d.min(axis=1)


def test_a_big_class_spreads_for_its_glyphs_and_stays_around_its_point():
    """The practice task's 18 queries of one output sat in a knot of glyphs (the layout's
    spiral has one radius whatever a class's size); drawn, they spread as far as their
    neighbours allow, each class around the point the layout gave it."""
    sizes = [18, 8, 3, 1, 1]
    class_index = np.repeat(np.arange(len(sizes)), sizes)
    d = _distances(len(sizes), seed=3)
    pos = compute_layout(class_index, d, random_state=0)
    drawn = spread_classes(pos, class_index)
    assert np.array_equal(drawn, spread_classes(pos, class_index))  # determined by the input
    assert np.array_equal(drawn, spread_classes(drawn, class_index))  # a drawn layout stays
    first = [int(np.flatnonzero(class_index == c)[0]) for c in range(len(sizes))]
    assert np.array_equal(drawn[first], pos[first])  # the classes' points do not move
    big = class_index == 0
    assert _nearest(drawn[big]).min() > 1.5 * _nearest(pos[big]).min()
    radius = [float(np.linalg.norm(drawn[class_index == c] - drawn[f], axis=1).max())
              for c, f in enumerate(first)]
    for a in range(len(sizes)):
        # never tighter than the layout's spiral, and no two spirals reach into each other
        old = float(np.linalg.norm(pos[class_index == a] - pos[first[a]], axis=1).max())
        assert radius[a] >= old - 1e-12
        for b in range(a + 1, len(sizes)):
            gap = float(np.linalg.norm(pos[first[a]] - pos[first[b]]))
            assert radius[a] + radius[b] <= max(SPREAD_SHARE * gap, old) + 1e-9
    assert len({tuple(p) for p in np.round(drawn, 9)}) == len(class_index)
    _check_cells(drawn, voronoi_cells(drawn))
