"""Repair: reach readings the pool lacks by recombining the atoms of its candidates.

When the user rejects the predicted output (or says "none of these"), :func:`recompose` builds
new SQL on the sqlglot AST from clause-level atoms (:mod:`core.engine.atoms`) — the SELECT
columns of one candidate, the WHERE conjuncts of another, the join path that connects their
tables, their GROUP BY / HAVING / ORDER BY / LIMIT, the clauses of SELECTs nested in them, the
columns of the tables they use — searched in :mod:`core.engine.recombine`: clause values
combined across candidates (guided by the answers, taking turns over which clause groups of
the rejected query they change), set operations of two branches, attachment regroupings
``(X) OR (Y)``, then one-edit variants of the candidates that agree best with the answers.
Every new query must hold every feature set the user said Yes to and none they said No to,
must pass the read-only allow-list and execute, and must produce an output that is neither
rejected nor already surviving; one query per new output is added with a small prior — of
the tried queries giving that output the most probable, not merely the first (a detour
spelling found first is what an honest answer about spelling removes). An output that clause
answers alone ruled out before the first rejection (:func:`answered_away`: a pool that spelled
the user's LIMIT 1 only as a MAX subquery) gets at least half the top prior back when a new
query gives it. It is deterministic: the same session always gets the same queries.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp

from core.engine.answers import ANSWER_KEYWORDS, answer_phrase, is_answer
from core.engine.atoms import Compound, Parts, _violations, decompose, decompose_query
from core.engine.errors import SessionError, StudioError, UnsafeQueryError
from core.engine.execute import ExecutionResult
from core.engine.features import Feature
from core.engine.guided import compound_proposals, guided_proposals, spread_by_deviation
from core.engine.lru import LRUCache
from core.engine.pool import PreparedPool, StoredRound
from core.engine.recombine import MAX_TRIED, _Recomposer
from core.engine.session import Decision, RepairSession
from core.engine.similarity import ERROR_CLASS, output_key
from core.engine.sqlguard import parse_one_bounded

REPAIR_PRIOR = 0.5  # weight of a recomposed candidate (pool candidates weigh >= 1)
MAX_BASES = 8  # candidates edited per repair round
EXECUTE_CHUNK = 32  # proposals executed per worker round trip (few run past the last admitted)
ROUND_CACHE_ENTRIES = 64  # recomposition rounds remembered per pool (their queries: ~1 kB each)
_ROUNDS: dict[int, LRUCache] = {}  # id(base pool) -> decisions -> (added, weights, new outputs)
_ROUNDS_LOCK = threading.Lock()
# Bump when recomposition may add other queries for the same pool and decisions: a prepared
# pool's stored first round (PreparedPool.first_round) of another version is not used (the
# round is computed), and `python -m core.prepare BANK --rounds` stores the new one.
REPAIR_VERSION = 3
# the least weight of an added query whose output clause answers alone ruled out before the
# first rejection (answered_away); 0 leaves its own. Half the top prior: above most of a round's
# proposals, below its best guided one, whose output stays the one shown next (at REPAIR_PRIOR,
# dev under --look each took 740 -> 757 turns, docs/evaluation.md session 15)
ANSWERED_AWAY_PRIOR = REPAIR_PRIOR / 2


Stop = Callable[[], bool]  # asked between a round's phases: True ends the round unapplied
RESAMPLE_N = 8  # samples a resampling round asks the model for


class RoundStopped(StudioError):
    """A round ended by its ``stop`` (a speculated repair nobody wants any more)."""


def _check(stop: Stop | None) -> None:
    """End the round here (nothing applied yet) when ``stop`` says so."""
    if stop is not None and stop():
        raise RoundStopped("the repair round was stopped")


@dataclass(frozen=True)
class RepairOutcome:
    """What one repair round did (a trace event and the evaluation read it)."""

    method: str  # "recompose" | "resample"
    added: tuple[str, ...]  # SQL of candidates added to the session
    new_outputs: int  # functional classes that are new to the session
    # what resampling sent to the model this round (0 for recomposition and for a pool read
    # from the cache); not part of the round's identity, so a replayed round equals the first
    requests: int = field(default=0, compare=False)
    usd: float = field(default=0.0, compare=False)  # their estimated cost (``estimate_cost``)


# session -> outcome: a repair round by the model (resample with its sampler and cache bound)
Resampler = Callable[[RepairSession], RepairOutcome]


def _answer_sets(session: RepairSession) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    yes = [d.features for d in session.history
           if d.kind in ("variable", "feature") and d.answer]
    return yes, session.no_sets()


def _clause_sets(yes: list[tuple[str, ...]], no: list[tuple[str, ...]]
                 ) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The answers a query can be checked against before it runs: clause features only (an
    answer about the output is checked on the output, in :func:`_admit`)."""
    clause_yes = [c for c in (tuple(k for k in s if not is_answer(k)) for s in yes) if c]
    return clause_yes, [s for s in no if not any(is_answer(k) for k in s)]


