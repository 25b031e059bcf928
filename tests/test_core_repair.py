"""Repair: rejecting outputs, recomposing candidates from pool atoms, replay with repair."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from core.engine.errors import SessionError
from core.engine.pool import prepare_pool
from core.engine.repair import (
    ANSWERED_AWAY_PRIOR,
    REPAIR_PRIOR,
    RepairOutcome,
    _admit,
    answered_away,
    decompose,
    none_of_these_outputs,
    recompose,
)
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from tests.conftest_core import make_task, run_read_only

# The reading "action films after 2000, with their year" is in no candidate, but its atoms are:
# the select list of the third, the genre filter of the first, the year filter of the second.
POOL = [
    ("SELECT title FROM film WHERE genre = 'action'", 3),
    ("SELECT f.title FROM film AS f WHERE f.year > 2000", 2),
    ("SELECT title, year FROM film WHERE genre = 'crime'", 1),
    ("SELECT film.title, review.stars FROM film JOIN review ON review.film_id = film.id", 1),
]
GOLD = "SELECT title, year FROM film WHERE genre = 'action' AND year > 2000"


@pytest.fixture(scope="module")
def task():
    return make_task(POOL, gold=[GOLD])


@pytest.fixture(scope="module")
def pool(task):
    return prepare_pool(task)


def _session(pool, task) -> RepairSession:
    return RepairSession(pool, database=task.database)


def test_decompose_qualifies_atoms_with_base_tables(pool):
    parts = decompose("SELECT f.title FROM film AS f WHERE f.year > 2000 AND f.genre = 'x'",
                      "sqlite", pool.schema)
    assert parts is not None
    assert parts.select == ("film.title",)
    assert parts.where == ("film.genre = 'x'", "film.year > 2000")
    assert decompose("SELECT a.title FROM film a JOIN film b ON a.id = b.id", "sqlite",
                     pool.schema) is None  # self-joins are left alone


def test_reject_output_drops_that_output_and_is_recorded(pool, task):
    s = _session(pool, task)
    key = s.output_key_of(0)
    s.reject_output(key)
    assert s.history[-1].kind == "reject"
    assert key not in {s.output_key_of(int(i)) for i in s.survivors}
    with pytest.raises(SessionError):
        s.reject_output(key)  # no survivor has it any more


def test_recompose_reaches_a_reading_the_pool_lacks(pool, task):
    gold_key = output_key(pool.gold_results[0])
    assert gold_key not in pool.class_keys
    s = _session(pool, task)
    s.answer_feature("SELECT film.year", True)
    outcome = recompose(s, rejected_outputs=[s.predicted_output_key()])
    assert isinstance(outcome, RepairOutcome) and outcome.method == "recompose"
    assert outcome.added and outcome.new_outputs >= 1
    assert s.pool.n == pool.n + len(outcome.added)
    assert pool.n == len(POOL)  # the shared prepared pool is never changed
    assert gold_key in s.pool.class_keys
    # earlier answers stay applied: every survivor selects the year
    assert all("SELECT film.year" in s.pool.feature_keys(int(i)) for i in s.survivors)
    assert s.history[-1].kind == "repair" and s.history[-1].sqls == outcome.added


def test_every_recomposed_candidate_passes_the_allow_list_and_executes(pool, task):
    s = _session(pool, task)
    outcome = recompose(s, rejected_outputs=[s.predicted_output_key()], max_new=50)
    run_read_only(task.database, outcome.added)
    keys = [s.output_key_of(i) for i in range(pool.n, s.pool.n)]
    assert len(set(keys)) == len(keys)  # one candidate per new output


def test_each_new_output_gets_its_most_probable_query(pool, task):
    """Of several proposals giving one new output, the most probable is admitted (the first of
    equally probable ones), whatever their order, so a detour spelling found first (an extra
    DISTINCT or condition) does not stand for the output; other outputs keep their place."""
    plain = GOLD
    detour = "SELECT title, year FROM film WHERE genre = 'action' AND year > 2000 AND year > 1990"
    distinct = "SELECT DISTINCT title, year FROM film WHERE genre = 'action' AND year > 2000"
    other = "SELECT year FROM film WHERE genre = 'action'"
    s = _session(pool, task)
    results = run_read_only(task.database, [plain, detour, distinct, other])
    keys = [output_key(r) for r in results]
    assert keys[0] == keys[1] == keys[2] != keys[3]  # three spellings of one output
    outcome = _admit(s, [(distinct, 0.05), (plain, 0.125), (other, 0.1), (detour, 0.125)],
                     "recompose", 24)
    assert outcome.added == (plain, other)  # the output's first place, its likeliest query
    assert s.history[-1].weights == (0.125, 0.1)
    assert [s.output_key_of(i) for i in range(pool.n, s.pool.n)] == [keys[0], keys[3]]
    assert "DISTINCT" not in s.pool.feature_keys(pool.n)


def test_each_round_is_scaled_to_its_most_probable_new_proposal(pool, task, monkeypatch):
    """A round's proposals are weighed against its most probable proposal *not yet in the
    pool*: after a second rejection the last round's top proposals are pool candidates, and
    scaling to them pushed every new one down to the floor, all tied."""
    import core.engine.repair as repair

    seen: list[tuple[set[str], list[tuple[str, float]]]] = []
    real = repair._admit

    def spy(session, proposals, method, max_new, stop=None):
        seen.append((set(session.pool.sqls), list(proposals)))
        return real(session, proposals, method, max_new, stop)

    monkeypatch.setattr(repair, "_admit", spy)
    s = _session(pool, task)
    s.answer_feature("SELECT film.year", True)
    first = recompose(s, rejected_outputs=[s.predicted_output_key()], cached=False)
    second = recompose(s, rejected_outputs=[s.predicted_output_key()], cached=False)
    assert first.added and second.added and len(seen) == 2
    known_before = seen[1][0]
    assert set(first.added) <= known_before  # the first round's queries are pool candidates
    for known, proposals in seen:
        assert not {sql for sql, _ in proposals} & known
        assert max(w for _, w in proposals) == repair.REPAIR_PRIOR
    # the second round's admitted queries keep an order: not every one at the floor (0.05)
    assert s.history[-1].kind == "repair" and len(set(s.history[-1].weights)) > 1


def test_recompose_is_deterministic(pool, task):
    runs = []
    for _ in range(2):
        s = _session(pool, task)
        s.answer_feature("SELECT film.year", True)
        runs.append(recompose(s, rejected_outputs=[s.predicted_output_key()], cached=False))
    assert runs[0] == runs[1]


def test_a_remembered_round_is_the_round_computed_again(pool, task, monkeypatch):
    """A state some session of the pool repaired before gets that round from the pool's
    memory without computing it (the speculated repair of a first state serves every
    participant), and the session is exactly the one a computed round gives."""
    import core.engine.repair as repair

    def rejected(s: RepairSession) -> list[str]:
        return [s.predicted_output_key()]
    sessions = [_session(pool, task) for _ in range(3)]
    for s in sessions:
        s.answer_feature("SELECT film.year", False)
    first = recompose(sessions[0], rejected_outputs=rejected(sessions[0]))
    computed = recompose(sessions[2], rejected_outputs=rejected(sessions[2]), cached=False)
    with monkeypatch.context() as m:
        m.setattr(repair, "_recompose", lambda *a: pytest.fail("the round was computed"))
        remembered = recompose(sessions[1], rejected_outputs=rejected(sessions[1]))
    assert first == remembered == computed and first.added
    a, b, c = sessions
    assert a.history == b.history == c.history and a.pool.sqls == b.pool.sqls == c.pool.sqls
    assert np.array_equal(b.pool.x, c.pool.x) and b.pool.vocabulary == c.pool.vocabulary
    assert b.pool.counts.tolist() == c.pool.counts.tolist()
    assert b.survivors.tolist() == c.survivors.tolist()
    # a state no session repaired yet is computed, not taken from another state's round
    other = _session(pool, task)
    other.answer_feature("SELECT film.year", False)
    other.restrict([int(other.survivors[0])], "click")
    with monkeypatch.context() as m:
        m.setattr(repair, "_recompose", lambda *a: pytest.fail("the round was computed"))
        with pytest.raises(pytest.fail.Exception):
            recompose(other, rejected_outputs=rejected(other))


def test_replay_and_undo_with_repair(pool, task):
    s = _session(pool, task)
    s.answer_feature("SELECT film.year", True)
    recompose(s, rejected_outputs=[s.predicted_output_key()])
    v = s.next_variable()
    if v is not None:
        s.answer(v.keys, True)
    saved = json.loads(json.dumps(s.to_dict()))
    again = RepairSession.from_dict(saved, pool, database=task.database)
    assert again.pool.sqls == s.pool.sqls
    assert np.array_equal(again.alive, s.alive)
    assert again.predicted_output_key() == s.predicted_output_key()
    # queries this process ran already come from the pool's repair cache; others need the
    # database, and without one replay says what to do
    assert RepairSession.from_dict(saved, dataclasses.replace(
        pool, database=None)).pool.sqls == s.pool.sqls
    with pytest.raises(SessionError, match="database"):
        RepairSession.from_dict(saved, dataclasses.replace(pool, database=None,
                                                           repair_cache={}))
    # a pool prepared from its task knows its database: replay needs nothing more
    assert RepairSession.from_dict(saved, pool).pool.sqls == s.pool.sqls
    while s.history[-1].kind != "repair":
        s.undo()
    s.undo()
    assert s.pool is pool


def test_rejecting_every_output_exhausts_then_repair_continues(pool, task):
    s = _session(pool, task)
    for key in sorted({s.output_key_of(int(i)) for i in s.survivors}):
        s.reject_output(key)
    assert s.is_exhausted and not s.is_done and s.next_variable() is None
    outcome = recompose(s)
    assert outcome.added and not s.is_exhausted
    assert not set(s.rejected_outputs()) & {s.output_key_of(int(i)) for i in s.survivors}


def test_recompose_without_database_says_what_to_do(pool):
    s = RepairSession(dataclasses.replace(pool, database=None))
    with pytest.raises(SessionError, match="database="):
        recompose(s, rejected_outputs=[s.predicted_output_key()])



def test_none_of_these_rejects_all_outputs_in_one_decision(pool, task):
    s = _session(pool, task)
    keys = sorted({s.output_key_of(int(i)) for i in s.survivors})
    s.reject_outputs(keys + ["not-an-output"])
    assert s.is_exhausted and s.step == 1 and set(s.history[0].outputs) == set(keys)
    s.undo()
    assert len(s.survivors) == pool.n


# ----- outputs answered away by clause answers (issue #26) ---------------------------------
# The user means the latest film, spelled LIMIT 1; the pool gives that output only through a
# MAX subquery, so "LIMIT 1? Yes" rules the output out although it is the user's.
AWAY_POOL = [
    ("SELECT title FROM film WHERE year = (SELECT MAX(year) FROM film)", 1),
    ("SELECT title FROM film ORDER BY year LIMIT 1", 3),
    ("SELECT title FROM film WHERE genre = 'action'", 3),
    ("SELECT title, year FROM film WHERE genre = 'action' ORDER BY year LIMIT 1", 1),
]


@pytest.fixture(scope="module")
def away_task():
    return make_task(AWAY_POOL, gold=["SELECT title FROM film ORDER BY year DESC LIMIT 1"])


@pytest.fixture(scope="module")
def away_pool(away_task):
    return prepare_pool(away_task)


def test_an_answered_away_output_spelled_as_answered_comes_back_at_a_high_prior(
        away_pool, away_task, monkeypatch):
    """An output that clause answers alone ruled out keeps the weight it had; repair's query
    for it (agreeing with every answer) is admitted at ANSWERED_AWAY_PRIOR, where it would
    otherwise be one low-prior guess among many; the round's best guess stays above it."""
    import core.engine.repair as repair

    latest, action = away_pool.class_keys[away_pool.class_index[0]], \
        away_pool.class_keys[away_pool.class_index[2]]
    weights = {}
    for prior in (ANSWERED_AWAY_PRIOR, 0.0):
        monkeypatch.setattr(repair, "ANSWERED_AWAY_PRIOR", prior)
        s = RepairSession(away_pool, database=away_task.database)
        s.answer_feature("LIMIT 1", True)
        assert answered_away(s) == {latest: 1.0, action: 3.0}
        recompose(s, rejected_outputs=none_of_these_outputs(s), cached=False)
        new = range(away_pool.n, s.pool.n)
        spelled = [i for i in new if s.output_key_of(i) == latest]
        assert len(spelled) == 1 and "LIMIT 1" in s.pool.feature_keys(spelled[0])
        weights[prior] = float(s.pool.counts[spelled[0]])
        others = [float(s.pool.counts[i]) for i in new if s.output_key_of(i) != latest]
        assert max(others) == REPAIR_PRIOR
    assert weights[ANSWERED_AWAY_PRIOR] == ANSWERED_AWAY_PRIOR > weights[0.0]


