"""The information-theoretic floor: Huffman code lengths over functional classes.

If any Yes/No question about the functional classes could be asked, the optimal expected
number of questions to identify the intended class, with classes weighted by their candidates'
counts, is the expected length of a Huffman code over those weights. Strategies that may only
ask about SQL features cannot beat it on average *over that prior*, so it is a floor only for
the ``prior`` population of ``python -m core.evaluate`` (every class as target, weighted by its
prior); for a single gold the depth of its class is information, not a bound.
"""

from __future__ import annotations

import heapq
from itertools import count

import numpy as np


def huffman_depths(weights: list[float] | np.ndarray) -> list[int]:
    """Code length (number of binary questions) of each weight in an optimal Huffman code."""
    w = [float(x) for x in weights]
    if len(w) <= 1:
        return [0] * len(w)
    tie = count()
    heap = [(x, next(tie), [i]) for i, x in enumerate(w)]
    heapq.heapify(heap)
    depth = [0] * len(w)
    while len(heap) > 1:
        a, _, ia = heapq.heappop(heap)
        b, _, ib = heapq.heappop(heap)
        for i in ia + ib:
            depth[i] += 1
        heapq.heappush(heap, (a + b, next(tie), ia + ib))
    return depth


def expected_questions(weights: list[float] | np.ndarray) -> float:
    """Expected number of binary questions under the optimal (Huffman) code."""
    w = np.asarray(weights, dtype=float)
    if len(w) <= 1 or w.sum() <= 0:
        return 0.0
    return float(np.dot(huffman_depths(w), w) / w.sum())
