"""Per-stage timings of the engine at N = 50, 200 and 1000 candidates.

``python -m benchmarks.engine [--sizes 50 200 1000] [--json OUT] [--repeat 5] [--strategy S]
[--questions Q ...] [--cpu]``

Pools of the requested size are built deterministically from a film-style database by
enumerating plausible readings (column subsets, joins, filters, DISTINCT, ORDER BY, LIMIT) with
weights drawn like sample counts. Stages: execution, features, similarity (functional classes),
clustering, mining, ranking (information gain; ``ranking_default`` is the workspace's default
strategy), the questions about the answer (database profile, answer features, mining over the
mixed vocabulary, a decision step with it), a new default session of an unseen pool (built,
and to its first question), one decision step (answer + re-cluster + re-mine + re-rank), the first state's
repair round ("None of these": computed, and stored with the prepared pool), the default strategy's plan
(solved once per pool; nan where the pool is too big to plan and the lookahead ranks), and
layout cold (fresh process: includes numba compilation) and warm. Figures are printed (and
written as JSON with ``--json``); targets live here, never in timed test assertions.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.answers import QUESTIONS, askable, asked_vocabulary, is_answer, preferred
from core.engine.clustering import cluster_candidates
from core.engine.execute import execute_candidates, open_database
from core.engine.layout import compute_layout
from core.engine.pool import PreparedPool, candidate_features
from core.engine.session import RepairSession
from core.engine.similarity import functional_classes
from core.engine.strategy import (
    DEFAULT_STRATEGY,
    GROUPED,
    PAIR_FEATURES,
    STRATEGIES,
    WORKSPACE_DEFAULT,
    rank_variables,
)
from core.engine.taskbank import Candidate, DatabaseSpec, Task
from core.engine.variables import mine_decision_variables
from core.settings import REPO_ROOT

BENCH_DUMP = """
CREATE TABLE film(id INTEGER PRIMARY KEY, title TEXT, genre TEXT, year INT, minutes INT);
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, born INT);
CREATE TABLE review(id INTEGER PRIMARY KEY, film_id INT, reviewer TEXT, score INT, text TEXT);
CREATE TABLE casting(film_id INT, person_id INT, role TEXT);
"""


def _bench_dump() -> str:
    rows = [BENCH_DUMP]
    genres = ["drama", "action", "comedy", "romance", "crime"]
    for i in range(1, 41):
        rows.append(f"INSERT INTO film VALUES({i}, 'Film {i}', '{genres[i % 5]}', "
                    f"{1980 + i % 30}, {85 + (i * 7) % 60});")
        rows.append(f"INSERT INTO person VALUES({i}, 'Person {i}', {1940 + i});")
        rows.append(f"INSERT INTO review VALUES({i}, {1 + i % 25}, 'critic {i % 6}', {i % 10}, "
                    f"'review text {i}');")
        rows.append(f"INSERT INTO casting VALUES({1 + i % 30}, {i}, 'role {i % 4}');")
    return "\n".join(rows)


def synthetic_task(n: int, seed: int = 0) -> Task:
    """A task with ``n`` distinct plausible candidates over the bench database."""
    rng = np.random.default_rng(seed)
    film_cols = ["film.title", "film.genre", "film.year", "film.minutes"]
    review_cols = ["review.score", "review.text", "review.reviewer"]
    wheres = ["", "WHERE film.genre = 'drama'", "WHERE film.year > 1995",
              "WHERE film.minutes >= 120", "WHERE film.genre IN ('action', 'crime')",
              "WHERE film.year > 1995 AND film.genre = 'drama'"]
    orders = ["", "ORDER BY film.year", "ORDER BY film.year DESC", "ORDER BY film.title"]
    limits = ["", "LIMIT 5", "LIMIT 10"]
    sqls: list[str] = []
    for cols_n, join, where, order, limit, distinct in itertools.product(
            (1, 2, 3), (False, True), wheres, orders, limits, (False, True)):
        pool_cols = film_cols + (review_cols if join else [])
        for cols in itertools.combinations(pool_cols, cols_n):
            source = "film JOIN review ON review.film_id = film.id" if join else "film"
            sql = " ".join(p for p in [f"SELECT {'DISTINCT ' if distinct else ''}"
                                       f"{', '.join(cols)} FROM {source}", where, order, limit]
                           if p)
            sqls.append(sql)
    order_idx = rng.permutation(len(sqls))[:n]
    counts = rng.geometric(0.5, size=len(order_idx))
    cands = [Candidate(sqls[i], int(c)) for i, c in zip(order_idx, counts, strict=True)]
    return Task(id=f"bench-{n}", question="bench", database=DatabaseSpec("dump", _bench_dump()),
                candidates=cands)


def _time(fn, repeat: int = 1):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = _clock()
        out = fn()
        best = min(best, _clock() - start)
    return out, best * 1000


CLOCK: list = [time.perf_counter]  # --cpu: time.process_time


def _clock() -> float:
    """The benchmark's clock: wall time, or with ``--cpu`` the process's CPU time (all its
    threads), which other processes on a shared machine inflate far less."""
    return float(CLOCK[0]())


def layout_cold_ms(n: int) -> float:
    """Layout in a fresh interpreter with an empty numba cache (what a new server pays)."""
    code = ("import time,sys; from benchmarks.engine import synthetic_task; from core.engine.pool import "
            "prepare_pool; t=synthetic_task(int(sys.argv[1])); p=prepare_pool(t, layout=False);"
            "from core.engine.layout import compute_layout; s=time.perf_counter();"
            "compute_layout(p.class_index, p.class_distance, p.counts);"
            "print((time.perf_counter()-s)*1000)")
    env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="numba-cold-"))
    out = subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True,
                         env=env, cwd=REPO_ROOT, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def bench_size(n: int, repeat: int, cold: bool, strategy: str | None = None,
               questions: tuple[str, ...] = (), values: bool = False) -> dict[str, float]:
    """Timings (ms) of every stage for a pool of ``n`` candidates; with ``questions``, also the
    mining and the decision step of ``strategy`` (default: the workspace's) over each of those
    vocabularies (:func:`vocabulary_rows`)."""
    task = synthetic_task(n)
    db = open_database(task.database)
    sqls = [c.sql for c in task.candidates]
    results, t_exec = _time(lambda: execute_candidates(db, sqls))
    schema = db.schema()
    (vocab, x), t_feat = _time(lambda: candidate_features(sqls, results, "sqlite", schema))
    (keys, cidx, csim), t_sim = _time(lambda: functional_classes(results))
    counts = np.array([c.count for c in task.candidates], dtype=float)
    dist = 1 - csim
    labels, t_clu = _time(lambda: cluster_candidates(cidx, dist), repeat)
    mined, t_mine = _time(lambda: mine_decision_variables(x, counts, labels), repeat)
    _, t_rank = _time(lambda: rank_variables("cluster-grouped", mined, counts, cidx, labels),
                      repeat)
    valid = np.array([r.ok for r in results], dtype=bool)
    _, t_default = _time(lambda: rank_variables(DEFAULT_STRATEGY, mined, counts, cidx, labels,
                                                counted=valid), repeat)
    pool = PreparedPool(task.id, "bench", "sqlite", sqls, counts, results, vocab, x, keys, cidx,
                        csim, database=task.database)
    from core.engine.answers import database_profile, with_answers

    profile, t_profile = _time(lambda: database_profile(db), 1)
    mixed, t_answers = _time(lambda: with_answers(pool, values=True, profile=profile), 1)
    _, t_mine_mixed = _time(lambda: mine_decision_variables(
        mixed.x, counts, labels, allowed=askable(mixed.vocabulary, "mixed")), repeat)

    from core.engine.planner import pool_planner

    (planner, _), t_plan = _time(lambda: pool_planner(pool), 1)

    def one_step(**kw: Any) -> float:
        """One Yes on the top question, the views a rerun draws after it (seconds)."""
        session = RepairSession(pool, **kw)
        session.variables()
        top = session.next_variable()
        assert top is not None, "the benchmark pool has no question to answer"
        start = _clock()
        session.answer(top.keys, True)
        session.variables()
        session.predicted_query()
        return _clock() - start

    def start(**kw: Any) -> tuple[float, float]:
        """A new session of a pool this process has not augmented yet (the first session of
        a freshly loaded or generated pool) and its first question ranked (seconds each)."""
        fresh = dataclasses.replace(pool)
        begin = time.perf_counter()
        session = RepairSession(fresh, **kw)
        made = time.perf_counter()
        session.variables()
        return made - begin, time.perf_counter() - begin

    steps = [one_step() * 1000 for _ in range(repeat)]
    default = {"strategy": str(WORKSPACE_DEFAULT["strategy"]),
               "questions": str(WORKSPACE_DEFAULT["questions"]),
               "values": bool(WORKSPACE_DEFAULT["values"])}
    steps_default = [one_step(**default) * 1000 for _ in range(repeat)]
    steps_mixed = [one_step(questions="mixed", values=True) * 1000 for _ in range(repeat)]
    starts = np.array([start(**default) for _ in range(repeat)]) * 1000
    _, t_warm = _time(lambda: compute_layout(cidx, dist, counts), 1)
    t_round, t_stored = repair_round_ms(pool, repeat)
    row = {"n": n, "classes": len(keys), "features": len(vocab), "execution_ms": t_exec,
           "features_ms": t_feat, "similarity_ms": t_sim, "clustering_ms": t_clu,
           "mining_ms": t_mine, "ranking_ms": t_rank, "ranking_default_ms": t_default,
           "decision_step_ms": float(np.median(steps)),
           # the workspace's strategy and questions (expected-depth: lookahead, pairs)
           "decision_step_default_ms": float(np.median(steps_default)),
           # a new default session of a pool this process has not seen: constructed (hybrid
           # builds the answer features here, once per pool: ~answers_ms), and to its first
           # question ranked
           "session_start_default_ms": float(np.median(starts[:, 0])),
           "first_question_default_ms": float(np.median(starts[:, 1])),
           # questions about the answer too (mixed vocabulary, value questions on): the
           # database profile (once per database), the answer features (once per pool),
           # mining over clauses and answers, one decision step
           "answer_features": int(sum(f.keyword.startswith("ANSWER") for f in mixed.vocabulary)),
           "db_profile_ms": t_profile, "answers_ms": t_answers, "mining_mixed_ms": t_mine_mixed,
           "decision_step_mixed_ms": float(np.median(steps_mixed)),
           # the default strategy's plan, solved once per pool (NaN: pool too big to plan)
           "plan_build_ms": t_plan if planner is not None else float("nan"),
           "layout_warm_ms": t_warm,
           # "None of these" on the first state: the recomposition round computed (clause
           # atoms decomposed, no query run yet: a press before the speculated round is
           # done), and the round stored with the prepared pool applied instead
           "repair_round_ms": t_round, "repair_round_stored_ms": t_stored}
    for q in questions:
        row.update(vocabulary_rows(pool, with_answers(pool, values=values, profile=profile),
                                   labels, strategy or str(default["strategy"]), q, repeat,
                                   values))
    if cold:
        row["layout_cold_ms"] = layout_cold_ms(n)
    db.close()
    return row


def vocabulary_rows(pool: PreparedPool, answered: PreparedPool, labels: np.ndarray,
                    strategy: str, questions: str, repeat: int,
                    values: bool = False) -> dict[str, float]:
    """Mining (ms, over what ``questions`` asks at the first state, ``answered``: the pool with
    its answer features) and one decision step of ``strategy`` with ``questions`` (value
    questions off, as the workspace, unless ``values``). ``hybrid`` asks clauses until an output is rejected and
    then about the answer, so it gets both phases: its ``_after`` rows start from the first
    state with the predicted output rejected (the step the workspace takes after a No)."""
    def mine(phase: str) -> float:
        return _time(lambda: mine_decision_variables(
            answered.x, answered.counts, labels, grouped=strategy in GROUPED,
            allowed=askable(answered.vocabulary, phase),
            prefer=preferred(answered.vocabulary, phase),
            pairs=PAIR_FEATURES if strategy == "expected-depth" else 0), repeat)[1]

    def step(rejected: bool) -> float:
        """One Yes on the top question and the views a rerun draws after it (ms)."""
        session = RepairSession(pool, strategy=strategy, questions=questions, values=values)
        if rejected:
            key = session.predicted_output_key()
            assert key is not None, "the benchmark pool predicts no output"
            session.reject_output(key)
        session.variables()
        top = session.next_variable()
        assert top is not None, "the benchmark pool has no question to answer"
        if session.asking == "outputs":  # the phase measured is the one asked
            assert all(is_answer(k) for k in top.keys), top.keys
        start = _clock()
        session.answer(top.keys, True)
        session.variables()
        session.predicted_query()
        return (_clock() - start) * 1000

    phases = [("", asked_vocabulary(questions, False), False)]
    if questions == "hybrid":
        phases.append(("_after", asked_vocabulary(questions, True), True))
    out = {}
    for suffix, phase, rejected in phases:
        out[f"mining_{questions}{suffix}_ms"] = mine(phase)
        out[f"step_{questions}{suffix}_ms"] = float(np.median([step(rejected)
                                                              for _ in range(repeat)]))
    return out


def repair_round_ms(pool: PreparedPool, repeat: int) -> tuple[float, float]:
    """Median ms of the first state's repair round computed (a cold repair cache each time,
    atoms decomposed as the pages do ahead), and of its stored copy applied (a pool copy
    with no remembered rounds each time)."""
    from core.engine.pool import new_repair_cache
    from core.engine.recombine import decompose_pool
    from core.engine.repair import first_round, known_round, none_of_these_outputs, recompose

    decompose_pool(pool)

    def pressed(p: PreparedPool) -> RepairSession:
        session = RepairSession(p)
        session.reject_outputs(none_of_these_outputs(session))
        return session

    computed, stored = [], []
    for _ in range(repeat):
        pool.repair_cache = new_repair_cache()
        session = pressed(pool)
        start = _clock()
        recompose(session, cached=False)
        computed.append((_clock() - start) * 1000)
    pool.first_round = first_round(pool)
    for _ in range(repeat):
        session = pressed(dataclasses.replace(pool, repair_cache=new_repair_cache()))
        start = _clock()
        known_round(session)
        stored.append((_clock() - start) * 1000)
    return float(np.median(computed)), float(np.median(stored))


def _warm_layout() -> None:
    """Compile UMAP's numba code once, so 'layout_warm_ms' measures a warm process."""
    rng = np.random.default_rng(0)
    pts = rng.random((12, 3))
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    compute_layout(np.arange(12), dist)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine", description=__doc__)
    parser.add_argument("--sizes", nargs="+", type=int, default=[50, 200, 1000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the figures as JSON to this file "
                        "(nothing is written unless asked)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-layout subprocess")
    parser.add_argument("--strategy", choices=STRATEGIES,
                        help="the strategy of the --questions rows (default: the workspace's, "
                             f"{WORKSPACE_DEFAULT['strategy']})")
    parser.add_argument("--questions", nargs="+", choices=QUESTIONS, default=[], metavar="Q",
                        help="also mining and a decision step per question vocabulary ("
                             f"{', '.join(QUESTIONS)}; hybrid: before and after a rejection)")
    parser.add_argument("--values", action="store_true",
                        help="the --questions rows with value questions on (\"should X be in "
                             "the answer?\"; off by default, as in the workspace)")
    parser.add_argument("--cpu", action="store_true",
                        help="time with the process's CPU time instead of wall time (a shared "
                             "machine: other processes' load then inflates the figures less)")
    args = parser.parse_args(argv)
    CLOCK[0] = time.process_time if args.cpu else time.perf_counter
    if min(args.sizes) < 2:
        parser.error(f"--sizes: a pool needs at least 2 candidates, got {min(args.sizes)}")
    os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(tempfile.gettempdir(), "numba-cache"))
    _warm_layout()
    rows = [bench_size(n, args.repeat, not args.no_cold, args.strategy, tuple(args.questions),
                       args.values) for n in args.sizes]
    cols = [c for c in rows[0] if c != "n"]
    print(f"{'stage':<24}" + "".join(f"{'N=' + str(r['n']):>12}" for r in rows))
    for c in cols:
        print(f"{c:<24}" + "".join(f"{r.get(c, float('nan')):>12.1f}" for r in rows))
    print("targets: decision_step_ms ≤ 50 at N=50, ≤ 300 at N=1000; decision_step_mixed_ms "
          "and decision_step_default_ms < 100 at N=1000, as every step_<questions>_ms "
          "(plan_build_ms: once per pool, in a background thread when a page "
          "loads it)")
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows, indent=1))
        print(f"written to {out}")
    return 0


if __name__ == "__main__":
    from core._cli import run

    raise SystemExit(run(main))