def test_only_clause_answers_before_the_first_rejection_answer_an_output_away(
        away_pool, away_task):
    """A rejection, a selection or a question about the answer is the user judging the output
    itself: what they remove is not answered away, nor is what a clause answer removes later."""
    latest = away_pool.class_keys[away_pool.class_index[0]]
    s = RepairSession(away_pool, database=away_task.database)
    s.restrict([1, 2, 3], "lasso")
    assert answered_away(s) == {}
    s.undo()
    s.reject_output(latest)
    s.answer_feature("LIMIT 1", False)  # a clause answer after a rejection
    assert answered_away(s) == {}
    s = RepairSession(away_pool, database=away_task.database)
    s.answer_feature("LIMIT 1", True)
    recompose(s, rejected_outputs=none_of_these_outputs(s), cached=False)
    assert latest in answered_away(s) and latest in {s.output_key_of(int(i))
                                                     for i in s.survivors}
    s.reject_output(latest)  # offered back, and judged: no longer answered away
    assert latest not in answered_away(s)


# ----- properties on real pools (AMBROSIA dev) ------------------------------------------------
DEV_SAMPLE = (0, 5, 17, 30, 44, 60)


@pytest.mark.parametrize("index", DEV_SAMPLE)
def test_recomposed_dev_candidates_pass_the_allow_list_execute_and_replay(index):
    from tests.conftest_core import dev_pool, dev_tasks

    pool, task = dev_pool(index), dev_tasks()[index]
    runs = []
    for _ in range(2):
        s = RepairSession(pool, database=task.database)
        v = s.next_variable()
        if v is not None:
            s.answer(v.keys, False)
        runs.append((s, recompose(s, rejected_outputs=[s.predicted_output_key()],
                                  cached=False)))
    (s, outcome), (_, again) = runs
    assert outcome == again  # deterministic
    for result in run_read_only(task.database, outcome.added, pool.dialect):
        assert output_key(result) not in s.rejected_outputs()
    # earlier answers stay applied to every added candidate
    no_sets = s.no_sets()
    for i in range(pool.n, s.pool.n):
        keys = set(s.pool.feature_keys(i))
        assert not any(all(k in keys for k in ns) for ns in no_sets)
    replayed = RepairSession.from_dict(json.loads(json.dumps(s.to_dict())), pool)
    assert replayed.pool.sqls == s.pool.sqls
    assert replayed.pool.class_keys == s.pool.class_keys
    assert np.array_equal(replayed.alive, s.alive)


