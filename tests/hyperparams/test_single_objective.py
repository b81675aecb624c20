"""Seed 003's tuning of single-objective strategies (analysis.hyperparams.single_objective and its tables).

A configuration's score is the leaderboard's (the methodology's score through autotuning_methodology, tested in
tests/simulate/test_leaderboard.py and tests/indicators/); here: the grids enumerate seed 003's, a grid job scores
each configuration as the leaderboard scores it alone, the aggregate is the package's own aggregation over
spaces, picks and the summary's statistics, and bad grids are refused with the file and field before any job.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import config as study_config
from analysis.errors import ConfigError
from analysis.hyperparams import meta
from analysis.hyperparams import single_objective as so
from analysis.indicators.constraint_aware import space_budget
from analysis.indicators.leaderboard import entry_runs, read_scores, score
from analysis.simulate import leaderboard as lb
from analysis.spaces.importers import import_space
from analysis.spaces.methodology import ScoreSettings
from analysis.statistics import Bootstrap
from analysis.tables import hyperparameters_so as so_tables
from analysis.tables import leaderboard as lb_tables
from analysis.tables.hyperparameters_so import summary_table, verdict
from helpers import REPO

SETTINGS = ScoreSettings(time_resolution=50)
HUB = REPO / "data" / "benchmark_hub"


def _full_config() -> dict:
    base = study_config.read_yaml(REPO / "config" / "config.yaml")
    base.update(study_config.read_yaml(REPO / "config" / "seed003.yaml"))
    return base


def test_the_grids_are_seed_003s_table_2() -> None:
    """Seed 003 Table 2: 90, 8, 108 and 81 configurations; every combination once, plus Kernel Tuner's default."""
    grids = study_config.read_yaml(REPO / "config" / "seed003.yaml")["hyperparameters_so"]["grids"]
    sizes = {algorithm: len(so.configurations(grid)) - 1 for algorithm, grid in grids.items()}
    assert sizes == {"diff_evo": 90, "dual_annealing": 8, "genetic_algorithm": 108, "pso": 81}
    assert set(grids["diff_evo"]["method"]) == {"best1bin", "best1exp", "rand1exp", "randtobest1exp", "best2exp",
                                                "rand2exp", "randtobest1bin", "best2bin", "rand2bin", "rand1bin"}
    assert "w" not in grids["pso"]  # seed 003 left PSO's w at its default
    for grid in grids.values():
        configs = so.configurations(grid)
        assert list(configs)[-1] == so.DEFAULT and configs[so.DEFAULT] == {}
        combos = {tuple(sorted(o.items())) for name, o in configs.items() if name != so.DEFAULT}
        assert len(combos) == math.prod(len(v) for v in grid.values())


def test_jobs_cover_every_configuration_once_in_grid_order() -> None:
    section = {"grids": {"pso": {"popsize": [2, 4, 6], "c1": [1.0, 2.0]}}, "configs_per_job": 4}
    chunks = so.chunks(section)["pso"]
    assert [len(c) for c in chunks] == [4, 3]
    assert [n for c in chunks for n in c] == list(so.configurations(section["grids"]["pso"]))
    assert chunks[0][:2] == ["popsize-2_c1-1.0", "popsize-2_c1-2.0"]  # the last option varies fastest


def test_the_full_config_with_seed_003_validates_and_splits_its_spaces() -> None:
    config = study_config.validate(_full_config(), "config", files=[REPO / "config" / "config.yaml",
                                                                   REPO / "config" / "seed003.yaml"])
    scopes = so.spaces(config["hyperparameters_so"], study_config.time_space_keys(config))
    assert len(scopes["training"]) == 6 and len(scopes["test"]) == 4
    assert not set(scopes["wider"]) & (set(scopes["training"]) | set(scopes["test"]))
    assert set(scopes["training"]) | set(scopes["test"]) | set(scopes["wider"]) == set(
        study_config.time_space_keys(config))
    assert study_config.is_full_study([REPO / "config" / "config.yaml", REPO / "config" / "seed003.yaml"])
    assert not study_config.is_full_study([REPO / "config" / "seed003.yaml"])


