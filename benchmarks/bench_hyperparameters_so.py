"""What seed 003's tuning costs (docs/hyperparameters-so.md, "Cost"): the suite's time against the live time it stands
for, in calibration runs.

    python benchmarks/bench_hyperparameters_so.py --log SNAKEMAKE_LOG [--results results] [--calibration-s S]
                                                  [--csv benchmarks/reports/bench_hyperparameters_so.csv]
                                                  [--report benchmarks/reports/bench_hyperparameters_so.md]

From a finished run of the tuning (`snakemake --configfile config/config.yaml config/seed003.yaml`, its console log
as --log): per phase (grid runs, grid scores, final runs, final scores) the jobs, their seconds (Snakemake's
benchmark files) and the span from the first job's start to the last one's end (the log); the runs made and the
time they represent live (each run's simulated clock at its end: compile + verification + benchmark of every
configuration it visited first, summed over runs). Seconds are also given in calibration runs (the workload of
benchmarks/bench_study.py, timed in this invocation unless --calibration-s), so that the cost compares across
machines. Issue 47's targets: the grids on the training spaces in at most 20 minutes of wall time on 2 cores.
The report states the load before the calibration and that the jobs' seconds are the run's, under its load.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import analysis  # noqa: E402,F401  (first: it pins the numeric kernels, analysis/numerics.py)
import bench_study  # noqa: E402  (the calibration, the log's job spans, the machine's description)
from analysis.config import read_yaml  # noqa: E402
from bench_study import in_calibrations, job_spans, machine  # noqa: E402

SEED_003 = read_yaml(REPO / "config" / "seed003.yaml")["hyperparameters_so"]["seed_003"]

GRID_TARGET_S = 20 * 60  # issue 47: the four grids on the training spaces, 25 runs, 2 cores
CORES = 2
PHASES = {"so_run": "grid runs", "so_score": "grid scores", "so_final_run": "final runs",
          "so_final_score": "final scores", "so_lb_score": "leaderboard scores", "so_tables": "tables"}
COLUMNS = ["phase", "jobs", "job_s", "span_s", "runs", "live_h", "job_calibrations", "span_calibrations",
           "calibration_s", "machine", "load_before", "date"]


def benchmark_seconds(results: Path) -> pd.DataFrame:
    """Rule and seconds of every tuning job with a Snakemake benchmark file under `results`."""
    rows = []
    folder = results / "benchmarks" / "hyperparameters_so"
    for path in sorted(folder.glob("*/*/*.tsv")):
        phase, kind = path.parts[-3], path.name.rsplit(".", 2)[-2]
        rule = {("grid", "run"): "so_run", ("grid", "score"): "so_score", ("final", "run"): "so_final_run",
                ("final", "score"): "so_final_score", ("leaderboard", "score"): "so_lb_score"}[(phase, kind)]
        rows.append({"rule": rule, "s": float(pd.read_csv(path, sep="\t")["s"].iloc[-1])})
    return pd.DataFrame(rows, columns=["rule", "s"])


def run_time(results: Path, phase: str) -> tuple[int, float]:
    """Runs and the hours they represent live (the simulated clock at each run's end) of the grid or final runs."""
    runs, ms = 0, 0.0
    for path in sorted((results / "hyperparameters_so" / phase / "runs").glob("*/*.parquet")):
        frame = pd.read_parquet(path, columns=["configuration", "space", "repetition", "sim_time_ms"])
        ends = frame.dropna(subset=["sim_time_ms"]).groupby(["configuration", "space", "repetition"])["sim_time_ms"]
        runs += len(ends)
        ms += float(ends.max().sum())
    return runs, ms / 3.6e6


def table(jobs: pd.DataFrame, spans: pd.DataFrame, results: Path, calibration_s: float | None) -> pd.DataFrame:
    """One row per phase and one for the grid (runs + scores) and one for all."""
    rows = []
    groups = [(PHASES[r], [r]) for r in PHASES] + [("grid (runs + scores)", ["so_run", "so_score"]),
                                                   ("all", list(PHASES))]
    for name, rules in groups:
        mine, timed = jobs[jobs["rule"].isin(rules)], spans[spans["rule"].isin(rules)]
        span = (timed["end"].max() - timed["start"].min()).total_seconds() if len(timed) else float("nan")
        runs, live = 0, 0.0
        for rule, phase in (("so_run", "grid"), ("so_final_run", "final")):
            if rule in rules:
                n, h = run_time(results, phase)
                runs, live = runs + n, live + h
        rows.append({"phase": name, "jobs": len(timed) or len(mine), "job_s": float(mine["s"].sum()),
                     "span_s": span, "runs": runs, "live_h": live,
                     "job_calibrations": in_calibrations(float(mine["s"].sum()), calibration_s),
                     "span_calibrations": in_calibrations(span, calibration_s)})
    return pd.DataFrame(rows)


def report(frame: pd.DataFrame, calibration_s: float | None, load_before: str, path: Path) -> None:
    grid = frame.set_index("phase").loc["grid (runs + scores)"]
    whole = frame.set_index("phase").loc["all"]
    target_c = in_calibrations(GRID_TARGET_S, calibration_s)
    about = (f"Machine: {machine()}; load average before the calibration: {load_before}. The job seconds and spans "
             "are those of the tuning's run (Snakemake's benchmark files and console log), under whatever ran beside "
             f"it; the calibration was timed in this invocation ({bench_study.CALIBRATION}: {calibration_s:.3f} s)."
             if calibration_s else f"Machine: {machine()}; no calibration in this invocation.")
    lines = [
        "# Seed 003's tuning: what it costs",
        "",
        about,
        "",
        frame.to_markdown(index=False, floatfmt=",.1f"),
        "",
        f"- **Grids on the training spaces:** {grid['runs']:,} runs in {grid['span_s']:,.0f} s of wall time "
        f"({grid['span_calibrations']:,.0f} calibration runs; {grid['job_s']:,.0f} job seconds on {CORES} cores) "
        f"against a target of {GRID_TARGET_S} s = {target_c:,.0f} calibration runs: ratio "
        f"{grid['span_calibrations'] / target_c:.2f}.",
        f"- **Live time represented:** the grid's runs {grid['live_h']:,.0f} hours, all runs {whole['live_h']:,.0f} "
        f"hours (seed 003: {SEED_003['simulated_hours']:,} sequential hours simulated against an estimated "
        f"{SEED_003['live_hours']:,} hours live); the suite took "
        f"{whole['job_s'] / 3600:,.1f} job hours for all of it, {whole['live_h'] / (whole['job_s'] / 3600):,.0f} "
        "times less.",
        "",
        f"Made by `benchmarks/bench_hyperparameters_so.py` on {datetime.date.today().isoformat()}.",
    ]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", required=True, type=Path, help="the tuning run's Snakemake console log")
    parser.add_argument("--results", type=Path, default=REPO / "results")
    parser.add_argument("--calibration-s", type=float, default=None)
    parser.add_argument("--csv", type=Path, default=REPO / "benchmarks" / "reports" / "bench_hyperparameters_so.csv")
    parser.add_argument("--report", type=Path,
                        default=REPO / "benchmarks" / "reports" / "bench_hyperparameters_so.md")
    a = parser.parse_args()
    load_before = bench_study.load_average()
    calibration_s = a.calibration_s
    if calibration_s is None:
        batches = bench_study.calibrate()
        calibration_s = bench_study.per_run_seconds(batches, len(bench_study.CALIBRATION_SEEDS))
    spans = job_spans(a.log.read_text(), strict=False)  # the log may end in a failed job (e.g. a rerun's tables)
    spans = spans[spans["rule"].isin(PHASES)]
    frame = table(benchmark_seconds(a.results), spans, a.results, calibration_s)
    frame = frame.assign(calibration_s=calibration_s, machine=machine(), load_before=load_before,
                         date=datetime.date.today().isoformat())[COLUMNS]
    frame.to_csv(a.csv, index=False)
    report(frame, calibration_s, load_before, a.report)
    print(a.report.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
