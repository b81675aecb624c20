"""benchmarks/bench_suite.py reads pytest's summary; the README's sentence on the suite comes from its CSV."""

from __future__ import annotations

import importlib.util

import pytest

from analysis.tables import readme as results
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


@pytest.mark.parametrize("output", [
    "==== 1 failed, 722 passed in 600.00s (0:10:00) ====\n",
    "==== 2 errors in 1.00s ====\n",
    "ERROR: could not install\n",
])
def test_a_failed_or_missing_summary_is_not_recorded(output):
    with pytest.raises(ValueError):
        bench_suite.parse_summary(output)


def test_readme_sentence_from_the_last_row(tmp_path, monkeypatch):
    csv = tmp_path / "ci_suite.csv"
    csv.write_text("commit,date,machine,load_before,passed,pytest_s,ci_wall_s\n"
                   "aaaaaaa,2026-11-23 01:00 UTC,2-CPU AMD EPYC,0.10 0.20 0.30,700,600,700\n"
                   "0a41eec,2026-11-24 06:00 UTC,2-CPU AMD EPYC,0.26 0.77 1.24,760,1530,1700\n")
    monkeypatch.setattr(results, "SUITE_COST", csv)
    sentence = results.readme_suite()
    assert sentence.startswith("The suite takes about 26 minutes (1,530 s for 760 tests")
    assert "commit 0a41eec, 1,700 s with the install" in sentence and "0.26 0.77 1.24" in sentence
    monkeypatch.setattr(results, "SUITE_COST", tmp_path / "absent.csv")
    assert results.readme_suite() == ""
