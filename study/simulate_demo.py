"""Simulate N participants through a study so every analysis view has something to read.

``python -m study.simulate_demo [--participants N] [--db URL] [--study film | path] [--seed S]``

Writes into its own demo database (``logs/demo.sqlite``) unless ``--db`` names another one, and
refuses the live study database. Each participant consents, answers the demographics, solves the
tasks in the assigned order with their subtasks and fills in the end questionnaires. Subtask 3
is navigated by :class:`core.evaluation.simulate.SimulatedUser` in the participant's preferred
workflow — W1 decision-based (Decision Space), W2 selection-based (Predicted Query clauses), W3
output inspection (outputs, lasso or cluster) — or a mixture of two, sometimes in another one
for a task. Some wrong answers are kept (partial solutions), some tasks end without a submission,
some participants leave before the end; SUS answers vary with each participant's attitude.
Times come from an injected clock advanced by lognormal think times. Participants are stored
with ``simulated = true`` (the Analysis page has a checkbox to include them).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.errors import SessionError
from core.engine.pool import PreparedPool
from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from core.evaluation.simulate import SimulatedUser
from core.settings import BUILTIN_STUDIES, DEMO_DB_URL_ENV, demo_db_url
from study.assignment import assign_participant
from study.questionnaires import Questionnaire
from study.registry import find, scan
from study.spec import StudySpec, StudySpecError, load_study
from study.store import Store, default_url, open_store
from study.trace import log_event

DEFAULT_STUDY = BUILTIN_STUDIES / "film" / "study.yaml"
START_MS = 1_750_000_000_000
STYLES = ("W1", "W2", "W3", "W1+W2", "W3+W1", "W2+W3")
GIVE_UP, EARLY, KEEP_WRONG, LEAVE_EVERY = 0.1, 0.2, 0.5, 7  # no submit; submit before done;
# a wrong answer kept; every LEAVE_EVERY-th participant leaves early


class SimClock:
    """An injected clock (epoch seconds, as log_event expects) advanced by think times."""

    def __init__(self, start_ms: int, rng: np.random.Generator):
        self.ms, self.rng = start_ms, rng

    def __call__(self) -> float:
        return self.ms / 1000

    def think(self, median_s: float, sigma: float = 0.5) -> None:
        """Advance by a lognormal think time with the given median (seconds)."""
        self.ms += int(1000 * self.rng.lognormal(np.log(median_s), sigma))


@dataclass(frozen=True)
class _Keys:
    """A feature-key tuple shaped like a RankedVariable for SimulatedUser.answer."""

    keys: tuple[str, ...]


def _likert(rng: np.random.Generator, centre: float, points: int) -> int:
    """A plausible Likert answer around ``centre`` on a 1..points scale."""
    return int(np.clip(round(rng.normal(centre, 1.0)), 1, points))


def _answers_for(q: Questionnaire, rng: np.random.Generator,
                 attitude: float = 0.0) -> dict[str, Any]:
    """Plausible answers shifted by ``attitude`` (-1 sceptical .. +1 keen): SUS positive on odd
    and negative on even items, reverse-coded items low."""
    out: dict[str, Any] = {}
    for it in q.items:
        if it.kind == "likert":
            shift = attitude * 0.3 * it.points
            high = 0.7 * it.points + shift
            low = 0.4 * it.points - shift
            if it.id.startswith("sus"):
                centre = high if int(it.id[3:]) % 2 == 1 else low
            else:
                centre = low if it.reverse else high
            out[it.id] = _likert(rng, centre, it.points)
        elif it.kind == "choice":
            out[it.id] = str(rng.choice(list(it.options)))
        elif it.kind == "number":
            out[it.id] = int(rng.integers(22, 35))
        else:
            out[it.id] = str(rng.choice(["The clusters of outputs.", "Fewer clicks.", ""]))
    return out


class _Participant:
    """One simulated participant: logs events through the store with the injected clock."""

    def __init__(self, store: Store, spec: StudySpec, pools: dict[str, PreparedPool],
                 clock: SimClock, rng: np.random.Generator, style: str, error_rate: float,
                 leaves_after: int | None = None):
        self.store, self.spec, self.pools, self.clock, self.rng = store, spec, pools, clock, rng
        self.style, self.error_rate, self.leaves_after = style, error_rate, leaves_after
        self.attitude = float(rng.uniform(-1, 1))
        self.a = assign_participant(store, spec, now=clock.ms, simulated=True)
        self.pid = self.a.participant
        self.sid = store.start_session(self.pid, spec.id, clock.ms)
        self.condition = self.a.condition
        self.log = functools.partial(log_event, store, session_id=self.sid, participant=self.pid,
                                     study=spec.id, clock=clock)

    def event(self, type: str, payload: dict[str, Any] | None = None, task: str = "",
              subtask: str = "", think: float = 2.0) -> None:
        """Think, then log one event in the current condition."""
        self.clock.think(think)
        self.log(type=type, payload=payload or {}, condition=self.condition, task=task,
                 subtask=subtask)

    def answer(self, item: str, value: Any, task: str = "", subtask: str = "") -> None:
        """Store an answer and log it."""
        self.store.put_answer(self.pid, item, value, self.clock.ms, study=self.spec.id)
        self.event("answer", {"item": item, "value": value}, task, subtask, think=1.0)

    def questionnaires(self, when: str) -> None:
        """Fill in every questionnaire shown at ``when``."""
        for q in self.spec.questionnaires:
            if q.when != when:
                continue
            self.event("step", {"step": f"questionnaire:{q.id}"})
            for item, value in _answers_for(q, self.rng, self.attitude).items():
                self.answer(f"{q.id}/{item}", value)

    def run(self) -> str:
        """The whole session; returns the participant's pseudonym."""
        self.event("session.start", {"resumed": False})
        self.event("step", {"step": "consent"})
        self.event("consent", {"given": True}, think=20)
        self.questionnaires("start")
        subtasks = {t.id: [s for s, _ in t.subtasks] for t in self.spec.tasks}
        done = 0
        for cond, tasks in self.a.blocks():
            self.condition = cond
            for task in tasks:
                if self.leaves_after is not None and done >= self.leaves_after:
                    self.event("session.end", {"status": "abandoned"}, think=60)
                    self.store.set_status(self.pid, "abandoned", self.clock.ms)
                    return self.pid
                self.task(task, subtasks[task])
                done += 1
        self.questionnaires("end")
        self.store.completion_code(self.pid, self.clock.ms)
        self.event("session.end", {"status": "completed"})
        self.store.set_status(self.pid, "completed", self.clock.ms)
        return self.pid

    def task(self, task: str, subs: list[str]) -> None:
        """One task: pool, task timer, subtasks in order."""
        pool = self.pools[task]
        gold = int(self.rng.integers(len(pool.gold_sqls))) if pool.gold_sqls else 0
        self.event("pool.init", {"n_candidates": pool.n, "key": task}, task)
        self.event("timer.start", {}, task, think=1)
        session = RepairSession(pool)
        for sub in subs:
            self.event("step", {"step": f"task:{task}/{sub}"}, task, sub, think=1)
            self.event("timer.start", {}, task, sub, think=0.5)
            if sub == "1":
                self.clock.think(30)
                self.answer(f"task:{task}/1", {"text": f"reading {gold}", "gold": gold},
                            task, sub)
            elif sub in ("2a", "2b"):
                for c in self.rng.choice(pool.n, size=3, replace=False):
                    kind = "space.hover" if sub == "2a" else "dv.browse"
                    self.event(kind, {"candidate_id": int(c)}, task, sub, think=4)
                self.event("output.view", {"candidate_id": int(c)}, task, sub, think=5)
                self.answer(f"task:{task}/{sub}", f"clusters differ ({sub})", task, sub)
            else:
                self.navigate(session, gold, task, sub)
            if self.rng.random() < 0.15:
                self.event("marker", {"label": "confused"}, task, sub)
            self.event("timer.stop", {}, task, sub, think=1)
        self.event("timer.stop", {}, task, think=0.5)

    def _decide(self, s: RepairSession, task: str, sub: str, type: str, payload: dict[str, Any],
                apply: Any) -> bool:
        """Apply a decision to the session and log it with survivor counts."""
        before = len(s.survivors)
        try:
            apply()
        except SessionError:
            return False
        payload.update(step=s.step, survivors_before=before, survivors_after=len(s.survivors))
        self.event(type, payload, task, sub, think=8)
        return True

    def _style(self) -> str:
        """This task's workflow: mostly the participant's own, sometimes another one."""
        return self.style if self.rng.random() < 0.75 else str(self.rng.choice(STYLES))

    def _outputs(self, s: RepairSession, user: SimulatedUser, task: str, sub: str) -> None:
        """W3: look at a few outputs, then keep the queries (or cluster) whose output fits."""
        alive = np.flatnonzero(s.alive)
        for c in self.rng.choice(alive, size=min(3, len(alive)), replace=False):
            self.event("output.view", {"candidate_id": int(c)}, task, sub, think=6)
        fits = np.flatnonzero(s.alive & user.realisers).tolist()
        if not fits:
            return
        gesture = "cluster" if self.rng.random() < 0.4 else "lasso"
        self._decide(s, task, sub, f"space.{gesture}", {"candidates": fits},
                     lambda: s.restrict(fits, gesture))

    def _clauses(self, s: RepairSession, user: SimulatedUser, task: str, sub: str,
                 budget: int) -> None:
        """W2: Yes/No on single Predicted Query clauses, the most uncertain first."""
        tried: set[str] = set()
        for _ in range(budget):
            open_ = [b.feature.key for b in s.predicted_query()
                     if not b.determined and b.feature.key not in tried]
            if s.is_done or not open_:
                return
            key = open_[0]
            tried.add(key)
            yes = user.answer(_Keys((key,)))  # type: ignore[arg-type]
            self._decide(s, task, sub, "clause.accept" if yes else "clause.reject",
                         {"feature": key, "features": [key]},
                         lambda k=key, y=yes: s.answer_feature(k, y))

    def _decisions(self, s: RepairSession, user: SimulatedUser, task: str, sub: str,
                   budget: int) -> None:
        """W1: Yes/No in the Decision Space; a wrong answer is taken back or (partial) kept."""
        for _ in range(budget):
            v = s.next_variable()
            if v is None:
                return
            yes = user.answer(v)
            wrong = self.rng.random() < self.error_rate
            ok = self._decide(s, task, sub, "dv.accept" if yes != wrong else "dv.reject",
                              {"features": list(v.keys), "rank": 0, "gain": round(v.gain, 6)},
                              lambda v=v, y=(yes != wrong): s.answer(v.keys, y))
            if ok and wrong and self.rng.random() > KEEP_WRONG:
                self._decide(s, task, sub, "undo", {}, s.undo)

    def navigate(self, s: RepairSession, gold: int, task: str, sub: str) -> None:
        """Subtask 3 in this task's workflow (or a mixture), then submit — or give up."""
        user = SimulatedUser(s, gold)
        steps = {"W1": lambda b: self._decisions(s, user, task, sub, b),
                 "W2": lambda b: self._clauses(s, user, task, sub, b),
                 "W3": lambda b: self._outputs(s, user, task, sub)}
        parts = self._style().split("+")
        last = 1 if self.rng.random() < EARLY else 25  # early: submits before it is settled
        for i, part in enumerate(parts):
            steps[part](3 if i < len(parts) - 1 else last)
        if len(parts) == 1 and last > 1 and not s.is_done:  # a few decisions more
            self._decisions(s, user, task, sub, 3)
        if self.rng.random() < GIVE_UP:
            self.event("marker", {"label": "gave up", "by": "facilitator"}, task, sub, think=20)
            return
        chosen = s.best_candidate()
        self.event("submit", {"candidate": chosen, "sql": s.pool.sqls[chosen] if chosen is not
                              None else "", "step": s.step, "survivors": len(s.survivors),
                              "done": s.is_done}, task, sub, think=5)


