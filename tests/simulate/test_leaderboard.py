"""The leaderboard's entries, runs and scores (analysis.simulate.leaderboard, analysis.indicators.leaderboard).

pyATF's runs are compared with Kernel Tuner's own `tune_kernel(strategy="pyatf_strategies")` on the ORIGINAL cache
file, parameters in the file's order, seeded as the suite seeds. Both go through the pyATF adapter
(analysis.simulate.pyatf): pyATF 0.0.13, the newest on PyPI, rejects Kernel Tuner 1.5.0's call without it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from analysis.indicators.constraint_aware import space_budget
from analysis.indicators.leaderboard import score
from analysis.simulate import KernelTunerSpace, archive, simulate_run
from analysis.simulate import leaderboard as lb
from analysis.simulate.jobs import space_data
from analysis.simulate.pyatf import compatible_tp, needs_tp_adapter, pyatf_run
from analysis.simulate.reference import tune_kernel_trace
from analysis.spaces.importers import import_space
from analysis.spaces.methodology import ScoreSettings
from analysis.spaces.space import Space
from helpers import REPO

HUB_MORE = REPO / "data" / "benchmark_hub_more"
SOURCE = HUB_MORE / "cachefiles" / "convolution_milo" / "a4000.json.gz"
DEFINITION = HUB_MORE / "kernels" / "convolution_milo_old.yaml"
SETTINGS = ScoreSettings(time_resolution=50)
CA = {"ga_aware": {"algorithm": "genetic_algorithm", "options": {"popsize": 10}, "constraint_aware": True},
      "ga_unaware": {"algorithm": "genetic_algorithm", "options": {"popsize": 10}, "constraint_aware": False},
      "rs": {"algorithm": "rs", "options": {}, "constraint_aware": True}}

RAISING = '''"""A strategy that raises."""
_options = {}


def tune(searchspace, runner, tuning_options):
    raise ValueError("boom")
'''


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A4000/convolution_milo_old stored, with its budget (rule ca_budget's file)."""
    folder = tmp_path_factory.mktemp("space")
    space = import_space(SOURCE, definition=DEFINITION, kernel="convolution_milo_old", device="A4000")
    space.save(folder / "space.parquet", folder / "space.json")
    space_budget(folder / "space.parquet", folder / "space.json", None, SETTINGS, folder / "budget.json")
    return folder / "space.parquet", folder / "space.json", folder / "budget.json"


def test_entries_cover_kernel_tuners_map_pyatfs_techniques_and_the_study() -> None:
    from kernel_tuner.interface import strategy_map
    from kernel_tuner.strategies.pyatf_strategies import supported_searchtechniques

    entries = lb.entries({"repetitions": 25, "fewer_runs": {"skopt": 10}, "fewer_spaces": {"skopt": 40},
                          "strategies": {"mine": {"algorithm": "examples/optuna_sampler.py"}}}, CA)
    kt = {e["kt_name"] for e in entries.values() if e["family"] == lb.KERNEL_TUNER}
    assert kt == set(strategy_map) - {"brute_force", "nsga2", "nsga3", "pyatf_strategies"}
    assert entries["random_sample"]["algorithm"] == "rs"
    assert [e["options"]["searchtechnique"] for e in entries.values() if e["family"] == lb.PYATF] == \
        list(supported_searchtechniques)
    assert {n for n, e in entries.items() if e["source"] == "constraint_aware"} == {"ca_ga_aware", "ca_ga_unaware"}
    assert entries["ca_ga_unaware"]["options"]["constraint_aware"] is False
    assert entries["skopt"]["repetitions"] == 10 and entries["skopt"]["max_budget_evaluations"] == 40
    assert entries["mine"]["family"] == lb.USER and entries["mine"]["repetitions"] == 25
    assert all(e["options"] == {} for e in entries.values() if e["family"] == lb.KERNEL_TUNER)


