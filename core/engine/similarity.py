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
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_matrix, vstack

from core.engine.execute import ExecutionResult

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


class _Encoded:
    """An output as a sparse rows × cell-token matrix (binary), built once per class."""

    def __init__(self, result: ExecutionResult, vocab: dict[str, int]):
        rows = result.rows
        if len(rows) > MAX_ALIGNED_ROWS:
            step = len(rows) / MAX_ALIGNED_ROWS
            rows = [rows[int(i * step)] for i in range(MAX_ALIGNED_ROWS)]
        indptr, indices = [0], []
        for r in rows:
            tokens = {vocab.setdefault(_cell(v), len(vocab)) for v in r}
            indices.extend(sorted(tokens))
            indptr.append(len(indices))
        self.ok = result.ok
        self.n_rows = len(rows)
        self.width = max(len(result.columns), 1)
        self.indptr, self.indices = indptr, indices

    def matrix(self, n_tokens: int) -> csr_matrix:
        data = np.ones(len(self.indices))
        return csr_matrix((data, self.indices, self.indptr), shape=(self.n_rows, n_tokens))


def _aligned(a: csr_matrix, b: csr_matrix, width_a: int, width_b: int) -> float:
    """Optimal row matching of two outputs: shared cells per row pair / wider row width."""
    return _assign((a @ b.T).toarray() / max(width_a, width_b))


def output_similarity(a: ExecutionResult, b: ExecutionResult) -> float:
    """Similarity in [0, 1] of two outputs; 1 iff they are functionally identical."""
    if not a.ok or not b.ok:
        return 1.0 if (not a.ok and not b.ok) else 0.0
    if output_key(a) == output_key(b):
        return 1.0
    if not a.rows or not b.rows:
        return 0.0
    vocab: dict[str, int] = {}
    ea, eb = _Encoded(a, vocab), _Encoded(b, vocab)
    return _aligned(ea.matrix(len(vocab)), eb.matrix(len(vocab)), ea.width, eb.width)


def _class_similarity(rep: list[ExecutionResult], known: np.ndarray | None = None
                      ) -> np.ndarray:
    """Pairwise similarity of distinct outputs, one sparse product per output (block-wise).

    ``known`` holds the similarities of the first ``len(known)`` outputs (a pool that repair
    extends): they are kept, and only the pairs with a later output are computed.
    """
    vocab: dict[str, int] = {}
    encoded = [_Encoded(r, vocab) for r in rep]
    m = len(rep)
    sim = np.eye(m)
    k = 0 if known is None else len(known)
    if k:
        sim[:k, :k] = known
    if m < 2:
        return sim
    offsets = np.cumsum([0] + [e.n_rows for e in encoded])
    stacked = vstack([e.matrix(len(vocab)) for e in encoded]).tocsr() if offsets[-1] else None
    for a in range(m):
        first = max(a + 1, k)  # the first output whose pair with ``a`` is not known
        if first >= m:
            continue
        ea = encoded[a]
        block = None
        if ea.ok and ea.n_rows and stacked is not None:
            block = (stacked[offsets[a]:offsets[a + 1]] @ stacked[offsets[first]:].T).toarray()
        for b in range(first, m):
            eb = encoded[b]
            if not ea.ok or not eb.ok:
                value = 1.0 if (not ea.ok and not eb.ok) else 0.0
            elif ea.n_rows == 0 or eb.n_rows == 0:
                value = 0.0  # distinct classes: an empty table matches nothing else
            else:
                assert block is not None  # both have rows, so the stacked matrix exists
                lo = offsets[b] - offsets[first]
                shared = block[:, lo:lo + eb.n_rows] / max(ea.width, eb.width)
                value = _assign(shared)
            sim[a, b] = sim[b, a] = value
    return sim


def _assign(shared: np.ndarray) -> float:
    """Best one-to-one row matching score, normalised by the larger row count, below 1."""
    if shared.shape[0] == 1 or shared.shape[1] == 1:
        total = float(shared.max())
    else:
        rows_i, rows_j = linear_sum_assignment(shared, maximize=True)
        total = float(shared[rows_i, rows_j].sum())
    return min(total / max(shared.shape), 0.999)


def functional_classes(results: list[ExecutionResult]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Distinct output classes, each candidate's class position, and the class similarities.

    Similarity is computed once per pair of distinct outputs and shared by their candidates,
    so 1000 candidates with 150 distinct outputs cost 150² / 2 comparisons, not 1000² / 2.
    """
    keys = [output_key(r) for r in results]
    classes = list(dict.fromkeys(keys))
    position = {k: i for i, k in enumerate(classes)}
    rep = [results[keys.index(k)] for k in classes]
    sim = _class_similarity(rep)
    return classes, np.array([position[k] for k in keys], dtype=int), sim


def extend_classes(classes: list[str], class_index: np.ndarray, class_sim: np.ndarray,
                   results: list[ExecutionResult], new: list[ExecutionResult]
                   ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """:func:`functional_classes` of ``results + new`` when ``results``' classes are known
    (a pool repair extends): the same classes and positions, the known similarities kept and
    only those of a new output computed (24 new outputs of 200 cost 24 × 200 comparisons, not
    200² / 2). Classes not in order of first appearance are all computed again."""
    firsts = dict.fromkeys(int(c) for c in class_index)
    if list(firsts) != list(range(len(classes))) or class_sim.shape != (len(classes),) * 2:
        return functional_classes(results + new)
    reps = {c: i for i, c in reversed(list(enumerate(int(c) for c in class_index)))}
    keys = [output_key(r) for r in new]
    extended = list(dict.fromkeys([*classes, *keys]))
    position = {k: i for i, k in enumerate(extended)}
    rep = [results[reps[c]] for c in range(len(classes))]
    rep += [new[keys.index(k)] for k in extended[len(classes):]]
    index = np.concatenate([np.asarray(class_index, dtype=int),
                            np.array([position[k] for k in keys], dtype=int)])
    return extended, index, _class_similarity(rep, class_sim)
