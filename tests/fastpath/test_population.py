"""population_get against pymoo's Population.get: the same arrays for every kind of key."""

from __future__ import annotations

import numpy as np
import pytest
from pymoo.core.individual import Individual
from pymoo.core.population import Population

from analysis.fastpath.population import individual_values_read_once, population_get

KEYS = ["X", "F", "G", "CV", "FEAS", "feas", "rank", "crowding", "label", "missing", "cv", "data"]


def random_population(seed: int) -> Population:
    """A population with object and numeric X, evaluated or not, with data keys set on some individuals."""
    g = np.random.default_rng(seed)
    n = int(g.integers(0, 12))
    X = g.integers(0, 5, (n, 3)).astype(object) if seed % 2 else g.random((n, 3))
    pop = Population.new("X", X)
    if n and g.random() < 0.8:
        pop.set("F", g.integers(0, 3, (n, 2)).astype(float), "G", g.random((n, 1)) - 0.5,
                "CV", np.maximum(g.random((n, 1)) - 0.5, 0.0))
        pop.set("rank", g.integers(0, 3, n), "crowding", g.choice([0.0, 1.0, np.inf, np.nan], n))
    for individual in pop:
        if g.random() < 0.5:
            individual.set("label", str(g.integers(3)))
    return pop


def assert_same(got, expected) -> None:
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for a, b in zip(got, expected):
            assert_same(a, b)
    elif isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tolist() == expected.tolist() or np.array_equal(got, expected, equal_nan=True)
    else:
        assert got == expected



@pytest.mark.parametrize("seed", range(40))
def test_population_get_equals_pymoos(seed) -> None:
    pop = random_population(seed)
    g = np.random.default_rng(seed)
    for _ in range(10):
        keys = list(g.choice(KEYS, int(g.integers(0, 4))))
        for to_numpy in (True, False):
            assert_same(population_get(pop, *keys, to_numpy=to_numpy), Population.get(pop, *keys, to_numpy=to_numpy))


def test_other_individuals_and_keyword_arguments_go_to_pymoo() -> None:
    class Labelled(Individual):
        def get(self, *keys):
            return "own"

    pop = Population.new("X", np.zeros((3, 2)))
    pop[1] = Labelled()
    assert population_get(pop, "label").tolist() == Population.get(pop, "label").tolist() == [None, "own", None]
    with pytest.raises(TypeError):  # Individual.get takes no keyword arguments, under pymoo's method too
        population_get(pop, "X", unknown=1)


def test_swapped_only_inside_the_context() -> None:
    original = Population.get
    with individual_values_read_once():
        assert Population.get is population_get
    assert Population.get is original
