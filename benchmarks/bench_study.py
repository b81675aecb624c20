"""Benchmark: the whole study of a config (config/config.yaml by default), from nothing, on N cores.

Runs Snakemake's default target (every table and figure) into a fresh output root and reads the
start and end of every job from Snakemake's own log. Prints the wall time of the whole invocation
against the target (20 minutes on 2 cores), then per stage (the workflow/rules/*.smk file that
holds the rule) and per rule: jobs, job seconds, their share of all job seconds, and the stage's
span (first start to last end). Optionally writes the same as Markdown (--report) and compares
the study's tables and figures byte for byte with the published ones (--compare).

    python benchmarks/bench_study.py [--cores 2] [--configfile config/config.yaml [OVERLAY ...]] [--keep DIR]
                                     [--report benchmarks/reports/bench_study.md] [--compare] [--calibration-s S]

Before the study it times a fixed calibration workload (Kernel Tuner's own `tune_kernel`, simulation mode,
NSGA-II with a budget of 200 on the A100/convolution_milo cache; `calibrate`) and states the wall time, the job
seconds and the 20-minute target also in calibration runs: seconds divided by the seconds of one calibration run
on the same machine in the same invocation. A study measured on a VM twice as fast takes half the seconds but
the same number of calibration runs, so figures from different machines can be compared in that unit.

Takes as long as it measures; nothing under the checkout's results/, tables/ or figures/ is touched.
Measure with nothing else heavy running: the machines are shared 2-core VMs.
"""

from __future__ import annotations

import argparse
import filecmp
import gzip
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 20 * 60
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
START = re.compile(r"^(?:local)?rule (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")
SPACE = re.compile(r"^\s+wildcards: .*?device=([^,\s]+), kernel=([^,\s]+)")

# The calibration workload: one Kernel Tuner NSGA-II run in simulation mode, budget CALIBRATION_BUDGET, on a
# committed cache (the same kind of work as the study's jobs: simulated tuning runs in Python), through
# `tune_kernel` alone, so that the unit does not change when the study's own code does (it would with another
# pinned Kernel Tuner or pymoo version). A run takes about 0.2 s on the development VM, too short to time alone,
# so the runs of CALIBRATION_SEEDS are timed as a batch, CALIBRATION_REPEATS times; one calibration run's seconds
# are the median batch's seconds over its runs.
CALIBRATION_CACHE = REPO / "data" / "benchmark_hub" / "cachefiles" / "convolution_milo" / "A100.json.gz"
CALIBRATION_DEFINITION = REPO / "data" / "benchmark_hub" / "kernels" / "convolution_milo.json"
CALIBRATION_BUDGET = 200
CALIBRATION_OBJECTIVES = ["time", "compile_time"]  # both minimised, as in the study's multi-objective runs
CALIBRATION_SEEDS = tuple(range(20))
CALIBRATION_REPEATS = 5
CALIBRATION = (f"one Kernel Tuner `tune_kernel` NSGA-II run, simulation mode, budget {CALIBRATION_BUDGET}, on "
               f"A100/convolution_milo ({' and '.join(CALIBRATION_OBJECTIVES)})")


def run_measuring_own_cpu(command: list[str], out) -> tuple[int, float | None]:
    """Run `command` (output to the open file `out`); its exit status and its own CPU seconds (user +
    system of that process, not of its children), read once a second until it exits."""
    import psutil

    process = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    watched, cpu = psutil.Process(process.pid), None
    while process.poll() is None:
        try:
            times = watched.cpu_times()
            cpu = times.user + times.system
        except psutil.Error:  # exited between poll() and the read
            pass
        time.sleep(1.0)
    return process.returncode, cpu


