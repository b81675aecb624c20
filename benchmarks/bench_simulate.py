"""Benchmark: simulated runs via the engine vs one tune_kernel(simulation_mode=True) call per run.

Both sides run the same spaces, algorithms and seeds in this one process, run by run in turn; the
traces must be identical. The baseline shares nothing with the engine but imported modules (it
parses the cache file and computes everything itself in every call, as tune_kernel does).

    python benchmarks/bench_simulate.py [--reps 5] [--budget 200] [--hub data/benchmark_hub] [--json out.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

from analysis.simulate import KernelTunerSpace, derive_seed, simulate_run
from analysis.simulate.engine import prepare_space
from analysis.simulate.reference import tune_kernel_trace, write_cache_json

REPO = Path(__file__).resolve().parents[1]
KERNELS = ("convolution_milo", "dedispersion_milo")
DEVICE = "A100"
ALGORITHMS = ("rs", "nsga2", "nsga3")
OBJECTIVES = ["time", "compile_time"]  # present in every benchmark_hub cache; both minimised
DIRECTIONS = ["min", "min"]


def default_hub() -> Path:
    """The benchmark_hub copy in the repository (another copy: pass --hub)."""
    hub = REPO / "data" / "benchmark_hub"
    if (hub / "cachefiles").is_dir():
        return hub
    raise SystemExit(f"benchmark_hub data not found in {hub}; pass --hub")


def warm_up() -> None:
    """Import and exercise every code path once on a tiny single-objective space (imports are not per-run costs):
    the engine's loading of a gzipped cache and a T1 file, and both sides' runs of every algorithm.

    Single objective on purpose: NSGA-III's two-objective reference directions stay uncomputed, so
    the engine's one-off cost of memoising them is part of its measured runs.
    """
    tune_params = {"x": [1, 2, 3, 4], "y": [1, 2, 3, 4]}
    entries = {f"{x},{y}": {"x": x, "y": y, "time": float(x * y), "compile_time": 1.0, "verification_time": 0.0,
                            "benchmark_time": 1.0} for x in tune_params["x"] for y in tune_params["y"]}
    cache = {"device_name": "warm-up", "kernel_name": "warm_up", "problem_size": [1], "tune_params_keys": ["x", "y"],
             "tune_params": tune_params, "cache": entries}
    t1 = {"General": {"BenchmarkName": "warm_up", "OutputFormat": "JSON"},
          "ConfigurationSpace": {
              "TuningParameters": [{"Name": name, "Type": "int", "Values": str(values), "Default": values[0]}
                                   for name, values in tune_params.items()],
              "Conditions": [{"Expression": "x + y <= 6", "Parameters": ["x", "y"]}]}}
    with tempfile.TemporaryDirectory() as tmp:
        cache_gz, t1_json = Path(tmp) / "warm_up.json.gz", Path(tmp) / "warm_up_t1.json"
        cache_gz.write_bytes(gzip.compress(json.dumps(cache).encode()))
        t1_json.write_text(json.dumps(t1))
        space = KernelTunerSpace.from_cache_file(cache_gz, t1_json, ["time"], ["min"])
        cache_json = write_cache_json(space, Path(tmp) / "warm_up.json")
        for algorithm in ALGORITHMS:
            tune_kernel_trace(space, cache_json, algorithm, {}, 5, 0)
            simulate_run(space, algorithm, {}, 5, 0)


def bench_kernel(hub: Path, kernel: str, reps: int, budget: int, workdir: Path) -> list[dict]:
    """Time baseline and engine on one space; assert identical traces; one result row per algorithm."""
    cache_gz = hub / "cachefiles" / kernel / f"{DEVICE}.json.gz"
    t1 = hub / "kernels" / f"{kernel}.json"
    cache_json = workdir / f"{kernel}_{DEVICE}.json"  # tune_kernel only opens plain .json files
    with gzip.open(cache_gz, "rb") as src, open(cache_json, "wb") as dst:
        shutil.copyfileobj(src, dst)

    def seed_of(algorithm: str, rep: int) -> int:
        identity = dict(space=f"{kernel}/{DEVICE}", objectives=OBJECTIVES, algorithm=algorithm, options={})
        return derive_seed(**identity, budget=budget, repetition=rep)

    # engine, as a worker would do it: load and prepare the space once (timed), then run everything
    started = time.perf_counter()
    space = KernelTunerSpace.from_cache_file(cache_gz, t1, OBJECTIVES, DIRECTIONS)
    prepare_space(space)
    prep_s = time.perf_counter() - started

    # interleaved so that drifting machine load hits both sides alike; wall and CPU seconds
    timings: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for algorithm in ALGORITHMS:
        for rep in range(reps):
            seed = seed_of(algorithm, rep)
            traces = {}
            for side, run in (
                ("baseline", lambda a=algorithm, s=seed: tune_kernel_trace(space, cache_json, a, {}, budget, s)),
                ("engine", lambda a=algorithm, s=seed: simulate_run(space, a, {}, budget, s)),
            ):
                wall, cpu = time.perf_counter(), time.process_time()
                traces[side] = run()
                spent = (time.perf_counter() - wall, time.process_time() - cpu)
                timings.setdefault((algorithm, side), []).append(spent)
            assert traces["engine"].comparable() == traces["baseline"].comparable(), (
                f"{kernel} {algorithm} rep {rep}: traces differ"
            )

    rows = []
    n_runs = reps * len(ALGORITHMS)
    for algorithm in ALGORITHMS:
        base_s, base_cpu = (statistics.mean(x) for x in zip(*timings[(algorithm, "baseline")]))
        run_s, run_cpu = (statistics.mean(x) for x in zip(*timings[(algorithm, "engine")]))
        amortised_s = run_s + prep_s / n_runs
        rows.append(
            dict(kernel=kernel, algorithm=algorithm, reps=reps, budget=budget, baseline_s=base_s, engine_s=run_s,
                 engine_amortised_s=amortised_s, prep_s=prep_s, ratio=base_s / amortised_s,
                 baseline_cpu_s=base_cpu, engine_cpu_s=run_cpu, identical=True)
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print per-run seconds and speed-up ratios."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--hub", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("ignore")  # Kernel Tuner's per-run UserWarnings would drown the table
    hub = args.hub or default_hub()

    warm_up()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in KERNELS:
            rows += bench_kernel(hub, kernel, args.reps, args.budget, Path(tmp))

    print(f"objectives {OBJECTIVES}, budget {args.budget}, {args.reps} repetitions; seconds per run")
    print(f"{'space':<25}{'algorithm':<10}{'baseline':>10}{'engine':>10}{'+prep':>10}{'ratio':>8}"
          f"{'cpu ratio':>11}  traces")
    for r in rows:
        cpu_ratio = r["baseline_cpu_s"] / r["engine_cpu_s"]
        print(f"{r['kernel'] + '/' + DEVICE:<25}{r['algorithm']:<10}{r['baseline_s']:>10.4f}{r['engine_s']:>10.4f}"
              f"{r['engine_amortised_s']:>10.4f}{r['ratio']:>7.1f}x{cpu_ratio:>10.1f}x  identical")
    total_base = sum(r["baseline_s"] for r in rows)
    total_engine = sum(r["engine_amortised_s"] for r in rows)
    print(f"overall (mean over algorithms and spaces): {total_base / total_engine:.1f}x")
    print("'+prep' spreads the one-off load/parse/solve/index of each space over its runs; ratio uses it;")
    print("cpu ratio: process CPU seconds, without prep (less sensitive to other load on the machine).")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