def recompose(session: RepairSession, *, rejected_outputs: Iterable[str] = (),
              max_new: int = 24, stop: Stop | None = None, cached: bool = True
              ) -> RepairOutcome:
    """Add up to ``max_new`` recomposed candidates with new outputs to ``session`` (in place).

    ``rejected_outputs`` are rejected first (one ``reject`` decision) where they survive; every
    output rejected in the session's history is avoided. Earlier answers stay applied: a new
    query must agree with each of them. Needs the session's database to execute the queries.
    ``stop`` is asked between phases and query chunks; when it says so the round raises
    :class:`RoundStopped` before anything is applied (the speculated repair of ui.actions).
    A round some session of the same pool ran in the same state, or the one the prepared pool
    stored for its first state (:func:`first_round`), is applied as it was, unless ``cached``
    is False (it is the same: the round is deterministic; tests compare the two).
    """
    _ = session.database  # fails early, naming what to do, when there is none
    alive_keys = {session.output_key_of(int(i)) for i in session.survivors}
    still = [k for k in dict.fromkeys(rejected_outputs) if k in alive_keys]
    if still:
        session.reject_outputs(still)
    key = _round_key(session, max_new)
    known = known_round(session, max_new) if cached else None
    if known is not None:
        return known
    outcome = _recompose(session, max_new, stop)
    _remember(session, key, outcome)
    return outcome


def known_round(session: RepairSession, max_new: int = 24) -> RepairOutcome | None:
    """Apply the round :func:`recompose` would add in this (rejected) state when it is known
    without computing it — remembered from a session of the same pool, or stored with the
    prepared pool (the first state's, :func:`first_round`) — and return it; None (the session
    unchanged) when it would have to be computed."""
    key = _round_key(session, max_new)
    known = _replayed(session, _rounds(session.base_pool).get(key))
    if known is None:
        known = _stored(session, max_new)
        if known is not None:
            _remember(session, key, known)
    return known


def _round_key(session: RepairSession, max_new: int) -> str:
    """The key of the round about to run among its pool's remembered ones: the decisions."""
    return repr((max_new, session.history))


def _remember(session: RepairSession, key: str, outcome: RepairOutcome) -> None:
    """Remember the round just applied to ``session`` for its pool's other sessions."""
    _rounds(session.base_pool)[key] = (
        outcome.added, session.history[-1].weights if outcome.added else (), outcome.new_outputs)


def none_of_these_outputs(session: RepairSession) -> list[str]:
    """The outputs "None of these" rules out here: every surviving valid output, sorted (the
    rejection a first round is stored for, and that the workspace speculates)."""
    return sorted({session.output_key_of(int(i)) for i in session.survivors
                   if session.pool.results[int(i)].ok})


def first_round(pool: PreparedPool, max_new: int = 24) -> StoredRound | None:
    """The round a "None of these" on ``pool``'s first state adds, computed (needs the pool's
    database): what a prepared pool stores, so that press never waits for it. None when the
    first state shows no valid output (there is nothing to reject)."""
    session = RepairSession(pool)
    outputs = none_of_these_outputs(session)
    if not outputs:
        return None
    session.reject_outputs(outputs)
    outcome = recompose(session, max_new=max_new, cached=False)
    new = range(pool.n, session.pool.n)
    extended = session.pool
    return StoredRound(
        REPAIR_VERSION, session.history[0].outputs, max_new, outcome.added,
        session.history[-1].weights if outcome.added else (), outcome.new_outputs,
        tuple(extended.results[i] for i in new),
        tuple(tuple(extended.vocabulary[j] for j in np.flatnonzero(extended.x[i]))
              for i in new))