@pytest.mark.parametrize("change, field", [
    (lambda s: s["grids"]["diff_evo"].update(method=["best1bin", "best9bin"]), "grids.diff_evo.method[1]"),
    (lambda s: s["grids"]["pso"].update(popsize=[10, -3]), "grids.pso.popsize[1]"),
    (lambda s: s["grids"]["dual_annealing"].update(method=["Newton"]), "grids.dual_annealing.method[0]"),
    (lambda s: s["grids"]["pso"].update(c1=[]), "grids.pso.c1"),
    (lambda s: s["grids"]["pso"].update(popsize=[10, 10]), "grids.pso.popsize"),
    (lambda s: s["grids"]["pso"].update(speed=[1]), "grids.pso.speed"),
    (lambda s: s["grids"].update(nsga2={"popsize": [10]}), "grids.nsga2"),
    (lambda s: s["grids"].update(annealing_typo={"x": [1]}), "grids.annealing_typo"),
    (lambda s: s.update(training=["A100/convolution", "A100/nope"]), "training[1]"),
    (lambda s: s.update(test=["A100/convolution"]), "test[0]"),
    (lambda s: s.update(meta={"strategies": {"x": {"algorithm": "no_such"}}}), "meta.strategies.x.algorithm"),
    (lambda s: s.update(meta={"strategies": {"x": {"algorithm": "pso", "options": {"popsize": 0}}}}),
     "meta.strategies.x.options.popsize"),
])
def test_bad_grids_and_spaces_are_refused_with_the_field(change, field: str) -> None:
    config = copy.deepcopy(_full_config())
    change(config["hyperparameters_so"])
    with pytest.raises(ConfigError) as error:
        study_config.validate(config, "config/seed003.yaml")
    assert error.value.field == f"hyperparameters_so.{field}" and "config/seed003.yaml" in str(error.value)


def test_a_bad_grid_stops_snakemake_before_any_job(tmp_path: Path) -> None:
    """The workflow checks the config when it is parsed: a dry run names the file and the field and plans nothing."""
    import subprocess
    import sys

    overlay = tmp_path / "bad.yaml"
    overlay.write_text("hyperparameters_so:\n  grids:\n    pso: {popsize: [-1]}\n  training: [A100/dedispersion]\n")
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--snakefile", str(REPO / "Snakefile"),
                           "--directory", str(tmp_path), "--configfile", str(REPO / "config" / "test.yaml"),
                           str(overlay)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode != 0
    assert "hyperparameters_so.grids.pso.popsize[0]" in done.stdout + done.stderr
    assert "Job stats" not in done.stdout


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> list[tuple[Path, Path, Path]]:
    """Two spaces stored with their budgets (rule ca_budget's file): A100 and MI250X dedispersion."""
    triples = []
    for device in ("A100", "MI250X"):
        folder = tmp_path_factory.mktemp(device)
        space = import_space(HUB / "cachefiles" / "dedispersion_milo" / f"{device}.json.gz",
                             definition=HUB / "kernels" / "dedispersion_milo.json", kernel="dedispersion",
                             device=device)
        space.save(folder / "space.parquet", folder / "space.json")
        space_budget(folder / "space.parquet", folder / "space.json", None, SETTINGS, folder / "budget.json")
        triples.append((folder / "space.parquet", folder / "space.json", folder / "budget.json"))
    return triples


