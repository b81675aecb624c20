"""Check: seed 003's score of each Dual Annealing configuration against `kernel_tuner.hyper.tune_hyper_params`.

Runs `analysis.kernel_tuner_hyper.check` on Dual Annealing's grid (config/seed003.yaml, its 8 local
methods, or those of --methods) on A100/convolution and A100/dedispersion: the suite's score (25 runs per space,
seed 003's scoring with its resamples) and Kernel Tuner's hyper tuner's (brute force over the grid, its
Hypertuner backend's settings, 25 repeats), once as Kernel Tuner runs it (revisits charged their per-iteration
times) and once with revisits charged nothing. Writes a Markdown report (default
benchmarks/reports/kernel_tuner_hyper.md) with the machine, date, commit, settings, the rows and the summary.

    nice -n 19 python benchmarks/check_kernel_tuner_hyper.py [--methods Powell COBYLA] [--report PATH]

Roughly 40 minutes on the 2-core development VM with its CPU free (the suite's side about 6 minutes; Kernel
Tuner's 25 repeats x 2 spaces per configuration about 1.5 to 2 minutes, Nelder-Mead longer, x 8 configurations
x 2 modes); the report is written at the end only.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import analysis  # noqa: E402,F401  (first: it pins the numeric kernels before numpy loads, analysis/numerics.py)
from analysis import config as study_config  # noqa: E402
from analysis import kernel_tuner_hyper as kth  # noqa: E402
from bench_study import load_average, machine  # noqa: E402

if TYPE_CHECKING:
    import pandas as pd

SPACES = ["A100/convolution", "A100/dedispersion"]
SEED = 3  # np.random.seed and random.seed before each of Kernel Tuner's calls
MODES = {"charged": "as Kernel Tuner runs it (a revisit charged its per-iteration times)",
         "free": "revisits charged nothing (their per-iteration times emptied)"}
COLUMNS = ["configuration", "kernel_tuner_score", "suite_score", "suite_se", "difference", "z", "agree",
           "evaluations", "revisits", "revisit_time_s", "suite_distinct_evaluations"]


def commit() -> str:
    """The checkout's commit (with `+dirty` if its tracked files differ from it)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True,
                           text=True)
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _markdown(table: pd.DataFrame, runs: int) -> str:
    shown = table[COLUMNS].copy()
    shown.insert(len(shown.columns) - 3, "evaluations_per_run", shown["evaluations"] / runs)
    head = "| " + " | ".join(shown.columns) + " |"
    rule = "|" + "|".join("---" for _ in shown.columns) + "|"
    rows = []
    for _, r in shown.iterrows():
        cells = []
        for v in r:
            if isinstance(v, bool):
                cells.append("yes" if v else "no")
            elif isinstance(v, float):
                cells.append(f"{v:.3f}" if abs(v) < 1000 else f"{v:.0f}")
            else:
                cells.append(str(v))
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def report(results: dict[str, pd.DataFrame], methods: list[str], repetitions: int, resamples: int, started: str,
           load_start: str, wall_s: float) -> str:
    settings, cap = kth.suite_settings()
    backend = kth.hypertuner.HypertunerFunctions(1).override
    runs = repetitions * len(SPACES)
    lines = [
        "# Seed 003's scores against kernel_tuner.hyper.tune_hyper_params",
        "",
        "Written by `benchmarks/check_kernel_tuner_hyper.py` "
        "(docs/hyperparameters-so.md#check-against-kernel_tunerhyper); "
        "`analysis/kernel_tuner_hyper.py` does the work.",
        "",
        f"- Machine: {machine()}; Python {platform.python_version()}; load average at the start {load_start}, at "
        f"the end {load_average()} (run under `nice -n 19` beside another computation)",
        f"- Date: {started}; commit {commit()}; wall time {wall_s / 60:.1f} min",
        f"- Spaces: {', '.join(SPACES)}; strategy dual_annealing, grid method = {methods}"
        + ("" if len(methods) == 8 else " (fewer than seed 003's 8 methods)"),
        f"- Kernel Tuner's side: `tune_hyper_params('dual_annealing', grid, [], strategy='brute_force', ...)`, its "
        f"Hypertuner backend's settings {backend} with the spaces' files and {repetitions} repeats per space; "
        f"`np.random.seed({SEED})` and `random.seed({SEED})` before each call.",
        f"- The suite's side: {repetitions} runs per space by the leaderboard's runner, scored as seed 003's grid "
        f"jobs score them ({resamples} bootstrap resamples; settings {settings}, proposal cap {cap}); the "
        "acceptance rule is the suite's (the package's defaults), not the backend's 0.1 / 3.",
        f"- Test: z = (Kernel Tuner's score - the suite's) / (sqrt(2) x the suite score's standard error over its "
        f"resamples); the two agree when |z| <= {kth.Z_AGREE}.",
        f"- Kernel Tuner's evaluations, revisits and the revisits' per-iteration time are summed over every run "
        f"of a configuration ({runs} runs: {repetitions} per space, plus any the methodology ran again); "
        "evaluations_per_run divides by "
        f"{runs}. suite_distinct_evaluations is the suite's mean of distinct configurations per run over the "
        "spaces.",
        "",
    ]
    for mode, table in results.items():
        s = kth.summary(table)
        lines += [
            f"## {mode}: {MODES[mode]}",
            "",
            _markdown(table, runs),
            "",
            f"- Agree: {s['agree']} of {s['configurations']}; mean difference {s['mean_difference']:.3f}; "
            f"Spearman rank correlation {s['spearman']:.3f}",
            f"- Picks (highest score): Kernel Tuner `{s['kernel_tuner_pick']}`, the suite `{s['suite_pick']}`",
            f"- Revisits: {table['revisits'].sum() / table['evaluations'].sum():.1%} of Kernel Tuner's evaluations",
            "",
        ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    grid = study_config.read_yaml(REPO / "config" / "seed003.yaml")["hyperparameters_so"]["grids"]["dual_annealing"]
    ap.add_argument("--methods", nargs="+", default=list(grid["method"]))
    ap.add_argument("--repetitions", type=int, default=25)
    ap.add_argument("--resamples", type=int, default=20)
    ap.add_argument("--report", default=str(REPO / "benchmarks" / "reports" / "kernel_tuner_hyper.md"))
    args = ap.parse_args()
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_start = load_average()
    clock = time.perf_counter()
    results = kth.check(SPACES, {"method": args.methods}, SEED, args.repetitions, args.resamples)
    text = report(results, args.methods, args.repetitions, args.resamples, started, load_start,
                  time.perf_counter() - clock)
    Path(args.report).write_text(text + "\n")
    os.chmod(args.report, 0o644)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