def test_repair_never_adds_a_set_operation_of_unlike_columns():
    """Branches from different candidates are paired into set operations; a count paired with
    titles gives a column of numbers and text (SQLite runs it, PostgreSQL refuses it): never
    added. Pairs of like columns still are."""
    import core.engine.repair as repair
    from core.engine.execute import open_database

    task = make_task([("SELECT title FROM film WHERE year > 2000 UNION "
                       "SELECT title FROM film WHERE genre = 'action'", 3),
                      ("SELECT COUNT(*) FROM film", 2), ("SELECT title FROM film", 1)],
                     gold=["SELECT COUNT(*) FROM film"])
    pool = prepare_pool(task)
    s = RepairSession(pool, database=task.database)
    s.reject_outputs(none_of_these_outputs(s))
    added = recompose(s, cached=False).added
    assert any(" UNION " in q for q in added)  # set operations are still proposed
    db = open_database(task.database)
    try:
        mixed = "SELECT COUNT(*) FROM film UNION SELECT film.title FROM film"
        assert repair._unlike_branches(mixed, db.execute(mixed), {}, "sqlite")
        assert mixed not in added
        for q in added:
            assert not repair._unlike_branches(q, db.execute(q), {}, "sqlite"), q
        like = "SELECT COUNT(*) FROM film UNION SELECT COUNT(*) FROM review"
        assert not repair._unlike_branches(like, db.execute(like), {}, "sqlite")
        # a plain query is never judged by its column's kinds (a column may mix them)
        plain = "SELECT CASE WHEN year > 2000 THEN title ELSE year END FROM film"
        assert repair._mixed_kinds(db.execute(plain), 0)
        assert not repair._unlike_branches(plain, db.execute(plain), {}, "sqlite")
    finally:
        db.close()


