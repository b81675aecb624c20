"""Simulation engine: registry, contract of every algorithm, reproducibility, identity with tune_kernel."""

from __future__ import annotations

import gzip
import itertools
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from kernel_tuner import util as kt_util

from analysis.simulate import (
    KernelTunerSpace,
    algorithm_names,
    derive_seed,
    get_algorithm,
    options_markdown,
    resolve_options,
    simulate_run,
)
from analysis.simulate.reference import tune_kernel_trace
from helpers import (
    LIMIT,
    REPO,
    TINY_FAILED,
    TINY_PARAMS,
    TINY_RESTRICTIONS,
    tiny_cache,
    tiny_space,
)

HUB = REPO / "data" / "benchmark_hub"
if not (HUB / "cachefiles" / "convolution_milo" / "A100.json.gz").exists():
    HUB = None

BUDGET = 20


EXAMPLES = sorted(str(p.relative_to(REPO)) for p in (REPO / "examples").glob("*.py"))


# Kernel Tuner 1.5.0's skopt strategy fails on a space with failed configurations, as the tiny space has: its
# gp_hedge acquisition draws from NaN probabilities ("pvals ... contains NaNs"); the leaderboard records such runs
# as failed. test_skopt_fails_on_failed_configurations holds it to that, so a fixed skopt rejoins these tests.
FAILS_ON_TINY = ("skopt",)


def algorithm_cases(include_failing: bool = False) -> list[tuple[str, dict]]:
    """Every registered algorithm and every strategy of examples/ (by its path, as a config names it), with both
    constraint_aware settings where it has the option; those of FAILS_ON_TINY only with `include_failing`."""
    cases = []
    for name in [*algorithm_names(), *EXAMPLES]:
        if name in FAILS_ON_TINY and not include_failing:
            continue
        if "constraint_aware" in get_algorithm(name).options:
            cases += [(name, {"constraint_aware": True}), (name, {"constraint_aware": False})]
        else:
            cases.append((name, {}))
    return cases


def n_obj_for(name: str) -> int:
    """Two objectives where the algorithm supports them, else one."""
    return 2 if get_algorithm(name).multi_objective else 1


def test_skopt_fails_on_failed_configurations() -> None:
    assert [n for n, _ in algorithm_cases(include_failing=True) if n in FAILS_ON_TINY] == list(FAILS_ON_TINY)
    with pytest.raises(ValueError, match="pvals"):
        simulate_run(tiny_space(1), "skopt", {}, BUDGET, seed=7)


@pytest.mark.parametrize(("name", "options"), algorithm_cases())
def test_contract_every_algorithm(name: str, options: dict) -> None:
    space = tiny_space(n_obj_for(name))
    trace = simulate_run(space, name, options, BUDGET, seed=7)
    n = len(trace)
    cols = trace.columns()
    assert all(len(v) == n for v in cols.values())
    assert [c for c in cols if c.startswith("param.")] == ["param.a", "param.b", "param.c"]
    assert trace.evaluations_spent <= BUDGET
    if not trace.stopped_early:
        assert trace.evaluations_spent == BUDGET
    assert cols["budget_used"][-1] == trace.evaluations_spent
    # a configuration is visited first exactly once
    firsts = [cfg for cfg, first in zip(trace.configs, trace.first_visit) if first]
    assert len(firsts) == len(set(firsts)) == len(set(trace.configs))
    # failed and infeasible configurations are invalid and carry no objective values
    for cfg, valid, t in zip(trace.configs, trace.valid, trace.values["time"]):
        feasible = cfg[0] * cfg[1] <= LIMIT
        assert valid == (feasible and cfg not in TINY_FAILED)
        assert np.isnan(t) != valid
    if not get_algorithm(name).unaware:
        assert all(cfg[0] * cfg[1] <= LIMIT for cfg in trace.configs)
    # simulated time only grows, and only on first visits of measured configurations
    steps = np.diff([0.0, *trace.sim_time_ms])
    assert (steps >= 0).all()
    assert all(s == 0 for s, first in zip(steps, trace.first_visit) if not first)
    frame = trace.to_frame()
    assert len(frame) == n and frame.attrs["algorithm"] == name


