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
def test_a_yes_or_no_finds_its_state_computed(pool, yes: bool, monkeypatch) -> None:
    from ui import action_space

    action_space._per_pool(pool).clear()  # no spec left over from another test
    ws = workspace_state(pool, store={})
    variable = ws.session.next_variable()
    speculate.speculate(ws, variable)
    entry = ws.extra[speculate.KEY]
    twin = entry["forks"][yes]
    speculate.speculate(ws, variable)
    assert ws.extra[speculate.KEY] is entry  # once per state: nothing new was started
    built = []
    monkeypatch.setattr(action_space, "space_spec", lambda *a, **k: built.append(1) or {})
    assert actions.answer_variable(ws, yes, no_log)
    assert ws.session.variables() is twin.variables()  # adopted, not recomputed
    assert np.array_equal(ws.session.alive, twin.alive)
    after = ws.session.next_variable()
    assert cached_space(ws.session, after) is cached_space(twin, after)
    assert not built  # the chart's spec of the new state was built by the speculation


def test_the_shared_spec_cache_survives_concurrent_builders(pool, monkeypatch) -> None:
    import threading

    from ui import action_space

    monkeypatch.setattr(action_space, "FIGURES_PER_POOL", 3)  # evict all the time
    action_space._per_pool(pool).clear()  # tooltips and cells are written meanwhile too
    errors: list[BaseException] = []

    def build(first_yes: bool) -> None:
        try:
            for k in range(8):  # up to five states per thread, more than the cap
                session = RepairSession(pool)
                for bit in (k & 1, k & 2):
                    variable = session.next_variable()
                    if variable is None:
                        break
                    session.answer(variable.keys, bool(bit) == first_yes)
                    cached_space(session, session.next_variable())
        except BaseException as exc:  # reported below
            errors.append(exc)
    threads = [threading.Thread(target=build, args=(i % 2 == 0,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    kinds = [k[0] for k in action_space._per_pool(pool)]
    assert kinds.count("space") <= 3 and kinds.count("cells") <= 3


def test_nothing_is_speculated_without_a_question(pool) -> None:
    ws = workspace_state(pool, store={})
    assert speculate.speculate(ws, None) == {}
    assert speculate.KEY not in ws.extra
    assert not speculate.adopt(ws, True)
    assert np.all(ws.session.alive)


def test_without_the_action_space_no_chart_spec_is_built(pool, monkeypatch) -> None:
    from ui import action_space

    built = []
    monkeypatch.setattr(action_space, "space_spec", lambda *a, **k: built.append(1) or {})
    ws = workspace_state(pool, store={})
    speculate.speculate(ws, ws.session.next_variable(), chart=False)
    assert set(ws.extra[speculate.KEY]["forks"]) == {True, False} and not built


@pytest.mark.parametrize("value", ["0", "off", "False"])
def test_the_switch_turns_speculation_off(pool, value: str, monkeypatch) -> None:
    ws = workspace_state(pool, store={})
    variable = ws.session.variables()[0]
    monkeypatch.setenv(speculate.ENV, value)
    assert speculate.speculate(ws, variable) == {} and not speculate.adopt(ws, True)
    monkeypatch.setenv(speculate.ENV, "1")
    assert set(speculate.speculate(ws, variable)) == {True, False}
