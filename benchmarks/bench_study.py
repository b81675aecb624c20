"""Benchmark: the whole study of a config (config/config.yaml by default), from nothing, on N cores.

Runs Snakemake's default target (every table and figure) into a fresh output root and reads the
start and end of every job from Snakemake's own log. Prints the wall time of the whole invocation
against the target (20 minutes on 2 cores), then per stage (the workflow/rules/*.smk file that
holds the rule) and per rule: jobs, job seconds, their share of all job seconds, and the stage's
span (first start to last end). Optionally writes the same as Markdown (--report) and compares
the study's tables and figures byte for byte with the published ones (--compare).

    python benchmarks/bench_study.py [--cores 2] [--configfile config/config.yaml] [--keep DIR]
                                     [--report benchmarks/reports/bench_study.md] [--compare]

Takes as long as it measures; nothing under the checkout's results/, tables/ or figures/ is touched.
Measure with nothing else heavy running: the machines are shared 2-core VMs.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
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


def rule_stages() -> dict[str, str]:
    """Rule name -> stage: the workflow/rules/*.smk file that defines it (`all`: the Snakefile)."""
    stages = {"all": "Snakefile"}
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for name in re.findall(r"^\s*(?:rule (\w+):|use rule \w+ as (\w+))", smk.read_text(), flags=re.M):
            name = "".join(name)
            stages[name] = smk.stem
    return stages


def job_spans(log_text: str) -> pd.DataFrame:
    """One row per finished job of a Snakemake log: rule, start and end (datetime, 1 s resolution), and
    the space ("device/kernel") of a job that has one."""
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
    if started:
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
    """"device/kernel" -> its group in the config: `group`, else "host-CPU (mixed precision)" for a space with
    objective sets of its own from the config's defaults, else "(no group)"."""
    import yaml

    groups = {}
    for space in yaml.safe_load(Path(configfile).read_text()).get("spaces", []):
        default = "(no group)" if space.get("objective_sets") else "host-CPU (mixed precision)"
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
    ap.add_argument("--configfile", default=str(REPO / "config" / "config.yaml"))
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
    args = ap.parse_args()

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
                   str(REPO), "--configfile", args.configfile, "--config", f"output_root={root}", "--cores",
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
        f"# The whole study from nothing: {Path(args.configfile).name}, {args.cores} cores",
        "",
        f"Machine: {machine()} ({platform.platform()}); "
        f"load average before {load_before}, after {load_after}; {datetime.now():%Y-%m-%d %H:%M}.",
        "",
        f"**Wall time: {wall:.0f} s = {wall / 60:.1f} min; ratio to the 20-minute target {wall / TARGET_S:.2f} "
        f"(target <= 1).** {len(jobs)} jobs, {jobs['s'].sum():.0f} job seconds "
        f"({jobs['s'].sum() / (wall * args.cores):.0%} of {args.cores} cores over the wall time).",
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
        group_table(jobs, args.configfile).to_markdown(floatfmt=".0f"),
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
        summary = pd.concat([stages.reset_index(), pd.DataFrame([{
            "stage": "(whole study)", "jobs": len(jobs), "job_s": jobs["s"].sum(), "share": 1.0, "span_s": wall,
            "snakemake_cpu_s": snakemake_cpu}])])
        summary["cores"] = args.cores
        summary["config"] = Path(args.configfile).name
        summary["machine"] = machine()
        summary["load_before"], summary["load_after"] = load_before, load_after
        summary["date"] = f"{datetime.now():%Y-%m-%d}"
        summary.to_csv(Path(args.report).with_suffix(".csv"), index=False)
        group_table(jobs, args.configfile).to_csv(Path(args.report).with_name(Path(args.report).stem + "_groups.csv"))
    if not args.keep and not args.from_log:
        shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