def test_a_grid_job_scores_each_configuration_as_the_leaderboard_scores_it_alone(stored, tmp_path: Path) -> None:
    """Runs and scores of a job of two configurations equal those of each configuration run and scored alone by the
    leaderboard (the space's statistics shared between configurations change nothing)."""
    configs = {"popsize-4": {"popsize": 4}, so.DEFAULT: {}}
    so.run_chunk(stored, "pso", configs, 2, SETTINGS, 10.0, tmp_path / "runs.parquet")
    so.score_chunk("pso", [tmp_path / "runs.parquet"], stored, 2, SETTINGS, 2, tmp_path / "scores.parquet",
                   tmp_path / "resamples.parquet", tmp_path / "curves.parquet")
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    scores = pd.read_parquet(tmp_path / "scores.parquet")
    resampled = pd.read_parquet(tmp_path / "resamples.parquet")
    assert list(runs.columns[:2]) == ["configuration", "space"]
    for name, options in configs.items():
        lb.run(stored, name, "pso", options, 2, SETTINGS, 10.0, tmp_path / f"{name}.parquet")
        alone = pd.read_parquet(tmp_path / f"{name}.parquet")
        mine = runs[runs["configuration"] == name].drop(columns="configuration").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, alone, check_dtype=False)
        score(name, "runs", [tmp_path / f"{name}.parquet"], stored, 2, SETTINGS, 2, tmp_path / f"{name}.s.parquet",
              tmp_path / f"{name}.c.parquet")
        expected = pd.read_parquet(tmp_path / f"{name}.s.parquet")
        got = scores[scores["entry"] == name].reset_index(drop=True)
        np.testing.assert_array_equal(got["score"], expected["score"])
        np.testing.assert_array_equal(got["score_ci_low"], expected["score_ci_low"])
        assert len(resampled[resampled["configuration"] == name]) == 2 * len(stored)
    table = so.mean_scores(scores, resampled, so.counted_spaces(scores, 0))
    assert list(table["configuration"]) == list(configs)
    for name in configs:
        row = table[table["configuration"] == name].iloc[0]
        assert row["score"] == pytest.approx(scores.loc[scores["entry"] == name, "score"].mean())
        boot = resampled[resampled["configuration"] == name].groupby("resample")["score"].mean()
        assert row["ci_low"] == pytest.approx(np.percentile(boot, 2.5))


def test_the_aggregate_score_is_the_packages_aggregation_over_spaces(stored, tmp_path: Path) -> None:
    """Seeded alike, the package's aggregate score over two spaces (get_strategies_aggregated_performance on both)
    equals the mean of its score on each space alone: the training score is the methodology's aggregate."""
    from autotuning_methodology.report_experiments import get_strategies_aggregated_performance

    from analysis.indicators.methodology import calculated_baseline, space_scoring, strategy_curve
    from analysis.simulate.constraint_aware import objective_values, with_objective
    from analysis.spaces.space import Space

    lb.run(stored, "pso", "pso", {"popsize": 4}, 3, SETTINGS, 10.0, tmp_path / "runs.parquet")
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    data = []
    for parquet, description, _ in stored:
        space = Space.load(parquet, description)
        objective, values = objective_values(space, None)
        space = with_objective(space, objective, values)
        folder = tmp_path / space.device
        folder.mkdir()
        stats, index = space_scoring(space, objective, folder)
        mine = lb_rows(runs, space)
        curve = strategy_curve("pso", mine, space, objective, folder, index)
        start, end, t0, t1 = stats.cutoff_point_fevals_time_start_end(SETTINGS.cutoff_percentile_start,
                                                                       SETTINGS.cutoff_percentile)
        data.append((calculated_baseline(stats), [curve], stats,
                     np.linspace(t0, t1, SETTINGS.time_resolution), np.arange(start, end + 1)))
    np.random.seed(7)
    together = get_strategies_aggregated_performance(data, SETTINGS.confidence_level)[0][0]
    np.random.seed(7)
    alone = [float(np.mean(get_strategies_aggregated_performance([d], SETTINGS.confidence_level)[0][0]))
             for d in data]
    assert float(np.mean(together)) == pytest.approx(np.mean(alone), rel=1e-12)


def lb_rows(runs: pd.DataFrame, space) -> pd.DataFrame:
    from analysis.indicators.leaderboard import space_rows

    return space_rows(runs[runs["space"] == f"{space.device}/{space.kernel}"], space)


