"""benchmarks/bench_study.py reads each job's start and end from Snakemake's log."""

from __future__ import annotations

import importlib.util
import math

import pandas as pd
import pytest

from helpers import REPO

spec = importlib.util.spec_from_file_location("bench_study", REPO / "benchmarks" / "bench_study.py")
bench_study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_study)

LOG = """Select jobs to execute...
[Mon Nov 23 21:16:03 2026]
localrule ca_run:
    input: a
    jobid: 521
    wildcards: device=A, kernel=k, strategy=pso_aware
[Mon Nov 23 21:16:04 2026]
rule import_space:
    jobid: 7
[Mon Nov 23 21:16:18 2026]
Finished jobid: 521 (Rule: ca_run)
[Mon Nov 23 21:16:20 2026]
Finished jobid: 7 (Rule: import_space)
"""


def test_job_spans_pair_each_start_with_its_end_and_stages_come_from_the_rule_files():
    jobs = bench_study.job_spans(LOG)
    assert jobs.set_index("rule")["s"].to_dict() == {"ca_run": 15.0, "import_space": 16.0}
    stages = bench_study.rule_stages()
    assert stages["ca_run"] == "simulate" and stages["import_space"] == "spaces" and stages["ca_score"] == "indicators"
    assert stages["simulate_grid"] == "simulate"  # `use rule simulate as simulate_grid`
    jobs["stage"] = jobs["rule"].map(stages)
    table = bench_study.stage_table(jobs, "stage")
    assert table.loc["spaces", "share"] == pytest.approx(16 / 31) and table.loc["simulate", "span_s"] == 15


def test_a_job_that_never_finished_is_an_error():
    with pytest.raises(ValueError, match="1 jobs started and never finished"):
        bench_study.job_spans(LOG.rsplit("[Mon", 1)[0])


