"""The §7 evaluation: simulated users repair every target of a population with each strategy.

``python -m core.evaluate BANK.jsonl [BANK2 …] [--user gold-features|pool-informed]
[--population all realised prior] [--repair none|recompose|resample|recompose+resample]
[--resample-model M] [--resample-n N] [--resample-cache DIR] [--strategies …]
[--questions clauses outputs mixed hybrid] [--values off on] [--look end|each] [--causes]
[--bound] [--json OUT] [--plot PNG] [--limit N]``

A session asks the strategy's questions until one output is left or no question splits the
survivors; the user is then shown the predicted output and accepts it iff it is the target's.
A rejection counts as a turn and (with ``--repair recompose``) drops that output and repairs the
pool (``resample`` asks the model again, through ``$ANTHROPIC_API_KEY``, with the decisions so
far; ``recompose+resample`` does both each round), and the session goes on until acceptance or
the budget of 15 turns. *Silent failure*: the session ended on an output the user rejects with
nothing left to ask (no repair, or repair found nothing new). ``--look each``: the user also
reads the predicted output before every question, as the workspace shows it at every step, and
accepts it as soon as it is theirs (accepting costs no turn; rejecting still waits for one
output). Both users
(:mod:`core.evaluation.simulate`) always run, so every table shows the optimistic and the honest figure side by side; ``--user`` picks the headline one.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.answers import DEFAULT_QUESTIONS, DEFAULT_VALUES, QUESTIONS
from core.engine.errors import GenerationError, SessionError
from core.engine.execute import TaskDatabase, open_database
from core.engine.gain import entropy
from core.engine.pool import PreparedPool, prepare_pool
from core.engine.progress import Progress
from core.engine.repair import RepairOutcome, Resampler, recompose
from core.engine.session import RepairSession
from core.engine.similarity import output_key
from core.engine.strategy import STRATEGIES
from core.engine.taskbank import load_tasks
from core.evaluation.bound import format_bound, segment_record
from core.evaluation.causes import missing_pieces
from core.evaluation.populations import (
    DEFAULT_POPULATION,
    POPULATIONS,
    huffman_floor,
    targets,
    vocabulary_floor,
)
from core.evaluation.report import vocabulary_label
from core.evaluation.resampling import Resampling, make_resampler
from core.evaluation.resampling import add_arguments as add_resample_arguments
from core.evaluation.resampling import from_args as resampling_from_args
from core.evaluation.simulate import DEFAULT_LOOK, DEFAULT_USER, LOOKS, USERS, Target, make_user

MAX_TURNS = 15  # questions + rejected outputs per session
VALUES = ("off", "on")  # value questions ("should X be in the answer?") offered or not
ALL_STRATEGIES = STRATEGIES
REPAIRS = ("none", "recompose", "resample", "recompose+resample")


DEFAULT_REPAIR = "recompose"  # a broken core.engine.repair fails the run, never changes figures


@dataclass
class Run:
    """One simulated session: strategy, user, target, what happened per turn and at the end."""

    strategy: str
    task: str
    ambiguity: str
    gold: int  # gold index, or class index for the prior population
    turns: float = 0
    success: bool = False
    reach_zero: bool = False
    entropy: list[float] = field(default_factory=list)  # after 0, 1, … answers
    similarity: list[float] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    user: str = DEFAULT_USER
    population: str = DEFAULT_POPULATION
    target_kind: str = "gold"
    weight: float = 1.0
    realised: bool = True
    depth: int | None = None  # Huffman depth of the target's class
    floor: float | None = None  # the task's Huffman expectation (prior population only)
    # the task's optimal decision tree over the pool's own questions (prior only); exact unless
    # the search hit its cap (then still a lower bound)
    tree_floor: float | None = None
    tree_exact: bool = True
    silent_failure: bool = False
    end: str = ""  # accepted | rejected | budget | stuck
    rejections: int = 0
    repair_rounds: int = 0
    added: int = 0
    new_outputs: int = 0
    llm_requests: int = 0  # requests resampling sent (0 when its pools came from the cache)
    llm_usd: float = 0.0  # their estimated cost
    questions_vocab: str = "clauses"  # clauses | outputs | mixed | hybrid (core.engine.answers)
    values: bool = False  # value questions offered
    look: str = DEFAULT_LOOK  # when the user judges the predicted output (LOOKS)
    label: str = ""  # strategy, with the vocabulary when several are compared
    # why a failed run failed (see core.evaluation.causes.CAUSES), the question after which the target's output was
    # gone (if one was), and the target's clauses no candidate of the final pool has
    cause: str = ""
    lost_by: str = ""
    missing: list[str] = field(default_factory=list)
    # per segment (questions until an output is shown): its start state's Huffman floor, the
    # target's share and depth there, the questions asked (core.evaluation.bound)
    segments: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.label = self.label or self.strategy


def gold_labels(pool: PreparedPool) -> np.ndarray:
    """Per candidate: the index of the gold whose output it realises, or -1 ('other')."""
    keys = [output_key(r) for r in pool.gold_results]
    labels = np.full(pool.n, -1, dtype=int)
    for i, c in enumerate(pool.class_index):
        ck = pool.class_keys[c]
        if ck != "error" and ck in keys:
            labels[i] = keys.index(ck)
    return labels


def within_similarity(pool: PreparedPool, alive: np.ndarray) -> float:
    """Count-weighted mean pairwise output similarity of the survivors (samples, self incl.).

    0 when nothing survives (every output rejected, repair found nothing).
    """
    idx = np.flatnonzero(alive)
    if len(idx) == 0:
        return 0.0
    w = pool.counts[idx]
    sim = pool.class_similarity[np.ix_(pool.class_index[idx], pool.class_index[idx])]
    return float(w @ sim @ w / (w.sum() ** 2))


def _next_variable(session: RepairSession, cache: dict | None) -> Any:
    """The session's next question, shared between runs that reached the same survivors.

    Without repair and for a deterministic strategy the ranking depends only on the surviving
    set, so runs of one task form one decision tree and each node is computed once.
    """
    if cache is None or session.strategy == "random" or session.pool is not session.base_pool:
        return session.next_variable()
    key = (id(session.base_pool), session.strategy, session.asking, session.values,
           session.alive.tobytes())
    if key not in cache:
        cache[key] = session.next_variable()
    return cache[key]


def valid_outputs(session: RepairSession) -> int:
    """How many valid (non-error) outputs survive."""
    pool = session.pool
    classes = {int(c) for c in pool.class_index[session.alive]}
    return sum(pool.class_keys[c] != "error" for c in classes)


def one_output_left(session: RepairSession) -> bool:
    """At most one valid output survives: errors are never what a user means, so they do not
    keep a session asking (the predicted output is the valid class anyway)."""
    return valid_outputs(session) <= 1


def _repair(session: RepairSession, rejected: list[str], method: str,
            resampler: Resampler | None = None) -> list[RepairOutcome]:
    """Drop the rejected output and repair the pool: recomposition, the model's resampling
    (on the pool recomposition left, so it adds only outputs still missing), or both."""
    if method not in REPAIRS or method == "none":
        raise ValueError(f"unknown repair {method!r}; choose one of {', '.join(REPAIRS[1:])}")
    if "resample" in method and resampler is None:
        raise ValueError(f"repair {method!r} needs a resampler (core.evaluation.resampling."
                         "make_resampler)")
    if session.alive.any():
        # SessionError: the predicted output was no survivor's (nothing valid left)
        with contextlib.suppress(SessionError):
            session.reject_output(rejected[-1])
    outcomes = []
    if "recompose" in method:
        outcomes.append(recompose(session, rejected_outputs=tuple(rejected)))
    if resampler is not None and "resample" in method:
        outcomes.append(resampler(session))
    return outcomes


def simulate(pool: PreparedPool, target: Target | int, strategy: str, ambiguity: str = "",
             random_state: int = 0, max_turns: int = MAX_TURNS, *, user: str = DEFAULT_USER,
             repair: str = "none", population: str = DEFAULT_POPULATION,
             database: Any = None, cache: dict | None = None, questions: str = "clauses",
             values: bool = False, label: str = "", look: str = DEFAULT_LOOK,
             resampler: Resampler | None = None) -> Run:
    """Run one simulated session (questions, output judgement, repair) and record it.

    ``database`` (a TaskDatabase or DatabaseSpec) is where repair executes new candidates;
    ``cache`` (a dict shared by runs on one pool) memoises questions; ``questions`` and
    ``values`` choose the session's question vocabulary; ``look`` when the user judges the
    predicted output (:data:`LOOK_NOTES`); ``resampler`` the model's step for a ``repair``
    with ``resample`` (:func:`core.evaluation.resampling.make_resampler`). A failed run records its cause.
    """
    if look not in LOOKS:
        raise ValueError(f"unknown look {look!r}; choose one of {', '.join(LOOKS)}")
    if isinstance(target, int):
        from core.evaluation.simulate import gold_target

        target = gold_target(pool, target)
    kw = {"database": database} if database is not None else {}
    session = RepairSession(pool, strategy=strategy, random_state=random_state,
                            questions=questions, values=values, **kw)
    simulated = make_user(user, session, target)
    run = Run(strategy, pool.task_id, ambiguity, target.index, user=user, population=population,
              target_kind=target.kind, weight=target.weight, realised=simulated.realised,
              depth=target.depth, questions_vocab=questions, values=session.values,
              label=label or strategy, look=look)
    present = {"ever": simulated.realised, "added": False}
    labelled: dict[int, np.ndarray] = {}

    def snapshot() -> None:
        p, a = session.pool, session.alive
        if p.n not in labelled:
            labelled[p.n] = gold_labels(p)
        run.entropy.append(entropy(p.counts[a], labelled[p.n][a]))
        run.similarity.append(within_similarity(p, a))

    rejected: list[str] = []
    snapshot()
    run.segments.append(segment_record(session.pool, session.alive, simulated.target_key))
    while True:
        if run.turns >= max_turns:
            run.end = "budget"
            break
        variable = None if one_output_left(session) else _next_variable(session, cache)
        if variable is not None and look == "each" and simulated.accepts(
                session.predicted_output()[0]):
            run.success, run.end = True, "accepted"  # theirs already: no question needed
            break
        if variable is not None:
            had = bool((simulated.realisers & session.alive).any())
            try:
                session.answer(variable.keys, simulated.answer(variable))
            except SessionError:  # cannot happen for a splitting variable; stop, never loop
                run.end = "stuck"
                break
            if had and not (simulated.realisers & session.alive).any():
                run.lost_by = run.lost_by or variable.label
            run.turns += 1
            run.segments[-1]["questions"] += 1
            run.questions.append(variable.label)
            snapshot()
            continue
        result, _, _ = session.predicted_output()
        run.segments[-1]["shown_among"] = valid_outputs(session)
        if simulated.accepts(result):
            run.success, run.end = True, "accepted"
            break
        run.turns += 1
        run.rejections += 1
        run.end = "rejected"
        if repair == "none" or run.turns >= max_turns:
            run.silent_failure = repair == "none"
            break
        rejected.append(output_key(result) if result is not None else "error")
        before = (session.pool.n, session.alive.copy())
        try:
            outcomes = _repair(session, rejected, repair, resampler)
        except SessionError:
            outcomes = []
        run.repair_rounds += 1
        run.added += sum(len(o.added) for o in outcomes)
        run.new_outputs += sum(int(o.new_outputs) for o in outcomes)
        run.llm_requests += sum(o.requests for o in outcomes)
        run.llm_usd += sum(o.usd for o in outcomes)
        if not present["ever"] and simulated.realised:
            present["ever"] = present["added"] = True
        snapshot()
        unchanged = session.pool.n == before[0] and np.array_equal(session.alive, before[1])
        if unchanged or not session.alive.any():
            run.silent_failure = True  # repair found nothing new: nothing left to ask or show
            break
        run.segments.append(segment_record(session.pool, session.alive, simulated.target_key))
    run.reach_zero = run.entropy[-1] <= 1e-12
    if not run.success:
        run.cause, run.missing = failure_cause(run, session, simulated, present)
    return run


def failure_cause(run: Run, session: RepairSession, user: Any, present: dict[str, bool]
                  ) -> tuple[str, list[str]]:
    """Why a failed run failed (a key of :data:`core.evaluation.causes.CAUSES`) and the target's clauses that no
    candidate of the session's final pool has (the pieces repair would need)."""
    have = {f.key for f in session.pool.vocabulary}
    missing = missing_pieces(user.target.own_keys, have, session.pool.dialect)
    if (user.realisers & session.alive).any() and run.end == "budget":
        return "alive-at-budget", missing
    if run.lost_by:
        return ("added-then-answered-away" if present["added"] else "answered-away"), missing
    if not present["ever"]:
        return ("needs-clause" if missing else "never-produced"), missing
    return "other", missing


