"""Functional similarity of candidate outputs, and functional classes.

Two candidates are *functionally identical* when their outputs are the same multiset of rows,
up to a permutation of columns (column names and row order are ignored: ``SELECT a, b`` and
``SELECT b AS x, a`` answer the same question). Otherwise the similarity aligns rows
optimally: each row is a multiset of cells, two rows score the share of cells they have in
common, and ``scipy.optimize.linear_sum_assignment`` finds the best row matching; the total is
divided by the larger row count. Errors are a class of their own (similarity 1 to each other,
0 to any table); two empty tables are identical, an empty and a non-empty table score 0.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from core.execute import ExecutionResult

ERROR_CLASS = "error"
MAX_ALIGNED_ROWS = 200  # beyond this, rows are sampled deterministically for the alignment


def _cell(v: Any) -> str:
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 2**53:  # 2.0 and 2 are the same answer
            return json.dumps(int(v))
        return repr(round(v, 6))
    return json.dumps(v, default=str) if not isinstance(v, str) else "s:" + v


def canonical_table(result: ExecutionResult) -> tuple[tuple[str, ...], ...]:
    """Rows as sorted tuples of cell strings, columns put in a canonical order."""
    rows = [tuple(_cell(v) for v in r) for r in result.rows]
    ncols = len(result.columns)
    if ncols > 1 and rows:
        signature = sorted(range(ncols), key=lambda j: sorted(r[j] for r in rows))
        rows = [tuple(r[j] for j in signature) for r in rows]
    return tuple(sorted(rows))


def output_key(result: ExecutionResult) -> str:
    """A hash naming the functional class of an output (equal keys = identical tables)."""
    if not result.ok:
        return ERROR_CLASS
    table = canonical_table(result)
    ncols = len(result.columns)
    payload = json.dumps([ncols, table], separators=(",", ":"))
    return hashlib.sha1(payload.encode()).hexdigest()[:16]


def _row_bags(result: ExecutionResult) -> list[Counter[str]]:
    rows = result.rows
    if len(rows) > MAX_ALIGNED_ROWS:
        step = len(rows) / MAX_ALIGNED_ROWS
        rows = [rows[int(i * step)] for i in range(MAX_ALIGNED_ROWS)]
    return [Counter(_cell(v) for v in r) for r in rows]


def output_similarity(a: ExecutionResult, b: ExecutionResult) -> float:
    """Similarity in [0, 1] of two outputs; 1 iff they are functionally identical."""
    if not a.ok or not b.ok:
        return 1.0 if (not a.ok and not b.ok) else 0.0
    if output_key(a) == output_key(b):
        return 1.0
    if not a.rows or not b.rows:
        return 0.0
    bags_a, bags_b = _row_bags(a), _row_bags(b)
    width = max(len(a.columns), len(b.columns), 1)
    score = np.zeros((len(bags_a), len(bags_b)))
    for i, ra in enumerate(bags_a):
        for j, rb in enumerate(bags_b):
            score[i, j] = sum((ra & rb).values()) / width
    rows_i, rows_j = linear_sum_assignment(score, maximize=True)
    total = float(score[rows_i, rows_j].sum()) / max(len(bags_a), len(bags_b))
    return min(total, 0.999)  # only identical tables reach 1


def functional_classes(results: list[ExecutionResult]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Distinct output classes, each candidate's class position, and the class similarities.

    Similarity is computed once per pair of distinct outputs and shared by their candidates,
    so 1000 candidates with 150 distinct outputs cost 150² / 2 comparisons, not 1000² / 2.
    """
    keys = [output_key(r) for r in results]
    classes = list(dict.fromkeys(keys))
    position = {k: i for i, k in enumerate(classes)}
    rep = {k: results[keys.index(k)] for k in classes}
    m = len(classes)
    sim = np.eye(m)
    for a in range(m):
        for b in range(a + 1, m):
            sim[a, b] = sim[b, a] = output_similarity(rep[classes[a]], rep[classes[b]])
    return classes, np.array([position[k] for k in keys], dtype=int), sim
