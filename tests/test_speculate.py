"""The next state before the key press: session forks, adopt, and the workspace's speculation."""

from __future__ import annotations

import numpy as np
import pytest

from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.session import RepairSession
from core.engine.taskbank import load_task_bank
from tests.bank_helpers import make_bank
from ui import actions, speculate
from ui.action_space import cached_space
from ui.actions import no_log
from ui.state import workspace_state


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory):
    """The 30-candidate AMBROSIA task, prepared with its layout."""
    bank = make_bank(tmp_path_factory.mktemp("bank"), lines=(8,))
    tasks, _ = load_task_bank(bank)
    return load_prepared(tasks[0], default_pool_dir(bank))


def test_a_fork_is_independent_and_adopting_it_gives_its_views(pool) -> None:
    session = RepairSession(pool)
    first = session.next_variable()
    twin = session.fork()
    twin.answer(first.keys, True)
    ranked = twin.variables()
    assert session.step == 0 and session.alive.all()  # the fork left the session alone
    assert not session.adopt(twin)  # not the same state (yet)
    session.answer(first.keys, True)
    assert session.adopt(twin)
    assert session.variables() is ranked  # taken over, not recomputed
    session.undo()
    assert not session.adopt(twin) and session.next_variable().keys == first.keys


def test_adopted_views_equal_computed_ones(pool) -> None:
    live, fresh = RepairSession(pool), RepairSession(pool)
    keys = live.next_variable().keys
    twin = live.fork()
    twin.answer(keys, False)
    twin.variables(), twin.predicted_query(), twin.cluster_of()
    live.answer(keys, False)
    fresh.answer(keys, False)
    assert live.adopt(twin)
    assert [v.keys for v in live.variables()] == [v.keys for v in fresh.variables()]
    assert live.cluster_of() == fresh.cluster_of()
    assert [(b.feature.key, b.probability) for b in live.predicted_query()] == \
        [(b.feature.key, b.probability) for b in fresh.predicted_query()]


@pytest.mark.parametrize("yes", [True, False])
def test_a_yes_or_no_finds_its_state_computed(pool, yes: bool) -> None:
    ws = workspace_state(pool, store={})
    variable = ws.session.next_variable()
    speculate.speculate(ws, variable, background=False)
    twin = ws.extra[speculate.KEY]["forks"][yes]
    assert speculate.speculate(ws, variable, background=False) is None  # once per state
    assert actions.answer_variable(ws, yes, no_log)
    assert ws.session.variables() is twin.variables()
    after = twin.next_variable()
    assert cached_space(ws.session, after) is cached_space(twin, after)  # the chart's spec too
    assert np.array_equal(ws.session.alive, twin.alive)


def test_nothing_is_speculated_without_a_question(pool) -> None:
    ws = workspace_state(pool, store={})
    assert speculate.speculate(ws, None, background=False) is None
    assert speculate.KEY not in ws.extra
    assert not speculate.adopt(ws, True)
    assert np.all(ws.session.alive)
