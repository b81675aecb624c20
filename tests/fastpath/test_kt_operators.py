"""The list replicas of Kernel Tuner's neighbourhood mutation and repair against Kernel Tuner's own operators."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from kernel_tuner.strategies import pymoo_minimize as kt_pymoo

from analysis.fastpath import kt_operators
from helpers import random_rows, searchspace


@pytest.mark.parametrize("memoised", [False, True], ids=["Kernel Tuner's queries", "memoised queries"])
@pytest.mark.parametrize("seed", range(12))
def test_mutation_equals_kernel_tuners_on_the_kept_rows(seed, memoised) -> None:
    """The kept rows are Kernel Tuner's mutated rows, the others unchanged, and the global generator ends alike."""
    X = random_rows(seed, 40, valid_share=0.7)
    keep = np.random.default_rng(seed + 100).random(len(X)) < 0.3
    np.random.seed(seed)
    expected = kt_pymoo.TuningParamConfigNeighborhoodMutation(0.1, searchspace(memoised))._do(None, X.copy())
    expected_state = np.random.get_state()
    np.random.seed(seed)
    got = kt_operators.neighbourhood_mutation(
        kt_pymoo.TuningParamConfigNeighborhoodMutation(0.1, searchspace(memoised)), X, keep)
    got_state = np.random.get_state()
    assert got.dtype == expected.dtype == object
    assert got[keep].tolist() == expected[keep].tolist()
    assert [type(v) for v in got[keep].ravel()] == [type(v) for v in expected[keep].ravel()]
    assert got[~keep].tolist() == X[~keep].tolist()
    assert not np.array_equal(expected, X)  # rows did change
    assert expected_state[1].tolist() == got_state[1].tolist() and expected_state[2:] == got_state[2:]


@pytest.mark.parametrize("memoised", [False, True], ids=["Kernel Tuner's queries", "memoised queries"])
@pytest.mark.parametrize("seed", range(12))
def test_repair_equals_kernel_tuners(seed, memoised) -> None:
    X = random_rows(seed, 40, valid_share=0.5)
    problem = type("Problem", (), {})()
    np.random.seed(seed)
    problem.searchspace = searchspace(memoised)
    expected = kt_pymoo.TuningParamConfigRepair()._do(problem, X.copy())
    expected_state = np.random.get_state()
    np.random.seed(seed)
    problem.searchspace = searchspace(memoised)
    got = kt_operators.neighbour_repair(problem, X.copy())
    got_state = np.random.get_state()
    assert got.tolist() == expected.tolist() and got.dtype == expected.dtype
    assert [type(v) for v in got.ravel()] == [type(v) for v in expected.ravel()]
    assert not np.array_equal(expected, X)  # rows were repaired
    assert expected_state[1].tolist() == got_state[1].tolist() and expected_state[2:] == got_state[2:]


def test_choice_of_an_integer_draws_randint() -> None:
    """The replicas' premise: np.random.choice(n) picks what np.random.randint(n) picks and leaves the same state."""
    np.random.seed(3)
    picks = [np.random.choice(n) for n in range(1, 3000)]
    state = np.random.get_state()
    np.random.seed(3)
    assert [np.random.randint(n) for n in range(1, 3000)] == picks
    after = np.random.get_state()
    assert state[1].tolist() == after[1].tolist() and state[2:] == after[2:]


def test_only_kernel_tuners_own_classes_are_replayed() -> None:
    class Subclass(kt_pymoo.TuningParamConfigRepair):
        pass

    space = searchspace(False)
    assert kt_operators.replays(kt_pymoo.TuningParamConfigNeighborhoodMutation(0.1, space)) == "mutation"
    assert kt_operators.replays(kt_pymoo.TuningParamConfigRepair()) == "repair"
    assert kt_operators.replays(Subclass()) is None
    assert kt_operators.replays(copy.copy(None)) is None
