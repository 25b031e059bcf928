"""A repair session that no sequence of gestures can break (issue 21): a Hypothesis
RuleBasedStateMachine drives the real engine through the workspace's gesture functions
(:mod:`ui.actions`) on film pools and AMBROSIA dev pools (4 to 32 candidates, some invalid).

Rules: Yes/No on the shown decision variable (with the speculated next state computed first, as
the workspace does), Yes/No on one clause, Previous/Next, lasso / box / click / cluster
selections (stale ids included), accept the shown output, No to it and None of these (with
recomposition, or with repair off; recomposition runs off the script thread as in the
workspace, and a rule lets it land), Back (the user's gesture), the engine's one-decision undo,
a reload, and submit — also while a repair search runs (Back drops it, a reload starts it again,
every other gesture is refused and changes nothing). After every step: every derived view has the pool's current size; serialise →
load gives the same workspace; a speculated Yes/No state equals the rerun's. Back restores
exactly the state before the gesture. At the end of each sequence the trace replays to every
recorded intermediate state and the workflow coder counts every gesture. A rule reads the
state: the repair a None of these would start is speculated (changing nothing seen), computed,
left running or dropped; a press adopts it only for its very rejection, and what lands equals
the round run in place. The number of sequences and steps explored is written to
test-artifacts/session-machine.json and shown in pytest's terminal summary.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from core.engine import answers
from core.engine.answers import asked_vocabulary, is_answer
from core.engine.pool import PreparedPool, prepare_pool
from core.engine.prepare import default_pool_dir, load_prepared, with_first_round
from core.engine.repair import ANSWERED_AWAY_PRIOR, answered_away, recompose
from core.engine.session import Decision, RepairSession
from core.engine.strategy import WORKSPACE_DEFAULT
from core.engine.taskbank import Candidate, load_task_bank
from study.analysis import workflows as W
from study.analysis.data import StudyData
from study.analysis.replay import DECISION_TYPES, failure, mismatches, replay
from study.store import REPO_ROOT
from study.trace import Event
from tests.conftest_core import FILM_BANK, dev_tasks
from ui import actions, optimistic
from ui.action_space import REPAIR_ORIGINS, clusters, contains_mask, space_spec
from ui.state import WorkspaceOptions, WorkspaceState
from ui.views import current_variable, decisions_html, panel_views

FILM = ("film-departed-makers", "film-practice-tarantino")
# AMBROSIA dev tasks by index: 4 candidates, 9 (one invalid), 15, and 30 plus two invalid ones
DEV = (4, 55, 13, 8)
BROKEN = ("SELECT * FROM no_such_table_21", "SELECT no_such_column_21 FROM no_such_table_21")
STATS: dict[str, Any] = {"sequences": 0, "steps": 0, "by_rule": {}, "seconds": 0.0}
ARTIFACT = REPO_ROOT / "test-artifacts" / "session-machine.json"
OPTIONS = WorkspaceOptions()
# the workspace's default first (WORKSPACE_DEFAULT: what shrinking falls back to), then the
# engine's planned default and one that ranks by the paper's information gain
STRATEGY_CHOICES = ("expected-depth", "planned", "cluster-grouped")
# hybrid first (the workspace default: clauses until an output is rejected, then questions
# about the answer; Back over the rejection returns to clauses), then the paper's clauses
VOCABULARY_CHOICES = ("hybrid", "clauses")
# SESSION_MACHINE_NO_SHRINK=1 reports a failing sequence as found (shrinking one can take
# minutes here: every step runs the engine)
PHASES = [Phase.generate] if os.environ.get("SESSION_MACHINE_NO_SHRINK") else list(Phase)
# SESSION_MACHINE_EXAMPLES=200 explores more sequences per family in a local run (with
# pytest's --hypothesis-seed=N for other ones); CI keeps the default
EXAMPLES = int(os.environ.get("SESSION_MACHINE_EXAMPLES") or 20)


@cache
def film_pool(task_id: str) -> PreparedPool:
    """A shipped film pool (with its layout and database), loaded once per process."""
    tasks, _ = load_task_bank(FILM_BANK)
    return load_prepared(next(t for t in tasks if t.id == task_id), default_pool_dir(FILM_BANK))


@cache
def dev_pool(i: int) -> PreparedPool:
    """An AMBROSIA dev pool without layout; task 8 gets two candidates that fail to run.
    Tasks 55 and 8 carry their first repair round, as a prepared pool file does; 4 and 13
    compute it like a pool prepared before rounds were stored."""
    task = dev_tasks()[i]
    if i == 8:
        task = dataclasses.replace(task, candidates=[*task.candidates,
                                                     *(Candidate(s, 1) for s in BROKEN)])
    pool = prepare_pool(task, layout=False)
    return with_first_round(pool) if i in (55, 8) else pool


def fresh(ws: WorkspaceState) -> WorkspaceState:
    """The workspace as a new render would draw it (top variable, no one-off flags)."""
    return WorkspaceState(ws.session, ws.question)


def observe(ws: WorkspaceState) -> dict[str, Any]:
    """Everything the participant sees of the state: every panel's data, the pool size
    shown, the starred glyphs, the survivors and the next question."""
    s = ws.session
    view = fresh(ws)
    spec = space_spec(s, current_variable(view))
    nxt = s.next_variable()
    return {"pool": s.pool.n, "survivors": s.survivors.tolist(),
            "stars": [g["id"] for g in spec["glyphs"] if g["new"]],
            "next": nxt.keys if nxt else None, "best": s.best_candidate(),
            "panels": panel_views(view, show_action_space=True, show_decision_space=True,
                                  hover=True)}


def check_sizes(ws: WorkspaceState) -> None:
    """Every derived view has the current pool's size (the class of bug of issue 21)."""
    s = ws.session
    n, surv = s.pool.n, s.survivors.tolist()
    assert len(s.alive) == n and all(0 <= i < n for i in surv)
    assert len(s.clusters()) == len(surv)
    infos = clusters(s)
    assert sorted(i for c in infos for i in c.members) == surv
    variable = current_variable(ws)
    assert len(contains_mask(s, variable)) == n
    spec = space_spec(s, variable)
    assert [g["id"] for g in spec["glyphs"]] == surv and len(spec["dead"]) == n - len(surv)
    origins = s.pool.origins or []
    assert all(g["new"] == (origins[g["id"]] in REPAIR_ORIGINS) for g in spec["glyphs"])
    for v in s.variables():
        assert 0 <= v.example < n and s.alive[v.example]
        assert v.yes_count + v.no_count == len(surv)
    beliefs = s.predicted_query()
    assert all(0 < b.probability <= 1 + 1e-9 for b in beliefs)
    result, share, count = s.predicted_output()
    assert count <= len(surv) and (result is None or 0 < share <= 1 + 1e-9)
    best = s.best_candidate()
    assert best is None or s.alive[best]
    assert len(s.survivors_per_step()) == s.step
    assert decisions_html(s).count(" left</small>") == s.step
    panels = panel_views(ws, show_action_space=True, show_decision_space=True, hover=True)
    summary = next(p["summary"] for p in panels.values() if "summary" in p)
    assert f"<b>{len(surv)}</b> of {n} queries remain" in summary


