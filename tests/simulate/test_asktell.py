"""The ask/tell adapter (analysis.simulate.asktell) and the examples/ strategies built on it, run through plain
`kernel_tuner.tune_kernel(strategy=<module>, simulation_mode=True)` and through the simulation engine."""

from __future__ import annotations

import gzip
import importlib.util
import itertools
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kernel_tuner import tune_kernel
from kernel_tuner.interface import Options

from analysis.kt.budget import SimulatedTimeBudget
from analysis.simulate import KernelTunerSpace
from analysis.simulate.asktell import ADAPTER_OPTIONS, CandidateError, Problem, make_problem, tune_with
from analysis.simulate.reference import write_cache_json
from helpers import HUB, LIMIT, REPO, TINY_FAILED, TINY_PARAMS, tiny_cache, tiny_space

# tune_kernel's note that the tiny space has no thread-block parameters
pytestmark = pytest.mark.filterwarnings("ignore:None of the tunable parameters specify thread block dimensions")

EXAMPLES = ["pymoo_smsemoa.py", "optuna_sampler.py"]
PARAMS = list(TINY_PARAMS)


def load_example(name: str) -> types.ModuleType:
    """An examples/ strategy module, loaded from its file."""
    spec = importlib.util.spec_from_file_location(f"test_asktell_{Path(name).stem}", REPO / "examples" / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_tune_kernel(space: KernelTunerSpace, cache_json: Path, strategy: Any, budget: int, seed: int | None,
                    options: dict | None = None) -> list[dict]:
    """Kernel Tuner's results of one simulated tune_kernel run of `strategy` (a module or anything with `tune`)."""
    results, _ = tune_kernel(
        space.cache["kernel_name"], "", space.cache.get("problem_size"), [], space.tune_params,
        restrictions=list(space.restrictions), cache=str(cache_json), simulation_mode=True, strategy=strategy,
        strategy_options={**(options or {}), "max_fevals": budget}, objective=list(space.objectives),
        objective_higher_is_better=space.higher_is_better, quiet=True, seed=seed,
    )
    return results


def configs(results: list[dict], names: list[str]) -> list[tuple]:
    return [tuple(r[name] for name in names) for r in results]


def comparable(results: list[dict], space: KernelTunerSpace) -> list[tuple]:
    """What a run did: each configuration and its objective values (the times of the run itself left out)."""
    return [(cfg, tuple(repr(r.get(o)) for o in space.objectives))
            for cfg, r in zip(configs(results, list(space.tune_params)), results)]


@pytest.fixture(scope="module")
def milo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The convolution_milo A100 cache decompressed to a plain .json (the original file, not re-written), and
    its kernel definition."""
    cache = HUB / "cachefiles" / "convolution_milo" / "A100.json.gz"
    cache_json = tmp_path_factory.mktemp("milo") / "A100.json"
    cache_json.write_bytes(gzip.decompress(cache.read_bytes()))
    return cache, cache_json


@pytest.fixture
def tiny_json(tmp_path: Path) -> Path:
    return write_cache_json(tiny_space(2), tmp_path / "tiny.json")


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_in_tune_kernel_on_a_real_cache(example: str, milo: tuple[Path, Path]) -> None:
    module = load_example(example)
    assert module.multi_objective is True and isinstance(module.display_name, str)
    assert set(ADAPTER_OPTIONS) <= set(module._options)
    cache, cache_json = milo
    kernel = HUB / "kernels" / "convolution_milo.json"
    for objectives, directions in ((["time"], ["min"]), (["time", "compile_time", "GFLOP/s"], ["min", "min", "max"])):
        space = KernelTunerSpace.from_cache_file(cache, kernel, objectives, directions)
        first, again, other = (run_tune_kernel(space, cache_json, module, 30, seed) for seed in (1, 1, 2))
        names = list(space.tune_params)
        assert len(set(configs(first, names))) == 30  # the budget: distinct evaluations, all of them spent
        assert all(space.cache_entries()[",".join(map(str, c))] for c in configs(first, names))  # all in the cache
        assert comparable(first, space) == comparable(again, space)
        assert comparable(first, space) != comparable(other, space)


def test_examples_reach_one_objective_and_several_alike(tiny_json: Path) -> None:
    """Both examples on the tiny space (failed and restriction-violating configurations): runs complete, only
    restriction-respecting configurations reach Kernel Tuner's results, failed ones are among them."""
    for example in EXAMPLES:
        module = load_example(example)
        for n_obj in (1, 2):
            space = tiny_space(n_obj)
            results = run_tune_kernel(space, tiny_json, module, 20, seed=5)
            seen = configs(results, PARAMS)
            assert len(set(seen)) == 20, (example, n_obj)
            assert all(a * b <= LIMIT for a, b, _ in seen)


class Exhaustive:
    """Asks for every index vector of the box in order, `batch` at a time; records what it is told."""

    told: list[tuple[tuple[int, ...], Any]] = []

    def __init__(self, problem: Problem, batch: int = 7) -> None:
        self.problem = problem
        self.todo = list(itertools.product(*(range(n) for n in problem.sizes)))
        self.batch = batch
        Exhaustive.told = []

    def ask(self) -> list[tuple[int, ...]]:
        batch, self.todo = self.todo[:self.batch], self.todo[self.batch:]
        return batch

    def tell(self, candidates: list[tuple[int, ...]], costs: list[Any]) -> None:
        Exhaustive.told += list(zip(candidates, costs))


def strategy(make_optimizer: Any, options: dict | None = None) -> types.ModuleType:
    """A strategy module for tune_kernel that runs `make_optimizer` through the adapter."""
    module = types.ModuleType("test_asktell_strategy")
    module._options = {**(options or {}), **ADAPTER_OPTIONS}
    module.tune = lambda s, r, t: tune_with(make_optimizer, module._options, s, r, t)
    return module


def test_costs_are_told_and_invalid_configurations_as_none(tiny_json: Path) -> None:
    space = tiny_space(2)
    results = run_tune_kernel(space, tiny_json, strategy(Exhaustive), 1000, seed=1)
    entries = tiny_cache()["cache"]
    # told in order, whole batches, up to the batch that evaluated the last configuration of the space
    box = list(itertools.product(*(range(len(v)) for v in TINY_PARAMS.values())))
    assert [indices for indices, _ in Exhaustive.told] == box[:len(Exhaustive.told)]
    assert len(Exhaustive.told) % 7 == 0 and len(Exhaustive.told) > 7
    for indices, cost in Exhaustive.told:
        config = tuple(TINY_PARAMS[p][i] for p, i in zip(PARAMS, indices))
        if config[0] * config[1] > LIMIT or config in TINY_FAILED:
            assert cost is None, config
        else:
            entry = entries[",".join(map(str, config))]
            assert cost == (entry["time"], entry["energy"])
    # failed configurations are charged (they are in the results), restriction-violating ones never run
    assert set(configs(results, PARAMS)) == {tuple(e[p] for p in PARAMS) for e in entries.values()}


def test_invalid_configurations_told_as_the_worst_valid_cost_before_them(tiny_json: Path) -> None:
    space = tiny_space(2)
    run_tune_kernel(space, tiny_json, strategy(Exhaustive), 1000, seed=1, options={"invalid_cost": "worst"})
    as_none = dict(Exhaustive.told)
    run_tune_kernel(space, tiny_json, strategy(Exhaustive), 1000, seed=1)
    plain = Exhaustive.told
    worst, invalid = None, 0
    for indices, cost in plain:  # the same proposals; None replaced by the running worst valid cost
        if cost is None:
            invalid += 1
            assert as_none[indices] == (tuple(worst) if worst is not None else (0.0, 0.0)), indices
        else:
            assert as_none[indices] == cost
            worst = list(cost) if worst is None else [max(w, c) for w, c in zip(worst, cost, strict=True)]
    assert invalid > 0
    with pytest.raises(ValueError, match="invalid_cost"):
        run_tune_kernel(space, tiny_json, strategy(Exhaustive), 10, seed=1, options={"invalid_cost": "nan"})


class Recorder(Exhaustive):
    """Exhaustive, remembering the Problem it was given."""

    problem: Problem | None = None

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        Recorder.problem = problem


def test_an_optimizer_knows_its_budget(tiny_json: Path) -> None:
    space = tiny_space(1)
    run_tune_kernel(space, tiny_json, strategy(Recorder), 9, seed=1)
    assert Recorder.problem.max_evaluations == 9 and Recorder.problem.time_limit_s is None
    run_tune_kernel(space, tiny_json, strategy(Recorder), 10_000, seed=1)  # capped at the space's size, as KT does
    valid = sum(a * b <= LIMIT for a, b, _ in itertools.product(*TINY_PARAMS.values()))
    assert Recorder.problem.max_evaluations == valid
    searchspace = types.SimpleNamespace(tune_params=TINY_PARAMS, size=20)
    budget = SimulatedTimeBudget(2500.0, 30)  # the suite's clock: simulated milliseconds
    problem = make_problem(searchspace, Options(strategy_options={}, objective=["time"], seed=1, budget=budget), {})
    assert problem.max_evaluations == 20 and problem.time_limit_s == 2.5


def test_budget_counts_distinct_evaluations_and_stops_mid_batch(tiny_json: Path) -> None:
    space = tiny_space(1)
    results = run_tune_kernel(space, tiny_json, strategy(lambda p: Exhaustive(p, batch=50)), 9, seed=1)
    assert len(results) == len(set(configs(results, PARAMS))) == 9
    assert Exhaustive.told == []  # the budget ran out within the first batch: no partial batch is told


class Repeater:
    """Asks for one configuration over and over, and counts its asks."""

    asks = 0

    def __init__(self, problem: Problem, candidate: tuple[int, ...] = (0, 0, 0)) -> None:
        self.candidate = candidate
        Repeater.asks = 0

    def ask(self) -> list[tuple[int, ...]]:
        Repeater.asks += 1
        return [self.candidate]

    def tell(self, candidates: list[tuple[int, ...]], costs: list[Any]) -> None:
        pass


def test_stale_limit_ends_a_run_that_proposes_nothing_new(tiny_json: Path) -> None:
    space = tiny_space(1)
    results = run_tune_kernel(space, tiny_json, strategy(Repeater), 20, seed=1, options={"stale_limit": 40})
    assert configs(results, PARAMS) == [(1, 1, 0)] * 41  # one evaluation, then 40 free revisits
    assert Repeater.asks == 41
    # a restriction-violating configuration never reaches the runner: only the guard ends the run
    infeasible = strategy(lambda p: Repeater(p, candidate=(5, 4, 0)))  # a=6, b=16
    assert run_tune_kernel(space, tiny_json, infeasible, 20, seed=1, options={"stale_limit": 40}) == []
    assert Repeater.asks == 40
    with pytest.raises(ValueError, match="stale_limit"):
        run_tune_kernel(space, tiny_json, strategy(Repeater), 20, seed=1, options={"stale_limit": 0})


def test_a_bad_candidate_names_the_parameter_and_its_range(tiny_json: Path) -> None:
    space = tiny_space(1)
    with pytest.raises(CandidateError, match=r"parameter 'b' .*out of range 0\.\.4"):
        run_tune_kernel(space, tiny_json, strategy(lambda p: Repeater(p, candidate=(0, 5, 0))), 20, seed=1)
    problem = make_problem(types.SimpleNamespace(tune_params=TINY_PARAMS),
                           Options(strategy_options={}, objective=["time"], seed=3), {})
    with pytest.raises(CandidateError, match=r"2 indices; the space has 3 parameters \(a, b, c\)"):
        problem.check([0, 1])
    with pytest.raises(CandidateError, match=r"parameter 'c' .*not an integer; expected 0\.\.1"):
        problem.check([0, 1, 0.5])
    with pytest.raises(CandidateError, match=r"parameter 'a' .*out of range 0\.\.5"):
        problem.check([-1, 0, 0])
    assert problem.check(np.array([5.0, 4.0, 1.0])) == (5, 4, 1)
    assert problem.decode([5, 4, 1]) == (6, 16, 1) and problem.encode((6, 16, 1)) == (5, 4, 1)


def test_problem_seed_options_and_layout() -> None:
    searchspace = types.SimpleNamespace(tune_params=TINY_PARAMS)
    table = {"popsize": ("population", 20)}
    problem = make_problem(searchspace, Options(strategy_options={"popsize": 8, "max_fevals": 10},
                                                objective=["time", "energy"], seed=11), table)
    assert problem.seed == 11 and problem.n_objectives == 2 and problem.sizes == (6, 5, 2)
    assert dict(problem.options) == {"stale_limit": ADAPTER_OPTIONS["stale_limit"][1], "invalid_cost": "none",
                                     "popsize": 8}
    assert problem.names == tuple(PARAMS) and problem.parameters["b"] == (1, 2, 4, 8, 16)
    # no seed: one drawn from NumPy's global generator, so a globally seeded run still reproduces
    unseeded = Options(strategy_options={}, objective=["time"], seed=None)
    seeds = []
    for _ in range(2):
        np.random.seed(5)
        seeds.append(make_problem(searchspace, unseeded, table).seed)
    assert seeds[0] == seeds[1]
    with pytest.raises(ValueError, match="popsize"):
        make_problem(searchspace, Options(strategy_options={"pop_size": 8}, objective=["time"], seed=1), table)


def test_optuna_example_rejects_a_bad_sampler(tiny_json: Path) -> None:
    module = load_example("optuna_sampler.py")
    with pytest.raises(ValueError, match="tpe, nsga2"):
        run_tune_kernel(tiny_space(1), tiny_json, module, 10, seed=1, options={"sampler": "cmaes"})
    # the NSGA-II sampler and invalid configurations told as failed trials run too
    for options in ({"sampler": "nsga2"}, {"invalid": "failed"}):
        results = run_tune_kernel(tiny_space(2), tiny_json, module, 15, seed=2, options=options)
        assert len(set(configs(results, PARAMS))) == 15


@pytest.mark.parametrize("example", EXAMPLES)
def test_engine_runs_an_example_as_tune_kernel_does(example: str, milo: tuple[Path, Path]) -> None:
    from analysis.simulate import simulate_run
    from analysis.simulate.reference import tune_kernel_trace

    cache, cache_json = milo
    name = f"examples/{example}"
    space = KernelTunerSpace.from_cache_file(cache, HUB / "kernels" / "convolution_milo.json", ["time", "compile_time"],
                                      ["min", "min"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither the examples nor the adapter warn
        engine = simulate_run(space, name, {}, 40, 3)
    reference = tune_kernel_trace(space, cache_json, name, {}, 40, 3)
    assert engine.comparable() == reference.comparable()
    assert engine.evaluations_spent == 40 and not engine.stopped_early


@pytest.mark.parametrize("example", EXAMPLES)
def test_examples_run_on_one_objective_where_every_configuration_ties(example: str) -> None:
    """A time-only space of equal times: every front of SMS-EMOA's survival is split among equal points (pymoo's
    hypervolume contributions need two columns: the example pads one; found on RTX_2080_Ti/pnpoly)."""
    from analysis.simulate import simulate_run

    cache = tiny_cache()
    for entry in cache["cache"].values():
        if isinstance(entry["time"], float):
            entry["time"] = 2.0
    space = KernelTunerSpace(dict(TINY_PARAMS), [f"a * b <= {LIMIT}"], cache, ["time"], ["min"])
    for seed in (1, 2, 3):
        trace = simulate_run(space, f"examples/{example}", {}, 30, seed)
        assert trace.evaluations_spent == 30 or trace.stopped_early
        assert {v for v, ok in zip(trace.values["time"], trace.valid) if ok} == {2.0}