def test_unaware_charges_infeasible_proposals() -> None:
    space = tiny_space(2)
    traces = [simulate_run(space, "nsga2_unaware", {}, BUDGET, seed=s) for s in range(4)]
    infeasible = [
        cfg for t in traces for cfg, first in zip(t.configs, t.first_visit) if first and cfg[0] * cfg[1] > LIMIT
    ]
    assert infeasible, "pymoo's unconstrained sampling should propose some infeasible configurations"
    assert all(t.evaluations_spent == BUDGET for t in traces)


def test_exact_duplicate_elimination_marks_what_pymoos_default_marks(monkeypatch) -> None:
    from pymoo.core.duplicate import DefaultDuplicateElimination
    from pymoo.core.population import Population

    from analysis.fastpath.duplicates import ExactDuplicateElimination

    rng = np.random.default_rng(0)
    for _ in range(50):
        pop = Population.new(X=rng.integers(0, 3, size=(30, 4)).astype(float))
        other = Population.new(X=rng.integers(0, 3, size=(10, 4)).astype(float))
        for against in (None, other):
            want = DefaultDuplicateElimination()._do(pop, against, np.zeros(len(pop), dtype=bool))
            got = ExactDuplicateElimination()._do(pop, against, np.zeros(len(pop), dtype=bool))
            assert (got == want).all()
    # and whole constraint-unaware runs are the same with pymoo's own elimination
    space = tiny_space(2)
    fast = [simulate_run(space, name, {}, 40, seed=3) for name in ("nsga2_unaware", "nsga3_unaware")]
    monkeypatch.setenv("TSB_STOCK", "duplicates")
    slow = [simulate_run(space, name, {}, 40, seed=3) for name in ("nsga2_unaware", "nsga3_unaware")]
    for a, b in zip(fast, slow):
        assert a.configs == b.configs and len(a) > 40  # repeats were proposed, so duplicates were in play


def test_budget_larger_than_space_is_capped() -> None:
    trace = simulate_run(tiny_space(1), "rs", {}, 1000, seed=1)
    size = sum(1 for a, b in itertools.product(TINY_PARAMS["a"], TINY_PARAMS["b"]) if a * b <= LIMIT) * 2
    assert trace.evaluations_spent == len(trace) == size
    assert trace.meta["effective_budget"] == size and not trace.stopped_early


_REPRO_SCRIPT = """
import hashlib, json, sys, warnings
warnings.simplefilter("ignore")
from analysis.simulate import KernelTunerSpace, simulate_run, get_algorithm
doc = json.load(open(sys.argv[1]))
out = []
for name, options in doc["cases"]:
    n_obj = 2 if get_algorithm(name).multi_objective else 1
    space = KernelTunerSpace(doc["params"], doc["restrictions"], doc["cache"], ["time", "energy"][:n_obj],
                             ["min"] * n_obj)
    out.append(repr(simulate_run(space, name, options, doc["budget"], 12345).comparable()))
print(hashlib.sha256("\\n".join(out).encode()).hexdigest())
"""


def test_same_seed_reproducible_across_processes(tmp_path: Path) -> None:
    doc = {
        "params": TINY_PARAMS,
        "restrictions": TINY_RESTRICTIONS,
        "cache": tiny_cache(),
        "cases": algorithm_cases(),
        "budget": BUDGET,
    }
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(doc))
    digests = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        command = [sys.executable, "-c", _REPRO_SCRIPT, str(spec)]
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, check=True)
        digests.append(done.stdout.strip())
    assert digests[0] == digests[1] and len(digests[0]) == 64
    # and a different seed gives a different run
    space = tiny_space(2)
    first, second = (simulate_run(space, "nsga2", {}, BUDGET, seed).comparable() for seed in (1, 2))
    assert first != second


def test_unknown_algorithm_lists_valid_ones() -> None:
    with pytest.raises(ValueError) as err:
        simulate_run(tiny_space(1), "hill_climb", {}, BUDGET, 0)
    for name in algorithm_names():
        assert name in str(err.value)


