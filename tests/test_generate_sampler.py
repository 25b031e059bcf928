"""The Anthropic sampler against a loopback Messages API server (the real SDK, no mocks)."""

from __future__ import annotations

import json
import logging
import socket

import pytest

from core.engine.errors import GenerationError
from core.engine.taskbank import DatabaseSpec
from core.generation.extract import normalise_sql
from core.generation.poolcache import FilePoolCache, StorePoolCache
from core.generation.sampler import (
    NO_KEY_MESSAGE,
    AnthropicSampler,
    Budget,
    SamplerConfig,
    SamplingError,
    generate_pool,
)
from tests.anthropic_stub_server import Reply, StubServer

KEY = "sk-ant-test-0123456789-SECRET"
DUMP = """CREATE TABLE room (id INTEGER PRIMARY KEY, name TEXT, kind TEXT, size INT);
INSERT INTO room VALUES (1,'Conference Hall','Lobby',500),(2,'Banquet Hall','Lobby',600),
(3,'Rooftop','Terrace',500),(4,'Patio','Terrace',400);"""
DB = DatabaseSpec("dump", DUMP)
QUESTION = "Which lobbies or terraces hold 500 people?"
WRAPPED = [
    "```sql\nSELECT name FROM room WHERE size = 500;\n```",
    "select name\nfrom room\nwhere size=500",
    "Here is a query that answers it:\n\nSELECT name FROM room WHERE size = 500\n\n"
    "It lists the rooms of size 500.",
    "```\nSELECT * FROM room WHERE kind IN ('Lobby', 'Terrace')\n```",
]


