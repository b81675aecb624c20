"""benchmarks/bench_startup.py: the command modules' deferred imports are found and a job's start is timed both
ways."""

from __future__ import annotations

import importlib.util

import pandas as pd

from helpers import REPO

spec = importlib.util.spec_from_file_location("bench_startup", REPO / "benchmarks" / "bench_startup.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_the_handlers_imports_are_read_from_the_command_modules() -> None:
    found = bench.handler_imports()
    # a module imported as a name of its package, a module imported from, and a figure command's module
    assert {"analysis.tables.readme.documents", "analysis.spaces.importers", "analysis.figures.anytime"} <= set(found)
    assert all((REPO / (m.replace(".", "/") + ".py")).is_file() or (REPO / m.replace(".", "/")).is_dir()
               for m in found)


def test_the_start_is_timed_both_ways_and_reported(tmp_path) -> None:
    csv, report = tmp_path / "startup.csv", tmp_path / "startup.md"
    assert bench.main(["--repeats", "1", "--csv", str(csv), "--report", str(report)]) == 0
    row = pd.read_csv(csv).iloc[-1]
    assert row["hoisted_s"] > row["plain_s"] > 0 and row["ratio"] == row["hoisted_s"] / row["plain_s"]
    assert row["modules"] == len(bench.handler_imports())
    assert "load average before" in report.read_text()


def test_the_job_count_is_the_whole_study_row(tmp_path) -> None:
    rows = [{"stage": "simulate", "jobs": 3, "config": "c", "date": "2026-01-02"},
            {"stage": bench.WHOLE_STUDY, "jobs": 5, "config": "c", "date": "2026-01-02"},
            {"stage": bench.WHOLE_STUDY, "jobs": 9, "config": "old", "date": "2026-01-01"}]
    pd.DataFrame(rows).to_csv(tmp_path / "study.csv", index=False)
    assert bench.study_jobs(tmp_path / "study.csv") == (5, "c")
    assert bench.study_jobs(tmp_path / "none.csv") == (None, "")