def test_job_seconds_per_group_of_spaces_come_from_the_config(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("spaces:\n  - {kernel: k, device: A, source: s, objective_sets: [time], group: hub}\n"
                      "  - {kernel: j, device: B, source: s}\n")
    jobs = bench_study.job_spans(LOG)
    assert jobs["space"].iloc[0] == "A/k" and jobs["space"].isna().iloc[1]
    jobs["stage"] = jobs["rule"].map(bench_study.rule_stages())
    table = bench_study.group_table(jobs, config)
    assert table.loc["simulate", "hub"] == 15 and table.loc["spaces", "(whole study)"] == 16
    assert table.loc["(all stages)"].sum() == 31
    assert bench_study.space_groups(config) == {"A/k": "hub", "B/j": "host-CPU (mixed precision)"}


# --- the cost in calibration runs (machine-independent) ------------------------------------------

def test_the_calibration_space_comes_from_the_cache_and_the_definitions_conditions(tmp_path):
    import json

    cache, definition = tmp_path / "c.json", tmp_path / "d.json"
    cache.write_text(json.dumps({"kernel_name": "k", "problem_size": [8, 8], "tune_params_keys": ["b", "a"],
                                 "tune_params": {"a": [1, 2], "b": [4]}, "cache": {}}))
    definition.write_text(json.dumps({"ConfigurationSpace": {"TuningParameters": [], "Conditions": [
        {"Expression": "a * b <= 8", "Parameters": ["a", "b"]}, {"Expression": "a != 3", "Parameters": ["a"]}]}}))
    problem = bench_study.calibration_problem(cache, definition)
    assert problem == {"kernel_name": "k", "problem_size": [8, 8], "tune_params": {"b": [4], "a": [1, 2]},
                       "restrictions": ["a * b <= 8", "a != 3"]}
    assert list(problem["tune_params"]) == ["b", "a"]  # Kernel Tuner's order, from the cache


def test_the_committed_calibration_inputs_parse(tmp_path):
    import gzip
    import shutil

    cache = tmp_path / "A100.json"
    with gzip.open(bench_study.CALIBRATION_CACHE, "rb") as src, open(cache, "wb") as dst:
        shutil.copyfileobj(src, dst)
    problem = bench_study.calibration_problem(cache, bench_study.CALIBRATION_DEFINITION)
    assert problem["kernel_name"] == "convolution_kernel" and len(problem["tune_params"]) == 10
    assert len(problem["restrictions"]) == 4 and "block_size_x*block_size_y<=1024" in problem["restrictions"]


def test_calibrate_warms_up_once_then_times_each_batch_of_seeds():
    calls, clock = [], iter([0.0, 4.0, 10.0, 13.0, 20.0, 25.0])

    def run(problem, cache_json, seed):
        assert cache_json.is_file() and problem["kernel_name"] == "convolution_kernel"
        calls.append(seed)
        return 220

    batches = bench_study.calibrate(repeats=3, seeds=(0, 1), run=run, timer=lambda: next(clock))
    assert calls == [0, 0, 1, 0, 1, 0, 1]  # one untimed warm-up run, then three batches
    assert batches == [4.0, 3.0, 5.0]
    assert bench_study.per_run_seconds(batches, 2) == 2.0  # the median batch, per run
    with pytest.raises(ValueError):
        bench_study.per_run_seconds([], 2)


def test_seconds_in_calibration_runs():
    assert bench_study.in_calibrations(1002.0, 0.2) == pytest.approx(5010.0)
    assert math.isnan(bench_study.in_calibrations(1002.0, None))
    assert math.isnan(bench_study.in_calibrations(1002.0, 0.0))
    assert math.isnan(bench_study.in_calibrations(1002.0, math.nan))
    # the same study on a machine twice as slow: twice the seconds, twice the calibration, the same figure
    assert bench_study.in_calibrations(2 * 1002.0, 2 * 0.2) == bench_study.in_calibrations(1002.0, 0.2)


def _summary(calibration_s):
    jobs = bench_study.job_spans(LOG)
    jobs["stage"] = jobs["rule"].map(bench_study.rule_stages())
    return bench_study.summary_frame(bench_study.stage_table(jobs, "stage"), jobs, 40.0, 3.0, calibration_s,
                                     cores=2, config="c.yaml", machine="2-CPU X", load_before="0.1 0.2 0.3",
                                     load_after="1.0 1.0 1.0", date="2026-11-25")


def test_the_csv_appends_the_calibration_columns_after_the_old_ones():
    summary = _summary(0.25)
    old = ["stage", "jobs", "job_s", "share", "span_s", "snakemake_cpu_s", "cores", "config", "machine",
           "load_before", "load_after", "date"]
    assert list(summary.columns) == old + bench_study.CALIBRATION_COLUMNS
    rows = summary.set_index("stage")
    assert rows.loc["(whole study)", "job_s"] == 31 and rows.loc["(whole study)", "span_s"] == 40
    assert rows["calibration_s"].tolist() == [0.25] * 3
    assert rows["job_calibrations"].to_dict() == {"spaces": 64.0, "simulate": 60.0, "(whole study)": 124.0}
    assert rows.loc["(whole study)", "wall_calibrations"] == 160.0
    assert rows.loc["(whole study)", "target_calibrations"] == 1200 / 0.25
    assert rows.loc[["spaces", "simulate"], ["wall_calibrations", "target_calibrations"]].isna().all().all()
    uncalibrated = _summary(None)
    assert uncalibrated[bench_study.CALIBRATION_COLUMNS].isna().all().all()


def test_the_report_states_wall_time_target_and_job_seconds_in_calibration_runs():
    text = "\n".join(bench_study.calibration_lines(1000.0, 2000.0, 0.2, [4.1, 4.0, 4.3], 20))
    assert "wall time 5,000 against a target of 6,000 (ratio 0.83); job seconds 10,000." in text
    assert "0.200 s here (timed in this invocation before the study: median of 3 batches of 20 runs, " \
           "batches 4.00–4.30 s)" in text
    assert "1200 s / 0.200 s = 6,000 calibration runs" in text
    assert "--calibration-s" in "\n".join(bench_study.calibration_lines(1000.0, 2000.0, 0.2))
    assert "not measured" in "\n".join(bench_study.calibration_lines(1000.0, 2000.0, None))


def test_the_readme_paragraph_gives_calibration_runs_only_for_a_run_that_measured_them(tmp_path, monkeypatch):
    from analysis.tables.readme import costs as results

    csv = tmp_path / "bench_study.csv"
    monkeypatch.setattr(results, "STUDY_COST", csv)
    _summary(0.25).to_csv(csv, index=False)
    text = results.readme_cost(None)
    assert ("In calibration runs (seconds divided by those of one calibration run, a Kernel Tuner `tune_kernel` "
            "NSGA-II run of budget 200 in simulation mode on A100/convolution_milo, 0.250 s there,") in text
    assert "wall time 160 against a target of 4,800 (20 minutes on that machine), 124 job seconds. Per stage" in text
    # a CSV written before the calibration (no such columns) still renders, without the sentence
    old = REPO / "benchmarks" / "reports" / "bench_study.csv"
    frame = pd.read_csv(old)
    frame.drop(columns=[c for c in bench_study.CALIBRATION_COLUMNS if c in frame.columns]).to_csv(csv, index=False)
    text = results.readme_cost(None)
    assert "What the study costs" in text and "calibration" not in text
    assert "(earlier measurements: its git history). Per stage" in text


def test_a_report_from_a_log_with_a_given_calibration(tmp_path, monkeypatch, capsys):
    log, report = tmp_path / "snakemake.log", tmp_path / "bench_study.md"
    log.write_text(LOG)
    monkeypatch.setattr("sys.argv", ["bench_study.py", "--from-log", str(log), "--keep", str(tmp_path / "out"),
                                     "--wall", "40", "--report", str(report), "--calibration-s", "0.25"])
    assert bench_study.main() == 0
    text = report.read_text()
    assert "wall time 160 against a target of 4,800 (ratio 0.03); job seconds 124." in text
    assert "given with --calibration-s, measured earlier on this machine" in text
    whole = pd.read_csv(report.with_suffix(".csv")).set_index("stage").loc["(whole study)"]
    assert (whole["calibration_s"], whole["wall_calibrations"], whole["job_calibrations"]) == (0.25, 160.0, 124.0)
