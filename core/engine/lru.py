"""A thread-safe least-recently-used mapping bounded by entries and by estimated bytes.

The per-pool caches of repair (:attr:`core.engine.pool.PreparedPool.repair_cache`, ``atom_cache``)
are shared by every session of a pool for the life of the server; resampling brings new SQL on
every round, so an unbounded dict grew without limit. :class:`LRUCache` keeps the most recently
used entries within ``max_entries`` and ``max_bytes`` (as ``size_of`` estimates them), evicting
the least recently used first; a single entry larger than ``max_bytes`` is not kept at all.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

ENTRY_OVERHEAD = 200  # bytes counted per entry beyond what size_of reports (key, list, node)


def _flat_size(_value: Any) -> int:
    """The default ``size_of``: values count nothing beyond their key and the overhead."""
    return 0


class LRUCache(MutableMapping[str, Any]):
    """A dict-like LRU cache of at most ``max_entries`` entries and ``max_bytes`` bytes.

    Reads (``cache[k]``, ``get``, ``in``) mark an entry as recently used. The size of an entry
    is ``size_of(value) + len(key) + ENTRY_OVERHEAD``, computed when it is stored (values that
    are mutated in place later keep their first estimate). Safe to share between threads.
    """

    def __init__(self, max_entries: int, max_bytes: int,
                 size_of: Callable[[Any], int] = _flat_size) -> None:
        """An empty cache; both bounds must be positive."""
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"LRUCache bounds must be positive (max_entries={max_entries}, "
                             f"max_bytes={max_bytes})")
        self.max_entries, self.max_bytes, self._size_of = max_entries, max_bytes, size_of
        self._data: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        self.evictions = 0

    def __getitem__(self, key: str) -> Any:
        """The value of ``key`` (marked as recently used); KeyError when absent."""
        with self._lock:
            value, _ = self._data[key]
            self._data.move_to_end(key)
            return value

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is kept (marks it as recently used)."""
        with self._lock:
            if key not in self._data:
                return False
            self._data.move_to_end(key)  # type: ignore[arg-type]
            return True

    def __setitem__(self, key: str, value: Any) -> None:
        """Store ``value`` as the most recent entry, then evict the oldest over either bound."""
        size = self._size_of(value) + len(key) + ENTRY_OVERHEAD
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            if size > self.max_bytes:
                return  # larger than the whole cache: keeping it would evict everything
            self._data[key] = (value, size)
            self.bytes += size
            while len(self._data) > self.max_entries or self.bytes > self.max_bytes:
                _, (_, dropped) = self._data.popitem(last=False)
                self.bytes -= dropped
                self.evictions += 1

    def __delitem__(self, key: str) -> None:
        """Remove ``key``; KeyError when absent."""
        with self._lock:
            _, size = self._data.pop(key)
            self.bytes -= size

    def __iter__(self) -> Iterator[str]:
        """The keys, least recently used first (a snapshot: safe while others write)."""
        with self._lock:
            return iter(list(self._data))

    def __len__(self) -> int:
        """How many entries are kept."""
        return len(self._data)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the lock (a pool sent to another process keeps its cache)."""
        with self._lock:
            state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled cache with a new lock."""
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        """Its fill, not its content (values may be large)."""
        return (f"LRUCache({len(self)}/{self.max_entries} entries, "
                f"{self.bytes:,}/{self.max_bytes:,} bytes)")