def _scores(values: dict[str, list[float]], budgets: list[int]) -> pd.DataFrame:
    rows = [{"entry": name, "space": f"s{i}", "score": v, "missing_reason": "" if np.isfinite(v) else "boom",
             "budget_evaluations": budgets[i]} for name, vs in values.items() for i, v in enumerate(vs)]
    return pd.DataFrame(rows)


def test_picks_take_the_best_and_worst_grid_configuration_never_the_default() -> None:
    scores = _scores({"a": [0.2, 0.4], "b": [0.5, 0.5], "c": [0.5, 0.5], "d": [np.nan, 0.0], "default": [0.9, 0.9]},
                     [50, 50])
    resampled = pd.DataFrame(columns=["configuration", "space", "resample", "score"])
    assert so.pick(scores, resampled, 20, "best") == "b"  # a tie goes to the first in grid order
    assert so.pick(scores, resampled, 20, "worst") == "a"  # d has no training score: never picked
    assert so.pick(scores, resampled, 20, "default") == "default"
    # a space under the budget floor counts in no aggregate
    assert so.pick(_scores({"a": [0.9, 0.1], "b": [0.0, 0.2]}, [5, 50]), resampled, 20, "best") == "b"
    with pytest.raises(ValueError, match="no grid configuration has a training score"):
        so.pick(_scores({"a": [np.nan, 0.1]}, [50, 50]), resampled, 20, "best")


def test_the_summary_bootstraps_per_space_differences_over_spaces() -> None:
    spaces = pd.DataFrame([
        {"algorithm": "pso", "role": role, "configuration": role, "scope": scope, "space": space, "counted": counted,
         "score": value}
        for scope, space, counted, values in [("training", "t1", True, (0.6, 0.1, 0.3)),
                                              ("training", "t2", True, (0.7, 0.3, 0.2)),
                                              ("test", "e1", True, (0.5, 0.4, 0.5)),
                                              ("test", "e2", False, (0.0, 0.9, 0.9))]
        for role, value in zip(("best", "worst", "default"), values, strict=True)])
    scopes = {"training": ["t1", "t2"], "test": ["e1", "e2"], "wider": []}
    boot = Bootstrap(2000, 0)
    table = summary_table(spaces, {"pso": {}}, scopes, {"test": {"pso": 0.411}}, boot).set_index("scope")
    assert table.loc["training", "n_spaces"] == 2 and table.loc["test", "n_spaces"] == 1  # e2 is not counted
    assert table.loc["training", "tuned_minus_untuned"] == pytest.approx(0.45)
    assert (table.loc["training", "tuned_minus_untuned_ci_low"],
            table.loc["training", "tuned_minus_untuned_ci_high"]) == boot.ci(np.array([0.6 - 0.1, 0.7 - 0.3]))
    assert table.loc["all", "n_spaces"] == 3
    assert table.loc["all", "tuned_minus_default"] == pytest.approx(np.mean([0.3, 0.5, 0.0]))
    assert math.isnan(table.loc["test", "tuned_minus_untuned_ci_low"])  # one space: no interval
    assert table.loc["test", "seed_003_tuned_minus_untuned"] == 0.411
    assert math.isnan(table.loc["training", "seed_003_tuned_minus_untuned"])
    assert table.loc["wider", "n_spaces"] == 0 and math.isnan(table.loc["wider", "tuned"])
    assert verdict(0.1, 0.2) == "better" and verdict(-0.2, -0.1) == "worse" and verdict(-0.1, 0.1) == "not apart"
    assert verdict(float("nan"), 0.1) == ""