def _stored(session: RepairSession, max_new: int) -> RepairOutcome | None:
    """Apply the prepared pool's stored first round when ``session`` is in the state it was
    computed for (the first state, every surviving output rejected) by this version of
    recomposition; None otherwise. Its queries' outputs join the pool's repair cache."""
    stored = session.base_pool.first_round
    if (stored is None or stored.version != REPAIR_VERSION or stored.max_new != max_new
            or session.history != [Decision("reject", outputs=stored.outputs)]):
        return None
    cache = session.pool.repair_cache
    for sql, result, feats in zip(stored.sqls, stored.results, stored.features, strict=True):
        if cache.get(sql) is None:
            cache[sql] = [result, output_key(result), list(feats)]
    if stored.sqls:
        session.decide(Decision("repair", gesture="recompose", sqls=stored.sqls,
                                weights=stored.weights),
                       list(stored.results), [list(fs) for fs in stored.features])
    return RepairOutcome("recompose", stored.sqls, stored.new_outputs)


def _rounds(pool: PreparedPool) -> LRUCache:
    """The recomposition rounds of the sessions of ``pool`` (a base pool), by their decisions:
    recomposition is deterministic, so a state any session reached before (every participant
    starts at the first one; Back, then None of these again) gets its round at once."""
    with _ROUNDS_LOCK:
        rounds = _ROUNDS.get(id(pool))
        if rounds is None:
            rounds = _ROUNDS[id(pool)] = LRUCache(ROUND_CACHE_ENTRIES, 1 << 62)
            weakref.finalize(pool, _ROUNDS.pop, id(pool), None)
        return rounds


def _replayed(session: RepairSession, known: Any) -> RepairOutcome | None:
    """Apply a remembered round (its queries' results and features from the pool's repair
    cache); None when there is none or an entry has left that cache (it is then recomputed)."""
    if known is None:
        return None
    added, weights, new_outputs = known
    entries: list[Any] = []
    for sql in added:
        entry = session.pool.repair_cache.get(sql)
        if entry is None or entry[2] is None:
            return None
        entries.append(entry)
    if added:
        session.decide(Decision("repair", gesture="recompose", sqls=added, weights=weights),
                       [e[0] for e in entries], [e[2] for e in entries])
    return RepairOutcome("recompose", added, new_outputs)


def _recompose(session: RepairSession, max_new: int, stop: Stop | None) -> RepairOutcome:
    """One recomposition round on the rejected ``session`` (:func:`recompose` without the
    remembered rounds)."""
    pool = session.pool
    known_sql = set(pool.sqls)
    yes, no = _clause_sets(*_answer_sets(session))
    rec = _Recomposer(session)
    shapes: dict[int, Parts | Compound] = {**rec.parts, **rec.compounds}
    keys_of = {i: set(pool.feature_keys(i)) for i in shapes}
    # bases: the candidates that agree best with the answers, the last survivors first
    last_alive = session.alive if session.alive.any() else _last_nonempty(session)
    bases = sorted(shapes, key=lambda i: (_violations(keys_of[i], yes, no),
                                          not last_alive[i], -pool.counts[i], i))
    weighted: dict[str, float] = {}
    _check(stop)
    plain = guided_proposals(rec, pool.counts, yes, no)
    _check(stop)
    reference = _rejected_reference(session, rec)
    if reference is not None:
        plain = spread_by_deviation(plain, reference)
    guided: list[tuple[Parts | Compound, float]] = list(plain)
    compounds = compound_proposals(rec, pool.counts, yes, no)
    _check(stop)
    # plain combinations and set operations take turns: their priors are not comparable
    # (a pair's is a product of two), and either kind may be what the user means
    mixed = [p for pair in itertools.zip_longest(guided, compounds) for p in pair
             if p is not None]
    # each kind is scaled to its most probable proposal *not yet in the pool*: after a second
    # rejection the last round's top proposals are pool candidates, and scaling to them would
    # push every new proposal down to the floor (0.05), all tied
    for kind in (guided, compounds):
        fresh = [(p.sql(pool.dialect), score) for p, score in kind]
        fresh = [(sql, score) for sql, score in fresh if sql not in known_sql]
        top = max((score for _, score in fresh), default=1.0) or 1.0
        for sql, score in fresh:
            weighted.setdefault(sql, round(max(0.05, REPAIR_PRIOR * score / top), 6))
    weighted = {p.sql(pool.dialect): weighted[p.sql(pool.dialect)] for p, _ in mixed
                if p.sql(pool.dialect) not in known_sql}
    proposals: dict[str, tuple[int, int]] = {}
    for b_rank, i in enumerate(bases[:MAX_BASES]):
        _check(stop)
        shape = shapes[i]
        edited_all = (rec.compound_edits(shape) if isinstance(shape, Compound) else
                      ((r, f) for r, e in rec.edits(shape) for f in rec.fit_joins(e)))
        for rank, fitted in edited_all:
            if isinstance(fitted, Parts) and not fitted.select:
                continue
            sql = fitted.sql(pool.dialect)
            if sql in proposals or sql in known_sql:
                continue
            # most edits contradict an answer: skip those before running anything
            if _violations(rec.approx_features(fitted), yes, no):
                continue
            proposals[sql] = (rank, b_rank)
    ordered = sorted(proposals, key=lambda s: (proposals[s], s))
    edits = [(sql, round(REPAIR_PRIOR / (proposals[sql][0] + proposals[sql][1] / MAX_BASES) / 2,
                         6)) for sql in ordered if sql not in weighted]
    # guided combinations first (they agree with every answer by construction), then edits
    return _admit(session, list(weighted.items()) + edits, "recompose", max_new, stop)


