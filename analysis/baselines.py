"""The tuner author's loop on the baseline archive: `verify-tables` and `compare` (docs/baselines.md).

Both run the study's own Snakemake workflow in an output folder of their own, with an overlay config that sets
`baselines.restore`: every run file the archive holds for the config is restored (rule restore_runs) and only
the rest is simulated; everything after the runs (indicators, scores, tables) is computed as usual.

- `verify_tables` restores every run of a config and recomputes its published tables, file by file against the
  published ones; any run the archive lacks is an error before anything runs.
- `compare` adds one strategy to a suite (config/quick.yaml or the full study) and writes its summary page
  beside the baselines RS, NSGA-II and NSGA-III (and, for a single-objective strategy, the constraint-aware
  study's strategies) to an output folder; only that strategy's runs are simulated.
"""

from __future__ import annotations

import filecmp
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from analysis.config import merge_files, output_prefix, validate
from analysis.errors import ArgumentError, ConfigError
from analysis.hyperparams.single_objective import TABLES as NOT_ARCHIVED
from analysis.io import write_csv, write_text
from analysis.scheduling import job_counts
from analysis.simulate.registry import get_algorithm

log = logging.getLogger(__name__)

REPOSITORY = Path(__file__).resolve().parent.parent
SUITES = {"quick": "config/quick.yaml", "full": "config/config.yaml"}
# The rules that simulate runs: verify-tables refuses a config whose archive leaves any of their jobs to run.
SIMULATING_RULES = ("simulate", "simulate_grid", "ca_run", "lb_run", "so_run", "so_final_run")


class WorkflowFailed(RuntimeError):
    """Snakemake exited with an error; its log's tail is in the message."""


def snakemake_command(files: Sequence[str | Path], targets: Sequence[str], cores: int | None, work: Path,
                      dry_run: bool = False) -> list[str]:
    """The `snakemake` command line for config `files` (in order) and `targets`, run in the folder `work`."""
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPOSITORY / "Snakefile"), "--directory", str(work),
           "--cores", str(cores or os.cpu_count() or 1), *targets, "--configfile", *map(str, files)]
    # The folder is the command's own: a run stopped half-way is taken up again (--rerun-incomplete).
    return [*cmd, "--dry-run", "--quiet", "rules"] if dry_run else [*cmd, "--rerun-incomplete"]


