"""The engine's differential evolution loop (analysis.fastpath.diff_evo) against Kernel Tuner's.

Whole simulated runs with and without the replica give the same traces and proposal counts; each
replicated helper gives Kernel Tuner's result and leaves NumPy's global generator where Kernel
Tuner's leaves it; the replicated Kernel Tuner sources are pinned.
"""

from __future__ import annotations

import random
from functools import partial

import numpy as np
import pytest
from kernel_tuner.strategies import diff_evo as kt_de

from analysis.fastpath import diff_evo
from analysis.simulate import KernelTunerSpace, simulate_run
from helpers import HUB, REPO, tiny_space

METHODS = kt_de.supported_methods



def test_the_replica_is_active_only_inside_its_context() -> None:
    original = kt_de.differential_evolution
    with diff_evo.fast_differential_evolution():
        assert kt_de.differential_evolution is diff_evo.differential_evolution
    assert kt_de.differential_evolution is original


def assert_runs_identical(space: KernelTunerSpace, options: dict, budget: int, seeds, monkeypatch) -> None:
    """Runs with the replica equal runs with Kernel Tuner's loop, and the replica did run."""
    for seed in seeds:
        calls = []
        with monkeypatch.context() as patched:
            patched.setattr(diff_evo, "_random_draw",
                            lambda *args, draw=diff_evo._random_draw, calls=calls: calls.append(args) or draw(*args))
            fast = simulate_run(space, "diff_evo", options, budget, seed)
        with monkeypatch.context() as patched:
            patched.setenv("TSB_STOCK", "diff_evo")
            reference = simulate_run(space, "diff_evo", options, budget, seed)
        assert calls, "the replica was not used"
        assert fast.comparable() == reference.comparable(), (options, seed)
        assert fast.meta["proposals"] == reference.meta["proposals"], (options, seed)
        assert fast.stopped_early == reference.stopped_early


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("aware", [True, False])
def test_tiny_space_runs_identical_for_every_method(method: str, aware: bool, monkeypatch) -> None:
    options = {"constraint_aware": aware, "method": method, "popsize": 4}
    assert_runs_identical(tiny_space(1), options, 30, range(3), monkeypatch)


def test_stabilised_regeneration_and_stuck_insertion_identical(monkeypatch) -> None:
    """Runs long enough on the small space that populations stabilise (a new population after two stable
    generations) and trial vectors repeat (a random sample after 20 duplicates in a row) stay identical."""
    from kernel_tuner.searchspace import Searchspace

    options = {"constraint_aware": False, "method": "best1bin", "popsize": 2, "F": 0.1, "CR": 0.2}
    populations, samples = [], []
    with monkeypatch.context() as patched:
        patched.setattr(kt_de, "generate_population",
                        lambda *args, generate=kt_de.generate_population: populations.append(1) or generate(*args))
        patched.setattr(Searchspace, "get_random_sample",
                        lambda self, n, sample=Searchspace.get_random_sample: samples.append(n) or sample(self, n))
        assert_runs_identical(tiny_space(1), options, 80, range(4), monkeypatch)
    assert len(populations) > 2 * 4 and samples, "the regeneration and stuck branches were not exercised"


@pytest.mark.skipif(HUB is None, reason="benchmark_hub data not available")
@pytest.mark.parametrize("kernel", ["dedispersion_milo", "convolution_milo"])
@pytest.mark.parametrize(("method", "aware"), [
    ("best1bin", True), ("best1bin", False), ("rand2exp", True), ("currenttobest1bin", False),
    ("randtobest1exp", True), ("best2bin", False),
])
def test_real_space_runs_identical(kernel: str, method: str, aware: bool, monkeypatch) -> None:
    space = KernelTunerSpace.from_cache_file(HUB / "cachefiles" / kernel / "A100.json.gz",
                                      HUB / "kernels" / f"{kernel}.json", ["time"], None)
    options = {"constraint_aware": aware, "method": method, "popsize": 4}
    assert_runs_identical(space, options, 150, (11, 12), monkeypatch)


def test_host_cpu_space_runs_identical(monkeypatch) -> None:
    from analysis.simulate.jobs import space_data
    from analysis.spaces.importers import import_space

    sweep = REPO / "data/sweeps/cpu/intel-xeon-vm"
    space = space_data(import_space(sweep / "bessel.json.gz", definition=sweep / "bessel.yaml", kernel="bessel",
                                    device="intel-xeon-vm"), ["time"])
    for aware in (True, False):
        assert_runs_identical(space, {"constraint_aware": aware, "popsize": 4}, 80, (5, 6), monkeypatch)


# ---- the helpers, on random inputs, against Kernel Tuner's ----

def same_draws(kt_call, fast_call, seed: int) -> tuple:
    """Both calls from the same global NumPy state; their results and the state each leaves behind."""
    np.random.seed(seed)
    expected = kt_call()
    expected_state = np.random.get_state()[1].tolist(), np.random.get_state()[2]
    np.random.seed(seed)
    got = fast_call()
    got_state = np.random.get_state()[1].tolist(), np.random.get_state()[2]
    assert got_state == expected_state
    return expected, got


