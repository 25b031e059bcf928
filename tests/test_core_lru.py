"""The bounded per-pool repair caches: an LRU by entries and bytes (model-based), and a pool's
repair cache staying within its bounds while resampling brings new SQL every round."""

from __future__ import annotations

import pickle
import threading

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from core.engine.lru import ENTRY_OVERHEAD, LRUCache

KEYS = st.sampled_from([f"k{i}" for i in range(8)])


class LRUMachine(RuleBasedStateMachine):
    """LRUCache against a list model: most recent last, evict from the front while over a bound."""

    def __init__(self) -> None:
        super().__init__()
        self.max_entries, self.max_bytes = 4, 3 * ENTRY_OVERHEAD + 300
        self.cache = LRUCache(self.max_entries, self.max_bytes, size_of=len)
        self.model: list[tuple[str, str]] = []  # (key, value), least recent first

    def _size(self, key: str, value: str) -> int:
        return len(value) + len(key) + ENTRY_OVERHEAD

    def _touch(self, key: str) -> None:
        hit = [kv for kv in self.model if kv[0] == key]
        if hit:
            self.model.remove(hit[0])
            self.model.append(hit[0])

    @rule(key=KEYS, value=st.text(alphabet="ab", max_size=400))
    def store(self, key: str, value: str) -> None:
        self.cache[key] = value
        self.model = [kv for kv in self.model if kv[0] != key]
        if self._size(key, value) <= self.max_bytes:
            self.model.append((key, value))
        while len(self.model) > self.max_entries or sum(
                self._size(*kv) for kv in self.model) > self.max_bytes:
            self.model.pop(0)

    @rule(key=KEYS)
    def read(self, key: str) -> None:
        expected = dict(self.model).get(key)
        assert self.cache.get(key) == expected
        self._touch(key)

    @rule(key=KEYS)
    def contains(self, key: str) -> None:
        assert (key in self.cache) == (key in dict(self.model))
        self._touch(key)

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from([k for k, _ in self.model]))
        del self.cache[key]
        self.model = [kv for kv in self.model if kv[0] != key]

    @invariant()
    def same_entries_in_the_same_order_within_bounds(self) -> None:
        assert list(self.cache) == [k for k, _ in self.model]
        assert self.cache.bytes == sum(self._size(*kv) for kv in self.model)
        assert len(self.cache) <= self.max_entries and self.cache.bytes <= self.max_bytes


TestLRUMachine = LRUMachine.TestCase
TestLRUMachine.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


def test_bounds_must_be_positive_and_threads_keep_the_count_right() -> None:
    with pytest.raises(ValueError, match="max_entries=0"):
        LRUCache(0, 10)
    cache = LRUCache(50, 10**9, size_of=len)

    def hammer(t: int) -> None:
        for i in range(2000):
            cache[f"{t}-{i % 120}"] = "x" * (i % 7)
            cache.get(f"{(t + 1) % 4}-{i % 120}")

    threads = [threading.Thread(target=hammer, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(cache) == 50
    assert cache.bytes == sum(len(cache[k]) + len(k) + ENTRY_OVERHEAD for k in list(cache))
    again = pickle.loads(pickle.dumps(cache))  # pools travel to evaluation workers
    assert list(again) == list(cache) and again.bytes == cache.bytes
    again["new"] = "x"
    assert len(again) == 50 and "new" in again


@pytest.mark.parametrize("bound", ["entries", "bytes"])
def test_repair_cache_stays_bounded_under_resampling(monkeypatch, bound: str) -> None:
    """Rounds of resampling, each bringing new SQL, on one pool: its repair cache keeps within
    the bound (an unbounded dict held every query), repair still adds the new readings, and a
    session whose queries were evicted replays from the database."""
    import json

    from core.engine import pool as pool_module
    from core.engine.pool import prepare_pool, repair_entry_bytes
    from core.engine.repair import resample
    from core.engine.session import RepairSession
    from core.engine.similarity import output_key
    from core.generation.sampler import AnthropicSampler, SamplerConfig
    from tests.anthropic_stub_server import StubServer
    from tests.test_core_repair import POOL, make_task

    task = make_task(POOL)
    rounds, per_round = 5, 4
    sqls = [f"SELECT title, year + {k} FROM film" for k in range(rounds * per_round)]
    if bound == "entries":
        monkeypatch.setattr(pool_module, "REPAIR_CACHE_ENTRIES", 6)
    else:  # room for about three of these outputs
        probe = prepare_pool(make_task([(sqls[-1], 1)]))
        res = probe.results[0]
        entry = repair_entry_bytes([res, output_key(res), None]) + len(sqls[-1]) + ENTRY_OVERHEAD
        monkeypatch.setattr(pool_module, "REPAIR_CACHE_BYTES", 3 * entry + entry // 2)
    pool = prepare_pool(task)
    with StubServer([f"```sql\n{sql}\n```" for sql in sqls]) as server:
        sampler = AnthropicSampler(SamplerConfig(n=per_round, concurrency=1),
                                   api_key="sk-test-key", base_url=server.base_url,
                                   random_state=0)
        sessions = []
        for _ in range(rounds):
            s = RepairSession(pool, database=task.database)
            s.reject_output(s.predicted_output_key())
            assert resample(s, sampler, n=per_round).added, "each round admits new readings"
            sessions.append(s)
            cache = pool.repair_cache
            assert len(cache) <= cache.max_entries and cache.bytes <= cache.max_bytes
        assert server.count == rounds * per_round
    cache = pool.repair_cache
    assert (cache.max_entries, cache.max_bytes) == (pool_module.REPAIR_CACHE_ENTRIES,
                                                    pool_module.REPAIR_CACHE_BYTES)
    assert 3 <= len(cache) <= 6 and cache.evictions >= rounds * per_round - 6
    assert cache.bytes == sum(repair_entry_bytes(cache[k]) + len(k) + ENTRY_OVERHEAD
                              for k in list(cache))
    first = sessions[0]
    assert not any(sql in cache for sql in first.history[-1].sqls)  # evicted by later rounds
    again = RepairSession.from_dict(json.loads(json.dumps(first.to_dict())), pool,
                                    database=task.database)
    assert again.pool.sqls == first.pool.sqls
    assert again.predicted_output_key() == first.predicted_output_key()