def _rejected_reference(session: RepairSession, rec: _Recomposer) -> Parts | None:
    """The plain query (most frequent) behind the one output the user rejected last, if any."""
    for d in reversed(session.history):
        if d.kind == "reject":
            if len(d.outputs) != 1:
                return None  # "none of these": no single query to differ from
            idx = [i for i in rec.parts if session.output_key_of(i) == d.outputs[0]]
            if not idx:
                return None
            return rec.parts[min(idx, key=lambda i: (-session.pool.counts[i], i))]
    return None


def _admit(session: RepairSession, proposals: list[tuple[str, float]], method: str,
           max_new: int, stop: Stop | None = None) -> RepairOutcome:
    """Execute proposals in order; add those that run, agree with every answer and give an
    output neither rejected nor surviving, one query per output: of the tried proposals
    giving it, the most probable, the first of equally probable ones (the order decides
    which outputs get in). An honest answer about spelling then less often removes it."""
    pool = session.pool
    db = session.database
    rejected = session.rejected_outputs()
    alive_outputs = {session.output_key_of(int(i)) for i in session.survivors}
    known_sql = set(pool.sqls)
    yes, no = _answer_sets(session)
    added: list[str] = []
    results: list[ExecutionResult] = []
    weights: list[float] = []
    features: list[list[Feature]] = []
    outputs_added: dict[str, int] = {}  # output -> its query's place in ``added``
    cache = pool.repair_cache
    trees: dict[str, Any] = {}  # the allow-list's parse, read again for features (same dialect)
    budget = [(sql, w) for sql, w in proposals[:MAX_TRIED] if sql not in known_sql]
    for start in range(0, len(budget), EXECUTE_CHUNK):
        if len(added) >= max_new:
            break
        _check(stop)
        chunk = budget[start:start + EXECUTE_CHUNK]
        # the cache is a bounded LRU shared with other sessions: this chunk's entries are
        # held here, so an eviction between storing and reading them costs nothing
        held = {sql: cache.get(sql) for sql, _ in chunk}
        todo = [sql for sql, entry in held.items() if entry is None]
        # one worker round trip per chunk; the read-only allow-list (check_query) runs first
        for sql, result in zip(todo, db.execute_many(todo, trees), strict=True):
            held[sql] = cache[sql] = [result, output_key(result), None]
        entries: dict[str, list[Any]] = {sql: e for sql, e in held.items() if e is not None}
        for sql, weight in chunk:
            entry = entries[sql]
            result, key, feature_list = entry
            if not result.ok or key in rejected or key in alive_outputs:
                continue
            if method == "recompose" and _unlike_branches(sql, result, trees, db.dialect):
                continue
            place = outputs_added.get(key)
            if place is None and len(added) >= max_new:
                continue  # full: the rest of this chunk may only respell an added output
            if place is not None and weight <= weights[place]:
                continue  # this output already has a query at least as probable
            if feature_list is None:
                try:
                    tree = trees.get(sql) if db.dialect == pool.dialect else None
                    feature_list = entry[2] = pool.features_of(sql, tree)
                except sqlglot.errors.SqlglotError:
                    feature_list = entry[2] = []
            if not feature_list or _violations({f.key for f in feature_list}
                                               | {f.key for f in pool.answer_features(result)},
                                               yes, no):
                continue
            if place is not None:  # a more probable spelling of an added output
                added[place], results[place] = sql, result
                weights[place], features[place] = weight, feature_list
                continue
            outputs_added[key] = len(added)
            added.append(sql)
            results.append(result)
            weights.append(weight)
            features.append(feature_list)
    new_outputs = sum(1 for k in outputs_added if k not in set(pool.class_keys))
    weights = _restore_answered_away(session, list(outputs_added), weights)
    if added:
        session.decide(Decision("repair", gesture=method, sqls=tuple(added),
                                weights=tuple(weights)), results, features)
    return RepairOutcome(method, tuple(added), new_outputs)


