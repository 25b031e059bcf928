"""Run one function in many threads at once (for the concurrent-writer tests)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def at_once(n: int, fn: Callable[[int], T]) -> list[T]:
    """``fn(0) … fn(n-1)``, each in its own thread, released together by a barrier; their
    results by index, or the first exception any of them raised."""
    barrier = threading.Barrier(n)
    results: list[T | None] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as exc:  # re-raised in the calling thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]
