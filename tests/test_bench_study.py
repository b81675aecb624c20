"""benchmarks/bench_study.py reads each job's start and end from Snakemake's log."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import REPO

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
