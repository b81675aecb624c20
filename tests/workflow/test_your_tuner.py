"""docs/your-tuner.md's worked example, run as written: its commands after the install, the overlay that adds
one strategy to the tiny study, and what adding it reruns."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.scheduling import job_counts
from helpers import REPO

# the documented commands run as written, on the tiny study
pytestmark = pytest.mark.slow

DOC = REPO / "docs" / "your-tuner.md"
OVERLAY = "config/mine.example.yaml"


def bash_blocks(text: str) -> list[list[str]]:
    """The command lines of each ```bash block."""
    return [[line for line in block.splitlines() if line.strip() and not line.startswith("#")]
            for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def worked_example() -> list[list[str]]:
    """The worked example's commands after the clone and the install, each as an argument list."""
    first = bash_blocks(DOC.read_text())[0]
    assert first[0].startswith("git clone") and "pip install -e \".[tuners]\"" in first[1], first[:2]
    return [shlex.split(line) for line in first[2:]]


def local(argv: list[str]) -> list[str]:
    """A documented command with the virtual environment's programs replaced by this interpreter's."""
    program = Path(argv[0]).name
    if program == "python":
        return [sys.executable, *argv[1:]]
    if program == "snakemake":
        return [sys.executable, "-m", "snakemake", *argv[1:]]
    raise AssertionError(f"unexpected program in {argv}")


def test_the_documented_commands_are_the_ones_the_suite_has():
    commands = worked_example()
    assert [c[0] for c in commands] == [".venv/bin/python", ".venv/bin/python", ".venv/bin/snakemake"]
    for argv in commands[:2]:  # the options table of the example, and the merged config's check
        done = subprocess.run(local(argv), cwd=REPO, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, argv + [done.stdout[-2000:], done.stderr[-2000:]]
    assert "| `popsize` |" in subprocess.run(local(commands[0]), cwd=REPO, capture_output=True, text=True).stdout
    snakemake = commands[2]
    assert snakemake[snakemake.index("--configfile") + 1:][:2] == ["config/test.yaml", OVERLAY]
    full = bash_blocks(DOC.read_text())[1]
    assert shlex.split(full[0])[-3:] == ["--configfile", "config/config.yaml", OVERLAY]


def test_a_bad_option_in_the_overlay_is_named(tmp_path):
    overlay = tmp_path / "mine.yaml"
    overlay.write_text((REPO / OVERLAY).read_text().replace("options: {}", "options: {popsze: 10}"))
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "check-config", "--merged", "config/test.yaml",
                           str(overlay)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "field 'simulation.algorithms.smsemoa.options.popsze'" in done.stderr
    assert "valid options: popsize, crossover_prob" in done.stderr


def test_adding_the_example_to_a_finished_tiny_study_runs_only_its_jobs(tiny_run, tmp_path):
    """The documented Snakemake command on a copy of a finished tiny study (its outputs and Snakemake's records):
    only the new setting's runs and the jobs that read them are planned, and they run."""
    work = tmp_path / "work"
    shutil.copytree(tiny_run, work, symlinks=True)
    argv = local(worked_example()[2])
    argv[argv.index("output_root=mine-tiny")] = "output_root=.test-output"
    argv += ["--snakefile", str(REPO / "Snakefile"), "--directory", str(work)]
    plan = subprocess.run([*argv, "--dry-run", "--quiet", "rules"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert plan.returncode == 0, plan.stderr[-3000:]
    planned = job_counts(plan.stdout + plan.stderr)
    assert int(planned.pop("simulate")) == 3  # the new setting on each of the three studied spaces
    assert set(planned) <= {"indicators", "summary", "study_tables", "compile_sensitivity", "summary_table",
                            "figure_summary", "figure_anytime", "figure_anytime_grid", "report_pages", "all"}, planned
    assert int(planned["indicators"]) == 3  # the comparison's, not the grid's
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    root = work / ".test-output"
    t2 = pd.read_csv(root / "tables/improvement_over_rs.csv")
    assert {"smsemoa", "optuna", "nsga2"} <= set(t2["setting"])
    summary = pd.read_csv(root / "tables/summary/smsemoa.csv")
    assert set(summary["vs_rs"]) <= {"better", "worse", "no difference"} and len(summary) == 3
    assert (root / "figures/summary/smsemoa.png").stat().st_size > 10_000
    # section 6 of the doc re-creates one run alone, as written: the same as the DAG's. It reads the tiny study
    # of section 3 from where that writes (mine-tiny/, here the study's copy) and the repository's files.
    code = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)[-1]
    here = tmp_path / "clone"
    here.mkdir()
    for name in ("config", "examples"):
        (here / name).symlink_to(REPO / name)
    (here / "mine-tiny").symlink_to(root)
    alone = subprocess.run([sys.executable, "-c", code], cwd=here, capture_output=True, text=True, timeout=300)
    assert alone.returncode == 0 and alone.stdout.strip() == "True", alone.stdout + alone.stderr[-3000:]
    # the settings that were there ran no new run
    for setting in ("rs", "nsga2", "optuna"):
        before = tiny_run / f".test-output/results/runs/A100/convolution/time/{setting}/b20.parquet"
        after = root / f"results/runs/A100/convolution/time/{setting}/b20.parquet"
        assert before.read_bytes() == after.read_bytes() and before.stat().st_mtime == after.stat().st_mtime
