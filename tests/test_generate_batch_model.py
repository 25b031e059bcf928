"""Model-based test of the resumable batch run: runs that crash at any save of the state file or
any cache write, requests that error, batches split by the request limit. Invariants: no request
is submitted again while a batch holding it is uncollected, a pool never holds more than N
replies nor loses one, and a run that finishes reports, per task, exactly the errored requests
of the batches it collected (its own and those a crashed run left open) and leaves every pool
without one complete."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from core.engine.taskbank import load_task_bank
from core.generation import batch as batch_module
from core.generation.batch import BatchRun, TaskOutcome
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
        self.open_batches: set[str] = set()  # those batches' ids
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
        new_batches = set(self.server.batches) - before
        new_ids = {r["custom_id"] for b in new_batches for r in self.server.batches[b].requests}
        assert not new_ids & self.open_ids, "a request of an uncollected batch was resubmitted"
        if finished:
            self.check_outcomes(outcomes, self.open_batches | new_batches)
            self.open_ids, self.open_batches = set(), set()
        else:
            self.open_ids |= new_ids
            self.open_batches |= new_batches

    def check_outcomes(self, outcomes: dict[str, TaskOutcome], collected: set[str]) -> None:
        """Each task reports the errored requests of the batches this run collected (a rerun
        collects those a crashed run left open, too); a pool with none is complete."""
        errored: dict[str, int] = {}  # pool key prefix in the custom id -> errored results
        for batch_id in collected:
            for line in self.server.batches[batch_id].results:
                if line["result"]["type"] == "errored":
                    prefix = line["custom_id"].split("-")[1]
                    errored[prefix] = errored.get(prefix, 0) + 1
        for task, key in zip(self.tasks, self.keys, strict=True):
            outcome = outcomes[task.id]
            assert outcome.pool is not None, outcome
            bad = errored.get(key[5:17], 0)
            assert outcome.problems.get("errored", 0) == bad, (outcome, bad)
            assert outcome.pool.complete == (bad == 0), (outcome, bad)

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


def test_rerun_after_a_crash_at_a_cache_write_reports_the_errored_request() -> None:
    """Regression (found by the machine above): one request errors, the run dies after its first
    cache write; the rerun collects the same batch without resubmitting it, reports the errored
    request on its task, leaves that pool partial and the other complete; the next run submits
    only the one missing sample and completes both pools."""
    state = BatchRuns()
    try:
        state.errors_next(which={(0, 0)})
        state.run(put=1, save=None)
        assert state.server.created == 2 and len(state.open_batches) == 2
        state.pools_never_overfill_nor_lose_replies()
        state.run(put=None, save=None)  # check_outcomes: errored {task 0: 1}, task 1 complete
        assert state.server.created == 2, "the rerun submitted a batch again"
        state.pools_never_overfill_nor_lose_replies()
        assert list(state.replies.values()) == [N - 1, N]
        state.errors_next(which=set())
        state.run(put=None, save=None)
        last = state.server.batches[max(state.server.batches)]
        assert state.server.created == 3 and len(last.requests) == 1
        state.pools_never_overfill_nor_lose_replies()
        assert list(state.replies.values()) == [N, N]
    finally:
        state.teardown()


def test_a_crash_before_submitting_never_adopts_an_earlier_runs_batch() -> None:
    """Regression: a run dies after marking its one 2-request batch "submitting", before the
    API saw it; the rerun must not take the earlier, collected 2-request batch for it (same
    size, created within the clock-skew margin) but submit its own and complete the pool."""
    state = BatchRuns()
    try:
        state.errors_next(which={(0, 0), (0, 1)})
        state.run(put=None, save=None)  # batches of 4 and 2; task 0 lacks 2 samples
        state.errors_next(which=set())
        state.run(put=None, save=2)  # dies at the "submitting" save: nothing created
        assert state.server.created == 2
        state.run(put=None, save=None)  # check_outcomes: both pools complete
        assert state.server.created == 3
        state.pools_never_overfill_nor_lose_replies()
        assert list(state.replies.values()) == [N, N]
    finally:
        state.teardown()
