"""Model-based test of the resumable batch run: runs that crash at any save of the state file or
any cache write, requests that error, batches split by the request limit. Invariants: no request
is submitted again while a batch holding it is uncollected, a pool never holds more than N
replies nor loses one, and a run that finishes with no errored request leaves every pool
complete."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from core.engine.taskbank import load_task_bank
from core.generation import batch as batch_module
from core.generation.batch import BatchRun
from core.generation.poolcache import FilePoolCache
from core.generation.sampler import AnthropicSampler, SamplerConfig
from tests.anthropic_batch_server import BatchServer
from tests.bank_helpers import dev_slice

N = 3


class Crash(BaseException):
    """The process dies here (nothing in the code under test catches a BaseException)."""


class CrashingRun(BatchRun):
    """A BatchRun whose process dies right after its ``crash_at``-th state save."""

    crash_at: int | None = None
    saves = 0

    def _save(self) -> None:
        super()._save()
        self.saves += 1
        if self.crash_at is not None and self.saves == self.crash_at:
            raise Crash


class CrashingCache(FilePoolCache):
    """A pool cache whose process dies right after its ``crash_at``-th write."""

    crash_at: int | None = None
    puts = 0

    def put(self, pool) -> None:
        super().put(pool)
        self.puts += 1
        if self.crash_at is not None and self.puts == self.crash_at:
            raise Crash


class BatchRuns(RuleBasedStateMachine):
    """Runs of one bank against one loopback Batches server, crashing or not."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="batch-model-"))
        self.tasks, _ = load_task_bank(dev_slice(self.dir))
        self.server = BatchServer(["SELECT 1"], polls_to_end=1).start()
        self.sampler = AnthropicSampler(SamplerConfig(n=N, max_retries=0), api_key="sk-test",
                                        base_url=self.server.base_url)
        self.keys = [self.sampler.empty_pool(t.question, t.database).key for t in self.tasks]
        self.open_ids: set[str] = set()  # submitted in batches not yet collected
        self.replies = dict.fromkeys(self.keys, 0)
        self.old_limit = batch_module.MAX_REQUESTS
        batch_module.MAX_REQUESTS = 4  # 2 tasks x 3 samples: two batches

    def teardown(self) -> None:
        batch_module.MAX_REQUESTS = self.old_limit
        self.server.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule(which=st.sets(st.tuples(st.integers(0, 1), st.integers(0, N - 1)), max_size=2))
    def errors_next(self, which: set[tuple[int, int]]) -> None:
        """The next batches answer these (task, sample) requests with an error."""
        self.server.errored = {f"t{t}-{self.keys[t][5:17]}-s{s}" for t, s in which}

    @rule(save=st.none() | st.integers(1, 8), put=st.none() | st.integers(1, 2))
    def run(self, save: int | None, put: int | None) -> None:
        """One run of the command; it may die after some save of its state or cache write."""
        before = set(self.server.batches)
        cache = CrashingCache(self.dir / "cache")
        cache.crash_at = put
        runner = CrashingRun(self.sampler, cache, self.dir / "state.json", poll_s=0,
                             sleep=lambda _s: None)
        runner.crash_at = save
        finished = True
        try:
            outcomes = runner.run(self.tasks)
        except Crash:
            finished = False
        new = [self.server.batches[b] for b in sorted(set(self.server.batches) - before)]
        new_ids = {r["custom_id"] for b in new for r in b.requests}
        assert not new_ids & self.open_ids, "a request of an uncollected batch was resubmitted"
        if finished:
            self.open_ids = set()
            errored = self.server.errored
            complete = [o.pool is not None and o.pool.complete for o in outcomes.values()]
            if not errored & new_ids:
                assert all(complete), outcomes
        else:
            self.open_ids |= new_ids

    @invariant()
    def pools_never_overfill_nor_lose_replies(self) -> None:
        cache = FilePoolCache(self.dir / "cache")
        for key in self.keys:
            pool = cache.get(key)
            got = len(pool.replies) if pool else 0
            assert got <= N and got >= self.replies[key]
            self.replies[key] = got


BatchRuns.TestCase.settings = settings(max_examples=12, stateful_step_count=6, deadline=None,
                                       suppress_health_check=[HealthCheck.too_slow])
TestBatchRuns = BatchRuns.TestCase
