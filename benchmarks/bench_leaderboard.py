"""What each leaderboard entry costs per run, in calibration runs (docs/leaderboard.md; the tables' `cost_per_run`).

    python benchmarks/bench_leaderboard.py [--results results] [--configfile config/config.yaml]
                                           [--entries a,b] [--calibration-s S]
                                           [--csv benchmarks/reports/leaderboard_cost.csv]
                                           [--report benchmarks/reports/bench_leaderboard.md]

For every entry that makes its own runs, one run (repetition 0, the study's seed and acceptance rule:
`analysis.simulate.constraint_aware.accepted_run`) on each leaderboard space it runs on is timed in this process,
from the study's stored spaces and budgets (`results/`, so the study's spaces and ca_budget must have run). Its
cost per run is the mean of those seconds over its spaces, divided by one calibration run's seconds (the
workload of benchmarks/bench_study.py: a figure in calibration runs measures work, not the machine); its
estimated run cost in the study is the sum over its spaces times its runs per space. Where the study has run,
the leaderboard's own job seconds per entry (lb_run and lb_score, Snakemake's benchmark files) and each entry's
share of them are reported too. Measure with nothing else heavy running: the report states the load before.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import analysis  # noqa: E402,F401  (first: it pins the numeric kernels, analysis/numerics.py)
from analysis import config as study_config  # noqa: E402
from analysis.simulate import leaderboard as lb  # noqa: E402
from analysis.simulate.constraint_aware import (  # noqa: E402
    accepted_run,
    objective_values,
    run_identity,
    study_spaces,
    study_strategies,
    with_objective,
)
from analysis.simulate.jobs import max_proposals, space_data  # noqa: E402
from analysis.simulate.registry import resolve_options  # noqa: E402
from analysis.spaces.space import Space  # noqa: E402
from bench_study import CALIBRATION, calibrate, load_average, machine, per_run_seconds  # noqa: E402

# Issue 45's target for the full study with the leaderboard: 30 minutes of wall time on 2 cores.
FULL_STUDY_TARGET_S = 30 * 60
# Since that cannot hold (the report says why), the leaderboard's own target, run alone: 45 minutes of wall time on
# 2 cores, all its lb_run and lb_score jobs.
LEADERBOARD_TARGET_S = 45 * 60
CORES = 2

COLUMNS = ["entry", "cost_per_run", "seconds_per_run", "spaces", "runs_per_space", "estimated_run_s",
           "calibration_s", "machine", "load_before", "date"]


def study_entries(configfile: Path) -> tuple[dict[str, dict], dict, list[tuple[str, str]]]:
    """The config's leaderboard entries (schema defaults filled in), the constraint_aware section, and the
    leaderboard's spaces (those of the constraint-aware study without a threshold), as the Snakefile has them."""
    config = study_config.validate(study_config.read_yaml(configfile), str(configfile))
    ca = config["constraint_aware"]
    spaces = lb.spaces(study_spaces(study_config.studied_space_keys(config), ca), ca)
    return lb.entries(config["leaderboard"], study_strategies(ca)), ca, spaces


def time_entry(entry: dict, spaces: list[tuple[Space, dict]], proposal_cap: float) -> list[float]:
    """Seconds of repetition 0 on each space the entry runs on (a failed run's seconds count: it was paid)."""
    options = resolve_options(entry["algorithm"], entry["options"])
    seconds = []
    for space, limits in spaces:
        if entry["max_budget_evaluations"] is not None and limits["fevals_end"] > entry["max_budget_evaluations"]:
            continue
        data = space_data(space, ["time"])
        identity = run_identity(f"{space.device}/{space.kernel}", "time", None, entry["algorithm"], options,
                                limits["time_limit_ms"], 0)
        started = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # the strategies' numeric warnings bury the report
                accepted_run(data, entry["algorithm"], options, len(space.table), limits,
                             max_proposals(space, proposal_cap), identity)
        except Exception:  # noqa: BLE001  (a failing run costs what it cost)
            pass
        seconds.append(time.perf_counter() - started)
    return seconds