def calibration_problem(cache_json: str | Path, definition: str | Path) -> dict:
    """The keyword arguments of `tune_kernel` that describe the calibration space: kernel name and problem
    size from the (uncompressed) Kernel Tuner cache file, its tuning parameters in the cache's order, and the
    restrictions: the `Expression` of each condition of the T1 definition file."""
    cache = json.loads(Path(cache_json).read_text())
    conditions = json.loads(Path(definition).read_text())["ConfigurationSpace"].get("Conditions", [])
    names = cache.get("tune_params_keys", list(cache["tune_params"]))
    tune_params = {name: list(cache["tune_params"][name]) for name in names}
    return {"kernel_name": cache["kernel_name"], "problem_size": cache.get("problem_size"), "tune_params": tune_params,
            "restrictions": [c["Expression"] for c in conditions]}


def calibration_run(problem: dict, cache_json: str | Path, seed: int, budget: int = CALIBRATION_BUDGET) -> int:
    """One calibration run (seeded); the number of configurations Kernel Tuner returned."""
    import random

    import numpy as np
    from kernel_tuner import tune_kernel

    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune_kernel(problem["kernel_name"], "", problem["problem_size"], [], problem["tune_params"],
                                 restrictions=problem["restrictions"], cache=str(cache_json), simulation_mode=True,
                                 strategy="nsga2", strategy_options={"max_fevals": budget},
                                 objective=list(CALIBRATION_OBJECTIVES),
                                 objective_higher_is_better=[False] * len(CALIBRATION_OBJECTIVES), quiet=True,
                                 seed=seed)
    return len(results)


def per_run_seconds(batches: Sequence[float], runs_per_batch: int) -> float:
    """One calibration run's seconds: the median batch's seconds over the runs of a batch."""
    if not batches or runs_per_batch < 1:
        raise ValueError("no calibration batches timed")
    return statistics.median(batches) / runs_per_batch


def calibrate(repeats: int = CALIBRATION_REPEATS, seeds: Sequence[int] = CALIBRATION_SEEDS,
              run: Callable[[dict, Path, int], int] = calibration_run,
              timer: Callable[[], float] = time.perf_counter) -> list[float]:
    """Time the calibration workload: one untimed run (imports, caches), then `repeats` batches of one run per
    seed; each batch's seconds. Kernel Tuner opens only plain .json caches, so the cache is uncompressed into a
    temporary folder first."""
    with tempfile.TemporaryDirectory(prefix="bench_study_calibration_") as tmp:
        cache_json = Path(tmp) / "A100.json"
        with gzip.open(CALIBRATION_CACHE, "rb") as src, open(cache_json, "wb") as dst:
            shutil.copyfileobj(src, dst)
        problem = calibration_problem(cache_json, CALIBRATION_DEFINITION)
        run(problem, cache_json, seeds[0])
        batches = []
        for _ in range(repeats):
            started = timer()
            for seed in seeds:
                run(problem, cache_json, seed)
            batches.append(timer() - started)
    return batches


def in_calibrations(seconds: float, calibration_s: float | None) -> float:
    """`seconds` in calibration runs (seconds / one calibration run's seconds); NaN when no calibration."""
    if calibration_s is None or not calibration_s > 0 or math.isnan(seconds):
        return math.nan
    return seconds / calibration_s


def calibration_lines(wall: float, job_s: float, calibration_s: float | None, batches: Sequence[float] = (),
                      runs_per_batch: int = len(CALIBRATION_SEEDS)) -> list[str]:
    """The report's paragraph on the cost in calibration runs (a note when there is no calibration)."""
    if calibration_s is None or not calibration_s > 0:
        return ["**In calibration runs:** not measured (no calibration in this invocation), so these seconds can be "
                "compared only with a run on the same machine."]
    measured = (f"timed in this invocation before the study: median of {len(batches)} batches of {runs_per_batch} "
                f"runs, batches {min(batches):.2f}–{max(batches):.2f} s" if batches else
                "given with --calibration-s, measured earlier on this machine")
    wall_c, job_c, target_c = (in_calibrations(x, calibration_s) for x in (wall, job_s, TARGET_S))
    return [
        f"**In calibration runs (machine-independent): wall time {wall_c:,.0f} against a target of {target_c:,.0f} "
        f"(ratio {wall_c / target_c:.2f}); job seconds {job_c:,.0f}.** One calibration run: {CALIBRATION}, "
        f"{calibration_s:.3f} s here ({measured}). A figure in calibration runs is seconds divided by that time, "
        f"so it measures the study's work, not the machine's speed: compare it across machines. The "
        f"target, 20 minutes of wall time on the machine that runs the study, is {TARGET_S} s / {calibration_s:.3f} s "
        f"= {target_c:,.0f} calibration runs on this one (fewer on a slower machine), so the ratio to it is the same "
        f"in both units.",
    ]


