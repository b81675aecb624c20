"""Benchmark: the test suite as CI runs it, `.ci/run` on a clean clone of a commit, timed; one row appended to a CSV.

`.ci/run` makes a fresh virtual environment, installs the project and runs pytest twice: the plain suite (README
"Test"), then the slow tier alone. This clones the repository at the commit into a temporary folder, runs it there,
reads pytest's summary lines and appends the commit, the date it finished, machine, load before, tests passed,
pytest-xdist workers and seconds (all of CI's tests, then the plain suite's alone; the plain columns are empty for a
commit whose .ci/run ran pytest once) to the CSV (the README's sentence on the suite's time is generated from its
last row by `python -m analysis.cli readme-results`). A failing suite is reported and nothing is appended; a CSV of
other columns is refused before anything runs.

    python benchmarks/bench_suite.py [--commit HEAD] [--csv benchmarks/reports/ci_suite.csv] [--log FILE]

`--log FILE` keeps everything .ci/run printed (e.g. with PYTEST_ADDOPTS="--durations=50" in the environment,
pytest's slowest tests), whether the suite passed or not.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_study import load_average, machine  # noqa: E402 - the machine and load as the study's report names them

DEFAULT_CSV = REPO / "benchmarks" / "reports" / "ci_suite.csv"
FIELDS = ["commit", "date", "machine", "load_before", "passed", "workers", "pytest_s", "ci_wall_s", "plain_passed",
          "plain_s"]
# pytest's last line, e.g. "====== 723 passed, 3 warnings in 665.12s (0:11:05) ======"
SUMMARY = re.compile(r"=+ (?P<counts>[^=]*?) in (?P<seconds>[\d.]+)s(?: \([\d:]+\))? =+\s*$")


def parse_summaries(output: str) -> list[tuple[int, float]]:
    """(tests passed, pytest's seconds) of each pytest summary line, in order; ValueError if there is none or one
    names failures."""
    found = []
    for line in output.splitlines():
        summary = SUMMARY.search(line)
        if summary:
            counts = dict((name, int(n)) for n, name in re.findall(r"(\d+) (\w+)", summary["counts"]))
            bad = {k: v for k, v in counts.items() if k in ("failed", "error", "errors")}
            if bad or "passed" not in counts:
                raise ValueError(f"the suite did not pass: {summary['counts']}")
            found.append((counts["passed"], float(summary["seconds"])))
    if not found:
        raise ValueError("no pytest summary line in the output of .ci/run")
    return found


def parse_summary(output: str) -> tuple[int, float]:
    """(tests passed, pytest's seconds) over every summary line (.ci/run's pytest runs together); ValueError as
    parse_summaries."""
    found = parse_summaries(output)
    return sum(n for n, _ in found), sum(s for _, s in found)


def parse_workers(output: str) -> int:
    """How many pytest-xdist workers ran the suite (xdist's "created: 2/2 workers"); 1 without xdist."""
    found = re.findall(r"^created: (\d+)/\d+ workers?$", output, flags=re.MULTILINE)
    if found:
        return int(found[-1])
    if "bringing up nodes" in output:
        raise ValueError("pytest-xdist ran, but its 'created: N/N workers' line is not in the output")
    return 1


def main(argv: list[str] | None = None) -> int:
    """Clone, run .ci/run, append the row; exit 1 if the suite failed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--log", type=Path, default=None, help="write all that .ci/run printed to this file")
    args = parser.parse_args(argv)
    if args.csv.is_file():  # checked before the suite runs for minutes, not after
        with args.csv.open(newline="") as fh:
            header = next(csv.reader(fh), [])
        if header != FIELDS:
            print(f"bench_suite: {args.csv} has the columns {header}, not {FIELDS}; nothing run or recorded",
                  file=sys.stderr)
            return 1
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.commit], check=True,
                            capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit], check=True)
        load = load_average()
        started = time.perf_counter()
        proc = subprocess.run(["bash", ".ci/run"], cwd=clone, capture_output=True, text=True)
        wall = time.perf_counter() - started
    output = proc.stdout + proc.stderr
    if args.log is not None:
        args.log.parent.mkdir(parents=True, exist_ok=True)
        args.log.write_text(output)
    print(output[-3000:])
    try:
        runs = parse_summaries(output)
        passed, seconds = parse_summary(output)
        workers = parse_workers(output)
        if proc.returncode != 0:
            raise ValueError(f".ci/run exited with {proc.returncode}")
    except ValueError as error:
        print(f"bench_suite: {error}; nothing recorded", file=sys.stderr)
        return 1
    row = {"commit": commit, "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": machine(), "load_before": load, "passed": passed, "workers": workers, "pytest_s": round(seconds),
           "ci_wall_s": round(wall), "plain_passed": runs[0][0] if len(runs) == 2 else "",
           "plain_s": round(runs[0][1]) if len(runs) == 2 else ""}
    new = not args.csv.is_file()
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        if new:
            writer.writeheader()
        writer.writerow(row)
    print(f"recorded in {args.csv}: {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