def test_unknown_option_lists_valid_ones() -> None:
    with pytest.raises(ValueError) as err:
        simulate_run(tiny_space(1), "pso", {"swarm": 3}, BUDGET, 0)
    for option in get_algorithm("pso").options:
        assert option in str(err.value)
    with pytest.raises(ValueError, match="valid options"):
        resolve_options("rs", {"fraction": 0.5})


def test_single_objective_algorithm_rejects_two_objectives() -> None:
    with pytest.raises(ValueError, match="single-objective"):
        simulate_run(tiny_space(2), "pso", {"constraint_aware": True}, BUDGET, 0)


def test_options_markdown_documents_every_algorithm() -> None:
    text = options_markdown()
    for name in algorithm_names():
        assert f"### `{name}`" in text
        for option in get_algorithm(name).options:
            assert f"`{option}`" in text
    assert "constraint_aware" in resolve_options("genetic_algorithm", {})


def test_derive_seed_is_stable() -> None:
    identity = dict(
        space="convolution_milo/A100",
        objectives=["time", "energy"],
        algorithm="nsga2",
        options={"popsize": 20},
        budget=200,
        repetition=0,
    )
    seed = derive_seed(**identity)
    assert seed == 978427052  # pinned: changing the derivation silently changes every result
    shuffled = dict(reversed(list(identity.items())))
    assert derive_seed(**shuffled) == seed
    assert derive_seed(**{**identity, "options": {"popsize": 20}}) == seed
    assert derive_seed(**{**identity, "repetition": 1}) != seed
    assert 0 <= seed < 2**31


def test_hamming_index_matches_kernel_tuner() -> None:
    from kernel_tuner.searchspace import Searchspace

    from analysis.fastpath.neighbours import HammingIndex

    searchspace = Searchspace(TINY_PARAMS, TINY_RESTRICTIONS, 1024)
    index = HammingIndex(searchspace)
    for config in itertools.product(*TINY_PARAMS.values()):
        expected = searchspace.get_neighbors_indices_no_cache(config, "Hamming")
        got = index.neighbours(config)
        assert np.array_equal(expected, got) and expected.dtype == got.dtype, config


def test_hashed_duplicate_elimination_matches_pairwise() -> None:
    from kernel_tuner.strategies.pymoo_minimize import TuningParamConfigDuplicateElimination
    from pymoo.core.population import Population

    from analysis.fastpath.duplicates import HashedDuplicateElimination

    rng = np.random.default_rng(3)
    for _ in range(30):
        pop = Population.new("X", rng.integers(0, 3, size=(12, 3)).astype(object))
        other = Population.new("X", rng.integers(0, 3, size=(6, 3)).astype(object))
        for args in ((pop, None), (pop, other)):
            expected = TuningParamConfigDuplicateElimination()._do(*args, np.full(len(pop), False))
            got = HashedDuplicateElimination()._do(*args, np.full(len(pop), False))
            assert np.array_equal(expected, got)


def test_vectorised_snapping_matches_kernel_tuner() -> None:
    """The snap and the nearest-valid repair give Kernel Tuner's answers, at random points and on exact ties."""
    from kernel_tuner.searchspace import Searchspace
    from kernel_tuner.strategies import common

    from analysis.fastpath import snapping

    params = {**TINY_PARAMS, "d": [1, 2, 3]}
    searchspace = Searchspace(params, TINY_RESTRICTIONS, 1024)
    rng = np.random.default_rng(11)
    for eps in (1e-3, 0.05, 1 / 3):
        span = [eps * len(v) for v in params.values()]
        grid = [[0.5 * eps + i * eps for i in range(len(v))] for v in params.values()]
        points = [rng.uniform(0, span) for _ in range(300)]
        points += [np.array([g[rng.integers(len(g))] for g in grid]) for _ in range(100)]  # on grid points: ties
        for x in points:
            snapped = common.unscale_and_snap_to_nearest(x, params, eps)
            assert snapping.unscale_and_snap_to_nearest(x, params, eps) == snapped
            invalid = [tuple(c) for c in itertools.product(*params.values()) if c[0] * c[1] > LIMIT]
            for config in (tuple(snapped), invalid[rng.integers(len(invalid))]):
                expected = common.unscale_and_snap_to_nearest_valid(x, list(config), searchspace, eps)
                assert snapping.unscale_and_snap_to_nearest_valid(x, list(config), searchspace, eps) == expected
        # the bisection's edge cases: midpoints between grid points (ties), beyond both ends, NaN, infinities,
        # float32, integer and boolean coordinates
        special = [g[k] + (g[k + 1] - g[k]) / 2 for g in grid for k in range(len(g) - 1)]
        special += [-1.0, -eps, 0.0, max(span) + 1.0, 1e300, -1e300, float("nan"), float("inf"), -float("inf")]
        special += [np.float32(v) for v in rng.uniform(0, max(span), 20)] + [0, 1, 2, True, False]
        for v in special:
            x = [v] * len(params)
            assert snapping.unscale_and_snap_to_nearest(x, params, eps) == common.unscale_and_snap_to_nearest(
                x, params, eps), (eps, v)