@pytest.mark.parametrize("bad, match", [
    ({"strategies": {"skopt": {"algorithm": "rs"}}}, "taken"),
    ({"fewer_runs": {"nonesuch": 10}}, "name no entry"),
    ({"fewer_runs": {"skopt": 5}}, "at least 10"),
    ({"fewer_spaces": {"nonesuch": 10}}, "name no entry"),
])
def test_entries_reject_clashes_and_unknown_names(bad: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        lb.entries({"repetitions": 25, **bad}, CA)


def test_switching_a_family_off_keeps_its_fewer_runs_and_spaces_harmless() -> None:
    """An overlay that switches families off (the full config names their entries in fewer_runs and fewer_spaces)
    gets the other entries; a misspelt name is still refused."""
    section = {"repetitions": 25, "fewer_runs": {"skopt": 10, "pyatf_torczon": 10}, "fewer_spaces": {"skopt": 40}}
    assert lb.entries({**section, "kernel_tuner": False, "pyatf": False, "constraint_aware": False}, CA) == {}
    only_pyatf = lb.entries({**section, "kernel_tuner": False, "constraint_aware": False}, CA)
    assert {e["family"] for e in only_pyatf.values()} == {lb.PYATF}
    assert only_pyatf["pyatf_torczon"]["repetitions"] == 10
    with pytest.raises(ValueError, match=r"\['skopts'\] name no entry"):
        lb.entries({**section, "fewer_runs": {"skopts": 10}, "kernel_tuner": False}, CA)


def test_a_raising_strategy_is_recorded_and_its_score_is_missing_with_the_reason(stored, tmp_path: Path) -> None:
    """A strategy that raises inside its tune: each run is recorded as failed with the exception's last line, its
    score on the space is missing with that reason, and another strategy's runs in the same study are unaffected."""
    strategy = tmp_path / "raising.py"
    strategy.write_text(RAISING)
    lb.run([stored], "raising", str(strategy), {}, 3, SETTINGS, 10.0, tmp_path / "raising.parquet")
    runs = pd.read_parquet(tmp_path / "raising.parquet")
    assert list(runs["failed"]) == ["ValueError: boom"] * 3 and list(runs["repetition"]) == [0, 1, 2]
    score("raising", "runs", [tmp_path / "raising.parquet"], [stored], 3, SETTINGS, 2, tmp_path / "s.parquet",
          tmp_path / "c.parquet")
    row = pd.read_parquet(tmp_path / "s.parquet").iloc[0]
    assert pd.isna(row["score"]) and row["failed_runs"] == 3
    assert row["missing_reason"] == "3 of 3 runs failed: ValueError: boom"

    lb.run([stored], "greedy_mls", "greedy_mls", {}, 3, SETTINGS, 10.0, tmp_path / "ok.parquet")
    ok = pd.read_parquet(tmp_path / "ok.parquet")
    assert set(ok["failed"]) == {""} and ok["repetition"].nunique() == 3
    score("greedy_mls", "runs", [tmp_path / "ok.parquet"], [stored], 3, SETTINGS, 4, tmp_path / "s2.parquet",
          tmp_path / "c2.parquet")
    good = pd.read_parquet(tmp_path / "s2.parquet").iloc[0]
    assert pd.notna(good["score"]) and good["missing_reason"] == "" and good["score_resamples"] == 4
    assert good["score_ci_low"] <= good["score_ci_high"]


def test_a_space_over_an_entrys_budget_limit_is_skipped_with_the_reason(stored, tmp_path: Path) -> None:
    lb.run([stored], "mls", "mls", {}, 2, SETTINGS, 10.0, tmp_path / "mls.parquet", max_budget_evaluations=1)
    score("mls", "runs", [tmp_path / "mls.parquet"], [stored], 2, SETTINGS, 0, tmp_path / "s.parquet",
          tmp_path / "c.parquet")
    row = pd.read_parquet(tmp_path / "s.parquet").iloc[0]
    assert pd.isna(row["score"]) and "leaderboard.fewer_spaces" in row["missing_reason"]


def _second_space(tmp_path: Path) -> tuple[Path, Path, Path]:
    """MI250X/convolution stored under tmp_path/other, with its budget."""
    other = tmp_path / "other"
    other.mkdir()
    hub = REPO / "data" / "benchmark_hub"
    space = import_space(hub / "cachefiles" / "convolution_milo" / "MI250X.json.gz",
                         definition=hub / "kernels" / "convolution_milo.json", kernel="convolution", device="MI250X")
    space.save(other / "space.parquet", other / "space.json")
    space_budget(other / "space.parquet", other / "space.json", None, SETTINGS, other / "budget.json")
    return other / "space.parquet", other / "space.json", other / "budget.json"


def test_a_runs_file_in_a_baseline_archives_form_scores_as_the_runs_themselves(stored, tmp_path: Path) -> None:
    """An archive gives a leaderboard file of two spaces back with each repeat of a configuration of a table
    unnamed (`archive.archived_form`: parameters and objectives missing): scores, intervals and curves equal."""
    second = _second_space(tmp_path)
    lb.run([stored, second], "mls", "mls", {}, 3, SETTINGS, 10.0, tmp_path / "full.parquet")
    spaces = {f"{s.device}/{s.kernel}": s for s in (Space.load(p, m) for p, m, _ in (stored, second))}
    table = pq.read_table(tmp_path / "full.parquet")
    pq.write_table(archive.archived_form(table, "leaderboard/runs/mls.parquet", spaces.__getitem__),
                   tmp_path / "archived.parquet")
    unnamed = pd.read_parquet(tmp_path / "archived.parquet").filter(like="param.").isna().all(axis=1)
    assert unnamed.sum() > 10 and unnamed.sum() == (~table.column("first_visit").to_numpy()).sum()
    for form in ("full", "archived"):
        score("mls", "runs", [tmp_path / f"{form}.parquet"], [stored, second], 3, SETTINGS, 4,
              tmp_path / f"{form}_s.parquet", tmp_path / f"{form}_c.parquet")
    for kind in ("s", "c"):
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / f"archived_{kind}.parquet"),
                                      pd.read_parquet(tmp_path / f"full_{kind}.parquet"), check_exact=True)
    assert pd.read_parquet(tmp_path / "full_s.parquet")["score"].notna().all()


