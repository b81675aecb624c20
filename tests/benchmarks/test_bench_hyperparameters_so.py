"""benchmarks/bench_hyperparameters_so.py: seed 003's tuning's cost per phase from the benchmark files, the log and
the runs' simulated clocks."""

from __future__ import annotations

import importlib.util
import sys

import pandas as pd
import pytest

from helpers import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
spec = importlib.util.spec_from_file_location("bench_hyperparameters_so",
                                              REPO / "benchmarks" / "bench_hyperparameters_so.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

LOG = """[Mon Nov 23 21:16:00 2026]
rule so_run:
    jobid: 1
[Mon Nov 23 21:16:10 2026]
rule so_score:
    jobid: 2
[Mon Nov 23 21:16:40 2026]
Finished jobid: 1 (Rule: so_run)
[Mon Nov 23 21:17:00 2026]
Finished jobid: 2 (Rule: so_score)
[Mon Nov 23 21:17:01 2026]
rule so_tables:
    jobid: 3
"""


def test_phases_sum_job_seconds_runs_and_live_hours(tmp_path) -> None:
    folder = tmp_path / "benchmarks" / "hyperparameters_so" / "grid" / "pso"
    folder.mkdir(parents=True)
    for name, seconds in (("0.run.tsv", 40.0), ("0.score.tsv", 50.0)):
        pd.DataFrame({"s": [seconds], "h:m:s": ["0:00:40"]}).to_csv(folder / name, sep="\t", index=False)
    # a leaderboard score of the grid's best (rule so_lb_score): a phase of its own, not the grid's
    board = tmp_path / "benchmarks" / "hyperparameters_so" / "leaderboard" / "pso"
    board.mkdir(parents=True)
    pd.DataFrame({"s": [7.0], "h:m:s": ["0:00:07"]}).to_csv(board / "best.score.tsv", sep="\t", index=False)
    runs = tmp_path / "hyperparameters_so" / "grid" / "runs" / "pso"
    runs.mkdir(parents=True)
    # two runs: their clocks end at 3.6e6 ms (1 h) and 7.2e6 ms (2 h); a failed run's row has no clock
    pd.DataFrame({"configuration": ["a"] * 5, "space": ["s"] * 5, "repetition": [0, 0, 1, 1, 2],
                  "sim_time_ms": [1.0, 3.6e6, 5.0, 7.2e6, None]}).to_parquet(runs / "0.parquet")
    spans = bench.job_spans(LOG, strict=False)  # the log ends in a job that never finished: left out
    assert list(spans["rule"]) == ["so_run", "so_score"]
    frame = bench.table(bench.benchmark_seconds(tmp_path), spans, tmp_path, 2.0).set_index("phase")
    grid = frame.loc["grid (runs + scores)"]
    assert grid["job_s"] == 90.0 and grid["span_s"] == 60.0 and grid["runs"] == 2
    assert grid["live_h"] == pytest.approx(3.0) and grid["span_calibrations"] == 30.0
    assert frame.loc["grid runs", "job_s"] == 40.0 and frame.loc["final runs", "jobs"] == 0
    assert frame.loc["leaderboard scores", "job_s"] == 7.0 and frame.loc["all", "job_s"] == 97.0
    with pytest.raises(ValueError, match="never finished"):
        bench.job_spans(LOG)
