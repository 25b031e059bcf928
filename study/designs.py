"""Counterbalancing designs as pure functions: fixed, random, Latin square and Williams.

A design over ``n`` items is a list of sequences, each a permutation of ``range(n)``.
``latin_square(n)`` gives n cyclic rows (each item once per position). ``williams_design(n)``
additionally balances first-order carry-over: for even n its n rows contain every ordered pair
of distinct items adjacently exactly once; for odd n no such square exists, so the n rows and
their n mirror images are used (2n rows, every ordered pair adjacent exactly twice;
n = 1 has the single row [0]).
"""

from __future__ import annotations

import hashlib
import random

ORDER_DESIGNS = ("fixed", "random", "latin", "williams")


def latin_square(n: int) -> list[list[int]]:
    """The cyclic Latin square: row i is ``i, i+1, ..., i+n-1`` (mod n)."""
    return [[(i + j) % n for j in range(n)] for i in range(n)]


def williams_design(n: int) -> list[list[int]]:
    """A Williams design (n rows for even n, 2n rows for odd n)."""
    if n <= 0:
        return []
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:  # 0, 1, n-1, 2, n-2, ...
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2 == 1 and n > 1:
        rows += [list(reversed(r)) for r in rows]
    return rows


def design_sequences(design: str, n: int) -> list[list[int]]:
    """The sequences a design balances over (a single identity row for fixed and random)."""
    if design in ("fixed", "random"):
        return [list(range(n))]
    if design == "latin":
        return latin_square(n)
    if design == "williams":
        return williams_design(n)
    raise ValueError(f"unknown order design '{design}'; use one of {', '.join(ORDER_DESIGNS)}")


def participant_seed(study_seed: int, participant: str) -> int:
    """A reproducible 63-bit seed for one participant, derived from the study's seed."""
    digest = hashlib.sha256(f"{study_seed}:{participant}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seeded_order(n: int, seed: int) -> list[int]:
    """A random permutation of ``range(n)`` fully determined by ``seed``."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order
