"""Functional similarity: identical row multisets score 1, everything else less, in [0, 1]."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.execute import ExecutionResult
from core.engine.similarity import ERROR_CLASS, functional_classes, output_key, output_similarity


def table(columns, rows):
    return ExecutionResult(list(columns), [tuple(r) for r in rows])


ERR_A = ExecutionResult(error="no such column: x")
ERR_B = ExecutionResult(error="stopped after the 2 s time limit")
EMPTY_1 = table(["a"], [])
EMPTY_2 = table(["x", "y"], [])
T = table(["a", "b"], [(1, "x"), (2, "y"), (2, "y")])


@pytest.mark.parametrize("other", [
    table(["a", "b"], [(2, "y"), (1, "x"), (2, "y")]),  # row order
    table(["p", "q"], [(1, "x"), (2, "y"), (2, "y")]),  # column names
    table(["b", "a"], [("x", 1), ("y", 2), ("y", 2)]),  # column order
    table(["B", "A"], [("y", 2), ("x", 1), ("y", 2)]),  # all three at once
    table(["a", "b"], [(1.0, "x"), (2.0, "y"), (2, "y")]),  # 2.0 == 2 after normalisation
])
def test_identical_multisets_score_one(other):
    assert output_similarity(T, other) == 1.0
    assert output_similarity(other, T) == 1.0
    assert output_key(T) == output_key(other)


@pytest.mark.parametrize("other", [
    table(["a", "b"], [(1, "x"), (2, "y")]),  # multiplicity differs
    table(["a", "b"], [(1, "x"), (2, "y"), (3, "z")]),  # one row differs
    table(["a"], [(1,), (2,), (2,)]),  # a column missing
    table(["a", "b", "c"], [(1, "x", 0), (2, "y", 0), (2, "y", 0)]),  # an extra column
    table(["a", "b"], [(9, "q")]),  # nothing in common
])
def test_different_outputs_score_below_one(other):
    s = output_similarity(T, other)
    assert 0.0 <= s < 1.0
    assert output_similarity(other, T) == pytest.approx(s)
    assert output_key(T) != output_key(other)


def test_partial_overlap_is_graded():
    near = table(["a", "b"], [(1, "x"), (2, "y"), (2, "z")])
    far = table(["a", "b"], [(7, "q"), (8, "r"), (9, "s")])
    assert output_similarity(T, far) < output_similarity(T, near) < 1.0
    assert output_similarity(T, far) == 0.0


def test_errors_and_empty_results():
    assert output_similarity(ERR_A, ERR_B) == 1.0
    assert output_key(ERR_A) == output_key(ERR_B) == ERROR_CLASS
    assert output_similarity(ERR_A, T) == 0.0 and output_similarity(T, ERR_A) == 0.0
    assert output_similarity(ERR_A, EMPTY_1) == 0.0
    assert output_similarity(EMPTY_1, EMPTY_1) == 1.0
    assert output_similarity(EMPTY_1, table(["a"], [])) == 1.0
    assert output_similarity(EMPTY_1, T) == 0.0 and output_similarity(T, EMPTY_1) == 0.0
    assert output_key(EMPTY_1) != ERROR_CLASS


def test_empty_tables_of_different_width_are_distinct_classes():
    # zero rows but a different number of columns: not the same answer
    assert output_key(EMPTY_1) != output_key(EMPTY_2)
    assert output_similarity(EMPTY_1, EMPTY_2) < 1.0


def test_functional_classes_share_similarity_per_class():
    results = [T, table(["z", "w"], [("y", 2), ("x", 1), ("y", 2)]), ERR_A,
               table(["a"], [(1,)]), ERR_B, EMPTY_1]
    classes, index, sim = functional_classes(results)
    assert len(classes) == 4
    assert index.tolist() == [0, 0, 1, 2, 1, 3]
    assert classes[1] == ERROR_CLASS
    assert sim.shape == (4, 4)
    assert np.allclose(sim, sim.T) and np.allclose(np.diag(sim), 1.0)
    assert (sim >= 0).all() and (sim <= 1).all()
    off = sim[~np.eye(4, dtype=bool)]
    assert (off < 1).all()
    assert sim[0, 1] == 0.0  # a table vs the error class


def test_functional_classes_of_nothing():
    classes, index, sim = functional_classes([])
    assert classes == [] and index.shape == (0,) and sim.shape == (0, 0)


cells = st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b", "B"]), st.none(),
                  st.sampled_from([0.5, 1.25]))


@st.composite
def results(draw):
    if draw(st.integers(0, 9)) == 0:
        return ExecutionResult(error="boom")
    width = draw(st.integers(1, 3))
    rows = draw(st.lists(st.tuples(*[cells] * width), max_size=6))
    return table([f"c{i}" for i in range(width)], rows)


@settings(max_examples=150, deadline=None)
@given(results(), results(), st.randoms(use_true_random=False))
def test_similarity_is_symmetric_bounded_and_one_iff_same_class(a, b, rnd):
    s = output_similarity(a, b)
    assert 0.0 <= s <= 1.0
    assert output_similarity(b, a) == pytest.approx(s)
    assert (s == 1.0) == (output_key(a) == output_key(b))
    assert output_similarity(a, a) == 1.0
    if a.ok:  # shuffling rows and renaming columns never changes the class
        rows = list(a.rows)
        rnd.shuffle(rows)
        shuffled = table([c.upper() for c in a.columns], rows)
        assert output_similarity(a, shuffled) == 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(results(), max_size=6))
def test_class_similarity_matrix_agrees_with_pairwise_similarity(outputs):
    """The matrix functional_classes computes is output_similarity between representatives."""
    classes, index, sim = functional_classes(outputs)
    assert len(classes) == len({output_key(r) for r in outputs})
    reps = {int(c): outputs[i] for i, c in reversed(list(enumerate(index)))}
    for a in range(len(classes)):
        for b in range(len(classes)):
            expected = output_similarity(reps[a], reps[b])
            assert sim[a, b] == pytest.approx(expected, abs=1e-9)
            assert (sim[a, b] == 1.0) == (a == b)


def test_empty_tables_of_different_width_in_the_class_matrix():
    _, _, sim = functional_classes([EMPTY_1, EMPTY_2])
    assert sim[0, 1] == output_similarity(EMPTY_1, EMPTY_2) < 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(results(), max_size=7), st.lists(results(), max_size=5))
def test_extending_classes_is_computing_them_again(old, new):
    """Issue 24: repair's extended pool keeps the known class similarities and computes only
    a new output's pairs, with exactly the classes, positions and values of a full run."""
    from core.engine.similarity import extend_classes

    keys, index, sim = functional_classes(old)
    full = functional_classes(old + new)
    extended = extend_classes(keys, index, sim, old, new)
    assert extended[0] == full[0]
    assert np.array_equal(extended[1], full[1]) and np.array_equal(extended[2], full[2])
