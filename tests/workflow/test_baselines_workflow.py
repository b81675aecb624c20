"""The baseline archive in the workflow (docs/baselines.md): rule archive packs the tiny study's runs,
`verify-tables` recomputes every one of its tables from them byte for byte, and `compare` adds one strategy to a
suite simulating only that strategy's runs; the quick suite's every baseline is in the committed archive."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

import analysis
from analysis import baselines
from analysis.errors import ArgumentError
from analysis.simulate import archive
from helpers import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def published(tiny_run, tmp_path_factory) -> dict[str, Path]:
    """A copy of the tiny run (its results and tables, times kept), and its runs packed by rule archive."""
    base = tmp_path_factory.mktemp("published")
    shutil.copytree(tiny_run / ".test-output" / "results", base / ".test-output" / "results")
    shutil.copytree(tiny_run / ".test-output" / "tables", base / ".test-output" / "tables")
    overlay = base / "archive.yaml"
    overlay.write_text(yaml.safe_dump({"baselines": {"archive": str(base / "archive")}}))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(base), "--cores", "1",
           "archive", "--rerun-triggers", "mtime", "--configfile", str(REPO / "config/test.yaml"), str(overlay)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"^archive\s+1$", done.stdout + done.stderr, flags=re.M), "only the archive job runs"
    return {"root": base / ".test-output", "overlay": overlay, "archive": base / "archive"}


def test_the_archive_holds_every_run_of_the_tiny_study(published):
    archives = sorted(p.name for p in published["archive"].glob("*.parquet"))
    assert archives == ["comparison.parquet", "constraint_aware.parquet", "leaderboard.parquet"]
    held = {f["path"] for p in published["archive"].glob("*.parquet") for f in archive.read_meta(p)["files"]}
    results = published["root"] / "results"
    made = {str(p.relative_to(results)) for p in results.rglob("*.parquet") if "/runs/" in f"/{p.relative_to(results)}"}
    # seed 003's tuning is not archived (docs/baselines.md): the tables target and verify-tables leave it out
    tuning = {path for path in made if path.startswith("hyperparameters_so/")}
    assert tuning and held == made - tuning


def test_verify_tables_recomputes_every_table_from_the_archive(published, tmp):
    differences = baselines.verify_tables([REPO / "config/test.yaml", published["overlay"]], work=tmp / "work",
                                          cores=2, published=published["root"])
    assert differences == []
    log = (tmp / "work" / "logs" / "verify-tables.dry-run.log").read_text()
    assert re.search(r"^restore_runs\s+1$", log, flags=re.M)
    assert not re.search(r"^(simulate|simulate_grid|ca_run|lb_run)\s", log, flags=re.M)
    # a table changed after publication is found
    table = published["root"] / "tables" / "indicators.csv"
    original = table.read_text()
    try:
        table.write_text(original.replace("0", "1", 1))
        found = baselines.verify_tables([REPO / "config/test.yaml", published["overlay"]], work=tmp / "work",
                                        cores=2, published=published["root"])
    finally:
        table.write_text(original)
    assert found == [f"tables/indicators.csv: differs from the recomputed {tmp / 'work' / 'tables' / 'indicators.csv'}"]


def test_compare_simulates_only_the_new_strategy(published, tmp):
    """analysis.compare on the tiny study's comparison (its constraint-aware study and leaderboard left out):
    the baselines' medians are the published ones, and only the new strategy's runs were simulated."""
    suite = yaml.safe_load((REPO / "config/test.yaml").read_text())
    suite["constraint_aware"] = {"spaces": []}
    suite.pop("leaderboard")
    suite["baselines"] = {"archive": str(published["archive"])}
    suite_file = tmp / "suite.yaml"
    suite_file.write_text(yaml.safe_dump(suite, sort_keys=False))
    out = tmp / "cmp"
    # the sweep's measured space, as published (a sweep run anew would be another space, its runs simulated)
    shutil.copytree(published["root"] / "results" / "sweeps", out / "results" / "sweeps")
    summary = analysis.compare("examples/pymoo_smsemoa.py", suite=str(suite_file), out=out, cores=2)
    assert set(summary["setting"]) == {"pymoo_smsemoa"}
    assert (out / "summary.csv").is_file() and (out / "summary.md").is_file() and (out / "summary.png").is_file()
    log = (out / "logs" / "compare.log").read_text()
    assert set(re.findall(r"setting=(\w+)", log.split("Job stats")[0] if "Job stats" in log else log)) <= {
        "pymoo_smsemoa"}
    indicators = pd.read_csv(published["root"] / "tables" / "indicators.csv")
    rs = indicators[indicators["setting"] == "rs"].set_index(["device", "kernel", "objective_set", "budget"])
    for row in summary.itertuples():
        key = (row.device, row.kernel, row.objective_set, row.budget)
        assert row.median_rs == pytest.approx(rs.loc[key, "igd_median"], abs=1e-11)


def test_compare_refuses_a_label_of_a_baseline(tmp):
    with pytest.raises(ArgumentError, match="baseline"):
        analysis.compare("nsga2", suite="quick", out=tmp / "x")
    with pytest.raises(ArgumentError, match="neither"):
        analysis.compare("nsga2", suite="no-such-suite", out=tmp / "x", label="other")


def test_every_baseline_of_the_quick_suite_is_archived(tmp):
    """The quick suite's dry run, restoring, simulates nothing: every baseline comes from data/baselines/."""
    overlay = tmp / "restore.yaml"
    overlay.write_text(yaml.safe_dump({"output_root": ".", "baselines": {"restore": True}}))
    jobs = baselines.planned_jobs([REPO / "config/quick.yaml", overlay], ["tables"], tmp, tmp / "dry.log")
    assert jobs.get("restore_runs") == 1
    assert not set(jobs) & set(baselines.SIMULATING_RULES), jobs


def test_the_documented_compare_runs_on_the_quick_suite(tmp):
    """docs/your-tuner.md §4 as written (its output folder moved to a temporary one): the command, then the Python
    call, which finds the workflow done and returns the same summary."""
    doc = (REPO / "docs" / "your-tuner.md").read_text()
    section = doc[doc.index("## 4. Compare it in minutes"):doc.index("## 5. ")]
    (command,) = [line for line in re.findall(r"```bash\n(.*?)```", section, flags=re.S)[0].splitlines() if line]
    argv = command.split()
    assert argv[:4] == [".venv/bin/python", "-m", "analysis.cli", "compare"] and "--suite" in argv
    out = tmp / argv[argv.index("--out") + 1]
    argv[argv.index("--out") + 1] = str(out)
    done = subprocess.run([sys.executable, *argv[1:]], cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    written = pd.read_csv(out / "summary.csv")
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    code = code.replace(f'out="{out.name}"', f'out="{out}"')
    scope: dict = {}
    exec(compile(code, "docs/your-tuner.md", "exec"), scope)  # noqa: S102 - the documented block, as written
    pd.testing.assert_frame_equal(scope["summary"], written)
    assert set(written["objective_set"]) == {"O3", "time"} and set(written["budget"]) == {50, 200}
