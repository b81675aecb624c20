"""benchmarks/bench_suite.py reads pytest's summary; the README's sentence on the suite comes from its CSV."""

from __future__ import annotations

import importlib.util
import subprocess

import pytest

from analysis.tables.readme import costs as results
from helpers import REPO

spec = importlib.util.spec_from_file_location("bench_suite", REPO / "benchmarks" / "bench_suite.py")
bench_suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_suite)


@pytest.mark.parametrize("line,expected", [
    ("=========== 723 passed, 3 warnings in 665.12s (0:11:05) ===========", (723, 665.12)),
    ("===== 12 passed in 3.40s =====", (12, 3.4)),
    ("== 5 passed, 2 skipped, 1 xfailed in 9.00s ==", (5, 9.0)),
])
def test_summary_of_a_passing_suite(line, expected):
    assert bench_suite.parse_summary(f"collected\n....\n{line}\n") == expected


def test_the_plain_suite_and_the_slow_tier_are_read_in_order():
    """.ci/run's two pytest runs: the plain suite first, then the slow tier; the totals are their sums."""
    output = ("== 1599 passed, 36 deselected in 500.00s (0:08:20) ==\n"
              "created: 2/2 workers\n== 36 passed, 1599 deselected in 1200.50s (0:20:00) ==\n")
    assert bench_suite.parse_summaries(output) == [(1599, 500.0), (36, 1200.5)]
    assert bench_suite.parse_summary(output) == (1635, 1700.5)
    with pytest.raises(ValueError, match="did not pass"):
        bench_suite.parse_summaries(output + "== 1 failed, 35 passed in 1.00s ==\n")


@pytest.mark.parametrize("printed, plain", [
    ("created: 2/2 workers\n=== 10 passed, 3 deselected in 5.00s ===\ncreated: 2/2 workers\n"
     "=== 3 passed, 10 deselected in 20.40s ===\n", ("10", "5")),
    ("created: 2/2 workers\n=== 13 passed in 25.40s ===\n", ("", "")),  # an older .ci/run: pytest once
])
def test_a_row_holds_all_of_cis_tests_and_the_plain_suite_alone(tmp_path, monkeypatch, printed, plain):
    csv = tmp_path / "ci_suite.csv"
    monkeypatch.setattr(bench_suite.subprocess, "run", lambda cmd, **kw: (
        subprocess.CompletedProcess(cmd, 0, "abc1234\n", "") if "rev-parse" in cmd
        else subprocess.CompletedProcess(cmd, 0, printed, "")))
    assert bench_suite.main(["--csv", str(csv)]) == 0
    header, row = (line.split(",") for line in csv.read_text().splitlines())
    assert header == bench_suite.FIELDS
    got = dict(zip(header, row, strict=True))
    assert (got["passed"], got["pytest_s"], got["workers"]) == ("13", "25", "2")
    assert (got["plain_passed"], got["plain_s"]) == plain


@pytest.mark.parametrize("output", [
    "==== 1 failed, 722 passed in 600.00s (0:10:00) ====\n",
    "==== 2 errors in 1.00s ====\n",
    "ERROR: could not install\n",
])
def test_a_failed_or_missing_summary_is_not_recorded(output):
    with pytest.raises(ValueError):
        bench_suite.parse_summary(output)


@pytest.mark.parametrize("output, workers", [
    ("platform linux\ncreated: 2/2 workers\n2 workers [1295 items]\n", 2),
    ("bringing up nodes...\ncreated: 1/1 worker\n", 1),
    ("collected 12 items\n....\n", 1),
])
def test_the_workers_are_read_from_xdists_header(output, workers):
    assert bench_suite.parse_workers(output) == workers


def test_xdist_without_its_worker_count_is_not_recorded():
    with pytest.raises(ValueError, match="created: N/N workers"):
        bench_suite.parse_workers("bringing up nodes...\n....\n")