# ----- resampling through the LLM sampler (loopback Messages API) --------------------------
def test_resample_states_the_decisions_caches_and_replays(pool, task, tmp_path):
    from core.engine.repair import resample
    from core.generation.poolcache import FilePoolCache
    from core.generation.sampler import AnthropicSampler, SamplerConfig
    from tests.anthropic_stub_server import StubServer

    replies = [f"```sql\n{GOLD}\n```", "```sql\nSELECT title FROM film\n```",
               "```sql\nSELECT title, year FROM film WHERE nope = 1\n```", GOLD]
    with StubServer(replies) as server:
        sampler = AnthropicSampler(SamplerConfig(n=4, concurrency=1), api_key="sk-test-key",
                                   base_url=server.base_url, random_state=0)
        cache = FilePoolCache(tmp_path)
        outcomes, sessions = [], []
        for _ in range(2):
            s = _session(pool, task)
            s.answer_feature("SELECT film.year", True)
            s.reject_output(s.predicted_output_key())
            outcomes.append(resample(s, sampler, cache=cache, n=4))
            sessions.append(s)
        assert server.count == 4  # the second, identical state is served from the cache
        prompt = server.requests[0].body["messages"][0]["content"]
    first = outcomes[0]
    assert first == outcomes[1] and first.method == "resample"
    # SELECT title lacks the year the user asked for; the third does not run
    assert first.added == (GOLD,)
    assert "must contain: SELECT film.year" in prompt and "NOT what the user wants" in prompt
    assert output_key(pool.gold_results[0]) in sessions[0].pool.class_keys
    again = RepairSession.from_dict(json.loads(json.dumps(sessions[0].to_dict())), pool)
    assert again.pool.sqls == sessions[0].pool.sqls and again.history[-1].gesture == "resample"