def _run(cmd: Sequence[str], log_path: Path) -> str:
    """Run a command from the repository, its output to `log_path`; WorkflowFailed with the log's tail."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as out:
        done = subprocess.run(cmd, cwd=REPOSITORY, stdout=out, stderr=subprocess.STDOUT, check=False)
    text = log_path.read_text()
    if done.returncode:
        tail = "\n".join(text.splitlines()[-25:])
        raise WorkflowFailed(f"snakemake failed (exit {done.returncode}); its log: {log_path}\n{tail}")
    return text


def planned_jobs(files: Sequence[str | Path], targets: Sequence[str], work: Path, log_path: Path) -> dict[str, int]:
    """Rule -> jobs that a run of `targets` would start (Snakemake's dry run)."""
    return job_counts(_run(snakemake_command(files, targets, 1, work, dry_run=True), log_path))


def _overlay(work: Path, archive: str | None, extra: Mapping[str, Any] | None = None) -> Path:
    """The overlay config of a verify-tables or compare run, which runs in `work` and writes there, restoring from
    the archive."""
    overlay: dict[str, Any] = {"output_root": ".", "baselines": {"restore": True}}
    if archive:
        overlay["baselines"]["archive"] = str(archive)
    for key, value in (extra or {}).items():
        overlay[key] = value
    path = work / "overlay.yaml"
    write_text(yaml.safe_dump(overlay, sort_keys=False), path)
    return path


def _published_root(files: Sequence[str | Path]) -> Path:
    config = validate(merge_files(files), files=files, workdir=REPOSITORY)
    return REPOSITORY / (output_prefix(config["output_root"]) or ".")


def verify_tables(files: Sequence[str | Path] = ("config/config.yaml",), work: str | Path = ".verify-tables",
                  cores: int | None = None, archive: str | None = None, published: str | Path | None = None
                  ) -> list[str]:
    """Recompute the published tables of config `files` from the archive in `work`; returns the differences
    (a table that differs or is missing; empty: every table is byte-identical).

    A sweep's measured output (results/sweeps/) is copied from the published folder: the archive holds runs, not
    measurements. `published`: the folder of the published outputs (default: the config's output_root). ConfigError
    where the archive lacks a run (the dry run would simulate it)."""
    files = [str((REPOSITORY / f).resolve()) for f in files]
    published = Path(published).resolve() if published else _published_root(files)
    work = (REPOSITORY / work).resolve()
    if work == published.resolve() or published.resolve() in work.parents and work.name in ("tables", "results"):
        raise ArgumentError("--work", f"{work} would overwrite the published outputs")
    sweeps = published / "results" / "sweeps"
    if sweeps.is_dir():
        shutil.copytree(sweeps, work / "results" / "sweeps", dirs_exist_ok=True)
    config_files = [*files, str(_overlay(work, archive))]
    planned = planned_jobs(config_files, ["tables"], work, work / "logs" / "verify-tables.dry-run.log")
    missing = {rule: n for rule, n in planned.items() if rule in SIMULATING_RULES}
    if missing:
        raise ConfigError(files[-1], "the archive lacks runs of this config (the dry run would simulate them: "
                          + ", ".join(f"{n} {rule} job(s)" for rule, n in missing.items())
                          + "); rebuild it with `snakemake --cores 1 archive`", field="baselines.archive")
    _run(snakemake_command(config_files, ["tables"], cores, work), work / "logs" / "verify-tables.log")
    differences = []
    ours = work / "tables"
    for theirs in sorted((published / "tables").rglob("*")):
        if not theirs.is_file() or theirs.suffix not in (".csv", ".md"):
            continue
        rel = theirs.relative_to(published / "tables")
        if rel.name.split(".")[0] in NOT_ARCHIVED:  # seed 003's tuning: its runs are not archived
            continue
        if not (ours / rel).is_file():
            differences.append(f"tables/{rel}: not recomputed")
        elif not filecmp.cmp(theirs, ours / rel, shallow=False):
            differences.append(f"tables/{rel}: differs from the recomputed {ours / rel}")
    for extra in sorted(ours.rglob("*")):
        rel = extra.relative_to(ours)
        if extra.is_file() and extra.suffix in (".csv", ".md") and not (published / "tables" / rel).is_file():
            differences.append(f"tables/{rel}: recomputed, not published")
    return differences


def strategy_label(strategy: str) -> str:
    """The setting label a compared strategy gets: a file's stem, a dotted path's last part, or the name itself."""
    if strategy.endswith(".py"):
        name = Path(strategy).stem
    else:
        name = strategy.rsplit(".", 1)[-1]
    label = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    return label or "strategy"


def _strategy_spec(strategy: str) -> str:
    """The strategy as the config names it: a .py file by its absolute path (Snakemake runs in the repository)."""
    if strategy.endswith(".py"):
        path = Path(strategy).expanduser().resolve()
        if not path.is_file():
            raise ArgumentError("STRATEGY", f"no such file: {strategy}")
        return str(path)
    return strategy


def joined(base: Mapping[str, Any], label: str, spec: str, options: Mapping[str, Any] | None,
           multi_objective: bool) -> dict[str, Any]:
    """The overlay that adds a strategy to a validated suite config: to the comparison (multi-objective) or to the
    constraint-aware study, listed beside the suite's own settings (an overlay's mapping replaces a default: the
    constraint-aware study's strategies are the schema's defaults in a config that names none)."""
    entry = {label: {"algorithm": spec, "options": dict(options or {})}}
    if multi_objective:
        return {"simulation": {"algorithms": {**base["simulation"]["algorithms"], **entry}}}
    return {"constraint_aware": {"strategies": {**base["constraint_aware"]["strategies"], **entry}}}


def _planned_strategies(text: str) -> set[str]:
    """The settings and constraint-aware strategies whose runs a dry run's jobs would simulate."""
    found = set()
    rule = None
    for line in text.splitlines():
        m = re.match(r"\s*(?:local)?rule (\w+):", line)
        if m:
            rule = m.group(1)
        w = re.match(r"\s*wildcards: (.*)", line)
        if w and rule in SIMULATING_RULES:
            fields = dict(part.split("=", 1) for part in w.group(1).split(", ") if "=" in part)
            found.add(fields.get("setting") or fields.get("strategy") or fields.get("entry") or rule)
    return found


def compare(strategy: str, suite: str = "quick", out: str | Path = "compare", options: Mapping[str, Any] | None = None,
            cores: int | None = None, label: str | None = None) -> pd.DataFrame:
    """Compare one strategy (a .py file, a dotted import path or a registered name) with the baselines of a suite
    (quick, full, or a config file), taken from the archive; returns the summary (also written to
    `out`/summary.csv and .md).

    A multi-objective strategy joins the comparison (its summary page: final IGD+ against RS, NSGA-II and NSGA-III
    per space, objective set and budget, with Holm-corrected Mann-Whitney tests and A12); a single-objective one
    joins the constraint-aware study (the methodology's score beside GA, PSO, DE, Firefly and RS, with and without
    constraint awareness). Only its runs are simulated: ConfigError where the archive lacks a baseline's."""
    suite_path = Path(SUITES.get(suite, suite))
    if not (REPOSITORY / suite_path).is_file():
        raise ArgumentError("--suite", f"unknown suite {suite!r}: neither {', '.join(SUITES)} nor a config file")
    spec = _strategy_spec(strategy)
    try:
        algorithm = get_algorithm(spec)
    except ValueError as exc:
        raise ArgumentError("STRATEGY", str(exc)) from None
    # the constraint-aware study names a strategy's two runs <label>_aware and <label>_unaware: letters and digits
    label = label or (strategy_label(strategy) if algorithm.multi_objective
                      else re.sub(r"[^A-Za-z0-9]", "", strategy_label(strategy)))
    suite_file = str(REPOSITORY / suite_path)
    base = validate(merge_files([suite_file]), files=[suite_file], workdir=REPOSITORY)
    taken = set(base["simulation"]["algorithms"]) | set(base["constraint_aware"]["strategies"])
    if label in taken:
        raise ArgumentError("--label", f"{label!r} is a baseline of the {suite} suite; name the strategy otherwise")
    extra = joined(base, label, spec, options, algorithm.multi_objective)
    targets = ["tables", f"figures/summary/{label}.png"] if algorithm.multi_objective else ["tables"]
    work = Path(out).expanduser().resolve()
    work.mkdir(parents=True, exist_ok=True)
    files = [suite_file, str(_overlay(work, None, extra))]
    dry = _run([*snakemake_command(files, targets, 1, work), "--dry-run"], work / "logs" / "compare.dry-run.log")
    simulated = _planned_strategies(dry) - {label, f"{label}_aware", f"{label}_unaware"}
    if simulated:
        raise ConfigError(files[0], "the archive lacks baseline runs of this suite (the dry run would simulate "
                          + ", ".join(sorted(simulated)) + "); rebuild it (docs/baselines.md)",
                          field="baselines.archive")
    log.info("comparing %s (%s) on the %s suite in %s", label, spec, suite, work)
    _run(snakemake_command(files, targets, cores, work), work / "logs" / "compare.log")
    return _write_summary(work, label, algorithm.multi_objective)


def _write_summary(work: Path, label: str, multi_objective: bool) -> pd.DataFrame:
    tables = work / "tables"
    if multi_objective:
        summary = pd.read_csv(tables / "summary" / f"{label}.csv")
        shutil.copyfile(tables / "summary" / f"{label}.md", work / "summary.md")
        for ext in ("png", "pdf"):
            figure = work / "figures" / "summary" / f"{label}.{ext}"
            if figure.is_file():
                shutil.copyfile(figure, work / f"summary.{ext}")
    else:
        summary = pd.read_csv(tables / "constraint_aware_scores.csv")
        shutil.copyfile(tables / "constraint_aware_scores.md", work / "summary.md")
    write_csv(summary, work / "summary.csv", float_digits=None)
    return summary
