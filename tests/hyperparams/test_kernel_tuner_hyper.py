"""The check of seed 003's scores against kernel_tuner.hyper (analysis.kernel_tuner_hyper).

The layout is what Kernel Tuner's Hypertuner backend reads (its own `compile` writes the experiments file on
it, and the methodology's own group set-up finds every file), the patches are in place only for a call, and
the comparison's arithmetic. One slow test runs `tune_hyper_params` on one configuration and one space: Kernel
Tuner's side cannot be made reproducible by seeding (its time budget counts the wall clock of the process as
well as the simulated time, `kernel_tuner.util.TuningBudget.get_time_spent`, so where a run stops, and with
it every later draw from the global generators, depends on the machine's speed), so it asserts only what
holds whatever the draws: revisits happen and carry time, where the files go, and that nothing is left
patched.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import kernel_tuner
import kernel_tuner.util as kt_util
import pandas as pd
import pytest
from autotuning_methodology.experiments import get_experiment, get_experimental_groups
from kernel_tuner.backends import hypertuner

from analysis import kernel_tuner_hyper as kth
from analysis.spaces.jsonfile import read_json

SPACES = ["A100/convolution", "A100/dedispersion"]
BESIDE_KERNEL_TUNER = Path(kernel_tuner.__file__).parent.parent / "hyperparamtuning"


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("layout")
    return folder, kth.lay_out(SPACES, folder, repeats=7)


def test_the_layout_is_the_export_and_the_backends_settings(layout) -> None:
    folder, options = layout
    assert options["gpus"] == ["A100"]
    assert [a["name"] for a in options["applications"]] == ["convolution", "dedispersion"]
    for app in options["applications"]:
        assert Path(app["folder"]) == folder.resolve() / "kernels"
        assert app["objective_performance_keys"] == ["time"] and app["minimization"] is True
        t1 = read_json(Path(app["folder"]) / app["input_file"])
        assert Path(app["folder"], t1["KernelSpecification"]["KernelFile"]).is_file()
        cache = read_json(folder / "cachefiles" / app["name"] / "A100.json")
        assert cache["tune_params_keys"] == list(cache["tune_params"]) and len(cache["cache"]) > 1000
        assert (folder / "cachefiles" / app["name"] / "A100.restrictions.json").is_file()
    assert not (folder / "experiments.json").exists()  # the backend writes its own
    backend = hypertuner.HypertunerFunctions(1).override
    expected = json.loads(json.dumps(backend))
    expected["experimental_groups_defaults"].update(
        repeats=7, pattern_for_full_search_space_filenames={
            "regex": str(folder.resolve() / "cachefiles" / "${applications}" / "${gpus}_T4.json")})
    assert options["override"] == expected


def test_the_backend_writes_its_experiments_file_on_the_layout_and_the_methodology_finds_every_file(
        layout, tmp_path) -> None:
    """The backend's own `compile` (the step of each configuration before `get_strategy_scores`), in a folder of
    the check's (`_in_folder`); the methodology's own set-up of the experimental groups of that file."""
    _, options = layout
    backend = hypertuner.HypertunerFunctions(1, compiler_options=options)
    kernel = SimpleNamespace(arguments=["dual_annealing"], params={"method": "Powell"}, name="check",
                             kernel_source=None)
    existed = BESIDE_KERNEL_TUNER.exists()
    with kth._in_folder(tmp_path, kth.Tally(), charge_revisits=True):
        path = Path(backend.compile(kernel))
        assert path.parent == tmp_path.resolve()  # the working directory
        experiment = get_experiment(str(path))
        groups = get_experimental_groups(experiment)
    assert BESIDE_KERNEL_TUNER.exists() == existed
    assert Path(experiment["parent_folder"]) == tmp_path.resolve() / "hyperparamtuning"
    assert experiment["experimental_groups_defaults"]["repeats"] == 7
    assert [(g["gpu"], g["application_name"]) for g in groups] == [("A100", "convolution"), ("A100", "dedispersion")]
    for group in groups:
        assert group["name"] == "dual_annealing_method=Powell"
        assert group["search_method_hyperparameters"] == [{"name": "method", "value": "Powell"}]
        assert Path(group["full_search_space_file"]).is_file()
        setup = read_json(group["input_file"])
        # the cache Kernel Tuner simulates on: the T4 file's name minus "_T4"
        simulated = setup["KernelSpecification"]["SimulationInput"]
        assert simulated == str(group["full_search_space_file"]).replace("_T4", "") and Path(simulated).is_file()
        assert Path(setup["KernelSpecification"]["KernelFile"]).is_file()


def test_spaces_that_are_no_product_of_devices_and_kernels_are_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="missing: A100/convolution, A4000/dedispersion"):
        kth.lay_out(["A100/dedispersion", "A4000/convolution"], tmp_path)
    with pytest.raises(ValueError, match="each space once"):
        kth.lay_out(["A100/dedispersion", "A100/dedispersion"], tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("charge", [True, False])
def test_a_revisit_is_tallied_and_without_charge_carries_no_times(charge: bool) -> None:
    tally = kth.Tally()
    copy, first = kth._tallied(tally, charge)
    entry = {"x": 1, "time": 2.0, "times": [1.5, 2.5], "compile_time": 10.0, "verification_time": 0.0,
             "benchmark_time": 4.0}
    out = copy(entry)
    assert (out["compile_time"], out["verification_time"], out["benchmark_time"]) == (0, 0, 0)
    assert out["times"] == ([1.5, 2.5] if charge else [])
    assert entry["times"] == [1.5, 2.5]  # the cache's entry is left as it is
    assert (tally.evaluations, tally.revisits, tally.revisit_times_ms) == (1, 1, 4.0)
    outside = copy({"x": 3})  # a proposal outside the restrictions: no evaluation
    assert outside["compile_time"] == 0 and (tally.evaluations, tally.revisits) == (1, 1)
    first({"x": 2}, {"x": 2, "time": 1.0}, True, None, {})
    assert (tally.evaluations, tally.revisits) == (2, 1)


def test_the_patches_hold_only_inside_the_folder(tmp_path) -> None:
    saved = (hypertuner.__file__, kt_util.copy_without_benchmark_timings, kt_util.print_config_output,
             hypertuner.get_strategy_scores, Path.cwd())
    with pytest.raises(RuntimeError, match="inside"), kth._in_folder(tmp_path, kth.Tally(), False):
        assert Path(hypertuner.__file__).parent.parent.parent / "hyperparamtuning" == tmp_path / "hyperparamtuning"
        assert Path.cwd() == tmp_path.resolve()
        assert kt_util.copy_without_benchmark_timings is not saved[1]
        raise RuntimeError("inside")
    assert (hypertuner.__file__, kt_util.copy_without_benchmark_timings, kt_util.print_config_output,
            hypertuner.get_strategy_scores, Path.cwd()) == saved


def test_the_comparison_is_the_difference_over_sqrt_2_standard_errors() -> None:
    theirs = pd.DataFrame({"configuration": ["a", "b", "c", "d"], "kernel_tuner_score": [0.5, 0.1, 0.3, 0.5]})
    suite = pd.DataFrame({"configuration": ["d", "c", "b", "a"], "suite_score": [0.2, 0.3, 0.4, 0.6],
                          "suite_se": [0.1, 0.1, 0.1, 0.05]})
    table = kth.compare(theirs, suite)
    assert list(table["configuration"]) == ["a", "b", "c", "d"]  # Kernel Tuner's (the grid's) order
    assert table["difference"].tolist() == pytest.approx([-0.1, -0.3, 0.0, 0.3])
    assert table["z"].tolist() == pytest.approx([-0.1 / (math.sqrt(2) * 0.05), -0.3 / (math.sqrt(2) * 0.1), 0.0,
                                                 0.3 / (math.sqrt(2) * 0.1)])
    assert table["agree"].tolist() == [True, False, True, False]  # |z| 1.41, 2.12, 0, 2.12 against 1.96
    s = kth.summary(table)
    assert (s["configurations"], s["agree"]) == (4, 2)
    assert s["mean_difference"] == pytest.approx(-0.025)
    # ranks: Kernel Tuner a=3.5, b=1, c=2, d=3.5; the suite a=4, b=3, c=2, d=1
    assert s["spearman"] == pytest.approx(pd.Series([3.5, 1, 2, 3.5]).corr(pd.Series([4, 3, 2, 1])))
    assert (s["kernel_tuner_pick"], s["suite_pick"]) == ("a", "a")  # the first of a tie
    assert math.isnan(kth.summary(table.head(2))["spearman"])


@pytest.mark.slow
def test_kernel_tuners_hyper_tuner_charges_revisits_and_the_check_leaves_nothing_behind(tmp_path) -> None:
    """One configuration (Dual Annealing with Powell, the grid's most revisiting method) on A100/dedispersion,
    5 runs a side, both modes. What holds however Kernel Tuner's draws fall (see the module's docstring)."""
    existed = BESIDE_KERNEL_TUNER.exists()
    saved = (hypertuner.__file__, kt_util.copy_without_benchmark_timings, Path.cwd())
    out = kth.check(["A100/dedispersion"], {"method": ["Powell"]}, seed=3, repetitions=5, resamples=5,
                    folder=tmp_path)
    assert set(out) == {"charged", "free"}
    suite_columns = ["suite_score", "suite_se", "suite_distinct_evaluations"]
    pd.testing.assert_frame_equal(out["charged"][suite_columns], out["free"][suite_columns])
    for mode, table in out.items():
        (row,) = table.to_dict("records")
        print(mode, {k: row[k] for k in ("kernel_tuner_score", "suite_score", "suite_se", "evaluations",
                                         "revisits", "revisit_time_s")})
        assert row["configuration"] == "method-Powell" and row["strategy_name"] == "dual_annealing_method=Powell"
        assert math.isfinite(row["kernel_tuner_score"]) and row["kernel_tuner_score"] <= 1
        assert math.isfinite(row["suite_score"]) and row["suite_se"] > 0
        # Powell's line searches come back to configurations they visited: every run revisits, and each
        # revisit carries its recorded per-iteration times (charged by the methodology unless emptied)
        assert 0 < row["revisits"] < row["evaluations"]
        assert row["revisit_time_s"] > 0
        runs = tmp_path / f"kernel_tuner_{mode}"
        assert (runs / "hyper_cache.json").is_file()
        assert (runs / "hyperparamtuning" / "run" / "dual_annealing_method=Powell").is_dir()
        assert not list(runs.glob("hyperparamtuning_dual_annealing_*.json"))  # the backend removed its file
    assert BESIDE_KERNEL_TUNER.exists() == existed
    assert (hypertuner.__file__, kt_util.copy_without_benchmark_timings, Path.cwd()) == saved
