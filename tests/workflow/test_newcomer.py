"""A newcomer's first steps (issue #33): an own cache without a definition runs, and the documented
commands resolve as written."""

from __future__ import annotations

import itertools
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from helpers import REPO, kt_cache, write


def snakemake(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Snakemake with this interpreter on the repository's Snakefile, working directory `cwd`."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(cwd), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)


# A user's own kernel: a Kernel Tuner cache with no constraints and no definition file, parameters and
# values in the kernel's own (unsorted) order.
OWN_PARAMS = {"block_size_x": [128, 32, 64], "tile": [1, 2, 4, 8]}


def own_cache(folder: Path) -> Path:
    rows = [{"block_size_x": b, "tile": t, "time": 1.0 + b / 64 + 1 / t}
            for b, t in itertools.product(*OWN_PARAMS.values())]
    return write(folder / "own.json", kt_cache(OWN_PARAMS, rows))


def own_config(folder: Path) -> Path:
    config = folder / "own.yaml"
    config.write_text(f"""output_root: out
spaces:
  - kernel: own
    device: mygpu
    source: {own_cache(folder)}
simulation:
  repetitions: 2
  budgets: [6]
  objective_sets: [time]
  algorithms:
    rs: {{algorithm: rs}}
    nsga2: {{algorithm: nsga2, options: {{popsize: 4}}}}
hyperparameters:
  kernels: []
""")
    return config


@pytest.mark.slow  # a Snakemake dry run, then the DAG's own commands for one space
def test_a_space_without_definition_imports_and_runs_through_the_dags_own_commands(tmp_path):
    """Item 1: the import job of a space without `definition:` gets no --definition, and the commands the DAG
    plans (import, then simulate) work on a cache with no constraints."""
    config = own_config(tmp_path)
    out = snakemake("-n", "-p", "--forceall", "--configfile", str(config), "--",
                    "out/results/runs/mygpu/own/time/rs/b6.parquet", "out/results/runs/mygpu/own/time/nsga2/b6.parquet",
                    cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:] + out.stdout[-3000:]
    commands = [line.split("Shell command:", 1)[-1].strip() for line in out.stdout.splitlines()
                if " -m analysis.cli " in line]
    imports = [c for c in commands if " import-space " in c]
    simulates = [c for c in commands if " simulate " in c]
    assert len(imports) == 1 and len(simulates) == 2, commands
    assert "--definition" not in imports[0] and "--source " in imports[0]
    # run them as Snakemake would (the log folders are Snakemake's to make)
    for command in imports + simulates:
        for log in re.findall(r"2> (\S+)", command):
            (tmp_path / shlex.split(log)[0]).parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, command + "\n" + done.stderr[-3000:]
    meta = json.loads((tmp_path / "out/results/spaces/mygpu/own/space.json").read_text())
    assert meta["parameters"] == OWN_PARAMS and meta["constraints"] == []
    assert meta["counts"]["rows"] == meta["counts"]["cartesian"] == 12
    for setting in ("rs", "nsga2"):
        runs = pd.read_parquet(tmp_path / f"out/results/runs/mygpu/own/time/{setting}/b6.parquet")
        assert sorted(runs["repetition"].unique()) == [0, 1]
        assert (runs.groupby("repetition")["first_visit"].sum() == 6).all()


def _documented(text: str) -> list[str]:
    """Every `snakemake ...` command of a text (inline code or a code block line), white space normalised."""
    inline = [" ".join(c.split()) for c in re.findall(r"`(snakemake [^`]+)`", text)]
    lines = text.replace("\\\n", " ").splitlines()  # a code block's continued lines as one
    blocks = [" ".join(line.split("#")[0].split()) for line in lines if line.startswith("snakemake ")]
    return inline + blocks


def _targets_before_configfile(command: str) -> list[str]:
    """The targets a command names before its --configfile (none: not a command with a target)."""
    words = shlex.split(command)[1:]
    targets, i = [], 0
    while i < len(words) and words[i] != "--configfile":
        if words[i] in ("--cores", "-c", "--profile", "--report", "--forcerun", "--until", "-s", "--snakefile"):
            i += 2
            continue
        if not words[i].startswith("-"):
            targets.append(words[i])
        i += 1
    return targets if i < len(words) else []


@pytest.mark.slow  # a Snakemake dry run per documented command
def test_documented_target_of_the_tiny_config_resolves(tmp_path):
    """Item 2: the README's and docs/running.md's example of a target with the tiny config is a target the tiny
    config has (its outputs are under .test-output/); taken from the documents, so a drifting example fails."""
    checked = []
    for doc in (REPO / "README.md", REPO / "docs" / "running.md"):
        commands = [c for c in _documented(doc.read_text())
                    if "--configfile config/test.yaml" in c and _targets_before_configfile(c)]
        assert commands, f"{doc.name} shows no command with a target and the tiny config"
        for command in commands:
            words = shlex.split(command.replace("config/test.yaml", str(REPO / "config" / "test.yaml")))[1:]
            out = snakemake("-n", *words, cwd=tmp_path)
            assert out.returncode == 0, f"{doc.name}: `{command}` fails:\n{out.stderr[-2000:]}{out.stdout[-2000:]}"
            assert "MissingRuleException" not in out.stdout + out.stderr
            for target in _targets_before_configfile(command):
                assert target.startswith(".test-output/"), target
            checked.append(command)
    assert any("tables/spaces.csv" in c for c in checked)


def test_docs_say_how_to_build_the_report():
    """Item 5: README and docs/running.md give the report command, for the tiny config with its --configfile."""
    for doc in (REPO / "README.md", REPO / "docs" / "running.md"):
        commands = _documented(doc.read_text())
        assert any(c.startswith("snakemake --report report.html") and c.endswith("--configfile config/test.yaml")
                   for c in commands), doc.name