CALIBRATION_COLUMNS = ["calibration_s", "job_calibrations", "wall_calibrations", "target_calibrations"]


def summary_frame(stages: pd.DataFrame, jobs: pd.DataFrame, wall: float, snakemake_cpu: float | None,
                  calibration_s: float | None, **meta: object) -> pd.DataFrame:
    """The CSV next to the report: the per-stage table and a "(whole study)" row (its span_s: the wall time),
    the run's `meta` (cores, config, machine, load, date) on every row, then the cost in calibration runs (the
    last columns, absent from the CSVs of runs before them): `calibration_s` (one calibration run's seconds) and
    `job_calibrations` (job seconds in calibration runs) on every row, `wall_calibrations` (the wall time) and
    `target_calibrations` (the 20-minute target) on the whole-study row; NaN without a calibration."""
    summary = pd.concat([stages.reset_index(), pd.DataFrame([{
        "stage": "(whole study)", "jobs": len(jobs), "job_s": jobs["s"].sum(), "share": 1.0, "span_s": wall,
        "snakemake_cpu_s": snakemake_cpu}])], ignore_index=True)
    for name, value in meta.items():
        summary[name] = value
    whole = summary["stage"] == "(whole study)"
    summary["calibration_s"] = calibration_s if calibration_s else math.nan
    summary["job_calibrations"] = [in_calibrations(x, calibration_s) for x in summary["job_s"]]
    summary["wall_calibrations"] = [in_calibrations(wall, calibration_s) if w else math.nan for w in whole]
    summary["target_calibrations"] = [in_calibrations(TARGET_S, calibration_s) if w else math.nan for w in whole]
    return summary


def rule_stages() -> dict[str, str]:
    """Rule name -> stage: the workflow/rules/*.smk file that defines it (`all`: the Snakefile)."""
    stages = {"all": "Snakefile"}
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for name in re.findall(r"^\s*(?:rule (\w+):|use rule \w+ as (\w+))", smk.read_text(), flags=re.M):
            name = "".join(name)
            stages[name] = smk.stem
    return stages


def job_spans(log_text: str, strict: bool = True) -> pd.DataFrame:
    """One row per finished job of a Snakemake log: rule, start and end (datetime, 1 s resolution), and
    the space ("device/kernel") of a job that has one. A job that started and never finished is an error, or
    left out unless `strict`."""
    stamp, pending, started, spaces, rows = None, None, {}, {}, []
    jobid = None
    for line in log_text.splitlines():
        if m := STAMP.match(line):
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        elif m := START.match(line):
            pending, jobid = (m.group(1), stamp), None
        elif (m := JOBID.match(line)) and pending:
            jobid = m.group(1)
            started[jobid] = pending
            pending = None
        elif (m := SPACE.match(line)) and jobid:
            spaces[jobid] = f"{m.group(1)}/{m.group(2)}"
        elif m := FINISHED.match(line):
            rule, begin = started.pop(m.group(1), (m.group(2), stamp))
            rows.append({"rule": rule, "start": begin, "end": stamp, "space": spaces.get(m.group(1))})
    if started and strict:
        raise ValueError(f"Snakemake log: {len(started)} jobs started and never finished")
    frame = pd.DataFrame(rows, columns=["rule", "start", "end", "space"])
    frame["s"] = (frame["end"] - frame["start"]).dt.total_seconds()
    return frame


def stage_table(jobs: pd.DataFrame, by: str) -> pd.DataFrame:
    """Jobs, job seconds, share of all job seconds and span (first start to last end) per `by`."""
    grouped = jobs.groupby(by)
    table = pd.DataFrame({
        "jobs": grouped.size(),
        "job_s": grouped["s"].sum(),
        "span_s": (grouped["end"].max() - grouped["start"].min()).dt.total_seconds(),
    })
    table["share"] = table["job_s"] / table["job_s"].sum()
    return table.sort_values("job_s", ascending=False)[["jobs", "job_s", "share", "span_s"]]


