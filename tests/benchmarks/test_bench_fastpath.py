"""docs/upstream.md's measured effects are the ones benchmarks/bench_fastpath.py wrote to its CSV."""

from __future__ import annotations

import csv
import importlib.util

import pytest

from helpers import REPO

spec = importlib.util.spec_from_file_location("bench_fastpath", REPO / "benchmarks" / "bench_fastpath.py")
bench_fastpath = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_fastpath)

REPORT = REPO / "benchmarks" / "reports" / "fastpath.csv"
DOC = REPO / "docs" / "upstream.md"


def rows() -> list[dict]:
    with open(REPORT, newline="") as fh:
        return list(csv.DictReader(fh))


def test_the_docs_table_is_the_reports() -> None:
    text = DOC.read_text()
    block = text.split(bench_fastpath.BEGIN, 1)[1].split(bench_fastpath.END, 1)[0]
    assert block == "\n" + bench_fastpath.markdown(rows())


def test_every_proposal_of_the_doc_was_measured_on_every_run() -> None:
    measured = rows()
    variants = {row["variant"] for row in measured}
    assert variants == {"stock", "fast path", *bench_fastpath.PROPOSALS}
    runs = {(row["space"], row["algorithm"]) for row in measured}
    assert len(measured) == len(runs) * len(variants)
    for name in bench_fastpath.PROPOSALS:
        assert f"*{name}*" in DOC.read_text(), name


@pytest.mark.parametrize("variant", ["stock", "fast path"])
def test_the_ratios_are_against_the_stock_run_of_the_same_invocation(variant) -> None:
    for row in rows():
        if row["variant"] == variant:
            stock = next(r for r in rows() if (r["space"], r["algorithm"], r["variant"]) ==
                         (row["space"], row["algorithm"], "stock"))
            assert float(row["speedup_vs_stock"]) == pytest.approx(
                float(stock["mean_s"]) / float(row["mean_s"]), rel=0.02, abs=0.01)
