"""Benchmark: the anytime-IGD+ stage against the simulation stage and against per-prefix moocore.

Two ratios, each measured in this run:
1. stage cost: seconds of the `indicators` jobs over seconds of the `simulate` jobs, read from
   the Snakemake benchmark files of a finished run (results/benchmarks/{runs,indicators}/),
   so it covers the real config, process start-up included. Target: at most 10 %.
2. algorithm cost: the incremental curve against recomputing moocore's IGD+ at every prefix
   (the obvious baseline), on random 5-objective runs against reference sets of growing size.

Run: python benchmarks/bench_indicators.py [--results results]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import moocore
import numpy as np
import pandas as pd

from analysis.indicators.igd import igd_plus_curve
from bench_fronts import best_of  # this folder is on sys.path when a benchmark runs as a script

# benchmark file (relative to results/benchmarks/<stage>/, without .tsv) -> a glob of the job's outputs
OUTPUTS = {"runs": "runs/{}/b*.parquet", "indicators": "indicators/{}.curve.parquet"}


def stage_seconds(results: Path, stage: str) -> tuple[float, int, int]:
    """Sum of the `s` column of the benchmark files of a stage whose job output exists, how many
    there are, and how many were skipped (left over from jobs the current config no longer has)."""
    root = results / "benchmarks" / stage
    total, counted, skipped = 0.0, 0, 0
    for f in sorted(root.rglob("*.tsv")):
        if not any(results.glob(OUTPUTS[stage].format(f.relative_to(root).with_suffix("")))):
            skipped += 1
            continue
        total += float(pd.read_csv(f, sep="\t")["s"].iloc[0])
        counted += 1
    return total, counted, skipped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results", help="results folder of a finished `snakemake` run")
    args = ap.parse_args()

    sim, n_sim, skip_sim = stage_seconds(Path(args.results), "runs")
    ind, n_ind, skip_ind = stage_seconds(Path(args.results), "indicators")
    if n_sim and n_ind:
        print(f"stage cost: simulate {sim:.1f} s in {n_sim} jobs, indicators {ind:.1f} s in {n_ind} jobs: "
              f"ratio {ind / sim:.3f} (target <= 0.10); skipped {skip_sim} + {skip_ind} benchmark files "
              "without an output")
    else:
        print(f"stage cost: no benchmark files under {args.results}/benchmarks (run snakemake first)")

    rng = np.random.default_rng(0)
    print("\nalgorithm cost, one run of 200 evaluations x 5 objectives (seconds):")
    print(f"{'|Z|':>6} {'incremental':>12} {'moocore/prefix':>15} {'ratio':>7}")
    for r in (100, 500, 2000):
        z = rng.random((r, 5))
        pts = rng.random((200, 5)) * 1.5
        inc = best_of(lambda pts=pts, z=z: igd_plus_curve(pts, z))
        base = best_of(lambda pts=pts, z=z: [moocore.igd_plus(pts[:k], ref=z) for k in range(1, 201)], repeat=1)
        print(f"{r:>6} {inc:>12.4f} {base:>15.4f} {base / inc:>6.1f}x")


if __name__ == "__main__":
    main()