class SessionMachine(RuleBasedStateMachine):
    """One participant's workspace on one pool, driven gesture by gesture."""

    pools: tuple[Any, ...] = ()  # set per pool family below

    def __init__(self) -> None:
        super().__init__()
        self.ws: WorkspaceState | None = None
        self.events: list[tuple[str, dict[str, Any]]] = []
        # (pool size, survivors, next question, best candidate) after each decision event
        self.recorded: list[tuple[int, tuple[int, ...], str, int | None]] = []
        self.snaps: list[dict[str, Any] | None] = []  # observable state after k decisions
        self.serialised = ""  # the history last checked by serialise → load
        self.press = ("none", "recompose")  # the last No / None of these and its repair method

    # --- set-up and bookkeeping ------------------------------------------------------------
    @initialize(which=st.integers(0, 3), strategy=st.sampled_from(STRATEGY_CHOICES),
                questions=st.sampled_from(VOCABULARY_CHOICES))
    def start(self, which: int, strategy: str, questions: str) -> None:
        load = self.pools[which % len(self.pools)]
        pool = load()
        self.ws = WorkspaceState(RepairSession(pool, strategy=strategy, questions=questions),
                                 pool.question)
        self.snaps = [observe(self.ws)]
        # as ui.condition_views logs it: replay reads the session's vocabulary from here
        self.log("pool.init", {"n_candidates": pool.n, "key": pool.task_id,
                               "strategy": strategy, "questions": questions,
                               "values": self.ws.session.values})
        STATS["sequences"] += 1

    def log(self, event_type: str, payload: dict[str, Any]) -> None:
        """The workspace's trace logger: keeps each decision event with the state it left."""
        self.events.append((event_type, json.loads(json.dumps(payload))))
        if event_type in DECISION_TYPES:
            s = self.ws.session
            nxt = s.next_variable()
            self.recorded.append((s.pool.n, tuple(int(i) for i in s.survivors),
                                  nxt.label if nxt else "", s.best_candidate()))

    def count(self, name: str) -> None:
        STATS["steps"] += 1
        STATS["by_rule"][name] = STATS["by_rule"].get(name, 0) + 1

    def settle(self, before: int, changed: bool) -> None:
        """After a gesture: the state before it stays the snapshot of its step, the new one is
        recorded (intermediate decisions of one gesture are not observable)."""
        s = self.ws.session
        if not changed:
            assert s.step == before
            return
        self.snaps = self.snaps[:before + 1] + [None] * (s.step - before - 1)
        self.snaps.append(observe(self.ws))
        assert len(self.snaps) == s.step + 1

    def unchanged_if_refused(self, ok: bool, step: int, state: dict[str, Any]) -> None:
        """A refused gesture (a flash, no event) changes nothing the user sees."""
        if not ok:
            assert self.ws.session.step == step and observe(self.ws) == state
        self.settle(step, ok)

    @property
    def session(self) -> RepairSession:
        return self.ws.session

    @property
    def busy(self) -> bool:
        """Whether a repair search runs (the workspace shows the rejection, searching)."""
        return self.ws is not None and actions.searching(self.ws) is not None

    def refused_while_busy(self, ok: bool | int | None, step: int, state: dict[str, Any]
                           ) -> bool:
        """During a search a gesture is refused, says why and changes nothing; True if busy."""
        if not self.busy:
            return False
        assert not ok and self.ws.flash == actions.BUSY
        assert self.session.step == step and observe(self.ws) == state
        self.ws.flash = None
        return True

    def back_then_again(self, again: Any) -> None:
        """Back, then the very same gesture: Back shows the state before it, and the gesture
        gives the same state as the first time (``again`` repeats it, returning its result)."""
        self.count("back_then_again")
        after, step = observe(self.ws), self.session.step
        assert actions.undo(self.ws, self.log) and not self.busy
        expected = self.snaps[self.session.step]
        if expected is not None:
            assert observe(self.ws) == expected
        assert again()
        assert self.session.step == step and observe(self.ws) == after

    # --- rules -----------------------------------------------------------------------------
    @precondition(lambda self: self.ws is not None and bool(self.ws.session.variables()))
    @rule(yes=st.booleans(), again=st.booleans())
    def answer_variable(self, yes: bool, again: bool) -> None:
        self.count("answer_variable")
        step, state = self.session.step, observe(self.ws)
        views = optimistic.next_views(self.ws, OPTIONS, hover=True)  # what the browser holds
        keys = current_variable(self.ws).keys
        ok = actions.answer_variable(self.ws, yes, self.log, keys)
        if self.refused_while_busy(ok, step, state):
            assert views is None  # nothing is speculated while repair runs
            return
        assert ok  # a split variable never empties the survivors
        self.settle(step, ok)
        if views is not None:  # the speculated state is the rerun's, panel by panel
            shown = panel_views(self.ws, show_action_space=True, show_decision_space=True,
                                hover=True)
            assert views["y" if yes else "n"] == shown  # the invariant below: == a reload
        if again:
            self.back_then_again(lambda: actions.answer_variable(self.ws, yes, self.log, keys))

    @precondition(lambda self: self.ws is not None and bool(self.ws.session.predicted_query()))
    @rule(data=st.data(), yes=st.booleans(), again=st.booleans())
    def answer_clause(self, data: st.DataObject, yes: bool, again: bool) -> None:
        self.count("answer_clause")
        beliefs = self.session.predicted_query()
        key = data.draw(st.sampled_from([b.feature.key for b in beliefs]))
        step, state = self.session.step, observe(self.ws)
        ok = actions.answer_clause(self.ws, key, yes, self.log)
        if not self.refused_while_busy(ok, step, state):
            self.unchanged_if_refused(ok, step, state)
            if ok and again:
                self.back_then_again(lambda: actions.answer_clause(self.ws, key, yes, self.log))

    @precondition(lambda self: self.ws is not None)
    @rule(delta=st.sampled_from([-1, 1]))
    def browse(self, delta: int) -> None:
        self.count("browse")
        step, survivors = self.session.step, self.session.survivors.tolist()
        state = observe(self.ws)
        moved = actions.browse(self.ws, delta, self.log)
        if self.refused_while_busy(moved, step, state):
            return
        ranked = self.session.variables()
        assert self.session.step == step and self.session.survivors.tolist() == survivors
        assert not moved or 0 <= self.ws.browse < len(ranked)

    @precondition(lambda self: self.ws is not None and not self.ws.session.is_exhausted)
    @rule(data=st.data(), gesture=st.sampled_from(["lasso", "box", "click", "cluster"]),
          again=st.booleans())
    def select(self, data: st.DataObject, gesture: str, again: bool) -> None:
        self.count(f"select.{gesture}")
        s = self.session
        surv = s.survivors.tolist()
        cluster = None
        if gesture == "click":
            ids = [data.draw(st.sampled_from(surv))]
        elif gesture == "cluster":
            infos = clusters(s)
            info = data.draw(st.sampled_from(infos))
            ids, cluster = list(info.members), info.number
        else:  # a drawn region may also hold faded (filtered-out) glyphs and stale ids
            ids = data.draw(st.lists(st.integers(0, s.pool.n + 2), min_size=1, max_size=12,
                                     unique=True))
        step, state = s.step, observe(self.ws)
        ok = actions.restrict(self.ws, ids, gesture, self.log, cluster=cluster)
        if self.refused_while_busy(ok, step, state):
            return
        if ok:
            kept = set(self.session.survivors.tolist())
            assert kept == {i for i in ids if i in set(surv)}
        self.unchanged_if_refused(ok, step, state)
        if ok and again:
            self.back_then_again(lambda: actions.restrict(self.ws, ids, gesture, self.log,
                                                          cluster=cluster))

    @precondition(lambda self: self.ws is not None)
    @rule(choice=st.sampled_from(["none", "reject", "accept"]),
          method=st.sampled_from(["recompose", "recompose", "none"]), land=st.booleans(),
          again=st.booleans())
    def output(self, choice: str, method: str, land: bool, again: bool) -> None:
        """Yes to the shown output (nothing changes), No to it, or None of these; after a No
        repair runs (recomposition off the script thread, or repair off)."""
        self.count(f"output.{choice}" + ("" if choice == "accept" else f".{method}")
                   + (".busy" if self.busy else ""))
        step, state = self.session.step, observe(self.ws)
        if choice == "accept":
            has = self.session.predicted_output_key() is not None
            ok = actions.accept_output(self.ws, self.log)
            if not self.refused_while_busy(ok, step, state):
                assert ok == has
                assert self.session.step == step and observe(self.ws) == state
            return
        queued = (actions.none_of_these if choice == "none" else actions.reject_output)(
            self.ws, self.log)
        if self.refused_while_busy(queued, step, state):  # a second press during the search
            assert not actions.repair_pending(self.ws)
            return
        ok = started = False
        ahead = self.ws.extra.get(actions.SPEC)
        if queued and actions.repair_pending(self.ws):
            started = actions.start_repair(self.ws, self.log, method)
            ok = self.session.step > step
            assert started == (ok and method != "none") == self.busy
            assert actions.SPEC not in self.ws.extra
            if ahead is not None:  # adopted only for this very rejection, else dropped
                search = actions.searching(self.ws)  # (or skipped: the process was busy)
                assert ahead.adopted.is_set() == (search is ahead) != ahead.dropped.is_set()
                assert search is not ahead or ahead.history == search.history
                if search is None or ahead.history != search.history:
                    assert ahead.dropped.is_set()
            if started:  # the rejection is applied and drawn while repair runs
                assert self.session.history[-1].kind == "reject"
                assert self.session.pool.n == state["pool"]
            search = actions.searching(self.ws)
            stored = self.session.base_pool.first_round
            if (started and search is not ahead and stored is not None
                    and self.session.history == [Decision("reject", outputs=stored.outputs)]):
                # the prepared pool's first round: applied before the press's run draws
                self.count("output.prepared_round")
                assert search.done.is_set() and search.outcome.added == stored.sqls
        self.unchanged_if_refused(ok, step, state)
        self.press = (choice, method)
        if ok and not started and again:  # repair off: the rejection alone, pressed again
            self.back_then_again(lambda: self.press_output(choice, method))
        if started and land:  # the next poll finds it done (else other gestures come first)
            self.search_lands(again)

    def press_output(self, choice: str, method: str) -> bool:
        """No or None of these, then its repair round run to the end (as the next polls do)."""
        press = actions.none_of_these if choice == "none" else actions.reject_output
        assert press(self.ws, self.log) and actions.repair_pending(self.ws)
        step = self.session.step
        if actions.start_repair(self.ws, self.log, method):
            assert actions.searching(self.ws).done.wait(120)
            assert actions.finish_repair(self.ws, self.log) is not None
        return self.session.step > step

    @precondition(lambda self: self.ws is not None)
    @rule(wait=st.sampled_from([False, False, True]), drop=st.booleans())
    def read_state(self, wait: bool, drop: bool) -> None:
        """The person reads the state: the panels' run speculates the repair a None of these
        would start (the first state, a converged one), changing nothing they see; it is
        computed now (``wait``) or later (a press adopts it running), or dropped (stopped)."""
        self.count("read_state" + (".busy" if self.busy else ""))
        step, state = self.session.step, observe(self.ws)
        ahead = actions.speculate_repair(self.ws, "recompose", delay=0.0)
        assert self.session.step == step and observe(self.ws) == state
        if ahead is None:
            assert actions.SPEC not in self.ws.extra
            return
        assert not self.busy and ahead.history[:-1] == self.session.history
        if drop:
            assert actions.drop_speculation(self.ws) and ahead.done.wait(120)
            assert self.session.step == step and observe(self.ws) == state
        elif wait:  # computed (or skipped while another speculated round held the slot)
            assert ahead.done.wait(120)
            assert (ahead.outcome is not None) == (ahead.error is None) != ahead.dropped.is_set()

    @precondition(lambda self: self.busy)
    @rule(again=st.booleans())
    def search_lands(self, again: bool = False) -> None:
        """The search's round is applied: one repair decision on top of the rejection (or none
        when it found nothing), the same as running it on the script thread."""
        self.count("search_lands")
        step, pool_n = self.session.step, self.session.pool.n
        search = actions.searching(self.ws)
        assert search.done.wait(120)
        twin = RepairSession.from_dict(self.session.to_dict(), self.session.base_pool)
        expected = recompose(twin, cached=False)  # what the synchronous path adds here
        outcome = actions.finish_repair(self.ws, self.log)
        assert not self.busy and outcome is not None
        assert outcome.added == expected.added
        assert self.session.pool.n == pool_n + len(outcome.added)
        assert self.session.step == step + bool(outcome.added)
        if outcome.added:  # the gesture's intermediate (rejected) state stays recorded
            self.settle(step, True)
        if again:  # Back over the rejection and its repair, then the same press: same state
            self.back_then_again(lambda: self.press_output(*self.press))

    @precondition(lambda self: self.ws is not None)
    @rule()
    def back(self) -> None:
        """Back: exactly the state before the last gesture."""
        self.count("back" + (".busy" if self.busy else ""))
        step, busy = self.session.step, self.busy
        ok = actions.undo(self.ws, self.log)
        assert ok == (step > 0) and not self.busy
        if busy:  # the search is dropped and the rejection alone taken back
            assert self.events[-1][1]["decisions"] == 1
        expected = self.snaps[self.session.step]
        self.snaps = self.snaps[:self.session.step + 1]
        if expected is not None:
            assert observe(self.ws) == expected

    @precondition(lambda self: self.ws is not None and self.ws.session.step > 0
                  and not self.busy)
    @rule()
    def engine_undo(self) -> None:
        """The engine's own undo (one decision: a repair without its rejection) as a recorded
        trace of b320bc6 replays it; logged as an undo of one decision."""
        self.count("engine_undo")
        s = self.session
        before = len(s.survivors)
        decision = s.undo()
        self.log("undo", {"undone": decision.to_dict(), "decisions": 1, "step": s.step,
                          "survivors_before": before, "survivors_after": len(s.survivors)})
        self.snaps = self.snaps[:s.step + 1]
        if self.snaps[-1] is not None:
            assert observe(self.ws) == self.snaps[-1]

    @precondition(lambda self: self.ws is not None)
    @rule()
    def reload(self) -> None:
        """The participant reloads the page: the workspace is rebuilt from the saved session
        (as ui.condition_views restores it) and the user goes on from there."""
        self.count("reload" + (".busy" if self.busy else ""))
        s, busy = self.session, self.busy
        state = observe(self.ws)
        saved = json.loads(json.dumps({**s.to_dict(), **actions.saved_search(self.ws)}))
        self.ws.session = RepairSession.from_dict(saved, s.base_pool)
        self.ws.browse, self.ws.extra = 0, {}
        actions.restore_search(self.ws, saved)  # as ui.condition_views restores it
        assert actions.repair_pending(self.ws) == busy
        if busy:  # the search starts again on the restored rejection, logging nothing new
            logged = len(self.events)
            assert actions.start_repair(self.ws, self.log, saved[actions.SAVED]["method"])
            assert len(self.events) == logged and self.busy
        assert observe(self.ws) == state

    @precondition(lambda self: self.ws is not None)
    @rule()
    def submit(self) -> None:
        self.count("submit")
        step, state = self.session.step, observe(self.ws)
        chosen = actions.submit(self.ws, self.log)
        if self.busy:
            if self.session.best_candidate() is not None:
                assert self.refused_while_busy(chosen, step, state)
            return
        s = self.session
        assert chosen == s.best_candidate()
        if chosen is not None:
            event = self.events[-1]
            assert event[0] == "submit" and event[1]["sql"] == s.pool.sqls[chosen]
            replayed = RepairSession.from_dict({"history": event[1]["history"]}, s.base_pool)
            assert replayed.pool.sqls[chosen] == event[1]["sql"]

    # --- invariants --------------------------------------------------------------------------
    @invariant()
    def views_have_the_pool_size(self) -> None:
        if self.ws is not None:
            check_sizes(self.ws)

    @invariant()
    def serialise_then_load_is_the_same_session(self) -> None:
        if self.ws is None or self.serialised == repr(self.session.history):
            return  # only a new history needs a new check
        s = self.session
        self.serialised = repr(s.history)
        loaded = RepairSession.from_dict(json.loads(json.dumps(s.to_dict())), s.base_pool)
        assert loaded.strategy == s.strategy
        assert loaded.history == s.history and loaded.pool.sqls == s.pool.sqls
        assert observe(WorkspaceState(loaded, self.ws.question)) == observe(self.ws)

    @invariant()
    def asks_the_phase_vocabulary(self) -> None:
        """Hybrid asks clause questions until an output is rejected (questions about the answer
        where the clause pick is about spelling, HYBRID_SPELLING, or a table split as an answer
        question splits, HYBRID_SAME_SPLIT), then questions about the
        answer (HYBRID_FALLBACK where only a clause tells the likely outputs apart); Back over
        the rejection asks clauses again. The shown question is of the vocabulary asked."""
        if self.ws is None:
            return
        s = self.session
        phase = asked_vocabulary(s.questions, any(d.kind == "reject" for d in s.history))
        allowed = {phase}
        if s.questions == "hybrid" and phase == "clauses" and answers.HYBRID_SPELLING:
            allowed.add(answers.HYBRID_SPELLING)
        if s.questions == "hybrid" and phase == "clauses" and answers.HYBRID_SAME_SPLIT:
            allowed.add(answers.HYBRID_SAME_SPLIT)
        if s.questions == "hybrid" and phase == answers.HYBRID_AFTER and answers.HYBRID_FALLBACK:
            allowed.add(answers.HYBRID_FALLBACK)
        assert s.asking in allowed, (s.asking, allowed)
        shown = current_variable(fresh(self.ws))
        asked = [v.keys for v in s.variables()] + ([shown.keys] if shown else [])
        for keys in asked:
            if s.asking == "clauses":
                assert not any(is_answer(k) for k in keys), (s.asking, keys)
            elif s.asking == "outputs":
                assert all(is_answer(k) for k in keys), (s.asking, keys)

    @invariant()
    def survivors_or_exhausted_by_a_rejection(self) -> None:
        """Candidates survive, or the session says it is exhausted: only a rejection empties
        it, and then nothing is asked (the user repairs or goes Back)."""
        if self.ws is None:
            return
        s = self.session
        assert s.is_exhausted == (not s.alive.any())
        if s.is_exhausted:
            assert s.history and any(d.kind == "reject" for d in s.history)
            assert s.next_variable() is None and not s.variables()
            assert s.best_candidate() is None

    @invariant()
    def repair_raises_only_outputs_clause_answers_ruled_out(self) -> None:
        """An answered-away output was ruled out by a clause answer before the first rejection
        and never judged since (rejected, selected away, asked about); each repair round's
        query for one was added at least at ANSWERED_AWAY_PRIOR."""
        if self.ws is None:
            return
        s = self.session
        away = answered_away(s)
        assert not set(away) & s.rejected_outputs()
        first = next((k for k, d in enumerate(s.history) if d.kind == "reject"), s.step)
        for key in away:
            assert any(
                d.kind in ("variable", "feature") and not any(map(is_answer, d.features))
                and key in self.outputs_at(s, k) and key not in self.outputs_at(s, k + 1)
                for k, d in enumerate(s.history[:first]))
        for k, d in enumerate(s.history):
            if d.kind != "repair":
                continue
            twin = s.fork()
            twin.back_to(k)
            before, n = answered_away(twin), twin.pool.n
            for place, weight in enumerate(d.weights):
                if s.output_key_of(n + place) in before:
                    assert weight >= ANSWERED_AWAY_PRIOR

    @staticmethod
    def outputs_at(s: RepairSession, step: int) -> set[str]:
        """The outputs surviving after ``step`` decisions."""
        return {s.output_key_of(int(i)) for i in np.flatnonzero(s.alive_at(step))}

    def teardown(self) -> None:
        """The trace replays to every recorded state; the coder counts every gesture."""
        if self.ws is not None:
            actions.drop_speculation(self.ws)  # its thread stops at its next phase
        if self.ws is None or not self.events:
            return
        search = actions.searching(self.ws)
        if search is not None:  # the trace ends on the rejection; its thread is left to end
            search.done.wait(120)
        pool = self.session.base_pool
        evs = [Event(f"e{i}", "s1", "P", t, p, study="film", condition="pleasqlarify",
                     task=pool.task_id, subtask="3", server_ts=i)
               for i, (t, p) in enumerate(self.events)]
        steps = replay(evs, pool)  # the vocabulary and strategy come from pool.init
        assert steps[-1].next_variable == (
            nxt.label if (nxt := self.session.next_variable()) else "")
        assert failure(steps) is None and not mismatches(steps), mismatches(steps)[:1]
        assert [(x.pool_size, x.survivors, x.next_variable, x.best_candidate)
                for x in steps[1:]] == self.recorded
        assert steps[-1].survivors == tuple(int(i) for i in self.session.survivors)
        data = StudyData(({"participant": "P", "number": 1, "condition": "pleasqlarify",
                           "condition_order": ["pleasqlarify"], "task_order": [],
                           "stage": "main", "simulated": False, "flagged": False},), tuple(evs))
        table = W.workflow_table(data)
        types = [t for t, _ in self.events]
        if table.empty:
            assert not any(W.action_of(SimpleNamespace(type=t, payload=p))
                           for t, p in self.events)
            return
        row = table.iloc[0]
        expected = {
            "select": sum(t.startswith("space.") for t in types),
            "output": types.count("output.accept") + types.count("output.reject"),
            "repair": types.count("repair"), "back": types.count("undo"),
            "dv": types.count("dv.accept") + types.count("dv.reject"),
            "clause": types.count("clause.accept") + types.count("clause.reject"),
            "explore": types.count("dv.browse"), "submit": types.count("submit")}
        assert {a: int(row[f"n_{a}"]) for a in expected} == expected


