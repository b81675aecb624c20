"""benchmarks/bench_bagging.py: a job timed with and without the fast path's fits gives the same scores, and the
report sums the scoring rules' benchmark files."""

from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

from analysis.simulate.constraint_aware import run
from analysis.spaces.methodology import ScoreSettings
from helpers import REPO, bessel_sweep

spec = importlib.util.spec_from_file_location("bench_bagging", REPO / "benchmarks" / "bench_bagging.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_a_job_is_timed_both_ways_and_reported(tmp_path) -> None:
    results = tmp_path / "results"
    space = bessel_sweep()
    folder = results / "spaces" / space.device / space.kernel
    folder.mkdir(parents=True)
    space.save(folder / "space.parquet", folder / "space.json")
    runs = results / "constraint_aware" / "runs" / space.device / space.kernel
    runs.mkdir(parents=True)
    run(folder / "space.parquet", folder / "space.json", None, "ga_aware", "genetic_algorithm", {}, True, 4,
        ScoreSettings(), 10.0, runs / "ga_aware.parquet", runs / "ga_aware.budget.json")
    marks = results / "benchmarks" / "constraint_aware" / space.device / space.kernel
    marks.mkdir(parents=True)
    for name, seconds in (("ga_aware", 3.5), ("rs", 1.5)):
        pd.DataFrame({"s": [seconds], "cpu_time": [seconds / 2]}).to_csv(marks / f"{name}.resample.tsv", sep="\t",
                                                                         index=False)
    csv, report = tmp_path / "bagging.csv", tmp_path / "bagging.md"
    job = f"{space.device}/{space.kernel}/ga_aware"
    assert bench.main(["--results", str(results), "--jobs", job, "--resamples", "2", "--repeats", "1",
                       "--csv", str(csv), "--report", str(report)]) == 0
    row = pd.read_csv(csv).iloc[0]
    assert row["job"] == job and row["runs"] == 4 and bool(row["identical"])
    assert row["ratio"] == pytest.approx(row["stock_s"] / row["fast_s"], rel=0.1)  # of the seconds before rounding
    stages = bench.stage_seconds(results)
    assert stages.to_dict("records") == [{"rule": "ca_resample", "jobs": 2, "job_s": 5.0, "cpu_s": 2.5}]
    assert "| ca_resample |" in report.read_text()