def test_a_csv_of_other_columns_is_left_alone(tmp_path, monkeypatch, capsys):
    """An older CSV (no workers column) is not appended to with rows of another shape."""
    csv = tmp_path / "ci_suite.csv"
    old = "commit,date,machine,load_before,passed,pytest_s,ci_wall_s\naaaaaaa,d,m,0 0 0,1,2,3\n"
    csv.write_text(old)
    passing = subprocess.CompletedProcess([], 0, "created: 2/2 workers\n=== 3 passed in 1.00s ===\n", "")
    ran = []
    monkeypatch.setattr(bench_suite.subprocess, "run", lambda cmd, **kw: ran.append(cmd) or (
        subprocess.CompletedProcess(cmd, 0, "abc1234\n", "") if "rev-parse" in cmd else passing))
    assert bench_suite.main(["--csv", str(csv)]) == 1
    assert csv.read_text() == old
    assert "has the columns" in capsys.readouterr().err
    assert ["bash", ".ci/run"] not in ran  # refused before the suite ran


def test_the_log_keeps_all_of_a_failed_suites_output(tmp_path, monkeypatch):
    """--log writes everything .ci/run printed, also when the suite failed and nothing is recorded."""
    csv, log = tmp_path / "ci_suite.csv", tmp_path / "logs" / "ci.log"
    printed = ("slowest 2 durations\n100.00s call tests/a.py::t\n" + "x" * 5000
               + "\n=== 1 failed, 2 passed in 9.00s ===\n")
    monkeypatch.setattr(bench_suite.subprocess, "run", lambda cmd, **kw: (
        subprocess.CompletedProcess(cmd, 0, "abc1234\n", "") if "rev-parse" in cmd
        else subprocess.CompletedProcess(cmd, 1, printed, "stderr line\n")))
    assert bench_suite.main(["--csv", str(csv), "--log", str(log)]) == 1
    assert log.read_text() == printed + "stderr line\n"  # the head too, which the console's tail leaves out
    assert not csv.exists()


@pytest.mark.parametrize("workers, where", [("1", "tests in one process in a clean-clone"),
                                            ("2", "tests on 2 pytest-xdist workers in a clean-clone")])
def test_readme_sentence_from_the_last_row(tmp_path, monkeypatch, workers, where):
    csv = tmp_path / "ci_suite.csv"
    csv.write_text("commit,date,machine,load_before,passed,workers,pytest_s,ci_wall_s\n"
                   "aaaaaaa,2026-11-23 01:00 UTC,2-CPU AMD EPYC,0.10 0.20 0.30,700,1,600,700\n"
                   f"0a41eec,2026-11-24 06:00 UTC,2-CPU AMD EPYC,0.26 0.77 1.24,760,{workers},1530,1700\n")
    monkeypatch.setattr(results, "SUITE_COST", csv)
    sentence = results.readme_suite()
    assert max(len(line) for line in sentence.splitlines()) <= results.LINE_WIDTH  # wrapped for the README
    sentence = " ".join(sentence.split())
    assert sentence.startswith(f"The suite takes about 26 minutes (1,530 s for 760 {where}")
    assert "commit 0a41eec, 1,700 s with the install" in sentence and "0.26 0.77 1.24" in sentence
    monkeypatch.setattr(results, "SUITE_COST", tmp_path / "absent.csv")
    assert results.readme_suite() == ""


def test_readme_sentence_names_the_plain_suite_and_all_of_ci(tmp_path, monkeypatch):
    csv = tmp_path / "ci_suite.csv"
    csv.write_text(",".join(bench_suite.FIELDS) + "\n"
                   "0a41eec,2026-12-02 20:00 UTC,2-CPU AMD EPYC,0.20 0.30 0.40,1635,2,1900,2000,1599,470\n")
    monkeypatch.setattr(results, "SUITE_COST", csv)
    sentence = " ".join(results.readme_suite().split())
    assert sentence.startswith("The plain suite takes about 8 minutes (470 s for 1,599 tests on 2 pytest-xdist "
                               "workers); all of CI's tests, the slow tier and the Slurm test included, about 32 "
                               "minutes (1,900 s for 1,635 tests)")
    assert "commit 0a41eec, 2,000 s with the install" in sentence and "0.20 0.30 0.40" in sentence