def test_memoised_neighbours_match_kernel_tuner() -> None:
    """Every memoised neighbour method answers what Kernel Tuner computes, valid and invalid configurations, twice;
    the answers of the indexed methods are read-only arrays."""
    from kernel_tuner.searchspace import Searchspace

    from analysis.fastpath import neighbours

    memo: dict = {}
    for _ in range(2):  # the second pass is served from the memo
        plain = Searchspace(TINY_PARAMS, TINY_RESTRICTIONS, 1024)
        memoised = Searchspace(TINY_PARAMS, TINY_RESTRICTIONS, 1024)
        neighbours.memoise_neighbours(memoised, memo)
        for method in sorted(neighbours.MEMOISED_METHODS):
            for config in itertools.product(*TINY_PARAMS.values()):
                expected = plain.get_neighbors_indices_no_cache(config, method)
                got = memoised.get_neighbors_indices_no_cache(config, method)
                assert np.array_equal(expected, got) and np.asarray(expected).dtype == np.asarray(got).dtype, \
                    (method, config)
                if method in neighbours.NEIGHBOUR_INDEXES:
                    assert not got.flags.writeable, (method, config)
    assert {key[0] for key in memo if isinstance(key, tuple)} == neighbours.MEMOISED_METHODS


def test_lean_cost_function_replicates_kernel_tuners_run_configs(monkeypatch) -> None:
    """The lean `_run_configs` is checked against the Kernel Tuner method it replaces: a changed method must be
    looked at again (its source hash), and each strategy's run is identical with and without it."""


    space = tiny_space(1)
    for name, options in algorithm_cases():
        if get_algorithm(name).multi_objective and name != "rs":
            continue
        for seed in (1, 2):
            lean = simulate_run(space, name, options, BUDGET, seed)
            with monkeypatch.context() as patched:
                patched.setenv("TSB_STOCK", "runner")
                reference = simulate_run(space, name, options, BUDGET, seed)
            assert lean.comparable() == reference.comparable(), (name, options, seed)
            assert lean.meta["proposals"] == reference.meta["proposals"]


@pytest.mark.parametrize("limits", [{}, {"time_limit_ms": 900.0}, {"max_proposals": 40}],
                         ids=["evaluations", "time limit", "proposal cap"])