def job_seconds(results: Path, entries: dict[str, dict]) -> pd.DataFrame:
    """The study's lb_run and lb_score job seconds per entry (Snakemake's benchmark files), where present."""
    rows = []
    for name in entries:
        row = {"entry": name}
        for kind in ("run", "score"):
            path = results / "benchmarks" / "leaderboard" / f"{name}.{kind}.tsv"
            row[f"{kind}_job_s"] = float(pd.read_csv(path, sep="\t")["s"].iloc[0]) if path.is_file() else math.nan
        rows.append(row)
    frame = pd.DataFrame(rows)
    total = frame[["run_job_s", "score_job_s"]].sum(axis=1, min_count=1)
    frame["share"] = total / total.sum()
    return frame


def against_target(table: pd.DataFrame, calibration_s: float, reports: Path) -> list[str]:
    """Whether the full study with the leaderboard can meet its target: the leaderboard's runs alone at the fewest
    runs an entry may make (lb.MIN_RUNS per space), perfectly spread over the cores, beside the target and the study
    without the leaderboard as benchmarks/bench_study.py last measured it."""
    if table.empty:
        return []
    fewest = (table["seconds_per_run"] * table["spaces"] * lb.MIN_RUNS).sum()
    fewest_wall = fewest / CORES / calibration_s
    target = FULL_STUDY_TARGET_S / calibration_s
    study = ""
    left = target
    path = reports / "bench_study.csv"
    if path.is_file():
        frame = pd.read_csv(path)
        whole = frame[frame["stage"] == "(whole study)"]
        if len(whole) and pd.notna(whole["wall_calibrations"].iloc[0]):
            used = float(whole["wall_calibrations"].iloc[0])
            left = target - used
            study = (f" The study without the leaderboard took {used:,.0f} calibration runs of wall time when "
                     f"bench_study.py last measured it ({whole['date'].iloc[0]}, {whole['config'].iloc[0]}), leaving "
                     f"{left:,.0f}.")
    verdict = ("so the target cannot be met with the leaderboard in the full study, whatever the runs per entry"
               if fewest_wall > left else "so the target can be met only with fewer runs than the config's")
    return [
        "## Against the target", "",
        f"The full study with the leaderboard has a target of {FULL_STUDY_TARGET_S / 60:.0f} minutes of wall time "
        f"on {CORES} cores: {FULL_STUDY_TARGET_S:,} s, {target:,.0f} calibration runs.{study} The leaderboard's runs "
        f"alone, at the fewest an entry may make ({lb.MIN_RUNS} per space) on the spaces each runs on, cost "
        f"{fewest:,.0f} s of one core = {fewest / calibration_s:,.0f} calibration runs: at best "
        f"{fewest / CORES:,.0f} s ({fewest_wall:,.0f} calibration runs) of wall time on {CORES} cores, scoring not "
        f"counted, {verdict}.",
    ]


def alone_against_target(jobs: pd.DataFrame, calibration_s: float) -> list[str]:
    """The leaderboard alone against its own target: the study's lb_run and lb_score job seconds, spread perfectly
    over the cores (a lower bound of the wall time they take alone), and the entries with the largest shares."""
    total = float(jobs[["run_job_s", "score_job_s"]].sum().sum())
    if not total:
        return []
    wall = total / CORES
    top = jobs.assign(s=jobs[["run_job_s", "score_job_s"]].sum(axis=1, min_count=1)).nlargest(3, "s")
    shares = ", ".join(f"{r.entry} {r.share:.0%}" for r in top.itertuples())
    return [
        "", f"The leaderboard alone has a target of {LEADERBOARD_TARGET_S / 60:.0f} minutes of wall time on {CORES} "
        f"cores ({LEADERBOARD_TARGET_S:,} s, {LEADERBOARD_TARGET_S / calibration_s:,.0f} calibration runs). Its jobs "
        f"took {total:,.0f} job seconds, at least {wall:,.0f} s of wall time on {CORES} cores: **ratio "
        f"{wall / LEADERBOARD_TARGET_S:.2f}** (target <= 1; the job seconds are those the study measured, with what "
        f"else ran then). Largest shares: {shares}.",
    ]