def _unlike_branches(sql: str, result: ExecutionResult, trees: dict[str, Any], dialect: str
                     ) -> bool:
    """Whether ``sql`` is a set operation whose output has a column of numbers in some rows and
    text in others: branches of unlike columns paired (a count and a title). SQLite returns
    such a table, PostgreSQL refuses the query; no person means it, so repair never adds it."""
    tree = trees.get(sql)  # the allow-list's parse, when this round executed it
    if tree is not None and not isinstance(tree, exp.SetOperation):
        return False
    if not any(_mixed_kinds(result, j) for j in range(len(result.columns))):
        return False
    if tree is None:
        try:
            tree = parse_one_bounded(sql, dialect)
        except (UnsafeQueryError, sqlglot.errors.SqlglotError):
            return False
    return isinstance(tree, exp.SetOperation)


def _mixed_kinds(result: ExecutionResult, column: int) -> bool:
    """Whether a column holds both numbers and text (NULLs and blobs aside)."""
    kinds = {isinstance(row[column], str) for row in result.rows
             if row[column] is not None and not isinstance(row[column], bytes)}
    return len(kinds) > 1


def answered_away(session: RepairSession) -> dict[str, float]:
    """Outputs that clause answers alone ruled out before the first rejection, with the weight
    their candidates had just before (output key -> weight). No question about the answer, no
    selection and no rejection removed them, so one may be the user's output spelled unlike
    the pool's candidates that gave it (a MAX subquery for the user's LIMIT 1)."""
    away: dict[str, float] = {}
    rejected = False
    pool = session.pool  # every step's candidates, in their places (repair only appends)
    for step, d in enumerate(session.history, start=1):
        if d.kind == "repair":
            continue  # it adds candidates, it rules none out
        rejected = rejected or d.kind == "reject"
        before, after = session.alive_at(step - 1), session.alive_at(step)
        gone: dict[str, float] = {}
        for i in np.flatnonzero(before & ~after):
            key = pool.class_keys[pool.class_index[i]]
            gone[key] = gone.get(key, 0.0) + float(pool.counts[i])
        still = {pool.class_keys[c] for c in pool.class_index[after]}
        clause_only = d.kind in ("variable", "feature") and not any(map(is_answer, d.features))
        for key, weight in gone.items():
            if key in still or key == ERROR_CLASS:
                continue
            if clause_only and not rejected:
                away[key] = max(away.get(key, 0.0), weight)
            else:  # judged (its answer, a selection, a rejection) or asked after a rejection
                away.pop(key, None)
    return away


def _restore_answered_away(session: RepairSession, keys: list[str], weights: list[float]
                           ) -> list[float]:
    """A round's weights (one query per output, ``keys``) with an answered-away output's
    (:func:`answered_away`) raised to :data:`ANSWERED_AWAY_PRIOR`: a spelling of it that
    agrees with every answer is a reading the pool believed in, not a floor-prior guess."""
    if ANSWERED_AWAY_PRIOR <= 0 or not keys:
        return weights
    away = answered_away(session)
    return [round(max(w, ANSWERED_AWAY_PRIOR), 6) if key in away else w
            for key, w in zip(keys, weights, strict=True)]