def test_simulation_runner_run_replicates_kernel_tuners(limits) -> None:
    """`simulation_runner_run` against SimulationRunner.run on the same calls: single and batched configurations,
    revisits, failed entries, configurations outside the cache (an InvalidConfig with a warning, or an error),
    the budget running out (None), metrics; the same results (but the wall-clock strategy and framework times),
    the same runner and budget state after every call."""
    import copy
    import warnings

    from kernel_tuner.runners.simulation import SimulationRunner

    from analysis.fastpath import runner
    from analysis.simulate.setup import build_setup

    rng = np.random.default_rng(len(limits))
    valid = list(tiny_cache()["cache"].values())
    calls = []
    for _ in range(60):
        batch = [[e["a"], e["b"], e["c"]] for e in rng.choice(valid, int(rng.integers(1, 4)))]
        if rng.random() < 0.1:
            batch.append([6, 8, 0])
        calls.append(batch)
    calls[:0] = [
        [[1, 1, 0], [1, 1, 5]],  # the second passes the restrictions but is not in the cache: an error
        [list(config) for config in TINY_FAILED],  # failed entries
        [[6, 8, 0]],  # outside the cache and the restrictions: an InvalidConfig and a warning
    ]
    for metrics in (None, {"time plus one": lambda p: p["time"] + 1}):
        outcomes = []
        for run in (SimulationRunner.run, runner.simulation_runner_run):
            setup = build_setup(tiny_space(1), "random_sample", {}, BUDGET, 3, **limits)
            setup.tuning_options.metrics = copy.copy(metrics)
            states = []
            for batch in calls:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        results = run(setup.runner, batch, setup.tuning_options)
                    except ValueError as error:
                        results = str(error)
                budget = setup.tuning_options.budget
                states.append((
                    results if isinstance(results, str) else [
                        None if r is None
                        else {k: v for k, v in r.items() if k not in ("strategy_time", "framework_time")}
                        for r in results],
                    [None if r is None or isinstance(results, str) else sorted(r) for r in results],
                    [str(w.message) for w in caught],
                    sorted(setup.runner.visited_results), setup.runner.total_simulated_time,
                    budget.num_fevals, budget.time_spent_extra, budget.proposals, budget.capped,
                ))
            outcomes.append(states)
        assert outcomes[0] == outcomes[1]
        flat = [r for state in outcomes[0] if not isinstance(state[0], str) for r in state[0]]
        assert None in flat and any("__error__" in r for r in flat if r)  # the budget ran out; failed entries
        assert any(state[2] for state in outcomes[0]) and any(isinstance(state[0], str) for state in outcomes[0])


def test_lean_cost_function_still_logs_each_proposal_at_debug_level(caplog, monkeypatch) -> None:
    """With the root logger at DEBUG, the lean `_run_configs` writes the lines Kernel Tuner's writes."""

    space = tiny_space(1)
    logged = []
    for lean in (True, False):
        caplog.clear()
        with monkeypatch.context() as patched, caplog.at_level(logging.DEBUG):
            if not lean:
                patched.setenv("TSB_STOCK", "runner")
            simulate_run(space, "pso", {"constraint_aware": True}, BUDGET, 5)
        logged.append([r.getMessage() for r in caplog.records if r.getMessage().startswith("normalize config:")])
    assert logged[0] == logged[1] and len(logged[0]) > BUDGET


def test_unchecked_proposals_are_snapped_only_when_run(monkeypatch) -> None:
    """Random sampling and the constraint-aware GA send unchecked batches: after a time limit or a proposal cap
    the lean `_run_configs` leaves the proposals the runner skips unsnapped, with the same runs, proposal counts
    and stop reasons as Kernel Tuner's method; and it does snap fewer (the path is taken)."""
    from kernel_tuner.strategies.common import CostFunc

    from analysis.simulate.jobs import space_data
    from analysis.spaces.importers import import_space

    sweep = REPO / "data/sweeps/cpu/intel-xeon-vm"
    space = space_data(import_space(sweep / "bessel.json.gz", definition=sweep / "bessel.yaml", kernel="bessel",
                                    device="intel-xeon-vm"), ["time"])
    size = len(space.cache_entries())  # more evaluations than valid configurations: the limits stop the runs
    snap = CostFunc._normalize_and_validate_config
    stops = set()
    for name, options in (("rs", {}), ("genetic_algorithm", {"constraint_aware": True})):
        for seed, limits in ((1, {"time_limit_ms": 400.0}), (2, {"time_limit_ms": 2000.0}), (3, {"max_proposals": 30})):
            runs, snapped = [], []
            for lean in (True, False):
                calls = []

                def counting(self, x, check_restrictions=True, calls=calls):
                    calls.append(1)
                    return snap(self, x, check_restrictions)

                with monkeypatch.context() as patched:
                    patched.setattr(CostFunc, "_normalize_and_validate_config", counting)
                    if not lean:
                        patched.setenv("TSB_STOCK", "runner")
                    runs.append(simulate_run(space, name, options, size, seed, **limits))
                snapped.append(len(calls))
            lean_run, reference = runs
            assert lean_run.comparable() == reference.comparable(), (name, seed, limits)
            for key in ("proposals", "stop_reason"):
                assert lean_run.meta[key] == reference.meta[key], (name, seed, limits, key)
            assert 0 < snapped[0] < snapped[1], (name, seed, limits, snapped)
            stops.add(lean_run.meta["stop_reason"])
    assert stops == {"time_limit", "proposal_cap"}