def measure(a: argparse.Namespace, entries: dict[str, dict], ca: dict, keys: list[tuple[str, str]],
            chosen: list[str]) -> pd.DataFrame:
    """Calibrate, then time repetition 0 of every chosen entry that makes its own runs on each of its spaces."""
    load = load_average()
    results = Path(a.results)
    print(f"calibrating: {CALIBRATION}", flush=True)
    calibration_s = a.calibration_s or per_run_seconds(calibrate(), 20)
    spaces = []
    for device, kernel in keys:
        folder = results / "spaces" / device / kernel
        space = Space.load(folder / "space.parquet", folder / "space.json")
        objective, values = objective_values(space, None)
        limits = json.loads((results / "constraint_aware" / "budgets" / device / f"{kernel}.json").read_text())
        spaces.append((with_objective(space, objective, values), limits))
    rows = []
    for name in chosen:
        entry = entries[name]
        if entry["source"] != "runs":
            continue
        seconds = time_entry(entry, spaces, ca["proposal_cap"])
        per_run = sum(seconds) / len(seconds) if seconds else math.nan
        rows.append({"entry": name, "cost_per_run": per_run / calibration_s, "seconds_per_run": per_run,
                     "spaces": len(seconds), "runs_per_space": entry["repetitions"],
                     "estimated_run_s": sum(seconds) * entry["repetitions"], "calibration_s": calibration_s,
                     "machine": machine(), "load_before": load,
                     "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")})
        print(f"{name:30s} {per_run:8.3f} s/run over {len(seconds)} spaces = {per_run / calibration_s:8.1f} "
              "calibration runs", flush=True)
    return pd.DataFrame(rows, columns=COLUMNS)


def report(table: pd.DataFrame, results: Path, entries: dict[str, dict], path: Path) -> None:
    """The Markdown report of a measurement (its machine, load and date from the table)."""
    first = table.iloc[0]
    calibration_s = float(first["calibration_s"])
    jobs = job_seconds(results, entries)
    total_runs = table["estimated_run_s"].sum()
    lines = [
        "# What each leaderboard entry costs (`benchmarks/bench_leaderboard.py`)", "",
        f"Machine: {first['machine']}; load average before: {first['load_before']}; {first['date']}. One "
        f"calibration run ({CALIBRATION}): {calibration_s:.3f} s.", "",
        "Per entry: one run (repetition 0) on each space it runs on, timed in one process; cost per run = mean "
        "seconds per run / one calibration run; estimated run seconds in the study = the sum over its spaces x its "
        f"runs per space (all entries: {total_runs:,.0f} s, {total_runs / calibration_s:,.0f} calibration runs, "
        "of one core).", "",
        table[["entry", "cost_per_run", "seconds_per_run", "spaces", "runs_per_space", "estimated_run_s"]]
        .to_markdown(index=False, floatfmt=".3g"), "",
        "The study's own leaderboard jobs (Snakemake's benchmark files under `results/benchmarks/leaderboard/`: "
        "wall seconds of each lb_run and lb_score job as the study ran them, two jobs at a time on 2 cores; "
        "`share`: of all of them):", "",
        jobs.to_markdown(index=False, floatfmt=".3g"), "",
        f"All leaderboard jobs: {jobs[['run_job_s', 'score_job_s']].sum().sum():,.0f} job seconds = "
        f"{jobs[['run_job_s', 'score_job_s']].sum().sum() / calibration_s:,.0f} calibration runs.", "",
        *against_target(table, calibration_s, path.parent),
        *alone_against_target(jobs, calibration_s),
    ]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=str(REPO / "results"))
    parser.add_argument("--configfile", default=str(REPO / "config" / "config.yaml"))
    parser.add_argument("--entries", default="", help="comma-separated entry names (default: every entry with runs)")
    parser.add_argument("--calibration-s", type=float, default=None, help="skip calibrating: one run's seconds")
    parser.add_argument("--csv", default=str(REPO / "benchmarks" / "reports" / "leaderboard_cost.csv"))
    parser.add_argument("--report", default=str(REPO / "benchmarks" / "reports" / "bench_leaderboard.md"))
    parser.add_argument("--report-only", action="store_true",
                        help="time nothing: rewrite the report from --csv (e.g. after the study's jobs ran again)")
    a = parser.parse_args()
    entries, ca, keys = study_entries(Path(a.configfile))
    if a.report_only:
        table = pd.read_csv(a.csv)
    else:
        chosen = [n for n in (a.entries.split(",") if a.entries else entries) if n]
        unknown = sorted(set(chosen) - set(entries))
        if unknown:
            parser.error(f"--entries: {unknown} are not entries of {a.configfile}")
        table = measure(a, entries, ca, keys, chosen)
        table.to_csv(a.csv, index=False, float_format="%.6g")
    report(table, Path(a.results), entries, Path(a.report))
    print(f"wrote {a.report}" + ("" if a.report_only else f" and {a.csv}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