def resolve_study(study: str | Path) -> StudySpec:
    """A study by id (any file name under studies/) or by the path of its file."""
    entry = find(str(study)) if not Path(study).suffix else None
    if entry is not None and entry.spec is not None:
        return entry.spec
    return load_study(study)


def simulate_participants(store: Store, n: int, *, study: str | Path = DEFAULT_STUDY,
                          seed: int = 0, error_rate: float = 0.15,
                          on_progress: Callable[[int, int], None] | None = None) -> list[str]:
    """Simulate ``n`` participants into ``store``; returns their pseudonyms (``on_progress``
    hears (done, n) after each, for the Analysis page's button)."""
    spec = resolve_study(study)
    if spec.task_bank is None:
        raise ValueError(f"{spec.path} names no task bank; simulation needs candidate pools")
    tasks, _ = load_task_bank(spec.task_bank, lenient=True)
    by_id = {t.id: t for t in tasks}
    pools = {tid: load_prepared(by_id[tid], default_pool_dir(spec.task_bank))
             for tid in spec.task_ids}
    out = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        clock = SimClock(START_MS + 3_600_000 * i + 1000 * seed, rng)
        leaves = int(rng.integers(1, max(2, len(spec.tasks)))) if i % LEAVE_EVERY == \
            LEAVE_EVERY - 1 else None
        p = _Participant(store, spec, pools, clock, rng, STYLES[i % len(STYLES)], error_rate,
                         leaves)
        out.append(p.run())
        if on_progress:
            on_progress(i + 1, n)
    return out


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m study.simulate_demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--participants", type=int, default=12)
    ap.add_argument("--db", default=demo_db_url(), help=f"demo database URL (default: "
                    f"${DEMO_DB_URL_ENV} or logs/demo.sqlite; the live study database is refused)")
    ap.add_argument("--study", default="film", help="study id or study file (default: film)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.db == default_url():
        ap.error(f"{args.db} is the live study database; simulate into a demo database "
                 "(the default, logs/demo.sqlite) instead")
    try:
        resolve_study(args.study)
    except StudySpecError as exc:
        ap.error(f"--study {args.study}: {exc.problems[0].message}; give a study id "
                 f"({', '.join(sorted(scan()))}) or the path of a study file")
    store = open_store(args.db)
    ids = simulate_participants(store, args.participants, study=args.study, seed=args.seed)
    print(f"simulated {len(ids)} participants into {store.url} (flagged as simulated); "
          "open Analysis, choose the demo database and tick 'Include simulated participants'")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