def test_next_is_done_foretells_is_done() -> None:
    """SimulatedTimeBudget.next_is_done answers what the next is_done will, and changes nothing."""
    from analysis.kt.budget import SimulatedTimeBudget

    for time_limit, max_fevals, cap in ((3.0, None, None), (None, 3, None), (None, None, 4), (5.0, 10, 6)):
        budget = SimulatedTimeBudget(time_limit, max_fevals, cap)
        answers = []
        for step in range(12):
            state = (budget.proposals, budget.capped, budget.num_fevals, budget.time_spent_extra)
            foretold = budget.next_is_done()
            assert state == (budget.proposals, budget.capped, budget.num_fevals, budget.time_spent_extra)
            answers.append(budget.is_done())
            assert foretold == answers[-1], (time_limit, max_fevals, cap, step)
            if step % 2:
                budget.add_evaluations(1)
                budget.add_time(milliseconds=1.0)
        assert answers[-1] and not answers[0]


@pytest.mark.skipif(HUB is None, reason="benchmark_hub data not available")
@pytest.mark.parametrize(("name", "options"), [
    ("rs", {}), ("nsga2", {}), ("nsga3", {}),
    *[(s, {"constraint_aware": aware}) for s in ("genetic_algorithm", "pso", "diff_evo", "firefly_algorithm")
      for aware in (True, False)],
])
def test_identical_to_tune_kernel_on_real_cache(name: str, options: dict, tmp_path: Path) -> None:
    kernel = HUB / "kernels" / "convolution_milo.json"
    cache = HUB / "cachefiles" / "convolution_milo" / "A100.json.gz"
    for objectives, directions in ((["time"], None), (["time", "compile_time"], ["min", "min"])):
        if len(objectives) > 1 and not get_algorithm(name).multi_objective:
            continue
        space = KernelTunerSpace.from_cache_file(cache, kernel, objectives, directions)
        # tune_kernel opens the original cache itself (decompressed, not re-written); tune_params in its order
        assert list(space.tune_params) == json.loads(gzip.decompress(cache.read_bytes()))["tune_params_keys"]
        cache_json = tmp_path / "A100.json"
        cache_json.write_bytes(gzip.decompress(cache.read_bytes()))
        for seed in (3, 4):
            engine = simulate_run(space, name, options, 40, seed)
            reference = tune_kernel_trace(space, cache_json, name, options, 40, seed)
            assert engine.comparable() == reference.comparable(), (name, options, objectives, seed)
            assert engine.evaluations_spent == reference.evaluations_spent
            if get_algorithm(name).multi_objective:
                assert engine.evaluations_spent == 40



def test_comparison_runs_stop_at_the_proposal_cap_and_are_unchanged_below_it() -> None:
    from analysis.simulate.jobs import max_proposals, run_batch
    from analysis.spaces.importers import import_space

    sweep = REPO / "data/sweeps/cpu/intel-xeon-vm"
    space = import_space(sweep / "bessel.json.gz", definition=sweep / "bessel.yaml", kernel="bessel",
                         device="intel-xeon-vm")
    assert max_proposals(space, None) is None and max_proposals(space, 0.2) == int(0.2 * 448)
    with pytest.raises(ValueError, match="proposal_cap"):
        max_proposals(space, 0)
    o3 = ["time", "memory", "mre"]
    capped = run_batch(space, "O3", o3, "nsga2_unaware", {}, 100, 2, proposal_cap=0.2)
    assert (capped.groupby("repetition").size() <= 89).all() and capped["stopped_early"].all()
    free = run_batch(space, "O3", o3, "nsga2_unaware", {}, 30, 2)
    loose = run_batch(space, "O3", o3, "nsga2_unaware", {}, 30, 2, proposal_cap=10)
    assert not free["stopped_early"].any()
    pd.testing.assert_frame_equal(free, loose)  # the cap is not part of the seed: runs under it are the same