def space_groups(configfile: str | Path) -> dict[str, str]:
    """"device/kernel" -> its group in the config: `group`, else, for a space with the config's default
    objective sets, "GPU (mixed precision)" for a CUDA sweep (data/sweeps/cuda/) and "host-CPU (mixed
    precision)" for any other, else "(no group)"."""
    import yaml

    groups = {}
    for space in yaml.safe_load(Path(configfile).read_text()).get("spaces", []):
        mixed = "GPU (mixed precision)" if "/sweeps/cuda/" in f"/{space.get('source', '')}" else \
            "host-CPU (mixed precision)"
        default = "(no group)" if space.get("objective_sets") else mixed
        groups[f"{space['device']}/{space['kernel']}"] = space.get("group") or default
    return groups


def group_table(jobs: pd.DataFrame, configfile: str | Path) -> pd.DataFrame:
    """Job seconds per stage (rows) and group of spaces (columns); jobs of no one space under "(whole study)"."""
    group = jobs["space"].map(space_groups(configfile)).fillna("(whole study)")
    table = jobs.assign(group=group).pivot_table(index="stage", columns="group", values="s", aggfunc="sum",
                                                 fill_value=0.0)
    table.loc["(all stages)"] = table.sum()
    return table


def published_files(root: Path) -> list[Path]:
    """The tables and figures the study writes, relative to `root`."""
    return sorted(p.relative_to(root) for d in ("tables", "figures") if (root / d).is_dir()
                  for p in (root / d).rglob("*") if p.is_file())


def compare(root: Path) -> list[str]:
    """Lines naming every table or figure of `root` that differs from the repository's, or is missing there."""
    lines = []
    for rel in published_files(root):
        ours = REPO / rel
        if not ours.exists():
            lines.append(f"only in this run: {rel}")
        elif not filecmp.cmp(ours, root / rel, shallow=False):
            lines.append(f"differs: {rel}")
    return lines


