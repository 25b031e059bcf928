"""Counterbalancing designs and participant assignment (balanced, race-free, dropout-aware)."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from study.assignment import (
    Override,
    assign_participant,
    cells,
    load_assignment,
    slot_counts,
)
from study.designs import design_sequences, latin_square, seeded_order, williams_design
from study.spec import parse_study
from study.store import open_store
from tests.threads import at_once

MIN = 60_000


def make_spec(tmp_path: Path, *, tasks: int = 4, conditions=("pleasqlarify",),
              task_order: str = "latin", mode: str = "between", condition_order: str = "fixed",
              timeout: int = 30, name: str = "s"):
    """A study spec with ``tasks`` tasks and no task bank check (bank file absent)."""
    task_lines = "\n".join(f"  - t{i}" for i in range(tasks))
    cond_lines = "\n".join(f"  - {c}" for c in conditions)
    text = f"""
id: {name}
title: T
consent: C
conditions:
{cond_lines}
task_bank: missing.jsonl
subtasks: {{"1": do it}}
tasks:
{task_lines}
questionnaires: [sus5]
assignment:
  task_order: {task_order}
  conditions: {mode}
  condition_order: {condition_order}
  seed: 7
  abandon_timeout_minutes: {timeout}
"""
    return parse_study(text, tmp_path / "study.yaml")


@given(st.integers(1, 12))
def test_latin_square_each_item_once_per_row_and_position(n):
    rows = latin_square(n)
    assert len(rows) == n
    assert all(sorted(r) == list(range(n)) for r in rows)
    assert all(sorted(col) == list(range(n)) for col in zip(*rows, strict=True))


@given(st.integers(1, 12))
def test_williams_balances_positions_and_first_order_carry_over(n):
    rows = williams_design(n)
    reps = 2 if n % 2 == 1 and n > 1 else 1
    assert len(rows) == reps * n
    assert all(sorted(r) == list(range(n)) for r in rows)
    for col in zip(*rows, strict=True):  # each task once (odd: twice) per position
        assert Counter(col) == dict.fromkeys(range(n), reps)
    pairs = Counter(p for r in rows for p in pairwise(r))
    expected = {(a, b): reps for a in range(n) for b in range(n) if a != b}
    assert pairs == expected  # every ordered pair adjacent exactly once (odd n: twice)


def test_williams_small_cases_by_hand():
    assert williams_design(4) == [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]]
    assert len(williams_design(3)) == 6 and williams_design(1) == [[0]]
    assert design_sequences("fixed", 3) == [[0, 1, 2]]
    with pytest.raises(ValueError, match="unknown order design 'zigzag'"):
        design_sequences("zigzag", 3)


def test_seeded_random_order_is_reproducible():
    assert seeded_order(8, 123) == seeded_order(8, 123)
    assert sorted(seeded_order(8, 123)) == list(range(8))
    assert len({tuple(seeded_order(8, s)) for s in range(20)}) > 1


def test_sequential_joins_fill_cells_evenly_and_record_everything(tmp_path):
    spec = make_spec(tmp_path, tasks=4, task_order="williams")
    store = open_store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    got = [assign_participant(store, spec, now=1000 + i) for i in range(8)]
    assert sorted(a.cell for a in got) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [a.number for a in got] == list(range(1, 9))
    assert len({a.participant for a in got}) == 8 and all(len(a.participant) >= 20 for a in got)
    row = store.participant(got[1].participant)
    assert row["study_hash"] == spec.hash and row["seed"] == got[1].seed
    assert row["task_order"] == ["t1", "t2", "t0", "t3"]  # Williams row 1 of n=4
    assert load_assignment(store, got[1].participant) == got[1]
    assert load_assignment(store, "nobody") is None


@pytest.mark.parametrize("joins", [12])
def test_concurrent_joins_never_double_assign(store_url, tmp_path, joins):
    spec = make_spec(tmp_path, tasks=3, task_order="latin", conditions=("pleasqlarify",
                                                                         "atomic-only"))
    assert len(cells(spec)) == 6
    open_store(store_url).close()

    def one(_: int):
        store = open_store(store_url)  # its own engine: like separate server processes
        try:
            return assign_participant(store, spec, now=5000)
        finally:
            store.close()

    results = at_once(joins, one)
    assert Counter(a.cell for a in results) == dict.fromkeys(range(6), 2)
    assert sorted(a.number for a in results) == list(range(1, joins + 1))
    assert Counter(a.condition for a in results) == {"pleasqlarify": 6, "atomic-only": 6}


def test_abandoned_participants_release_their_slot(tmp_path):
    spec = make_spec(tmp_path, tasks=2, task_order="latin", timeout=30)
    store = open_store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    a = assign_participant(store, spec, now=0)
    b = assign_participant(store, spec, now=0)
    assert (a.cell, b.cell) == (0, 1)
    store.set_status(a.participant, "completed", now=10 * MIN)
    store.touch(b.participant, now=10 * MIN)
    # at 35 min: a completed (counts), b active 25 min ago (counts) -> cell 0 (tie, lowest)
    assert assign_participant(store, spec, now=35 * MIN).cell == 0
    # at 45 min: b idle for 35 min > 30 -> abandoned, its cell 1 is free again
    c = assign_participant(store, spec, now=45 * MIN)
    assert c.cell == 1
    assert store.participant(b.participant)["status"] == "abandoned"
    assert slot_counts(store, spec, now=45 * MIN) == [2, 1]
    store.touch(b.participant, now=46 * MIN)  # b comes back and holds a slot again
    assert store.participant(b.participant)["status"] == "active"
    assert slot_counts(store, spec, now=46 * MIN) == [2, 2]


def test_withdrawn_flagged_pilot_and_simulated_do_not_count(tmp_path):
    spec = make_spec(tmp_path, tasks=2, task_order="latin")
    store = open_store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    w = assign_participant(store, spec, now=0)
    store.set_status(w.participant, "withdrawn", now=1)
    f = assign_participant(store, spec, now=2)
    assert f.cell == 0
    store.set_flagged(f.participant)
    assert assign_participant(store, spec, now=3, stage="pilot").cell == 0
    assert assign_participant(store, spec, now=3, simulated=True).cell == 0
    assert assign_participant(store, spec, now=4).cell == 0
    assert slot_counts(store, spec, now=4) == [1, 0]
    assert slot_counts(store, spec, now=4, stage="pilot") == [1, 0]


def test_facilitator_override(tmp_path):
    spec = make_spec(tmp_path, tasks=3, task_order="latin",
                     conditions=("pleasqlarify", "atomic-only"))
    store = open_store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    a = assign_participant(store, spec, now=0, override=Override(task_sequence=2))
    assert a.task_sequence == 2 and a.task_order == ("t2", "t0", "t1")
    b = assign_participant(store, spec, now=0, override=Override(condition="atomic-only"))
    assert b.condition == "atomic-only" and b.task_sequence == 0
    assert store.participant(b.participant)["override"]["condition"] == "atomic-only"
    with pytest.raises(ValueError, match="override condition 'single-shot' is not in this"):
        assign_participant(store, spec, now=0, override=Override(condition="single-shot"))
    with pytest.raises(ValueError, match="matches no sequence"):
        assign_participant(store, spec, now=0, override=Override(task_sequence=9))


def test_within_subjects_condition_orders_and_blocks(tmp_path):
    spec = make_spec(tmp_path, tasks=4, task_order="latin", mode="within",
                     condition_order="williams", conditions=("pleasqlarify", "atomic-only"))
    store = open_store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    got = [assign_participant(store, spec, now=0) for i in range(8)]
    orders = Counter(a.condition_order for a in got)
    assert orders == {("pleasqlarify", "atomic-only"): 4, ("atomic-only", "pleasqlarify"): 4}
    assert Counter(a.task_order for a in got).most_common()[0][1] == 2
    first = got[0]
    blocks = first.blocks()
    assert [c for c, _ in blocks] == list(first.condition_order)
    assert [t for _, ts in blocks for t in ts] == list(first.task_order)
    assert [len(ts) for _, ts in blocks] == [2, 2]


def test_random_order_is_reproducible_from_the_recorded_seed(tmp_path):
    spec = make_spec(tmp_path, tasks=6, task_order="random")
    store = open_store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    got = [assign_participant(store, spec, now=0) for _ in range(6)]
    for a in got:
        assert a.task_order == tuple(f"t{i}" for i in seeded_order(6, a.seed))
    assert len({a.task_order for a in got}) > 1