def test_one_job_runs_every_budget_as_separate_jobs_would(tmp_path: Path) -> None:
    """`simulate --budget 20 30 --out a b` writes what two single-budget calls write; a count mismatch is an error."""
    from analysis.cli import main
    from analysis.spaces.importers import import_space

    sweep = REPO / "data/sweeps/cpu/intel-xeon-vm"
    space = import_space(sweep / "mriq.json.gz", definition=sweep / "mriq.yaml", kernel="mriq", device="intel-xeon-vm")
    space.save(tmp_path / "space.parquet", tmp_path / "space.json")
    common = ["simulate", "--space-parquet", str(tmp_path / "space.parquet"), "--space-meta",
              str(tmp_path / "space.json"), "--objective-set", "O3", "--objectives", '["time", "memory", "mre"]',
              "--algorithm", "nsga2_unaware", "--options", '{"popsize": 10}', "--repetitions", "2",
              "--proposal-cap", "2"]
    assert main(common + ["--budget", "20", "30", "--out", str(tmp_path / "b20.parquet"),
                          str(tmp_path / "b30.parquet")]) == 0
    for budget in (30, 20):
        assert main(common + ["--budget", str(budget), "--out", str(tmp_path / f"alone{budget}.parquet")]) == 0
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / f"b{budget}.parquet"),
                                      pd.read_parquet(tmp_path / f"alone{budget}.parquet"))
    assert main(common + ["--budget", "20", "30", "--out", str(tmp_path / "only_one.parquet")]) == 2
    assert not (tmp_path / "only_one.parquet").exists()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, -1, True, "x", None])
def test_bad_evaluation_time_in_a_raw_cache_is_refused(value):
    from analysis.errors import InputError

    cache = tiny_cache()
    key = next(iter(cache["cache"]))
    if value is None:
        del cache["cache"][key]["compile_time"]
    else:
        cache["cache"][key]["compile_time"] = value
    space = KernelTunerSpace(dict(TINY_PARAMS), list(TINY_RESTRICTIONS), cache, ["time"], ["min"], source="tiny.json")
    with pytest.raises(InputError, match=f"cache entry '{key}' (lacks|has) .*finite, non-negative") as exc:
        simulate_run(space, "rs", {}, 5, seed=1)
    assert exc.value.path == "tiny.json" and exc.value.field == f"cache.{key}.compile_time"


def test_evaluation_times_checked_by_entry_kind():
    """Integer and largest-float times pass; a failed entry's times are checked too, an InvalidConfig's are not."""
    from analysis.errors import InputError
    from analysis.kt.space import prepare_entries

    cache = tiny_cache()
    first, second, third = list(cache["cache"])[:3]
    cache["cache"][first].update(compile_time=0, benchmark_time=sys.float_info.max)
    cache["cache"][second].update(time="InvalidConfig")
    del cache["cache"][second]["verification_time"]
    entries = prepare_entries(cache, list(TINY_PARAMS))
    assert entries[first]["compile_time"] == 0 and isinstance(entries[second]["__error__"], kt_util.InvalidConfig)
    cache["cache"][third].update(time="RuntimeFailedConfig", benchmark_time=float("nan"))
    with pytest.raises(InputError, match=f"cache entry '{third}' has evaluation time nan"):
        prepare_entries(cache, list(TINY_PARAMS))