def evaluate(pools: list[tuple[PreparedPool, str]], strategies: tuple[str, ...] = ALL_STRATEGIES,
             progress: Progress | None = None, *, users: tuple[str, ...] = USERS,
             populations: tuple[str, ...] = (DEFAULT_POPULATION,), repair: str = "none",
             schemas: list[dict[str, list[str]]] | None = None, conjuncts: bool = False,
             max_turns: int = MAX_TURNS, databases: list[Any] | None = None,
             vocabularies: tuple[tuple[str, bool], ...] = (("clauses", False),),
             look: str = DEFAULT_LOOK, resampling: Resampling | None = None
             ) -> tuple[list[Run], list[dict]]:
    """All runs over (pool, ambiguity) pairs, and the unrealised (task, gold) pairs with reasons.

    ``databases`` (one DatabaseSpec per pool) are needed for repair; each is opened once.
    ``vocabularies`` are (questions, values) settings; with several, each run's ``label`` is
    its strategy and vocabulary. ``look``: when the user judges the predicted output.
    ``resampling``: how the model is asked when ``repair`` resamples.
    """
    runs: list[Run] = []
    unrealised: list[dict] = []
    if "resample" in repair and resampling is None:
        raise ValueError(f"repair {repair!r} needs resampling settings (Resampling)")
    resampler = make_resampler(resampling) if resampling is not None and "resample" in repair \
        else None
    for t, (pool, ambiguity) in enumerate(pools):
        db = open_database(databases[t]) if databases and repair != "none" else None
        try:
            runs.extend(_task_runs(pool, ambiguity, strategies, users, populations, repair,
                                   schemas[t] if schemas else None, conjuncts, max_turns, db,
                                   vocabularies, look, resampler))
        finally:
            if db is not None:
                db.close()
        for g, res in enumerate(pool.gold_results):
            key = output_key(res)
            if key == "error" or key not in pool.class_keys:
                unrealised.append({"task": pool.task_id, "gold": g, "ambiguity": ambiguity,
                                   "reason": f"gold fails: {res.error}" if not res.ok
                                   else "no candidate realises its output"})
        if progress:
            progress.advance(pool.task_id)
    return runs, unrealised


