"""Benchmark: every simulation of a config (config/config.yaml by default), from nothing, on N cores.

Runs Snakemake's `simulations` target (every run file) into a fresh output root:
the spaces are imported, the hyperparameter grid runs, its indicators and picks are computed (the
tuned comparison settings need them), then every comparison run. Prints the wall time of the whole
invocation against the target (15 minutes on 2 cores), then the job seconds per rule from
Snakemake's benchmark files and the slowest simulate jobs.

    python benchmarks/bench_simulate_stage.py [--cores 2] [--configfile config/config.yaml] [--keep DIR]

Takes as long as it measures (minutes); nothing under the checkout's results/ is touched.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 15 * 60


def job_seconds(root: Path) -> pd.DataFrame:
    """One row per Snakemake benchmark file under root/results/benchmarks: stage folder, job, s, cpu_time."""
    rows = []
    base = root / "results" / "benchmarks"
    for f in sorted(base.rglob("*.tsv")):
        bench = pd.read_csv(f, sep="\t").iloc[0]
        rel = f.relative_to(base).with_suffix("")
        rows.append({"stage": rel.parts[0], "job": "/".join(rel.parts[1:]), "s": float(bench["s"]),
                     "cpu_s": float(bench["cpu_time"])})
    return pd.DataFrame(rows, columns=["stage", "job", "s", "cpu_s"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--configfile", default=str(REPO / "config" / "config.yaml"))
    ap.add_argument("--keep", default="", help="write the outputs here (must not exist) and keep them")
    args = ap.parse_args()

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_stage_"))
    if args.keep and root.exists():
        sys.exit(f"--keep {root}: exists; give a new folder")
    command = [sys.executable, "-m", "snakemake", "simulations", "--snakefile", str(REPO / "Snakefile"),
               "--directory", str(REPO), "--configfile", args.configfile, "--config", f"output_root={root}",
               "--cores", str(args.cores), "--quiet", "rules"]
    print("running:", " ".join(command), flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # Snakemake and every job it ran
    cpu = usage.ru_utime + usage.ru_stime
    if done.returncode != 0:
        print(f"snakemake failed (exit {done.returncode}) after {wall:.0f} s; outputs kept in {root}")
        return done.returncode

    jobs = job_seconds(root)
    runs = jobs[jobs["stage"] == "runs"]
    print(f"\nwall time up to every simulate job, {args.cores} cores: {wall:.0f} s = {wall / 60:.1f} min; "
          f"ratio to the 15-minute target {wall / TARGET_S:.2f} (target <= 1)")
    print(f"CPU time of Snakemake and all its jobs: {cpu:.0f} s, {cpu / (wall * args.cores):.0%} of {args.cores} cores "
          "over the wall time")
    print(f"simulate jobs: {len(runs)}, {runs['s'].sum():.0f} s of job time (/ {args.cores} cores = "
          f"{runs['s'].sum() / args.cores:.0f} s); Snakemake's cpu_time column says {runs['cpu_s'].sum():.0f} s, "
          "but it "
          "samples a job only now and then and misses the end of most")
    print("\njob seconds per stage (results/benchmarks/<stage>):")
    print(jobs.groupby("stage")[["s", "cpu_s"]].agg(["count", "sum"]).round(1).to_string())
    print("\nslowest simulate jobs:")
    print(runs.nlargest(10, "s")[["job", "s", "cpu_s"]].to_string(index=False))
    if not args.keep:
        shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