def test_a_runs_file_of_several_spaces_scores_each_as_it_would_alone(stored, tmp_path: Path) -> None:
    """Regression: the union of two spaces' parameter columns turned integers into floats, so that no configuration
    of the first space was found (1.0 is not 1) and scoring failed."""
    second = _second_space(tmp_path)
    lb.run([stored, second], "mls", "mls", {}, 2, SETTINGS, 10.0, tmp_path / "both.parquet")
    score("mls", "runs", [tmp_path / "both.parquet"], [stored, second], 2, SETTINGS, 0, tmp_path / "both_s.parquet",
          tmp_path / "both_c.parquet")
    lb.run([stored], "mls", "mls", {}, 2, SETTINGS, 10.0, tmp_path / "one.parquet")
    score("mls", "runs", [tmp_path / "one.parquet"], [stored], 2, SETTINGS, 0, tmp_path / "one_s.parquet",
          tmp_path / "one_c.parquet")
    both, one = pd.read_parquet(tmp_path / "both_s.parquet"), pd.read_parquet(tmp_path / "one_s.parquet")
    assert both["score"].notna().all()
    assert both.iloc[0]["score"] == one.iloc[0]["score"]


def _original(tmp_path: Path) -> tuple[Path, dict]:
    plain = tmp_path / SOURCE.name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(SOURCE.read_bytes()))
    return plain, json.loads(plain.read_text())


@pytest.mark.parametrize("technique", ["differential_evolution", "round_robin"])
def test_a_pyatf_run_is_kernel_tuners_own_on_the_original_file(technique: str, tmp_path: Path) -> None:
    """simulate_run of pyatf_strategies equals tune_kernel(strategy="pyatf_strategies", simulation_mode=True) on the
    original cache file, with tune_params in the file's order and the file's own restrictions, run for run."""
    cache_json, doc = _original(tmp_path)
    tune_params = {name: doc["tune_params"][name] for name in doc["tune_params_keys"]}
    restrictions = list(yaml.safe_load(DEFINITION.read_text())["constraints"])
    reference = KernelTunerSpace(tune_params, restrictions, doc, ["time"], ["min"], source=str(DEFINITION))
    space = import_space(SOURCE, definition=DEFINITION, kernel="convolution_milo_old", device="A4000")
    options = {"searchtechnique": technique}
    for seed in (11, 12):
        ours = simulate_run(space_data(space, ["time"]), "pyatf_strategies", options, 40, seed).to_frame()
        with pyatf_run():
            theirs = tune_kernel_trace(reference, cache_json, "pyatf_strategies", options, 40, seed).to_frame()
        assert len(ours) >= 40
        pd.testing.assert_frame_equal(ours, theirs, check_dtype=False, obj=f"{technique} seed {seed}")


def test_the_pyatf_adapter_passes_three_arguments_and_restores_tp(tmp_path: Path, monkeypatch) -> None:
    import pyatf

    original = pyatf.TP
    assert needs_tp_adapter(original)  # pyATF 0.0.13 (pinned): TP(name, values, constraint)
    with compatible_tp():
        from pyatf import TP
        from pyatf.range import Interval

        tp = TP("x", Interval(1, 4), lambda x: x > 1, "x > 1")  # Kernel Tuner 1.5.0's call
        assert tp.name == "x"
    assert pyatf.TP is original

    class Four:
        def __init__(self, name, values, constraint=None, source=None):
            pass

    assert not needs_tp_adapter(Four)


def test_a_pyatf_run_leaves_nothing_in_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    space = import_space(SOURCE, definition=DEFINITION, kernel="convolution_milo_old", device="A4000")
    simulate_run(space_data(space, ["time"]), "pyatf_strategies", {"searchtechnique": "round_robin"}, 10, 1)
    assert list(tmp_path.iterdir()) == []
    assert Path.cwd() == tmp_path