def _task_runs(pool: PreparedPool, ambiguity: str, strategies: tuple[str, ...],
               users: tuple[str, ...], populations: tuple[str, ...], repair: str,
               schema: dict[str, list[str]] | None, conjuncts: bool, max_turns: int,
               db: TaskDatabase | None,
               vocabularies: tuple[tuple[str, bool], ...] = (("clauses", False),),
               look: str = DEFAULT_LOOK, resampler: Resampler | None = None) -> list[Run]:
    """Every (population target, strategy, vocabulary, user) run of one task."""
    runs = []
    floor = huffman_floor(pool)
    tree = vocabulary_floor(pool) if "prior" in populations else None
    cache: dict = {"pool": pool}
    derived = "realised" in populations and "all" in populations
    for population in populations:
        if population == "realised" and derived:
            continue  # the realised runs are the 'all' runs whose gold some candidate produces
        for target in targets(pool, population, schema, conjuncts=conjuncts):
            for k, strategy in enumerate(strategies):
                for questions, values in vocabularies:
                    label = config_label(strategy, questions, values, vocabularies)
                    for user in users:
                        run = simulate(pool, target, strategy, ambiguity,
                                       random_state=target.index * 31 + k, user=user,
                                       repair=repair, population=population,
                                       max_turns=max_turns, database=db, cache=cache,
                                       questions=questions, values=values, label=label,
                                       look=look, resampler=resampler)
                        if population == "prior" and tree is not None:
                            run.floor, run.tree_floor = floor, tree.expected
                            run.tree_exact = tree.exact
                        runs.append(run)
                        if population == "all" and derived and run.realised:
                            runs.append(dataclasses.replace(run, population="realised"))
    return runs