def test_budget_larger_than_the_space_is_an_error_naming_the_config_field(tmp_path: Path) -> None:
    """Kernel Tuner caps a budget above the space size without a word: the simulate job refuses it first."""
    from analysis.cli import main
    from analysis.errors import InputError
    from analysis.simulate import jobs as runs
    from analysis.spaces.importers import import_space

    sweep = REPO / "data/sweeps/cpu/intel-xeon-vm"
    space = import_space(sweep / "mriq.json.gz", definition=sweep / "mriq.yaml", kernel="mriq", device="intel-xeon-vm")
    space.save(tmp_path / "space.parquet", tmp_path / "space.json")
    outs = [tmp_path / "b20.parquet", tmp_path / "b300.parquet"]
    with pytest.raises(InputError) as err:
        runs.run(tmp_path / "space.parquet", tmp_path / "space.json", "time", ["time"], "rs", [{}, {}], [20, 300], 1,
                 outs, budget_source=("config/mine.yaml", "hyperparameters.budgets"))
    assert str(err.value) == (
        "config/mine.yaml: field 'hyperparameters.budgets': budget(s) [300] exceed the 264 valid configurations of "
        "space intel-xeon-vm/mriq: a run cannot evaluate more distinct configurations than the space has, and "
        "Kernel Tuner would cap it silently; use budgets of at most 264, or leave this space out")
    assert not any(out.exists() for out in outs)  # refused before any run
    log = tmp_path / "simulate.log"
    assert main(["--log", str(log), "simulate", "--space-parquet", str(tmp_path / "space.parquet"), "--space-meta",
                 str(tmp_path / "space.json"), "--objective-set", "time", "--objectives", '["time"]', "--algorithm",
                 "rs", "--budget", "264", "265", "--repetitions", "1", "--out", *map(str, outs), "--config",
                 "config/mine.yaml"]) == 2
    assert "config/mine.yaml: field 'simulation.budgets': budget(s) [265] exceed the 264" in log.read_text()


@pytest.mark.skipif(HUB is None, reason="benchmark_hub data not available")
def test_memoised_latin_hypercube_sample_matches_kernel_tuner() -> None:
    """`lhs_sample_indices` replicates Kernel Tuner's get_LHS_sample_indices (source hash), and returns its
    samples with the same draws from both generators, over repeated calls sharing one memo."""

    from analysis.simulate import seeding
    from analysis.simulate.setup import fresh_searchspace

    hub = KernelTunerSpace.from_cache_file(HUB / "cachefiles" / "convolution_milo" / "A100.json.gz",
                                    HUB / "kernels" / "convolution_milo.json", ["time"], None)
    for space, sizes in ((tiny_space(1), (3, 8, 20)), (hub, (5, 30, 60))):
        memo: dict = {}
        for seed in range(6):
            samples = []
            for use_memo in (False, True):
                searchspace = fresh_searchspace(space)
                np.random.seed(seed)
                with seeding.seeded_latin_hypercube(seed, memo if use_memo else None):
                    samples.append([searchspace.get_LHS_sample_indices(n) for n in sizes])
                samples[-1].append(np.random.random())  # the fill-up draws from NumPy's global generator
            assert samples[0] == samples[1], seed
        assert any(key[0] == "lhs_closest" for key in memo if isinstance(key, tuple))


def test_fresh_searchspace_has_kernel_tuners_index_arrays_unshared() -> None:
    """The index arrays a fresh Searchspace comes with are those Kernel Tuner builds lazily; each clone has its
    own copies (with params_values_indices still the parameter-index array itself)."""
    from kernel_tuner.searchspace import Searchspace

    from analysis.simulate.setup import fresh_searchspace

    space = tiny_space(1)
    lazy = Searchspace(dict(TINY_PARAMS), list(TINY_RESTRICTIONS), 1_000_000_000)
    lazy.get_list_param_indices_numpy()
    one, two = fresh_searchspace(space), fresh_searchspace(space)
    for name in ("_Searchspace__list_param_indices", "_Searchspace__list_param_indices_lower_bounds",
                 "_Searchspace__list_param_indices_upper_bounds"):
        expected = getattr(lazy, name)
        assert np.array_equal(getattr(one, name), expected) and getattr(one, name).dtype == expected.dtype
        assert getattr(one, name) is not getattr(two, name)
    assert one._Searchspace__tune_params_to_index_lookup == lazy._Searchspace__tune_params_to_index_lookup
    assert one.params_values_indices is one._Searchspace__list_param_indices
    assert one._alloc_diff.shape == one.params_values_indices.shape and one._alloc_diff is not two._alloc_diff