def _grid_scores(values: list[float]) -> tuple[dict, pd.DataFrame]:
    grid = {"popsize": [4, 6, 8], "c1": [1.0, 2.0]}
    names = [n for n in so.configurations(grid) if n != so.DEFAULT]
    options = [o for n, o in so.configurations(grid).items() if n != so.DEFAULT]

    rows = pd.DataFrame({"configuration": names, "options": [json.dumps(o) for o in options], "in_grid": True,
                         "training_score": values})
    return grid, pd.concat([rows, pd.DataFrame([{"configuration": "default", "options": "Kernel Tuner's defaults",
                                                 "in_grid": False, "training_score": 0.99}])], ignore_index=True)


def test_a_meta_strategy_searches_the_scored_grid_in_simulation() -> None:
    """The grid as a space: its configurations, each scored by its training score (the default, no grid
    configuration, is not in it; an unscored one has failed). Random sampling without replacement scores every
    configuration within the grid's size, so it always reaches the best; the runs are reproducible."""
    grid, scores = _grid_scores([0.1, 0.5, np.nan, 0.2, 0.8, 0.3])
    space = meta.meta_space("pso", grid, scores)
    assert len(space.table) == 6 and list(space.table["status"]).count("ok") == 5
    strategies = {"rs": {"algorithm": "rs"}, "ga": {"algorithm": "genetic_algorithm", "options": {"popsize": 4}}}
    runs = meta.search("pso", grid, scores, strategies, 4, 0.01)
    again = meta.search("pso", grid, scores, strategies, 4, 0.01)
    pd.testing.assert_frame_equal(runs, again)
    rs = runs[runs["meta_strategy"] == "rs"]
    assert rs["reached"].all() and (rs["evaluations_to_reach"] <= 6).all() and (rs["best_found"] == 0.8).all()
    assert len(set(rs["evaluations_to_reach"])) > 1  # other seeds, other orders
    table = meta.summary(runs).set_index("meta_strategy")
    assert table.loc["rs", "runs"] == 4 and table.loc["rs", "reached"] == 4
    assert table.loc["rs", "mean_or_grid"] == pytest.approx(rs["evaluations_to_reach"].mean())
    assert meta.evaluations_to_reach([0.1, np.nan, 0.795, 0.8], 0.79) == 3
    assert meta.evaluations_to_reach([0.1, 0.2], 0.79) is None


def test_a_final_configuration_joins_the_leaderboard_with_the_runs_a_leaderboard_job_makes(stored,
                                                                                         tmp_path: Path) -> None:
    """lb-score's source hyperparameters_so: the first `repetitions` final runs of a configuration on the
    leaderboard's spaces (fewer than the final spaces) are the runs and the score a leaderboard job of that many
    repetitions makes of the same configuration; a file of several configurations is refused."""
    options = {"popsize": 4}
    so.run_chunk(stored, "pso", {"popsize-4": options}, 3, SETTINGS, 10.0, tmp_path / "final.parquet")
    labels = ["A100/dedispersion"]
    mine = entry_runs("hyperparameters_so", [tmp_path / "final.parquet"], labels, 2)
    lb.run(stored[:1], "so_pso_best", "pso", options, 2, SETTINGS, 10.0, tmp_path / "lb.parquet")
    pd.testing.assert_frame_equal(mine, pd.read_parquet(tmp_path / "lb.parquet"), check_dtype=False)
    score("so_pso_best", "hyperparameters_so", [tmp_path / "final.parquet"], stored[:1], 2, SETTINGS, 2,
          tmp_path / "so.s.parquet", tmp_path / "so.c.parquet")
    score("so_pso_best", "runs", [tmp_path / "lb.parquet"], stored[:1], 2, SETTINGS, 2, tmp_path / "lb.s.parquet",
          tmp_path / "lb.c.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "so.s.parquet"),
                                  pd.read_parquet(tmp_path / "lb.s.parquet"))
    both = pd.concat([pd.read_parquet(tmp_path / "final.parquet"),
                      pd.read_parquet(tmp_path / "final.parquet").assign(configuration="other")])
    both.to_parquet(tmp_path / "two.parquet")
    with pytest.raises(ValueError, match="one configuration expected, found 2"):
        entry_runs("hyperparameters_so", [tmp_path / "two.parquet"], labels, 2)
    with pytest.raises(ValueError, match="unknown runs source 'final'"):
        entry_runs("final", [tmp_path / "final.parquet"], labels, 2)