def test_random_draw_matches_kernel_tuner() -> None:
    rng = random.Random(1)
    for seed in range(400):
        popsize = rng.choice([2, 3, 4, 5, 6, 12, 48, 272])
        i = rng.randrange(popsize)
        mutation, best = rng.choice([1, 2]), rng.choice([True, False])
        idxs = [idx for idx in range(popsize) if idx != i]
        expected, got = same_draws(partial(kt_de.random_draw, idxs, mutation, best),
                                   partial(diff_evo._random_draw, popsize, i, mutation, best), seed)
        assert got == expected.tolist(), (popsize, i, mutation, best)
    with pytest.raises(ValueError):  # popsize 1: nothing to draw from, Kernel Tuner's error
        diff_evo._random_draw(1, 0, 1, True)


def random_index_vectors(rng: random.Random, max_idx: list[int], count: int) -> list[list[int]]:
    return [[rng.randint(0, high) for high in max_idx] for _ in range(count)]


@pytest.mark.parametrize("kt_mutation", [kt_de.mutate_de_1, kt_de.mutate_de_2, kt_de.mutate_currenttobest1,
                                         kt_de.mutate_randtobest1])
def test_mutations_with_round_and_clip_match_kernel_tuner(kt_mutation) -> None:
    rng = random.Random(2)
    fast = diff_evo._MUTATIONS[kt_mutation]
    for _ in range(3000):
        max_idx = [rng.randint(0, 12) for _ in range(rng.randint(1, 8))]
        best = rng.choice([True, False]) if kt_mutation in (kt_de.mutate_de_1, kt_de.mutate_de_2) else False
        draws = {kt_de.mutate_de_1: 3, kt_de.mutate_de_2: 5}.get(kt_mutation, 3) - int(best)
        best_idx, *randos = random_index_vectors(rng, max_idx, 1 + draws)
        F = rng.choice([0.5, 0.7, 1.5, 2, 1, 0.25, rng.uniform(0, 2)])  # halves give round-half-to-even ties
        expected = kt_mutation(np.array(best_idx, dtype=float), [np.array(r, dtype=float) for r in randos], F,
                               np.zeros(len(max_idx)), max_idx, best)
        got = fast(best_idx, randos, F, max_idx, best)
        assert got == expected.tolist(), (kt_mutation.__name__, best_idx, randos, F, max_idx, best)


def test_binomial_crossover_matches_kernel_tuner() -> None:
    rng = random.Random(3)
    for seed in range(2000):
        dimensions = rng.randint(1, 9)
        donor = [rng.randint(0, 5) for _ in range(dimensions)]
        target = [rng.choice(["x", 1.5, 7]) for _ in range(dimensions)]
        CR = rng.choice([0.0, 0.05, 0.6, 1.0, 1])
        expected, got = same_draws(partial(kt_de.binomial_crossover, donor, target, CR),
                                   partial(diff_evo._binomial_crossover, donor, target, CR), seed)
        assert got == expected and type(got) is type(expected)


def test_index_maps_match_kernel_tuners_conversions() -> None:
    tune_params = {
        "ints": [1, 2, 4, 8, 16],
        "repeats": [3, 1, 3, 2, 1],  # list.index finds the first occurrence
        "mixed": [1, 1.0, True, "1", 2.5, None],  # == across types: 1 == 1.0 == True
        "unhashable": [[1, 2], [3], (4,), {"a": 1}],
        "floats": [0.1, 0.2, float("inf"), -0.0],
    }
    maps = diff_evo._IndexMaps(tune_params)
    rng = random.Random(4)
    values = list(tune_params.values())
    for _ in range(2000):
        individual = [rng.choice(v) for v in values]
        individual[0] = np.int64(individual[0]) if rng.random() < 0.5 else individual[0]  # searchspace scalars
        expected = kt_de.values_to_indices(individual, tune_params)
        got = maps.to_indices(individual)
        assert got == expected.tolist(), individual
        assert maps.to_values(got) == kt_de.indices_to_values(expected.astype(int), tune_params)
    for missing in ([3, 3, 1, [3], 0.1], [1, 3, "2", [3], 0.1], [1, 3, 1, [9], 0.1]):
        with pytest.raises(ValueError):
            kt_de.values_to_indices(missing, tune_params)
        with pytest.raises(ValueError):
            maps.to_indices(missing)


def test_hashed_membership_matches_list_membership() -> None:
    rng = random.Random(5)
    pool = [1, 2, 1.0, 2.0, np.int64(2), np.float64(1.0), "a", True, 0.5]
    for hashed in (True, False):
        members: list = []
        trials = diff_evo._Members(members, hashed)
        for _ in range(3000):
            vector = [rng.choice(pool) for _ in range(3)]
            expected = list(vector) in members
            assert (list(vector) in trials) == expected, vector
            if not expected:
                trials.append(list(vector))
        assert trials.members is members
