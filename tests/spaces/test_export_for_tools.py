"""export-space on the suite's own spaces (issue #44, part 8), checked with the tools' own pipelines.

Kernel Tuner's T4 writer and `tune_kernel`, and the auto-tuning methodology's `execute_experiment` with
its default settings (and its `autotuning_experiment` command) on an experiment folder the export wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import autotuning_methodology
import pandas as pd
import pytest

# imported at collection, not inside a test: the methodology's progress bar (progressbar2) keeps the streams
# of its first import and of its first run, and a stream `capsys` installs is closed when its test ends (so no
# test here runs the methodology under `capsys`)
from autotuning_methodology.experiments import execute_experiment
from kernel_tuner.file_utils import get_t4_results

from analysis.cli import main
from analysis.config import FULL_STUDY
from analysis.spaces.jsonfile import read_json
from helpers import REPO

PUBLISHED_RUNS = REPO / "tables" / "constraint_aware_runs.csv"


def _export(space: str, fmt: str, out: Path, *extra: str) -> int:
    return main(["export-space", "--config", str(FULL_STUDY), "--space", space, "--format", fmt, "--out", str(out),
                 *extra])


def _source(space: str) -> dict:
    from analysis import config as study_config
    from analysis.config import config_space

    entry = config_space(study_config.load(FULL_STUDY), FULL_STUDY, space)
    return read_json(REPO / entry["source"])


def test_kernel_tuner_export_loses_nothing_the_source_had(tmp_path):
    """benchmark_hub's MI250X convolution cache: every entry with every field (per-iteration times,
    framework_time, GFLOP/s, timestamp) comes back as recorded, and the device has a name."""
    out = tmp_path / "convolution_MI250X.json"
    assert _export("MI250X/convolution", "kernel-tuner", out) == 0
    doc, source = read_json(out), _source("MI250X/convolution")
    assert source["device_name"] == ""  # the source names no device
    assert doc["device_name"] == "MI250X"
    assert {k: doc[k] for k in ("kernel_name", "problem_size", "tune_params_keys", "tune_params")} == \
        {k: source[k] for k in ("kernel_name", "problem_size", "tune_params_keys", "tune_params")}
    assert doc["cache"] == source["cache"]
    assert all(datetime.fromisoformat(e["timestamp"]) for e in doc["cache"].values())  # a date, not ""


def test_t4_export_is_what_kernel_tuners_t4_writer_writes_from_the_source(tmp_path):
    """Kernel Tuner's own T4 writer (file_utils.get_t4_results) given the source cache's entries: the same
    timestamp, times (compilation, benchmark, framework, search_algorithm, validation, runtimes),
    invalidity and measurements for every configuration."""
    out = tmp_path / "convolution_MI250X_T4.json"
    assert _export("MI250X/convolution", "t4", out) == 0
    ours = read_json(out)
    source = _source("MI250X/convolution")
    theirs = get_t4_results(list(source["cache"].values()), source["tune_params"], objective="time")
    keys = source["tune_params_keys"]

    def by_config(results):
        return {tuple(r["configuration"][p] for p in keys): r for r in results}

    mine, kt = by_config(ours["results"]), by_config(theirs["results"])
    assert mine.keys() == kt.keys()
    for config, result in kt.items():
        assert mine[config] == result, config
    assert ours["metadata"]["timeunit"] == theirs["metadata"]["timeunit"]


@pytest.mark.parametrize("space,device_name", [("nvidia-h200/kmeans", "NVIDIA H200"),
                                               ("amd-epyc-vm/kmeans", "amd-epyc-vm")])
def test_a_grouped_sweeps_exports_name_one_device_and_keep_its_fields(tmp_path, space, device_name):
    """The host-CPU and H200 K-Means sweeps: one device name in both exports (the source's, or the config's
    where the source's is empty), real timestamps, every recorded field but the shared-build ones (the
    exported compile time is the one measured alone, as the study charges it)."""
    cache, t4 = tmp_path / "k.json", tmp_path / "k_T4.json"
    assert _export(space, "kernel-tuner", cache) == 0
    assert _export(space, "t4", t4) == 0
    doc, results, source = read_json(cache), read_json(t4), _source(space)
    assert doc["device_name"] == results["metadata"]["device_name"] == device_name
    assert doc["kernel_name"] == results["metadata"]["kernel_name"] == source["kernel_name"]
    assert doc["cache"].keys() == source["cache"].keys()
    shared = {"library_build_time", "library_variants"}
    for key, entry in source["cache"].items():
        mine = doc["cache"][key]
        assert set(mine) == set(entry) - shared, key
        assert mine["times"] == entry["times"] and mine["timestamp"] == entry["timestamp"]
        datetime.fromisoformat(mine["timestamp"])
    assert sum("nvml_energy" in e for e in doc["cache"].values()) == \
        sum("nvml_energy" in e for e in source["cache"].values())
    assert any(doc["cache"][k]["compile_time"] != e["compile_time"] for k, e in source["cache"].items())
    assert all(r["times"]["runtimes"] and "timestamp" in r for r in results["results"])


def _suite_budget(space: str) -> dict:
    """The constraint-aware study's budget of a space tuned on time (`budget_for_space`, as rule ca_budget
    computes it), with the published cutoff of its table."""
    from analysis.config import import_config_space
    from analysis.spaces.methodology import ScoreSettings, budget_for_space

    limits = budget_for_space(import_config_space(FULL_STUDY, space), "time", ScoreSettings())
    published = pd.read_csv(PUBLISHED_RUNS)
    rows = published[(published["space"] == space) & (published["objective"] == "time")]
    assert rows["cutoff_fevals"].nunique() == 1
    assert limits["fevals_end"] == int(rows["cutoff_fevals"].iloc[0])
    return limits


def _run_methodology(space: str, folder: Path, monkeypatch, cli: bool = False):
    """Export the space's experiment folder with the command (in a shell, as users run it); run the
    methodology on it as printed (`cli`: the `autotuning_experiment` command), then `execute_experiment`
    with its default settings."""
    # the venv's scripts first on PATH, and this checkout's `analysis` on the path of the export's Python
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(REPO)}
    export = subprocess.run([sys.executable, "-m", "analysis.cli", "export-space", "--config", str(FULL_STUDY),
                             "--space", space, "--format", "methodology", "--out", str(folder)],
                            env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert export.returncode == 0, export.stderr[-2000:]
    assert export.stdout == f"cd {folder} && autotuning_experiment experiments.json\n"
    if cli:
        done = subprocess.run(["bash", "-c", export.stdout], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.chdir(folder)
    return execute_experiment("experiments.json")


def _check_budget(space: str, result) -> None:
    experiment, groups, statistics, descriptions = result
    device, kernel = space.split("/")
    suite = _suite_budget(space)
    stats = statistics[device][kernel]
    settings = experiment["statistics_settings"]
    # the package's defaults: every time key Kernel Tuner's T4 writer has, the cutoff on time
    assert settings["objective_time_keys"] == ["compilation", "runtimes", "framework", "search_algorithm",
                                               "validation"]
    assert settings["cutoff_type"] == "time"
    _, fevals, _, _ = stats.cutoff_point_fevals_time_start_end(settings["cutoff_percentile_start"],
                                                               settings["cutoff_percentile"])
    assert fevals == suite["fevals_end"]
    # the time limit: the methodology counts Kernel Tuner's framework time and the kernel runs where the suite
    # counts the benchmark time (Kernel Tuner's simulation clock); on benchmark_hub's spaces they agree closely
    (group,) = groups
    assert group["budget"]["time_limit"] == pytest.approx(suite["time_limit_ms"] / 1e3, rel=1e-3)
    setup = json.loads(Path(group["input_file"]).read_text())
    assert setup["Budget"] == [{"Type": "TuningDuration", "BudgetValue": group["budget"]["time_limit"]}]
    assert descriptions[device][kernel]["genetic_algorithm"].has_results()


def test_the_methodology_runs_an_exported_folder_with_its_defaults_and_the_suites_budget(tmp_path, monkeypatch):
    """A small benchmark_hub space (MI50 convolution, 2442 configurations): the printed command runs, and the
    package's pipeline arrives at the suite's budget."""
    folder = tmp_path / "experiment"
    result = _run_methodology("MI50/convolution_milo_old", folder, monkeypatch, cli=True)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "run" not in p.parts
                  and "setup" not in p.parts) == [
        "cachefiles/convolution_milo_old/MI50.json", "cachefiles/convolution_milo_old/MI50.restrictions.json",
        "cachefiles/convolution_milo_old/MI50_T4.json", "experiments.json",
        "kernels/convolution_milo_old.json", "kernels/convolution_milo_old.kernel-placeholder"]
    # the experiments file is the package's defaults but for the one application and GPU
    defaults = json.loads((Path(autotuning_methodology.__file__).parent / "experiments_defaults.json").read_text())
    written = json.loads((folder / "experiments.json").read_text())
    for key in ("search_strategies", "statistics_settings", "visualization_settings"):
        assert written[key] == defaults[key]
    assert {k: v for k, v in written["experimental_groups_defaults"].items()
            if k not in ("applications", "gpus", "pattern_for_full_search_space_filenames")} == \
        {k: v for k, v in defaults["experimental_groups_defaults"].items()
         if k not in ("applications", "gpus", "pattern_for_full_search_space_filenames")}
    _check_budget("MI50/convolution_milo_old", result)


@pytest.mark.slow
@pytest.mark.parametrize("space", ["MI250X/dedispersion", "A100/dedispersion"])
def test_the_methodology_arrives_at_the_suites_budget_on_dedispersion(tmp_path, monkeypatch, space):
    """The spaces of issue #44 (the T4 file without runtimes stopped the default pipeline; the one time key
    set that loaded dropped the benchmark time): about 40 s each, the package's 25 default repeats."""
    _check_budget(space, _run_methodology(space, tmp_path / "experiment", monkeypatch))