def _score_file(path: Path, entry: str, scores: dict[str, float]) -> Path:
    rows = [{"entry": entry, "space": space, "runs": 25, "failed_runs": 0, "score": value, "score_ci_low": value - 0.1,
             "score_ci_high": value + 0.1, "score_resamples": 20, "missing_reason": "", "budget_evaluations": 100,
             "stopped_early": 0, "stop_reasons": "budget:25", "mean_distinct_evaluations": 50.0,
             "rejected_attempts": 0} for space, value in scores.items()]
    pd.DataFrame(rows).to_parquet(path)
    return path


def test_the_leaderboard_with_the_tuned_configurations_keeps_every_entrys_own_score(tmp_path: Path) -> None:
    """The table of rule so_lb_table: the leaderboard's entries keep their mean scores and intervals (each is scored
    alone); the best and worst of each grid join with the options their final runs name; ranks count them."""
    spaces = {"A100/dedispersion": 0.2, "A100/convolution": 0.4, "MI250X/dedispersion": 0.3}
    entries = {name: {"family": "Kernel Tuner", "display": name.upper(), "algorithm": name, "options": {},
                      "kt_name": name, "repetitions": 25, "source": "runs", "fewer_runs": False,
                      "max_budget_evaluations": None} for name in ("pso", "diff_evo")}
    lb_files = [_score_file(tmp_path / "pso.parquet", "pso", spaces),
                _score_file(tmp_path / "de.parquet", "diff_evo", {k: v - 0.3 for k, v in spaces.items()})]
    grid = {"popsize": [10, 20], "c1": [1.0]}
    finals, keys, so_files = [], [], []
    for role, configuration, shift in (("best", "popsize-20_c1-1.0", 0.1), ("worst", "popsize-10_c1-1.0", -0.5)):
        path = tmp_path / f"final_{role}.parquet"
        pd.DataFrame({"configuration": [configuration], "space": ["A100/dedispersion"], "repetition": [0]}).to_parquet(
            path)
        finals.append(path)
        keys.append(f"pso/{role}")
        name = so.leaderboard_entry_name("pso", role)
        so_files.append(_score_file(tmp_path / f"{name}.parquet", name, {k: v + shift for k, v in spaces.items()}))
    assert set(so.configurations(grid)) >= {"popsize-20_c1-1.0", "popsize-10_c1-1.0"}
    out = [tmp_path / "board.csv", tmp_path / "board.md"]
    board = so_tables.leaderboard_table(lb_files, so_files, entries, finals, keys, {"pso": grid}, 25, out, 1000, 0, 20)
    alone = lb_tables.leaderboard(lb_tables.space_table(read_scores(lb_files, entries), entries, 20), entries,
                                  Bootstrap(1000, 0), {})
    mine = board.set_index("entry")
    for column in ("mean_score", "ci_low", "ci_high", "n_spaces", "options"):
        assert mine.loc[list(entries), column].tolist() == alone.set_index("entry").loc[list(entries), column].tolist()
    assert list(board["entry"]) == ["so_pso_best", "pso", "diff_evo", "so_pso_worst"]
    assert mine.loc["so_pso_best", "family"] == so_tables.FAMILY
    assert json.loads(mine.loc["so_pso_best", "options"]) == {"c1": 1.0, "popsize": 20}
    assert mine.loc["so_pso_best", "spaces_best"] == 3 and mine.loc["pso", "mean_rank"] == 2.0
    assert out[1].read_text().startswith("# Leaderboard with seed 003's tuned and untuned configurations")
    with pytest.raises(ValueError, match="1 score files for the tuning's 2 leaderboard entries"):
        so_tables.leaderboard_table(lb_files, so_files[:1], entries, finals, keys, {"pso": grid}, 25, out, 1000, 0, 20)
