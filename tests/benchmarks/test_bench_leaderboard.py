"""benchmarks/bench_leaderboard.py: the verdict against the full study's target and the report rewritten from a
measurement's CSV."""

from __future__ import annotations

import importlib.util

import pandas as pd

from helpers import REPO

spec = importlib.util.spec_from_file_location("bench_leaderboard", REPO / "benchmarks" / "bench_leaderboard.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def table(seconds_per_run: list[float], spaces: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"entry": [f"e{i}" for i in range(len(spaces))], "seconds_per_run": seconds_per_run,
                         "spaces": spaces, "runs_per_space": 25, "calibration_s": 0.5, "machine": "m",
                         "load_before": "0.1", "date": "d",
                         "estimated_run_s": [s * n * 25 for s, n in zip(seconds_per_run, spaces, strict=True)],
                         "cost_per_run": [s / 0.5 for s in seconds_per_run]})


def test_the_verdict_follows_the_fewest_runs_against_what_the_study_leaves(tmp_path) -> None:
    pd.DataFrame({"stage": ["simulate", "(whole study)"], "wall_calibrations": [float("nan"), 3000.0],
                  "date": ["x", "2026-11-26"], "config": ["config.yaml"] * 2}).to_csv(tmp_path / "bench_study.csv")
    # target 1,800 s / 0.5 s = 3,600 units; the study leaves 600; 10 runs x 2 spaces x 10 s = 200 s of one
    # core = 400 units, 200 of wall on 2 cores: it fits with fewer runs
    cheap = bench.against_target(table([10.0], [2]), 0.5, tmp_path)[-1]
    assert "3,600 calibration runs" in cheap and "leaving 600" in cheap and "only with fewer runs" in cheap
    costly = bench.against_target(table([10.0, 20.0], [10, 10]), 0.5, tmp_path)[-1]
    assert "3,000 s of one core" in costly and "at best 1,500 s" in costly and "cannot be met" in costly
    # without a bench_study measurement, the whole target is what is left
    alone = bench.against_target(table([10.0, 20.0], [10, 10]), 0.5, tmp_path / "nowhere")[-1]
    assert "The study without" not in alone and "cannot be met" not in alone


def test_the_leaderboard_alone_against_its_own_target() -> None:
    jobs = pd.DataFrame({"entry": ["a", "b", "ca_x"], "run_job_s": [4000.0, 1000.0, float("nan")],
                         "score_job_s": [400.0, 200.0, 100.0]})
    jobs["share"] = jobs[["run_job_s", "score_job_s"]].sum(axis=1, min_count=1) / 5700
    line = bench.alone_against_target(jobs, 0.5)[-1]
    # 5,700 job seconds over 2 cores: at least 2,850 s of wall time against 2,700 s
    assert "5,700 job seconds" in line and "2,850 s" in line and "ratio 1.06" in line
    assert line.index("a 77%") < line.index("b 21%") < line.index("ca_x 2%")


def test_the_benchmark_times_the_spaces_the_published_leaderboard_scored() -> None:
    """study_entries derives the leaderboard's spaces as the Snakefile does (config.studied_space_keys,
    constraint_aware.study_spaces, leaderboard.spaces): the spaces of tables/leaderboard_spaces.csv."""
    entries, _, keys = bench.study_entries(REPO / "config/config.yaml")
    published = pd.read_csv(REPO / "tables/leaderboard_spaces.csv")
    assert sorted(f"{d}/{k}" for d, k in keys) == sorted(published["space"].unique())
    assert set(entries) == set(published["entry"])