class Sleeps(list):
    """Records requested backoff waits without waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _sampler(server: StubServer, sleeps: list | None = None, **config) -> AnthropicSampler:
    config.setdefault("n", 8)
    config.setdefault("concurrency", 2)
    config.setdefault("backoff_s", 0.01)
    return AnthropicSampler(SamplerConfig(**config), api_key=KEY, base_url=server.base_url,
                            sleep=sleeps if sleeps is not None else (lambda s: None),
                            random_state=0)


@pytest.fixture
def server():
    with StubServer(WRAPPED) as srv:
        yield srv


def test_varied_wrappers_are_extracted_and_deduplicated_with_counts(server):
    pool = _sampler(server).sample(QUESTION, DB)
    assert server.count == 8 and pool.complete
    counts = {normalise_sql(c.sql): c.count for c in pool.candidates}
    assert sum(counts.values()) == 8 and len(counts) == 2
    assert counts["SELECT name FROM room WHERE size = 500"] == 6
    assert counts["SELECT * FROM room WHERE kind IN ('Lobby', 'Terrace')"] == 2
    assert pool.candidates[0].count == 6  # most sampled first
    assert {s.text for s in pool.samples} == set(WRAPPED)  # raw replies kept
    assert pool.input_tokens == 800 and pool.output_tokens == 160 and pool.cost_usd > 0


def test_prompt_has_schema_rows_question_and_temperature(server):
    _sampler(server, n=1).sample(QUESTION, DB)
    body = server.requests[0].body
    user = body["messages"][0]["content"]
    assert "CREATE TABLE" in user and "Conference Hall" in user and QUESTION in user
    assert "one SQL query" in body["system"] and body["temperature"] == 0.7
    headers = server.requests[0].headers
    assert KEY in (headers.get("x-api-key", ""), headers.get("Authorization", "")[7:])


def test_429_with_retry_after_is_honoured_then_succeeds(server):
    server.enqueue(Reply(status=429, headers={"retry-after": "3"}))
    sleeps = Sleeps()
    pool = _sampler(server, sleeps, n=3, concurrency=1).sample(QUESTION, DB)
    assert pool.complete and len(pool.replies) == 3
    assert server.count == 4 and pool.requests == 4
    assert sleeps and sleeps[0] >= 3.0
    assert pool.samples[0].attempts == 2


def test_500_then_success_backs_off(server):
    server.enqueue(Reply(status=500), Reply(status=529))
    sleeps = Sleeps()
    pool = _sampler(server, sleeps, n=2, concurrency=1).sample(QUESTION, DB)
    assert pool.complete and server.count == 4
    assert pool.samples[0].attempts == 3 and len(sleeps) == 2
    assert sleeps[1] >= sleeps[0] * 0.5  # exponential, with jitter in [0.5, 1]


def test_malformed_reply_is_an_invalid_sample_not_a_failure(server):
    server.enqueue(Reply("I'm sorry, I can't tell which rooms you mean."))
    pool = _sampler(server, n=4, concurrency=1).sample(QUESTION, DB)
    assert pool.complete and pool.n_invalid == 1 and pool.invalid_share == 0.25
    bad = pool.samples[0]
    assert bad.sql is None and "no SELECT query" in bad.error and bad.text.startswith("I'm")


def test_slow_reply_past_the_timeout_is_retried(server):
    server.enqueue(Reply(delay_s=1.5))
    pool = _sampler(server, n=2, concurrency=1, timeout_s=0.4).sample(QUESTION, DB)
    assert pool.complete and pool.samples[0].attempts == 2 and server.count == 3


def test_progress_callback_reports_every_sample(server):
    calls = []
    _sampler(server, n=6).sample(QUESTION, DB, on_progress=lambda d, t, i: calls.append((d, t, i)))
    assert [c[0] for c in calls] == [1, 2, 3, 4, 5, 6] and {c[1] for c in calls} == {6}
    assert calls[-1][2]["valid"] == 6 and calls[-1][2]["distinct"] >= 1


def test_budget_stops_cleanly_and_a_second_call_tops_up(server, tmp_path):
    cache = FilePoolCache(tmp_path)
    stopped = generate_pool(_sampler(server, n=8, budget=Budget(max_samples=3)),
                            QUESTION, DB, cache)
    assert server.count == 3 and not stopped.complete and stopped.stopped.startswith("budget")
    pool = generate_pool(_sampler(server, n=8), QUESTION, DB, cache)
    assert server.count == 8 and pool.complete and len(pool.replies) == 8
    assert [s.index for s in pool.samples] == list(range(8))


def test_usd_budget_projects_in_flight_requests(server):
    one = 100 * 3 / 1e6 + 20 * 15 / 1e6  # one stub reply at the Sonnet list price
    pool = _sampler(server, n=20, concurrency=1,
                    budget=Budget(max_usd=one * 4.5)).sample(QUESTION, DB)
    assert len(pool.replies) == 4 and pool.cost_usd <= one * 4.5 and not pool.complete


def test_cached_pool_makes_no_request(server, tmp_path):
    cache = FilePoolCache(tmp_path)
    first = generate_pool(_sampler(server), QUESTION, DB, cache)
    assert server.count == 8
    again = generate_pool(_sampler(server), QUESTION, DB, cache)
    assert server.count == 8 and again.candidates == first.candidates
    generate_pool(_sampler(server, temperature=1.0), QUESTION, DB, cache)
    assert server.count == 16  # another setting is another pool


def test_study_store_cache_is_shared(server, tmp_path):
    from study.store import open_store
    store = open_store(f"sqlite:///{tmp_path}/study.sqlite")
    first = generate_pool(_sampler(server), QUESTION, DB, StorePoolCache(store))
    other_process = StorePoolCache(open_store(f"sqlite:///{tmp_path}/study.sqlite"))
    again = generate_pool(_sampler(server), QUESTION, DB, other_process)
    assert server.count == 8 and again.candidates == first.candidates
    assert store.get_pool(first.key)["candidates"][0]["count"] == 6


def test_key_never_in_logs_errors_or_reprs(server, caplog):
    caplog.set_level(logging.DEBUG)
    server.enqueue(Reply(status=429, headers={"retry-after": "0"}))
    sampler = _sampler(server, n=2, concurrency=1)
    pool = sampler.sample(QUESTION, DB)
    server.known_models = {"nothing"}
    with pytest.raises(SamplingError) as info:
        sampler.sample(QUESTION, DB)
    texts = [caplog.text, str(info.value), repr(info.value), repr(sampler),
             repr(sampler.config), repr(pool), json.dumps(pool.to_dict())]
    assert caplog.text  # the SDK and the sampler did log
    assert all(KEY not in t for t in texts)


def test_unknown_model_gives_one_clear_message(server):
    server.known_models = {"claude-known"}
    with pytest.raises(SamplingError) as info:
        _sampler(server, model="claude-nope", n=10).sample(QUESTION, DB)
    msg = str(info.value)
    assert info.value.kind == "model" and "'claude-nope' is not available" in msg
    assert "Choose a model" in msg and server.count <= 2  # stops, does not hammer the API


def test_refused_temperature_is_dropped_for_the_run(server):
    server.enqueue(Reply(status=400, message="`temperature` is deprecated for this model."))
    pool = _sampler(server, n=3, concurrency=1).sample(QUESTION, DB)
    assert pool.complete and not pool.temperature_applied
    assert "temperature" in server.requests[0].body
    assert all("temperature" not in r.body for r in server.requests[1:])


def test_empty_question(server):
    with pytest.raises(SamplingError, match="question is empty"):
        _sampler(server).sample("  ", DB)
    assert server.count == 0


def test_unreachable_database(server, tmp_path):
    with pytest.raises(SamplingError, match="Cannot open the task database") as info:
        _sampler(server).sample(QUESTION, DatabaseSpec("sqlite", str(tmp_path / "gone.db")))
    assert info.value.kind == "database" and server.count == 0


def test_all_invalid_is_one_message_and_the_replies_are_kept(tmp_path):
    with StubServer(["I need more context.", "Which rooms?"]) as srv:
        cache = FilePoolCache(tmp_path)
        with pytest.raises(SamplingError, match="None of the 4 replies") as info:
            generate_pool(_sampler(srv, n=4), QUESTION, DB, cache)
    assert info.value.kind == "invalid" and len(info.value.pool.replies) == 4
    assert len(cache.get(info.value.pool.key).replies) == 4


def test_partial_pool_kept_when_server_fails_mid_run(server, tmp_path):
    healthy = server.default
    server.default = lambda i, body: healthy(i, body) if i < 4 else Reply(status=500)
    cache = FilePoolCache(tmp_path)
    with pytest.raises(SamplingError, match="kept failing") as info:
        generate_pool(_sampler(server, n=8, concurrency=1, max_retries=1), QUESTION, DB, cache)
    partial = cache.get(info.value.pool.key)
    assert info.value.kind == "transient" and len(partial.replies) == 4
    assert "4 replies gathered so far are kept" in str(info.value)
    server.default = healthy
    before = server.count
    pool = generate_pool(_sampler(server, n=8), QUESTION, DB, cache)
    assert pool.complete and len(pool.replies) == 8 and server.count - before == 4


def test_unreachable_api_is_a_clear_message():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sampler = AnthropicSampler(SamplerConfig(n=2, max_retries=0), api_key=KEY,
                               base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(SamplingError, match="could not be reached") as info:
        sampler.sample(QUESTION, DB)
    assert info.value.kind == "transient" and KEY not in str(info.value)


def test_no_key_is_a_clear_message(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(GenerationError) as info:
        AnthropicSampler(SamplerConfig())
    assert str(info.value) == NO_KEY_MESSAGE
