"""Simulate N participants through a study so the dashboard has data on a fresh machine.

``python -m study.simulate_demo --participants N [--db URL] [--study studies/film/study.yaml]
[--seed S]``

Each participant consents, answers the demographics, solves the tasks in the assigned order
with their subtasks (subtask 3 navigated by :class:`core.evaluation.simulate.SimulatedUser` in one of the
paper's workflows W1/W2/W3, with an occasional wrong answer taken back), and fills in the end
questionnaires with plausible answers. Times come from an injected clock advanced by lognormal
think times. Participants are stored with ``simulated = true``, which analyses exclude by default.
"""

from __future__ import annotations

import argparse
import functools
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
from study.assignment import assign_participant
from study.questionnaires import Questionnaire
from study.spec import StudySpec, load_study
from study.store import REPO_ROOT, Store, open_store
from study.trace import log_event

DEFAULT_STUDY = REPO_ROOT / "studies" / "film" / "study.yaml"
START_MS = 1_750_000_000_000
STYLES = ("W1", "W2", "W3")


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


def _answers_for(q: Questionnaire, rng: np.random.Generator) -> dict[str, Any]:
    """Plausible answers: SUS positive on odd and low on even items; effort items low."""
    out: dict[str, Any] = {}
    for it in q.items:
        if it.kind == "likert":
            high = 0.75 * it.points
            low = 0.4 * it.points
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
                 clock: SimClock, rng: np.random.Generator, style: str, error_rate: float):
        self.store, self.spec, self.pools, self.clock, self.rng = store, spec, pools, clock, rng
        self.style, self.error_rate = style, error_rate
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
            for item, value in _answers_for(q, self.rng).items():
                self.answer(f"{q.id}/{item}", value)

    def run(self) -> str:
        """The whole session; returns the participant's pseudonym."""
        self.event("session.start", {"resumed": False})
        self.event("step", {"step": "consent"})
        self.event("consent", {"given": True}, think=20)
        self.questionnaires("start")
        subtasks = {t.id: [s for s, _ in t.subtasks] for t in self.spec.tasks}
        for cond, tasks in self.a.blocks():
            self.condition = cond
            for task in tasks:
                self.task(task, subtasks[task])
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

    def navigate(self, s: RepairSession, gold: int, task: str, sub: str) -> None:
        """Subtask 3 in the participant's workflow style, then submit."""
        user = SimulatedUser(s, gold)
        if self.style == "W3" and (s.alive & user.realisers).any():
            ids = np.flatnonzero(s.alive & user.realisers).tolist()
            self._decide(s, task, sub, "space.lasso", {"candidates": ids},
                         lambda: s.restrict(ids, "lasso"))
            self.event("output.view", {"candidate_id": ids[0]}, task, sub, think=6)
        tried: set[str] = set()
        for _ in range(25 if self.style == "W2" else 0):
            open_ = [b.feature.key for b in s.predicted_query()
                     if not b.determined and b.feature.key not in tried]
            if s.is_done or not open_:
                break
            key = open_[0]
            tried.add(key)
            yes = user.answer(_Keys((key,)))  # type: ignore[arg-type]
            self._decide(s, task, sub, "clause.accept" if yes else "clause.reject",
                         {"feature": key, "features": [key]},
                         lambda k=key, y=yes: s.answer_feature(k, y))
        for _ in range(20):
            v = s.next_variable()
            if v is None:
                break
            yes = user.answer(v)
            wrong = self.rng.random() < self.error_rate
            ok = self._decide(s, task, sub, "dv.accept" if yes != wrong else "dv.reject",
                              {"features": list(v.keys), "rank": 0, "gain": round(v.gain, 6)},
                              lambda v=v, y=(yes != wrong): s.answer(v.keys, y))
            if ok and wrong:
                self._decide(s, task, sub, "undo", {}, s.undo)
        chosen = s.best_candidate()
        self.event("submit", {"candidate": chosen, "sql": s.pool.sqls[chosen] if chosen is not
                              None else "", "step": s.step, "survivors": len(s.survivors),
                              "done": s.is_done}, task, sub, think=5)


def simulate_participants(store: Store, n: int, *, study: str | Path = DEFAULT_STUDY,
                          seed: int = 0, error_rate: float = 0.1) -> list[str]:
    """Simulate ``n`` participants into ``store``; returns their pseudonyms."""
    spec = load_study(study)
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
        p = _Participant(store, spec, pools, clock, rng, STYLES[i % len(STYLES)], error_rate)
        out.append(p.run())
    return out


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m study.simulate_demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--participants", type=int, required=True)
    ap.add_argument("--db", help="study database URL (default: $PLEASQLARIFY_DB_URL or "
                    "logs/study.sqlite)")
    ap.add_argument("--study", default=str(DEFAULT_STUDY))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    store = open_store(args.db)
    ids = simulate_participants(store, args.participants, study=args.study, seed=args.seed)
    print(f"simulated {len(ids)} participants into {store.url} (flagged as simulated)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