def machine() -> str:
    """The CPU model (Linux's /proc/cpuinfo), the CPU count and the architecture."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()}-CPU {model}"


def load_average() -> str:
    """The 1/5/15-minute load averages, as a string."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--configfile", nargs="+", default=[str(REPO / "config" / "config.yaml")],
                    help="the config and any overlays, in order (the spaces' groups come from the first)")
    ap.add_argument("--keep", default="", help="write the outputs here (must not exist) and keep them")
    ap.add_argument("--report", default="", help="also write the result as Markdown to this file, and its "
                                                 "per-stage table as CSV next to it (same name, .csv)")
    ap.add_argument("--compare", action="store_true",
                    help="compare every table and figure with the repository's, byte for byte")
    ap.add_argument("--from-log", default="", help="analyse this Snakemake log of an earlier run instead of running "
                                                   "(with --keep: its output root, for --compare)")
    ap.add_argument("--wall", type=float, help="with --from-log: the run's wall time in s (default: the log's span)")
    ap.add_argument("--load-before", default="", help="with --from-log: the load average before that run")
    ap.add_argument("--load-after", default="", help="with --from-log: the load average after that run")
    ap.add_argument("--calibration-s", type=float,
                    help="one calibration run's seconds, measured earlier on the same machine: not measured again "
                         "(with --from-log: without it, the report has no figures in calibration runs)")
    args = ap.parse_args()

    calibration_s, batches = args.calibration_s, []
    if calibration_s is None and not args.from_log:
        print(f"calibrating: {CALIBRATION}, {CALIBRATION_REPEATS} batches of {len(CALIBRATION_SEEDS)} runs",
              flush=True)
        batches = calibrate()
        calibration_s = per_run_seconds(batches, len(CALIBRATION_SEEDS))
        print(f"calibration: {calibration_s:.3f} s per run (batches {' '.join(f'{b:.2f}' for b in batches)} s)",
              flush=True)

    config_names = " + ".join(Path(f).name for f in args.configfile)
    if args.from_log:
        root, log_file = Path(args.keep).resolve(), Path(args.from_log)
        load_before = args.load_before or "not recorded"
        snakemake_cpu = None
    else:
        root = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="bench_study_"))
        if args.keep and root.exists():
            sys.exit(f"--keep {root}: exists; give a new folder")
        log_file = Path(tempfile.mkdtemp(prefix="bench_study_log_")) / "snakemake.log"
        command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory",
                   str(REPO), "--configfile", *args.configfile, "--config", f"output_root={root}", "--cores",
                   str(args.cores)]
        load_before = load_average()
        print("running:", " ".join(command), f"(log: {log_file})", flush=True)
        started = time.perf_counter()
        with open(log_file, "w") as out:
            returncode, snakemake_cpu = run_measuring_own_cpu(command, out)
        wall = time.perf_counter() - started
        if returncode != 0:
            print(f"snakemake failed (exit {returncode}) after {wall:.0f} s; outputs kept in {root}; "
                  f"log {log_file}")
            return returncode

    jobs = job_spans(log_file.read_text())
    jobs["stage"] = jobs["rule"].map(rule_stages()).fillna("?")
    load_after = (args.load_after or "not recorded") if args.from_log else load_average()
    if args.from_log:
        wall = args.wall or (jobs["end"].max() - jobs["start"].min()).total_seconds()
    stages = stage_table(jobs, "stage")
    lines = [
        f"# The whole study from nothing: {config_names}, {args.cores} cores",
        "",
        f"Machine: {machine()} ({platform.platform()}); "
        f"load average before {load_before}, after {load_after}; {datetime.now():%Y-%m-%d %H:%M}.",
        "",
        f"**Wall time: {wall:.0f} s = {wall / 60:.1f} min; ratio to the 20-minute target {wall / TARGET_S:.2f} "
        f"(target <= 1).** {len(jobs)} jobs, {jobs['s'].sum():.0f} job seconds "
        f"({jobs['s'].sum() / (wall * args.cores):.0%} of {args.cores} cores over the wall time).",
        "",
        *calibration_lines(wall, jobs["s"].sum(), calibration_s, batches),
        "",
        ("The Snakemake process's own CPU time (not its jobs'): "
         + (f"{snakemake_cpu:.0f} s ({snakemake_cpu / wall:.0%} of one core over the wall time)."
            if snakemake_cpu is not None else "not measured (from a log).")),
        "",
        "Job seconds from Snakemake's log (start and end of each job, 1 s resolution); share: of all job "
        "seconds; span: first start to last end of the stage's jobs (stages overlap).",
        "",
        "## Per stage (workflow/rules/*.smk)",
        "",
        stages.to_markdown(floatfmt=("", ".0f", ".0f", ".1%", ".0f")),
        "",
        "## Per rule",
        "",
        stage_table(jobs, "rule").to_markdown(floatfmt=("", ".0f", ".0f", ".1%", ".0f")),
        "",
        "## Job seconds per stage and group of spaces (the config's `group`)",
        "",
        group_table(jobs, args.configfile[0]).to_markdown(floatfmt=".0f"),
    ]
    if args.compare:
        differences = compare(root)
        lines += ["", "## Tables and figures against the repository's", ""]
        lines += [f"- {d}" for d in differences] or [
            f"All {len(published_files(root))} tables and figures are byte-identical to the repository's."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.report:
        Path(args.report).write_text(text)
        summary = summary_frame(stages, jobs, wall, snakemake_cpu, calibration_s, cores=args.cores,
                                config=config_names, machine=machine(), load_before=load_before,
                                load_after=load_after, date=f"{datetime.now():%Y-%m-%d}")
        summary.to_csv(Path(args.report).with_suffix(".csv"), index=False)
        groups_csv = Path(args.report).with_name(Path(args.report).stem + "_groups.csv")
        group_table(jobs, args.configfile[0]).to_csv(groups_csv)
    if not args.keep and not args.from_log:
        shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
