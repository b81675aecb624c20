"""export-space (issue #33, item 3): a space written for other tools, checked with those tools' own readers."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pandas as pd
import pytest

from analysis.cli import main
from helpers import REPO, kt_cache, write

# The kernel's own order: neither the parameters nor their values are sorted.
TUNE_PARAMS = {"zeta": [4, 1, 2], "alpha": ["b", "a"], "mid": [8, 16]}
CONSTRAINT = "zeta != 4 or mid == 16"


def _rows():
    rows = []
    for z in TUNE_PARAMS["zeta"]:
        for a in TUNE_PARAMS["alpha"]:
            for m in TUNE_PARAMS["mid"]:
                if z == 4 and m != 16:
                    continue  # outside the constraint: not in an exhaustive cache
                time = 1.0 + z / 4 + (a == "a") + m / 16
                rows.append({"zeta": z, "alpha": a, "mid": m, "time": time, "memory": 64.0 * m})
    rows[3].update(time="RuntimeFailedConfig", memory="RuntimeFailedConfig")  # one configuration failed to run
    return rows


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """A config with one space of the kernel above (cache and definition in tmp_path); its path."""
    write(tmp_path / "cache.json", kt_cache(TUNE_PARAMS, _rows()))
    (tmp_path / "kernel.yaml").write_text(
        "tune_params:\n  zeta: [4, 1, 2]\n  alpha: [b, a]\n  mid: [8, 16]\n"
        f"constraints: ['{CONSTRAINT}']\n")
    config = tmp_path / "study.yaml"
    config.write_text(f"""output_root: out
spaces:
  - kernel: k
    device: d
    source: {tmp_path / 'cache.json'}
    definition: {tmp_path / 'kernel.yaml'}
simulation:
  objective_sets: [time]
hyperparameters:
  kernels: []
""")
    return config


def _export(config: Path, fmt: str, out: Path, space: str = "d/k", log: Path | None = None) -> int:
    args = ["--log", str(log)] if log else []
    return main([*args, "export-space", "--config", str(config), "--space", space, "--format", fmt, "--out", str(out)])


def _imported(tmp_path: Path, source: Path, fmt: str):
    from analysis.spaces.importers import import_space

    return import_space(source, kernel="k", device="d", fmt=fmt, definition=tmp_path / "kernel.yaml")


def test_kernel_tuner_runs_the_printed_call_on_the_export_with_the_kernels_parameter_order(study, tmp_path,
                                                                                           monkeypatch, capsys):
    from kernel_tuner import tune_kernel

    monkeypatch.chdir(tmp_path)
    out = Path("exported") / "k.json"  # relative, as a user types it: the printed call names it so
    assert _export(study, "kernel-tuner", out) == 0
    call = capsys.readouterr().out
    assert stat.S_IMODE(out.stat().st_mode) == 0o644  # readable by others, not mkstemp's 0600
    # the restrictions go beside the cache; no temporary file is left
    assert sorted(p.name for p in out.parent.iterdir()) == ["k.json", "k.restrictions.json"]
    assert json.loads((out.parent / "k.restrictions.json").read_text()) == [CONSTRAINT]
    doc = json.loads(out.read_text())
    assert doc["tune_params_keys"] == list(TUNE_PARAMS) and doc["tune_params"] == TUNE_PARAMS
    before = out.read_bytes()

    run: dict = {}
    exec(call, run)  # the printed call, as written
    measured = {(r["zeta"], r["alpha"], r["mid"]): r["time"] for r in _rows() if isinstance(r["time"], float)}
    seen = {(r["zeta"], r["alpha"], r["mid"]): r["time"] for r in run["results"] if isinstance(r["time"], float)}
    assert seen == measured  # every configuration, each with its measured time
    assert len(run["results"]) == len(_rows())
    assert out.read_bytes() == before  # simulation mode reads the cache, never rewrites it
    # without the restrictions Kernel Tuner proposes a configuration the cache cannot hold
    with pytest.raises(ValueError, match="not in cache"):
        tune_kernel("k", "", [8], [], dict(TUNE_PARAMS), cache=str(out), simulation_mode=True, strategy="brute_force",
                    quiet=True)
    # the order is what Kernel Tuner looks configurations up by: the sorted one is refused
    with pytest.raises(ValueError, match="order"):
        tune_kernel("k", "", [8], [], {p: TUNE_PARAMS[p] for p in sorted(TUNE_PARAMS)}, restrictions=[CONSTRAINT],
                    cache=str(out), simulation_mode=True, strategy="brute_force", quiet=True)


def test_autotuning_methodology_validates_the_exported_t4(study, tmp_path):
    from autotuning_methodology.formats_interface import load_T4_format
    from autotuning_methodology.searchspace_statistics import SearchspaceStatistics

    out = tmp_path / "k_T4.json"
    assert _export(study, "t4", out) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    data = load_T4_format(out, validate=True)  # the package's T4 schema
    first = data["results"][0]
    assert list(first["configuration"]) == list(TUNE_PARAMS)
    assert [m["name"] for m in first["measurements"]] == ["time", "memory"]
    assert {r["invalidity"] for r in data["results"]} == {"correct", "runtime"}
    stats = SearchspaceStatistics(application_name="k", device_name="d", minimization=True,
                                  objective_time_keys=["compilation", "validation", "benchmark"],
                                  objective_performance_keys=["time"], full_search_space_file_path=out,
                                  full_validate=True)
    times = sorted(r["time"] for r in _rows() if isinstance(r["time"], float))
    assert stats.size == len(_rows())
    assert stats.objective_performances_total_sorted.tolist() == pytest.approx(times)


@pytest.mark.parametrize("fmt,kind", [("kernel-tuner", "kt_cache"), ("t4", "t4")])
def test_an_export_imports_back_as_the_same_space(study, tmp_path, fmt, kind):
    out = tmp_path / f"export.{fmt}.json"
    assert _export(study, fmt, out) == 0
    original = _imported(tmp_path, tmp_path / "cache.json", "kt_cache")
    again = _imported(tmp_path, out, kind)
    assert again.parameters == original.parameters and list(again.parameters) == list(TUNE_PARAMS)
    assert again.constraints == [CONSTRAINT]
    pd.testing.assert_frame_equal(again.table, original.table)


def test_unknown_space_names_the_config_and_lists_its_spaces(study, tmp_path):
    log = tmp_path / "export.log"
    out = tmp_path / "x.json"
    assert _export(study, "t4", out, space="d/nope", log=log) == 2
    assert f"{study}: field '--space': has no space 'd/nope' (its spaces: d/k)" in log.read_text()
    assert not out.exists()


def test_a_sweeps_space_is_read_from_its_merged_cache_or_names_the_target(tmp_path, monkeypatch):
    """config/test.yaml's host-cpu/bessel is a sweep: before the sweep ran, the error names the file to make."""
    from analysis import config as study_config
    from analysis.config import config_space
    from analysis.errors import InputError

    monkeypatch.chdir(tmp_path)
    path = REPO / "config" / "test.yaml"
    config = study_config.load(path)
    with pytest.raises(InputError, match=r"made by a sweep whose merged cache "
                                         r"\.test-output/results/sweeps/cpu/host-cpu/bessel/cache\.json\.gz"):
        config_space(config, path, "host-cpu/bessel")
    assert config_space(config, path, "A100/convolution")["source"].endswith("convolution_milo/A100.json.gz")
