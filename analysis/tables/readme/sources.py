"""The files the generated text reads, in one place: the rule readme_results declares them as its inputs
(workflow/rules/tables.smk) and the modules read them from here. This module imports no table code, so that the
workflow's start stays light."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from analysis import paths

# the published tables the text reads (Tables[name]); the leaderboard's, seed 003's, eval_time_parts and
# compile_sensitivity only where the folder has them
TABLES = ("spaces", "indicators", "improvement_over_rs", "significance", "nsga3_over_nsga2", "speedup_to_rs",
          "speedup_to_rs_spaces", "eval_time", "eval_time_parts", "compile_sensitivity", "aware_over_unaware",
          "aware_over_unaware_tests", "constraint_aware_scores", "constraint_aware_gains", "constraint_aware_runs",
          "leaderboard", "leaderboard_pairs", "leaderboard_spaces", "pyatf_comparison", "hyperparameters_so_summary",
          "hyperparameters_so_meta")
# the tables of each release's folder docs/history/<commit>/ that docs/results.md's "What moved" compares
# (analysis.tables.changes.rows)
HISTORY_TABLES = ("improvement_over_rs", "nsga3_over_nsga2", "eval_time", "speedup_to_rs", "constraint_aware_gains")
# benchmarks/reports/: the whole study's cost and its job seconds per group of spaces (benchmarks/bench_study.py),
# the test suite's time (benchmarks/bench_suite.py), and adding one strategy (benchmarks/bench_add_strategy.py)
STUDY_COST = paths.REPORTS / "bench_study.csv"
STUDY_GROUPS = paths.REPORTS / "bench_study_groups.csv"
SUITE_COST = paths.REPORTS / "ci_suite.csv"
ADD_COST = paths.REPORTS / "add_strategy.csv"
REPORTS = (STUDY_COST, STUDY_GROUPS, SUITE_COST, ADD_COST)
# the papers' numbers it quotes (data/literature/: analysis.tables.literature.thesis and .values)
LITERATURE = ("thesis_table2", "thesis_table4", "thesis_table5", "seed001_density")
# the kernels' specs (seed 002 Table II's sizes, their `paper` mapping)
KERNEL_SPECS = paths.KERNELS
# the documents it updates between their markers, and docs/results.md, which it writes whole
README = paths.REPO / "README.md"
FINDINGS = paths.DOCS / "findings.md"
RESULTS = paths.DOCS / "results.md"
CA_DOC = paths.DOCS / "constraint-aware.md"
TUNER_DOC = paths.DOCS / "your-tuner.md"
DOCUMENTS = (README, FINDINGS, RESULTS, CA_DOC, TUNER_DOC)


def table_files(folder: str | Path, names: Iterable[str] = TABLES) -> list[str]:
    """The tables of `folder` the text reads, as paths under it (a rule's inputs: they need not exist yet)."""
    return [f"{folder}/{name}.csv" for name in names]


def repository_files() -> list[Path]:
    """The files of the repository beside the tables that the text reads, where they exist: the benchmark reports,
    the literature's numbers (data/literature/), the kernels' specs and the tables of docs/history/."""
    found = [p for p in REPORTS if p.is_file()]
    found += [paths.LITERATURE / f"{name}.csv" for name in LITERATURE]
    found += sorted(KERNEL_SPECS.glob("*/spec.yaml"))
    found += sorted(p for commit in sorted(paths.HISTORY.iterdir()) if commit.is_dir()
                    for p in (commit / f"{name}.csv" for name in HISTORY_TABLES) if p.is_file())
    return found