def decisions_text(session: RepairSession, max_rows: int = 3) -> str:
    """The user's decisions so far in words, for the resampling prompt: clauses required,
    clauses (or combinations) ruled out, and a preview of each rejected output."""
    yes, no = _answer_sets(session)
    lines = ["Decisions so far:"]
    required = sorted({k for s in yes for k in s if not is_answer(k)})
    if required:
        lines.append("- The query must contain: " + "; ".join(required) + ".")
    answer = [_feature_of(k) for k in sorted({k for s in yes for k in s if is_answer(k)})]
    if answer:
        lines.append("- The answer must have " + answer_phrase(answer) + ".")
    for s in no:
        if all(is_answer(k) for k in s):
            lines.append("- The answer must not have " + answer_phrase(
                [_feature_of(k) for k in s]) + ".")
            continue
        lines.append(("- The query must not contain: " if len(s) == 1 else
                      "- The query must not contain all of: ") + " AND ".join(s) + ".")
    pool = session.pool
    for key in sorted(session.rejected_outputs()):
        if key not in pool.class_keys:
            continue
        rep = int(np.flatnonzero(pool.class_index == pool.class_keys.index(key))[0])
        res = pool.results[rep]
        rows = "; ".join(repr(tuple(r)) for r in res.rows[:max_rows]) or "no rows"
        more = f" … ({len(res.rows)} rows)" if len(res.rows) > max_rows else ""
        lines.append(f"- This output is NOT what the user wants: columns "
                     f"({', '.join(res.columns)}), rows {rows}{more}.")
    if len(lines) == 1:
        lines.append("- None of the queries proposed so far is what the user means.")
    return "\n".join(lines)


def _feature_of(key: str) -> Feature:
    """The answer feature a key names (``ANSWER COLUMN people.name``)."""
    keyword = next(k for k in sorted(ANSWER_KEYWORDS, key=len, reverse=True)
                   if key == k or key.startswith(k + " "))
    return Feature(keyword, key[len(keyword):].strip())


def resample(session: RepairSession, sampler: Any, *, cache: Any = None, n: int = RESAMPLE_N,
             max_new: int = 24) -> RepairOutcome:
    """Ask the LLM for new candidates with a prompt stating the decisions so far.

    ``sampler`` is a :class:`core.generation.sampler.AnthropicSampler`; its pool is cached
    under the question plus the decisions (``cache``: a pool cache), so replaying or retrying
    the same state costs no request. New candidates are admitted as in :func:`recompose`,
    weighted by how often they were sampled.
    """
    from core.generation.poolcache import estimate_cost
    from core.generation.sampler import REPAIR_PROMPT_VERSION, generate_pool, repair_question

    repair_sampler = sampler.with_config(prompt_version=REPAIR_PROMPT_VERSION, n=n)
    question = repair_question(session.pool.question, decisions_text(session))
    db = session.database
    before = cache.get(repair_sampler.empty_pool(question, getattr(db, "spec", db)).key) \
        if cache is not None else None
    generated = generate_pool(repair_sampler, question, db, cache)
    total = max(1, sum(c.count for c in generated.candidates))
    proposals = [(c.sql, round(REPAIR_PRIOR * c.count / total + 1e-6, 6))
                 for c in generated.candidates]
    outcome = _admit(session, proposals, "resample", max_new)
    # the samples this call drew (a complete cached pool draws none, a partial one tops up)
    known = {s.index for s in before.samples} if before is not None else set()
    fresh = [s for s in generated.samples if s.index not in known]
    usd = sum(estimate_cost(generated.model, s.input_tokens, s.output_tokens) * s.price_factor
              for s in fresh)
    return replace(outcome, requests=len(fresh), usd=usd)  # one request per sample


def _last_nonempty(session: RepairSession) -> np.ndarray:
    """The last non-empty survivor mask of the history, over the current pool."""
    for step in range(session.step, -1, -1):
        mask = session.alive_at(step)
        if mask.any():
            return mask
    raise SessionError("the session has no candidates")


__all__ = ["ANSWERED_AWAY_PRIOR", "REPAIR_PRIOR", "REPAIR_VERSION", "RESAMPLE_N", "Compound",
           "Parts", "RepairOutcome", "Resampler", "RoundStopped", "answered_away",
           "decisions_text", "decompose", "decompose_query", "first_round", "known_round",
           "none_of_these_outputs", "recompose", "resample"]
