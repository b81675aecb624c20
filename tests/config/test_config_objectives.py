"""Config slips caught by check-config, not inside a job log (issue #33, item 4): an objective set a space
lacks, a single-objective algorithm under a multi-objective set, an algorithm Kernel Tuner does not have."""

from __future__ import annotations

import gzip
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import config as cfg
from analysis.errors import ConfigError
from analysis.spaces.peek import default_objectives, source_fields
from helpers import REPO, kt_cache, write

HUB_CACHE = "data/benchmark_hub/cachefiles/convolution_milo/A100.json.gz"  # time only
HUB_DEFINITION = "data/benchmark_hub/kernels/convolution_milo.json"
CPU_CACHE = "data/sweeps/cpu/amd-epyc-vm/bessel.json.gz"  # time, memory, mre, nrmse, nmae


def _config(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"output_root: {tmp_path / 'out'}\n" + text)
    return path


def _check(path: Path) -> dict:
    """What check-config does to a file: load (validate), check files, check objectives."""
    config = cfg.load(path)
    cfg.check_files(config, REPO, str(path))
    cfg.check_space_objectives(config, REPO, str(path))
    return config


def _error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        _check(path)
    assert str(exc.value).startswith(f"{path}: field '{exc.value.field}': ")
    return exc.value


HUB_SPACE = f"""spaces:
  - kernel: convolution
    device: A100
    source: {HUB_CACHE}
    definition: {HUB_DEFINITION}
"""


# An objective set a space lacks.

def test_a_time_only_space_under_the_default_multi_objective_sets_is_rejected(tmp_path):
    """The default simulation.objective_sets are O3 and O5; the benchmark_hub cache has only time."""
    error = _error(_config(tmp_path, HUB_SPACE + "hyperparameters: {kernels: []}\n"))
    assert error.field == "spaces[0].objective_sets"
    assert "space A100/convolution lacks 'memory', 'mre' of objective set 'O3'" in error.detail
    assert "simulation.objective_sets" in error.detail and f"fields of {HUB_CACHE}" in error.detail
    # what the doc advises: the space's own objective sets
    _check(_config(tmp_path, HUB_SPACE + "    objective_sets: [time]\nhyperparameters: {kernels: []}\n", "ok.yaml"))


def test_a_set_the_space_lists_itself_is_named_by_its_index(tmp_path):
    error = _error(_config(tmp_path, HUB_SPACE + "    objective_sets: [time, O5]\nhyperparameters: {kernels: []}\n"))
    assert error.field == "spaces[0].objective_sets[1]" and "'O5'" in error.detail


def test_the_objectives_mapping_names_the_objectives_without_reading_the_source(tmp_path):
    text = (HUB_SPACE + "    objectives: {time: time, memory: memory, mre: mre}\n"
            "simulation: {objective_sets: [O3]}\nhyperparameters: {kernels: []}\n")
    _check(_config(tmp_path, text))  # the mapping says O3 is there; the import job checks the fields
    error = _error(_config(tmp_path, text.replace("mre: mre", "mre: mer"), "typo.yaml"))
    assert error.field == "spaces[0].objectives.mre" and "unknown objective 'mer'" in error.detail


def test_a_training_space_must_have_the_grids_set_and_a_studied_space_time_and_its_threshold_error(tmp_path):
    base = HUB_SPACE + "    objective_sets: [time]\n"
    error = _error(_config(tmp_path, base + "hyperparameters: {kernels: [convolution]}\n"))  # default grids: O3, O5
    assert error.field == "hyperparameters.grids.nsga2.objective_set" and "training spaces" in error.detail
    error = _error(_config(tmp_path, base + "hyperparameters: {kernels: []}\nconstraint_aware:\n"
                                          "  spaces: [A100/convolution]\n  thresholds: {convolution: {tau: -3}}\n"))
    assert error.field == "constraint_aware.thresholds.convolution.error" and "lacks 'mre'" in error.detail


