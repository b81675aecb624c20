"""What a command's start costs, with the command modules' imports where they are and hoisted to the top.

    python benchmarks/bench_startup.py [--repeats 5] [--csv benchmarks/reports/startup.csv]
                                       [--report benchmarks/reports/bench_startup.md]

Every rule of the workflow runs `python -m analysis.cli <command>`, so every job pays the import of analysis.cli.
The command modules (analysis.cli, analysis.figures.cli, analysis.sweep.commands) import the library a command
needs inside the command's handler; this script measures why. (The GPU visit's commands, `python -m gpuvisit`, are
no job's: no rule starts them.) In fresh interpreters, alternately, `--repeats` times each, it times (a) importing
analysis.cli as it is, which is what a job pays before its command's own imports, and (b) importing analysis.cli
and then every module those handlers import (read from their code), which is what every job would pay with those
imports at the top of the modules. The ratio is (b) / (a), the baseline measured in the same run; the report also
multiplies the difference by the job count of the last whole-study run (benchmarks/reports/bench_study.csv).
Measure with nothing else heavy running: the report states the load before and after.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
COMMAND_MODULES = ("analysis/cli.py", "analysis/figures/cli.py", "analysis/sweep/commands.py")
STUDY_COST = REPO / "benchmarks" / "reports" / "bench_study.csv"
WHOLE_STUDY = "(whole study)"  # bench_study's row of all the study's jobs


def deferred_imports(path: Path, packages: tuple[str, ...] | None = ("analysis",)
                     ) -> list[ast.Import | ast.ImportFrom]:
    """The imports of `packages`' modules (None: of any module) inside the functions of `path`, each once, in the
    order of their lines (tests/test_layout.py asks each for a comment saying why)."""

    def wanted(name: str | None) -> bool:
        return packages is None or bool(name) and str(name).split(".")[0] in packages

    found = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if (isinstance(sub, ast.ImportFrom) and sub.level == 0 and wanted(sub.module)) or (
                        isinstance(sub, ast.Import) and any(wanted(a.name) for a in sub.names)):
                    found[(sub.lineno, sub.col_offset)] = sub
    return [found[key] for key in sorted(found)]


def handler_imports(paths: tuple[str, ...] = COMMAND_MODULES) -> list[str]:
    """The analysis modules imported inside the functions of the command modules, sorted."""
    found = set()
    for rel in paths:
        for sub in deferred_imports(REPO / rel):
            if isinstance(sub, ast.ImportFrom):
                for alias in sub.names:  # `from analysis.tables import readme` imports a module
                    name = f"{sub.module}.{alias.name}"
                    found.add(name if (REPO / (name.replace(".", "/") + ".py")).is_file() else sub.module)
            else:
                found.update(a.name for a in sub.names if a.name.startswith("analysis"))
    return sorted(found)


def time_import(modules: list[str]) -> float:
    """Seconds a fresh interpreter takes to import `modules` (and exit), measured from outside."""
    code = "; ".join(f"import {m}" for m in modules)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
    return time.perf_counter() - started


def study_jobs(path: Path = STUDY_COST) -> tuple[int | None, str]:
    """The job count of the newest whole-study measurement and its config, if there is one."""
    if not path.is_file():
        return None, ""
    frame = pd.read_csv(path)
    newest = frame[frame["date"] == frame["date"].max()]
    newest = newest[(newest["config"] == newest["config"].iloc[-1]) & (newest["stage"] == WHOLE_STUDY)]
    if newest.empty:
        return None, ""
    return int(newest["jobs"].iloc[-1]), str(newest["config"].iloc[-1])


def measure(repeats: int) -> dict:
    lazy = handler_imports()
    plain, hoisted = [], []
    time_import(["analysis.cli"])  # warm the file cache and the bytecode once
    for _ in range(repeats):
        plain.append(time_import(["analysis.cli"]))
        hoisted.append(time_import(["analysis.cli", *lazy]))
    a, b = statistics.median(plain), statistics.median(hoisted)
    return {"modules": len(lazy), "repeats": repeats, "plain_s": a, "hoisted_s": b, "ratio": b / a,
            "extra_s": b - a}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--csv", type=Path, default=REPO / "benchmarks" / "reports" / "startup.csv")
    p.add_argument("--report", type=Path, default=REPO / "benchmarks" / "reports" / "bench_startup.md")
    a = p.parse_args(argv)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    row = measure(a.repeats)
    jobs, config = study_jobs()
    row.update({"study_jobs": jobs, "study_extra_job_s": None if jobs is None else jobs * row["extra_s"],
                "load_before": load_before, "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
                "cores": os.cpu_count(), "date": datetime.date.today().isoformat()})
    a.csv.parent.mkdir(parents=True, exist_ok=True)
    old = pd.read_csv(a.csv) if a.csv.is_file() else pd.DataFrame()
    pd.concat([old, pd.DataFrame([row])], ignore_index=True).to_csv(a.csv, index=False)
    per_study = ("" if jobs is None else
                 f" Over the {jobs:,} jobs of the last whole-study run ({config}), that is "
                 f"{row['study_extra_job_s']:,.0f} job seconds.")
    text = (f"# What a command's start costs\n\n"
            f"{os.cpu_count()} cores; load average before {load_before}, after {row['load_after']}; "
            f"{a.repeats} fresh interpreters each, alternately, median; {datetime.date.today().isoformat()}.\n\n"
            f"- `import analysis.cli` as it is (what every job pays before its command's own imports): "
            f"{row['plain_s']:.2f} s.\n"
            f"- with the {row['modules']} modules the command handlers import hoisted to the top: "
            f"{row['hoisted_s']:.2f} s, {row['ratio']:.1f}x, {row['extra_s']:.2f} s more per job.{per_study}\n\n"
            f"Made by `benchmarks/bench_startup.py`.\n")
    a.report.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