def run_machine(name: str, pools: tuple[Any, ...], examples: int, steps: int) -> None:
    """Run the machine on one pool family and record what it explored."""
    machine = type(f"{name}Machine", (SessionMachine,), {"pools": pools})
    began = time.perf_counter()
    before = dict(STATS, by_rule=dict(STATS["by_rule"]))
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=examples, stateful_step_count=steps, deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            database=None, phases=PHASES))
    finally:
        STATS["seconds"] += time.perf_counter() - began
        STATS.setdefault("families", {})[name] = {
            "sequences": STATS["sequences"] - before["sequences"],
            "steps": STATS["steps"] - before["steps"],
            "seconds": round(time.perf_counter() - began, 1)}
        ARTIFACT.parent.mkdir(exist_ok=True)
        ARTIFACT.write_text(json.dumps(STATS, indent=1, sort_keys=True))


def test_the_machine_starts_from_the_workspace_default() -> None:
    """Shrinking falls back to the first choice: that is what the workspace asks with."""
    assert {"strategy": STRATEGY_CHOICES[0], "questions": VOCABULARY_CHOICES[0]}.items() \
        <= WORKSPACE_DEFAULT.items()


def test_no_gesture_sequence_breaks_a_film_session() -> None:
    run_machine("film", tuple(lambda t=t: film_pool(t) for t in FILM), examples=EXAMPLES,
                steps=25)


def test_no_gesture_sequence_breaks_an_ambrosia_session() -> None:
    run_machine("ambrosia", tuple(lambda i=i: dev_pool(i) for i in DEV), examples=EXAMPLES,
                steps=25)


def summary() -> str | None:
    """The line pytest's terminal summary shows (tests/conftest.py), once the machine ran."""
    if not STATS["sequences"]:
        return None
    fams = ", ".join(f"{k} {v['sequences']} sequences / {v['steps']} steps in {v['seconds']} s"
                     for k, v in STATS.get("families", {}).items())
    return (f"session state machine: {STATS['sequences']} sequences, {STATS['steps']} steps "
            f"({fams}); rules: {json.dumps(STATS['by_rule'], sort_keys=True)}")


pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