def test_a_cache_whose_first_entries_failed_is_read_up_to_its_first_measured_one(tmp_path):
    tune_params = {"x": [1, 2, 3]}
    rows = [{"x": 1, "time": "CompilationFailedConfig"},  # a failed entry names no other field
            {"x": 2, "time": 1.0, "memory": 8.0, "mre": 0.1}, {"x": 3, "time": 2.0, "memory": 8.0, "mre": 0.2}]
    source = write(tmp_path / "c.json.gz", kt_cache(tune_params, rows), gz=True)
    assert source_fields(source) == ("kt_cache", {"x", "time", "memory", "mre", "compile_time",
                                                  "verification_time", "benchmark_time"})
    assert default_objectives(source) == {"time", "memory", "mre"}
    space = f"spaces:\n  - {{kernel: k, device: d, source: {source}}}\nhyperparameters: {{kernels: []}}\n"
    _check(_config(tmp_path, space + "simulation: {objective_sets: [O3]}\n"))
    error = _error(_config(tmp_path, space, "o5.yaml"))  # default O3 and O5: no nrmse, nmae
    assert "lacks 'nrmse', 'nmae' of objective set 'O5'" in error.detail


def test_a_t4_source_is_read_by_its_measurement_names(tmp_path):
    results = [{"configuration": {"x": 1}, "invalidity": "compile", "measurements": [], "times": {}},
               {"configuration": {"x": 2}, "invalidity": "correct", "times": {},
                "measurements": [{"name": "time", "value": 1.0}, {"name": "energy", "value": 3.0}]}]
    source = write(tmp_path / "t4.json", {"schema_version": "1.0.0", "results": results})
    assert source_fields(source) == ("t4", {"time", "energy"})
    assert default_objectives(source, "t4") == {"time", "energy"}
    assert source_fields(source, "kt_cache") is None  # not what the config says it is: left to the import job


def test_an_unreadable_source_is_left_to_the_import_job(tmp_path):
    """A truncated gzip, or a cut-off file, is the import job's to report (naming the file); never a wrong verdict."""
    full = (REPO / CPU_CACHE).read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(full[:300])
    assert source_fields(cut) is None
    plain = tmp_path / "cut.json"
    plain.write_text(gzip.decompress(full).decode()[:200])
    assert source_fields(plain) is None
    space = f"spaces:\n  - {{kernel: k, device: d, source: {cut}}}\nhyperparameters: {{kernels: []}}\n"
    _check(_config(tmp_path, space))


def test_the_head_agrees_with_the_whole_file_and_is_fast():
    from analysis.objectives import OBJECTIVES
    from analysis.spaces.jsonfile import read_json

    for source in (HUB_CACHE, CPU_CACHE, "data/benchmark_hub_more/cachefiles/pnpoly/RTX_Titan.json.gz"):
        doc = read_json(REPO / source)
        measured = [e for e in doc["cache"].values() if not isinstance(e.get("time"), str)]
        assert default_objectives(REPO / source) == {o for o in OBJECTIVES if any(o in e for e in measured)}
    full = cfg.load(REPO / "config" / "config.yaml")
    started = time.perf_counter()
    cfg.check_space_objectives(full, REPO, "config/config.yaml")  # 35 spaces: about 10 ms on the dev VM
    assert time.perf_counter() - started < 1.0


# Single-objective algorithms under a multi-objective set.

def test_a_single_objective_comparison_setting_under_a_multi_objective_set_is_rejected(tmp_path):
    text = (f"spaces:\n  - {{kernel: bessel, device: cpu, source: {CPU_CACHE}}}\n"
            "simulation:\n  algorithms:\n    rs: {algorithm: rs}\n    ga: {algorithm: genetic_algorithm}\n"
            "hyperparameters: {kernels: []}\n")
    error = _error(_config(tmp_path, text))
    assert error.field == "simulation.algorithms.ga.algorithm"
    assert "'genetic_algorithm' optimises a single objective" in error.detail and "'O3'" in error.detail
    # on a one-objective set it runs (config/test.yaml's ga_aware on time)
    _check(_config(tmp_path, text.replace("simulation:\n", "simulation:\n  objective_sets: [time]\n"), "time.yaml"))
    _check(REPO / "config" / "test.yaml")