def config_label(strategy: str, questions: str, values: bool,
                 vocabularies: tuple[tuple[str, bool], ...]) -> str:
    """A run's row name: the strategy, and its vocabulary when several are compared."""
    if len(vocabularies) == 1 and vocabularies[0] == ("clauses", False):
        return strategy
    return f"{strategy} {vocabulary_label(questions, values)}"


def _open(task: Any) -> tuple[TaskDatabase, dict[str, list[str]]]:
    db = open_database(task.database)
    return db, db.schema()


def _serial(tasks: list[Any], strategies: tuple[str, ...], progress: Progress,
            args: argparse.Namespace, vocabularies: tuple[tuple[str, bool], ...],
            resampling: Resampling | None = None) -> tuple[list[Run], list[dict]]:
    """Prepare every task's pool, then evaluate them all in this process (``--jobs 1``)."""
    pools, schemas = [], []
    for t in tasks:
        db, schema = _open(t)
        try:
            pools.append((prepare_pool(t, db=db, layout=False, conjuncts=args.conjuncts),
                          t.ambiguity))
        finally:
            db.close()
        schemas.append(schema)
    return evaluate(pools, strategies, progress, populations=tuple(args.population),
                    repair=args.repair, schemas=schemas, conjuncts=args.conjuncts,
                    max_turns=args.budget, databases=[t.database for t in tasks],
                    vocabularies=vocabularies, look=args.look, resampling=resampling)


