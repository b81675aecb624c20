"""Benchmark: what `python -m analysis.cli compare STRATEGY --suite quick` costs on N cores, from nothing.

Runs the command as a tuner author would, in a fresh output folder (the quick suite's spaces imported, every
baseline restored from data/baselines/, only the strategy's runs simulated), and reports its wall time, the job
seconds per rule from the workflow's log, and both in calibration runs (bench_study.py's unit: one Kernel Tuner
NSGA-II run, measured in the same invocation), so that machines can be compared. The target (issue #46): at
most 5 minutes on 2 cores of the reference VM for a strategy as cheap as NSGA-II; the default strategy is
NSGA-II itself with its default options under another label (its runs are new: the suite's NSGA-II takes the
grid's picks).

    python benchmarks/bench_compare.py [--strategy nsga2 --label nsga2_defaults] [--cores 2]
                                       [--report benchmarks/reports/compare.md]

The report's CSV (same name, .csv) holds the numbers docs/baselines.md quotes. Measure with nothing else heavy
running: the machines are shared 2-core VMs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_study import (  # noqa: E402  (this folder on the path first)
    CALIBRATION,
    calibrate,
    in_calibrations,
    job_spans,
    load_average,
    machine,
    per_run_seconds,
    run_measuring_own_cpu,
    stage_table,
)

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 300  # issue #46: at most 5 minutes on 2 cores


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategy", default="nsga2")
    ap.add_argument("--label", default="nsga2_defaults")
    ap.add_argument("--suite", default="quick")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--report", default="")
    args = ap.parse_args()

    print(f"calibrating: {CALIBRATION}", flush=True)
    calibration_s = per_run_seconds(calibrate(), 20)
    print(f"calibration: {calibration_s:.3f} s per run", flush=True)

    out = Path(tempfile.mkdtemp(prefix="bench_compare_"))
    command = [sys.executable, "-m", "analysis.cli", "compare", args.strategy, "--suite", args.suite,
               "--out", str(out), "--label", args.label, "--cores", str(args.cores)]
    load_before = load_average()
    started = time.perf_counter()
    with open(out.with_suffix(".log"), "w") as log:
        returncode, _ = run_measuring_own_cpu(command, log)
    wall = time.perf_counter() - started
    load_after = load_average()
    if returncode != 0:
        print(f"compare failed (exit {returncode}) after {wall:.0f} s; see {out.with_suffix('.log')}, {out}/logs")
        return returncode
    jobs = job_spans((out / "logs" / "compare.log").read_text())
    rules = stage_table(jobs, "rule")
    summary = pd.read_csv(out / "summary.csv")
    verdict = "within" if wall <= TARGET_S else "over"
    lines = [
        f"# `compare {args.strategy} --suite {args.suite}` from nothing, {args.cores} cores",
        "",
        f"Machine: {machine()}; load average before {load_before}, after {load_after}; "
        f"{datetime.now():%Y-%m-%d %H:%M}.",
        "",
        f"**Wall time: {wall:.0f} s = {wall / 60:.1f} min ({verdict} the 5-minute target); {len(jobs)} jobs, "
        f"{jobs['s'].sum():.0f} job seconds.** One calibration run ({CALIBRATION}): {calibration_s:.3f} s, so the "
        f"wall time is {in_calibrations(wall, calibration_s):,.0f} calibration runs. The summary has "
        f"{len(summary)} rows (space, objective set, budget).",
        "",
        "Jobs per rule, job seconds from the workflow's log (1 s resolution):",
        "",
        rules.to_markdown(floatfmt=("", ".0f", ".0f", ".1%", ".0f")),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.report:
        Path(args.report).write_text(text)
        row = {"strategy": args.strategy, "label": args.label, "suite": args.suite, "cores": args.cores,
               "wall_s": wall, "jobs": len(jobs), "job_s": jobs["s"].sum(), "calibration_s": calibration_s,
               "wall_calibrations": in_calibrations(wall, calibration_s), "summary_rows": len(summary),
               "machine": machine(), "load_before": load_before, "load_after": load_after,
               "date": f"{datetime.now():%Y-%m-%d}"}
        pd.DataFrame([row]).to_csv(Path(args.report).with_suffix(".csv"), index=False)
    shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