def test_a_single_objective_grid_on_a_multi_objective_set_is_rejected(tmp_path):
    text = (HUB_SPACE + "    objective_sets: [time]\nsimulation: {objective_sets: [time]}\nhyperparameters:\n"
            "  kernels: []\n  grids:\n    ga: {algorithm: pso, objective_set: O3, options: {popsize: [4, 8]}}\n")
    error = _error(_config(tmp_path, text))
    assert error.field == "hyperparameters.grids.ga.objective_set" and "single objective" in error.detail


# Algorithms Kernel Tuner does not have.

TIME_ONLY = "simulation: {objective_sets: [time]}\n"


@pytest.mark.parametrize("where,text", [
    ("simulation.algorithms.s.algorithm",
     "simulation:\n  objective_sets: [time]\n  algorithms: {s: {algorithm: smsemoa}}\n"
     "hyperparameters: {kernels: []}\n"),
    ("hyperparameters.grids.s.algorithm",
     TIME_ONLY + "hyperparameters:\n  kernels: []\n"
                 "  grids: {s: {algorithm: smsemoa, objective_set: time, options: {popsize: [4]}}}\n"),
    ("constraint_aware.strategies.s.algorithm",
     TIME_ONLY + "hyperparameters: {kernels: []}\nconstraint_aware:\n  strategies: {s: {algorithm: smsemoa}}\n"),
])
def test_an_unknown_algorithm_name_is_rejected_where_it_is_written(tmp_path, where, text):
    error = _error(_config(tmp_path, HUB_SPACE + "    objective_sets: [time]\n" + text))
    assert error.field == where and "smsemoa" in error.detail


def test_a_registry_entry_whose_strategy_kernel_tuner_lacks_is_rejected(tmp_path, monkeypatch):
    """Today's KeyError: 'smsemoa' inside the simulate job: a registry entry naming a strategy Kernel Tuner lacks."""
    from analysis.simulate import registry

    entry = registry.Algorithm("smsemoa", "smsemoa", "SMS-EMOA (not in Kernel Tuner 1.5)", {}, True)
    monkeypatch.setitem(registry.ALGORITHMS, "smsemoa", entry)
    text = (HUB_SPACE + "    objective_sets: [time]\nsimulation:\n  objective_sets: [time]\n"
            "  algorithms: {s: {algorithm: smsemoa}}\nhyperparameters: {kernels: []}\n")
    error = _error(_config(tmp_path, text))
    assert error.field == "simulation.algorithms.s.algorithm"
    assert "Kernel Tuner strategy 'smsemoa'" in error.detail and "nsga2" in error.detail


# The same at Snakemake's start-up and from the command.

def test_snakemake_stops_at_start_up_naming_the_file_and_the_field(tmp_path):
    path = _config(tmp_path, HUB_SPACE + "hyperparameters: {kernels: []}\n")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n",
           "--configfile", str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode != 0
    assert "c.yaml: field 'spaces[0].objective_sets': space A100/convolution lacks" in out.stdout + out.stderr


def test_check_config_command_reports_a_missing_objective(tmp_path):
    from analysis.cli import main

    path = _config(tmp_path, HUB_SPACE + "hyperparameters: {kernels: []}\n")
    log = tmp_path / "check.log"
    assert main(["--log", str(log), "check-config", str(path)]) == 2
    assert f"{path}: field 'spaces[0].objective_sets': space A100/convolution lacks" in log.read_text()
    assert main(["--log", str(log), "check-config", str(REPO / "config" / "config.yaml")]) == 0
