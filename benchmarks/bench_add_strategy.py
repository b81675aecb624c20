"""Benchmark: what adding one setting (a config overlay) to a finished study costs, on N cores.

Takes the output root of a finished run of the study (`bench_study.py --keep DIR`, or any `snakemake`
run with `output_root: DIR`), plans the study again with a config overlay added
(`--configfile config/config.yaml OVERLAY`, output_root DIR) and counts the jobs Snakemake would
run per rule: only the new setting's runs and what reads them (its indicators, the comparison's
indicator summary, tables and figures) may be among them. Then it runs them and reports the wall
time, the job seconds per rule, and both in calibration runs (bench_study.py's unit: one Kernel
Tuner NSGA-II run, measured in the same invocation), so that machines can be compared.

    python benchmarks/bench_add_strategy.py --root DIR [--overlay config/mine.example.yaml] [--cores 2]
                                            [--report benchmarks/reports/add_strategy.md]

The report's CSV (same name, .csv) is what docs/your-tuner.md quotes (`python -m analysis.cli
readme-results`). Measure with nothing else heavy running: the machines are shared 2-core VMs.
The outputs in DIR are updated (the overlay's setting added); nothing in the checkout is touched.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pandas as pd

from analysis.scheduling import job_counts

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_study import (  # noqa: E402  (this folder on the path first)
    CALIBRATION,
    calibrate,
    in_calibrations,
    job_spans,
    load_average,
    machine,
    per_run_seconds,
    rule_stages,
    run_measuring_own_cpu,
    stage_table,
)

REPO = Path(__file__).resolve().parents[1]


def snakemake_command(root: Path, configfiles: list[str], cores: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(REPO),
            "--configfile", *configfiles, "--config", f"output_root={root}", "--cores", str(cores), *extra]


def planned_jobs(root: Path, configfiles: list[str], cores: int) -> dict[str, int]:
    """Rule -> jobs Snakemake would run now (a dry run's job table)."""
    out = subprocess.run(snakemake_command(root, configfiles, cores, "--dry-run", "--quiet", "rules"), cwd=REPO,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"dry run failed:\n{out.stderr[-3000:]}")
    return job_counts(out.stdout + out.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="output root of a finished run of the base config")
    ap.add_argument("--base", default=str(REPO / "config" / "config.yaml"))
    ap.add_argument("--overlay", default=str(REPO / "config" / "mine.example.yaml"))
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--report", default="")
    args = ap.parse_args()
    root = Path(args.root).resolve()

    before = planned_jobs(root, [args.base], args.cores)
    if before:
        sys.exit(f"{root} is not a finished run of {args.base}: Snakemake would still run {before}")
    configfiles = [args.base, args.overlay]
    planned = planned_jobs(root, configfiles, args.cores)
    print("planned with the overlay:", planned, flush=True)

    print(f"calibrating: {CALIBRATION}", flush=True)
    batches = calibrate()
    calibration_s = per_run_seconds(batches, 20)
    print(f"calibration: {calibration_s:.3f} s per run", flush=True)

    log_file = Path(tempfile.mkdtemp(prefix="bench_add_strategy_")) / "snakemake.log"
    load_before = load_average()
    started = time.perf_counter()
    with open(log_file, "w") as out:
        returncode, snakemake_cpu = run_measuring_own_cpu(snakemake_command(root, configfiles, args.cores), out)
    wall = time.perf_counter() - started
    if returncode != 0:
        print(f"snakemake failed (exit {returncode}) after {wall:.0f} s; log {log_file}")
        return returncode
    load_after = load_average()
    jobs = job_spans(log_file.read_text())
    jobs["stage"] = jobs["rule"].map(rule_stages()).fillna("?")
    rules = stage_table(jobs, "rule")
    rules["planned"] = [planned.get(r, 0) for r in rules.index]
    overlay = Path(args.overlay).resolve()
    overlay_name = str(overlay.relative_to(REPO)) if overlay.is_relative_to(REPO) else str(overlay)
    lines = [
        f"# Adding {overlay_name} to a finished {Path(args.base).name} run, {args.cores} cores",
        "",
        f"Machine: {machine()}; load average before {load_before}, after {load_after}; "
        f"{datetime.now():%Y-%m-%d %H:%M}.",
        "",
        f"**Wall time: {wall:.0f} s = {wall / 60:.1f} min; {len(jobs)} jobs, {jobs['s'].sum():.0f} job seconds.** "
        f"One calibration run ({CALIBRATION}): {calibration_s:.3f} s, so the wall time is "
        f"{in_calibrations(wall, calibration_s):,.0f} calibration runs and the job seconds "
        f"{in_calibrations(jobs['s'].sum(), calibration_s):,.0f}.",
        "",
        "Jobs Snakemake planned (dry run) and ran, per rule; job seconds from its log (1 s resolution):",
        "",
        rules.to_markdown(floatfmt=("", ".0f", ".0f", ".1%", ".0f", ".0f")),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.report:
        Path(args.report).write_text(text)
        summary = rules.reset_index()
        summary = pd.concat([summary, pd.DataFrame([{"rule": "(all)", "jobs": len(jobs), "job_s": jobs["s"].sum(),
                                                     "share": 1.0, "span_s": wall,
                                                     "planned": sum(planned.values())}])], ignore_index=True)
        summary["overlay"] = overlay_name
        summary["cores"] = args.cores
        summary["machine"] = machine()
        summary["load_before"] = load_before
        summary["load_after"] = load_after
        summary["date"] = f"{datetime.now():%Y-%m-%d}"
        summary["snakemake_cpu_s"] = snakemake_cpu
        summary["calibration_s"] = calibration_s
        summary["job_calibrations"] = [in_calibrations(x, calibration_s) for x in summary["job_s"]]
        summary.to_csv(Path(args.report).with_suffix(".csv"), index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
