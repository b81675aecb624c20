"""Benchmark: what each piece of the fast path saves, measured on the stock libraries.

For each space and algorithm, runs the same seeds (a) fully stock (TSB_STOCK=1), (b) stock plus one
proposal that would help every Kernel Tuner user (the speed-ups docs/upstream.md offers upstream),
and (c) with the whole fast path; the traces must be identical in every variant. Runs are
interleaved variant by variant (each repetition starting at another variant) so that drifting load
and order effects hit all alike. Prints, per algorithm, the mean
time per run and its ratio to the stock run measured in this same process, and writes them to
--csv (docs/upstream.md quotes them).

    python benchmarks/bench_fastpath.py [--reps 3] [--budget 200] [--csv benchmarks/reports/fastpath.csv]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import logging
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from analysis import fastpath
from analysis.fastpath import runner
from analysis.simulate import KernelTunerSpace, derive_seed, get_algorithm, simulate_run
from analysis.simulate.engine import prepare_space

REPO = Path(__file__).resolve().parents[1]
HUB = REPO / "data" / "benchmark_hub"
KERNELS = ("convolution_milo", "dedispersion_milo")
DEVICE = "A100"
OBJECTIVES = ["time", "compile_time"]
# (algorithm, options): the multi-objective runs, and single-objective ones whose proposals are snapped
CASES = (("rs", {}), ("nsga2", {}), ("nsga3", {}), ("pso", {"constraint_aware": True}),
         ("diff_evo", {"constraint_aware": True}))

# each upstream proposal (docs/upstream.md), as the fast-path group that makes it; for the runner group, the parts
# of it put back to Kernel Tuner's own (False) so that only the proposal's part stays
PROPOSALS = {
    "options read once": ("runner", {"_run_configs": False, "quiet": False}),
    "debug line only when logged": ("runner", {"simulation_runner_run": False, "quiet": False}),
    "console line only when shown": ("runner", {"simulation_runner_run": False, "_run_configs": False}),
    "neighbour index": ("neighbours", {}),
    "individual read once": ("population", {}),
}


@contextlib.contextmanager
def variant(on: tuple[str, dict] | None, everything: bool = False) -> Iterator[None]:
    """Stock, except group `on` (optionally with some of the runner group's parts put back to Kernel Tuner's)."""
    previous = os.environ.get(fastpath.ENV)
    if everything:
        os.environ[fastpath.ENV] = "0"
    else:
        os.environ[fastpath.ENV] = ",".join(g for g in fastpath.GROUPS if on is None or g != on[0]) or "0"
    originals = {}
    try:
        if on is not None:
            from kernel_tuner.runners.simulation import SimulationRunner
            from kernel_tuner.strategies.common import CostFunc

            stock = {"_run_configs": CostFunc._run_configs, "simulation_runner_run": SimulationRunner.run}
            for part, keep in on[1].items():
                if keep:
                    continue
                if part == "quiet":
                    originals["quiet_config_output"] = runner.quiet_config_output
                    runner.quiet_config_output = lambda: contextlib.nullcontext()  # noqa: E731
                else:
                    originals[part] = getattr(runner, part)
                    setattr(runner, part, stock[part])
        yield
    finally:
        for name, value in originals.items():
            setattr(runner, name, value)
        if previous is None:
            os.environ.pop(fastpath.ENV, None)
        else:
            os.environ[fastpath.ENV] = previous


def bench(kernel: str, reps: int, budget: int) -> list[dict]:
    spaces = {n: KernelTunerSpace.from_cache_file(HUB / "cachefiles" / kernel / f"{DEVICE}.json.gz",
                                                  HUB / "kernels" / f"{kernel}.json", OBJECTIVES[:n], ["min"] * n)
              for n in (1, 2)}
    for space in spaces.values():
        prepare_space(space)
    variants = {"stock": lambda: variant(None), **{name: (lambda on=on: variant(on)) for name, on in PROPOSALS.items()},
                "fast path": lambda: variant(None, everything=True)}
    rows = []
    for algorithm, options in CASES:
        space = spaces[2 if get_algorithm(algorithm).multi_objective and algorithm != "rs" else 1]
        times: dict[str, list[float]] = {name: [] for name in variants}
        for rep in range(-1, reps):  # repetition -1 warms every variant up (imports, first-use work), untimed
            seed = derive_seed(space=f"{kernel}/{DEVICE}", algorithm=algorithm, options=options, budget=budget,
                               repetition=rep)
            traces = {}
            names = list(variants)
            shift = max(rep, 0) % len(names)  # each repetition starts at another variant: no variant always first
            for name in names[shift:] + names[:shift]:
                make = variants[name]
                if name != "fast path":  # a proposal for Kernel Tuner helps within one tune_kernel call only
                    space.neighbour_memo().clear()
                with make():
                    started = time.perf_counter()
                    traces[name] = simulate_run(space, algorithm, options, budget, seed)
                    if rep >= 0:
                        times[name].append(time.perf_counter() - started)
            reference = traces["stock"].comparable()
            assert all(t.comparable() == reference for t in traces.values()), (kernel, algorithm, rep)
        stock = statistics.mean(times["stock"])
        for name in variants:
            mean = statistics.mean(times[name])
            rows.append(dict(space=f"{kernel}/{DEVICE}", objectives=len(space.objectives), algorithm=algorithm,
                             options=options, variant=name, reps=reps, budget=budget, mean_s=round(mean, 4),
                             speedup_vs_stock=round(stock / mean, 2)))
            print(f"{kernel:<18} {algorithm:<9} {name:<28} {mean:8.3f} s  {stock / mean:6.2f}x", flush=True)
    return rows


BEGIN = ("<!-- fastpath:begin: generated by `python benchmarks/bench_fastpath.py --csv benchmarks/reports/fastpath.csv "
         "--doc docs/upstream.md`; do not edit -->")
END = "<!-- fastpath:end -->"


def markdown(rows: list[dict]) -> str:
    """The doc's table: per proposal and run, the speed-up over the stock libraries (same process, same seeds)."""
    variants = list(dict.fromkeys(row["variant"] for row in rows if row["variant"] != "stock"))
    runs = list(dict.fromkeys((row["space"], row["algorithm"]) for row in rows))
    by = {(row["space"], row["algorithm"], row["variant"]): row for row in rows}
    first = rows[0]
    lines = [f"Mean time per run with one proposal applied to the stock libraries, as a speed-up over the stock run "
             f"(budget {first['budget']}, {first['reps']} seeds per run, every trace identical; "
             f"`benchmarks/reports/fastpath.csv`, load {first['load_before']} before):", "",
             "| space | algorithm | stock (s) | " + " | ".join(variants) + " |",
             "|---|---|---:|" + "---:|" * len(variants)]
    for space, algorithm in runs:
        cells = [f"{float(by[(space, algorithm, v)]['speedup_vs_stock']):.2f}x" for v in variants]
        stock = float(by[(space, algorithm, "stock")]["mean_s"])
        lines.append(f"| {space} | {algorithm} | {stock:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_doc(doc: Path, rows: list[dict]) -> None:
    text = doc.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(head + BEGIN + "\n" + markdown(rows) + END + tail)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--csv", type=Path, default=None)
    parser.add_argument("--doc", type=Path, default=None, help="rewrite the generated table in this markdown file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("ignore")
    load = os.getloadavg()[0]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {load:.2f} before; "
          f"Python {sys.version.split()[0]}", flush=True)
    rows = [row for kernel in KERNELS for row in bench(kernel, args.reps, args.budget)]
    if args.csv:
        for row in rows:
            row["load_before"] = round(load, 2)
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    if args.doc:
        write_doc(args.doc, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
