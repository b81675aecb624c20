"""The fast path's `bagging` group against the library it replicates: one methodology score's resamples, timed.

    python benchmarks/bench_bagging.py [--results results] [--configfile config/config.yaml]
                                       [--jobs A100/dedispersion/ga_aware,...] [--resamples 10] [--repeats 2]
                                       [--csv benchmarks/reports/bagging.csv]
                                       [--report benchmarks/reports/bench_bagging.md]

For each constraint-aware job (device/kernel/strategy of a stored space and its runs under `results/`: run the
study, or `restore_runs` from the archive, first), the job's own work, `resampled_scores` with `--resamples`
bootstrap resamples and the two halves (what rule ca_resample does, with its seed), is timed in this process with
the scikit-learn fits of the library (TSB_STOCK=bagging) and with the fast path, alternately, `--repeats` times
each; the ratio is stock seconds / fast seconds, the baseline measured in the same run. Every fast row must equal
the stock row exactly (the script exits 1 otherwise). The space's statistics and the runs' arrays are made once
per job, outside the timing, since both modes share them. Measure with nothing else heavy running: the report
states the load before and after.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import analysis  # noqa: E402,F401  (first: it pins the numeric kernels, analysis/numerics.py)
from analysis import config as study_config  # noqa: E402
from analysis import fastpath  # noqa: E402
from analysis.indicators.constraint_aware import resample_seed  # noqa: E402
from analysis.indicators.methodology import repetition_arrays, resampled_scores, space_scoring  # noqa: E402
from analysis.simulate.constraint_aware import objective_values, with_objective  # noqa: E402
from analysis.spaces.methodology import ScoreSettings  # noqa: E402
from analysis.spaces.space import Space  # noqa: E402
from bench_study import load_average, machine  # noqa: E402

# one job per kind of space: a benchmark_hub GPU space (100 long runs), a host-CPU one, an AMD GPU, a small space
JOBS = ("A100/dedispersion/ga_aware", "amd-epyc-vm/kmeans/pso_aware", "MI250X/convolution/de_aware",
        "RTX_3090/pnpoly/firefly_unaware")
COLUMNS = ["job", "runs", "proposals", "resamples", "stock_s", "fast_s", "ratio", "identical", "machine",
           "load_before", "load_after", "date"]


def job_inputs(results: Path, job: str) -> tuple[Space, str, pd.DataFrame]:
    """The space (with the study's time objective: no threshold), objective and runs of one constraint-aware job."""
    device, kernel, strategy = job.split("/")
    space = Space.load(results / "spaces" / device / kernel / "space.parquet",
                       results / "spaces" / device / kernel / "space.json")
    objective, values = objective_values(space, None)
    runs = pd.read_parquet(results / "constraint_aware" / "runs" / device / kernel / f"{strategy}.parquet")
    return with_objective(space, objective, values), objective, runs


# the scoring rules whose Snakemake benchmark files (results/benchmarks/...) the report sums, by file pattern
STAGES = {"ca_resample": "constraint_aware/*/*/*.resample.tsv", "ca_score": "constraint_aware/*/*.score.tsv",
          "lb_score": "leaderboard/*.score.tsv"}


def stage_seconds(results: Path) -> pd.DataFrame:
    """Jobs, wall seconds and CPU seconds of each scoring rule's jobs as the last run into `results/` made them
    (Snakemake's benchmark files; absent rules are left out)."""
    rows = []
    for rule, pattern in STAGES.items():
        files = sorted((results / "benchmarks").glob(pattern))
        if files:
            frame = pd.concat([pd.read_csv(f, sep="\t") for f in files], ignore_index=True)
            rows.append({"rule": rule, "jobs": len(files), "job_s": round(float(frame["s"].sum()), 1),
                         "cpu_s": round(float(frame["cpu_time"].sum()), 1)})
    return pd.DataFrame(rows, columns=["rule", "jobs", "job_s", "cpu_s"])


def timed(space: Space, objective: str, strategy: str, runs: pd.DataFrame, settings: ScoreSettings, seed: int,
          resamples: int, prepared: tuple, stock: bool) -> tuple[float, pd.DataFrame]:
    os.environ[fastpath.ENV] = "bagging" if stock else ""
    start = time.perf_counter()
    rows = resampled_scores(space, objective, {strategy: runs}, settings, {strategy: seed}, resamples,
                            prepared=prepared)
    return time.perf_counter() - start, rows


def stages_text(results: Path) -> str:
    """The report's section on the scoring rules' jobs in `results/`, if it has their benchmark files."""
    stages = stage_seconds(results)
    if stages.empty:
        return ""
    stamp = max(p.stat().st_mtime for p in (results / "benchmarks").rglob("*.tsv"))
    when = datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return ("\n## The scoring rules' jobs in that results folder\n\nAs the last Snakemake run into "
            f"`{results}` made them (its benchmark files, newest {when}: wall and CPU seconds of each job as that "
            "run ran it, with the fast path unless it set TSB_STOCK):\n\n"
            + stages.to_markdown(index=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(REPO / "results"), help="the study's results/ folder")
    ap.add_argument("--configfile", default=str(REPO / "config" / "config.yaml"),
                    help="the study's config: its constraint_aware section's score settings")
    ap.add_argument("--jobs", default=",".join(JOBS), help="device/kernel/strategy, comma-separated")
    ap.add_argument("--resamples", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--report", default=None)
    a = ap.parse_args(argv)
    results = Path(a.results)
    config = study_config.validate(study_config.read_yaml(a.configfile), a.configfile)
    settings = ScoreSettings.from_config(config["constraint_aware"])  # with its baseline, as rule ca_resample
    load_before = load_average()
    rows, ok = [], True
    for job in a.jobs.split(","):
        space, objective, runs = job_inputs(results, job)
        strategy = job.rsplit("/", 1)[1]
        seed = resample_seed(f"{space.device}/{space.kernel}", objective, strategy)
        with tempfile.TemporaryDirectory(prefix="bench_bagging_") as tmp:
            stats, index = space_scoring(space, objective, tmp)
            prepared = (stats, index, repetition_arrays(runs, index, list(space.parameters)))
            seconds = {True: [], False: []}
            frames = {}
            for _ in range(a.repeats):
                for stock in (True, False):
                    s, frame = timed(space, objective, strategy, runs, settings, seed, a.resamples, prepared, stock)
                    seconds[stock].append(s)
                    frames.setdefault(stock, frame)
        identical = frames[True].equals(frames[False])
        ok &= identical
        stock_s, fast_s = min(seconds[True]), min(seconds[False])
        rows.append({"job": job, "runs": runs["repetition"].nunique(), "proposals": len(runs),
                     "resamples": a.resamples, "stock_s": round(stock_s, 3), "fast_s": round(fast_s, 3),
                     "ratio": round(stock_s / fast_s, 2), "identical": identical})
        print(f"{job}: stock {stock_s:.2f} s, fast {fast_s:.2f} s, ratio {stock_s / fast_s:.2f}, "
              f"identical {identical}", flush=True)
    os.environ.pop(fastpath.ENV, None)
    meta = {"machine": machine(), "load_before": load_before, "load_after": load_average(),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")}
    frame = pd.DataFrame([{**r, **meta} for r in rows], columns=COLUMNS)
    if a.csv:
        frame.to_csv(a.csv, index=False)
    if a.report:
        table = frame[COLUMNS[:8]].to_markdown(index=False)
        Path(a.report).write_text(
            "# The fast path's `bagging` group against scikit-learn's fits\n\n"
            f"Machine: {meta['machine']}; load average before {meta['load_before']}, after {meta['load_after']}; "
            f"{meta['date']}. Command: `python benchmarks/bench_bagging.py --resamples {a.resamples} --repeats "
            f"{a.repeats}`.\n\nPer job: the seconds of `resampled_scores` ({a.resamples} bootstrap resamples and "
            "two halves, rule ca_resample's work) with the library's fits (TSB_STOCK=bagging) and with the fast "
            f"path, the faster of {a.repeats} alternating repeats each; ratio = stock / fast; `identical`: the "
            "fast path's scores equal the library's exactly; `proposals`: rows of the job's runs file.\n\n" + table
            + "\n" + stages_text(results))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