def main(argv: list[str] | None = None) -> int:
    from core.evaluation.report import (
        format_causes,
        format_per_gold,
        format_per_task,
        format_table,
        report,
    )

    parser = argparse.ArgumentParser(prog="python -m core.evaluate",
                                     description="Simulated-user evaluation of §7.")
    parser.add_argument("banks", nargs="+", help="task banks (JSON Lines)")
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
    parser.add_argument("--user", default=DEFAULT_USER, choices=USERS,
                        help="headline user (both always run and are printed side by side)")
    parser.add_argument("--population", nargs="+", default=[DEFAULT_POPULATION],
                        choices=POPULATIONS)
    parser.add_argument("--repair", default=DEFAULT_REPAIR, choices=REPAIRS,
                        help="after a rejected output: none, recompose (offline), resample "
                        "(the model is asked again with the decisions so far; needs "
                        "ANTHROPIC_API_KEY), or recompose+resample (both each round)")
    add_resample_arguments(parser)
    parser.add_argument("--budget", type=int, default=MAX_TURNS, help="turns per session")
    parser.add_argument("--json", help="write runs and summary as JSON here")
    parser.add_argument("--plot", help="write the Figure-5 style plot (PNG) here, one per user")
    parser.add_argument("--limit", type=int, help="only the first N tasks of each bank")
    parser.add_argument("--per-gold", action="store_true",
                        help="also list every gold: its class's Huffman depth, both outcomes")
    parser.add_argument("--per-task", action="store_true",
                        help="for prior, also list every task: Huffman floor, tree floor (best "
                        "tree over the pool's own questions), each strategy's turns and ratios")
    parser.add_argument("--conjuncts", action="store_true",
                        help="also use WHERE conjuncts as atomic features")
    parser.add_argument("--jobs", type=int, default=1,
                        help="evaluate tasks in N processes (same output as 1)")
    parser.add_argument("--questions", nargs="+", default=[DEFAULT_QUESTIONS], choices=QUESTIONS,
                        help="question vocabularies: clauses (the paper), outputs (questions "
                        "about the answer), mixed, hybrid (clauses until an output is "
                        "rejected, then mixed); several are compared side by side")
    parser.add_argument("--values", nargs="+", default=["on" if DEFAULT_VALUES else "off"],
                        choices=VALUES, help="value questions ('should X be in the answer?') "
                        "with outputs/mixed: off, on, or both compared")
    parser.add_argument("--look", default=DEFAULT_LOOK, choices=LOOKS,
                        help="when the user judges the predicted output: end (when one output "
                        "is left, the paper) or each (before every question too, accepting it "
                        "as soon as it is theirs, as the workspace shows it at every step)")
    parser.add_argument("--causes", action="store_true",
                        help="classify every failed task×gold pair of the honest user and "
                        "print the counts per configuration (and each pair)")
    parser.add_argument("--bound", action="store_true",
                        help="print the segment floor of the honest all-pairs runs: the same "
                        "pools, repair rounds and rejections, each segment's questions at the "
                        "Huffman floor of its start state (core.evaluation.bound)")
    args = parser.parse_args(argv)
    strategies = tuple(args.strategies)
    resampling = resampling_from_args(parser, args)
    tasks = []
    for bank in args.banks:
        loaded = load_tasks(bank)
        tasks.extend(loaded[: args.limit] if args.limit else loaded)
    progress = Progress(len(tasks), "evaluate")
    vocabularies = tuple(dict.fromkeys(
        (q, v == "on" and q != "clauses") for q in args.questions for v in args.values))
    try:
        if args.jobs > 1:
            from core.evaluation.parallel import evaluate_tasks

            runs, unrealised = evaluate_tasks(
                tasks, args.jobs, evaluate, progress, strategies=strategies,
                populations=tuple(args.population), repair=args.repair,
                conjuncts=args.conjuncts, max_turns=args.budget, vocabularies=vocabularies,
                look=args.look, resampling=resampling)
        else:
            runs, unrealised = _serial(tasks, strategies, progress, args, vocabularies,
                                       resampling)
    except GenerationError as exc:  # resampling could not ask the model: no figure is printed
        progress.close()
        print(f"python -m core.evaluate: resampling stopped: {exc}\nRounds sampled so far are "
              "in the pool cache: the same command resumes from them.", file=sys.stderr)
        return 1
    progress.close()
    labels = tuple(config_label(s, q, v, vocabularies) for s in strategies
                   for q, v in vocabularies)
    repair = args.repair + (f" ({resampling.label()})" if resampling is not None else "")
    summary = report(runs, unrealised, labels, headline=args.user, repair=repair,
                     budget=args.budget, look=args.look)
    print(format_table(summary, labels))
    if resampling is not None:
        print(f"resampling: {sum(r.llm_requests for r in runs)} requests sent, "
              f"~${sum(r.llm_usd for r in runs):.2f} estimated ({resampling.label()}; "
              "rounds read from the pool cache send none)")
    if args.per_gold and any(p != "prior" for p in args.population):
        print()
        print(format_per_gold(runs, labels[0]))
    if args.causes:
        print()
        print(format_causes(runs, labels))
    if args.bound:
        for s in labels:
            print()
            print(format_bound([asdict(r) for r in runs if r.population == "all"
                                and r.user == "gold-features" and r.label == s], s,
                               args.budget))
    if args.per_task and "prior" in args.population:
        print()
        print(format_per_task(runs, labels))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary,
                                               "runs": [asdict(r) for r in runs]}, indent=1))
    if args.plot:
        from core.evaluation.plot import plot_per_user

        for path in plot_per_user(summary, labels, args.plot, headline=args.user):
            print(f"plot written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
