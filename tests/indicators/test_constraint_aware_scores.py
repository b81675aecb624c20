"""The constraint-aware study's budget and scores: the methodology's performance score through
autotuning_methodology, a space's budget file, the columns of a space's scores."""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.indicators.constraint_aware import feasible_fraction, score, space_budget, space_group
from analysis.indicators.methodology import (
    SpaceIndex,
    calculated_baseline,
    score_space,
    strategy_curve,
    trace_records,
)
from analysis.simulate import simulate_run
from analysis.simulate.constraint_aware import objective_values, run, with_objective
from analysis.simulate.jobs import space_data
from analysis.spaces.methodology import (
    ScoreSettings,
    budget,
    space_statistics,
    space_t4,
    write_space_t4,
)
from helpers import bessel_sweep


@pytest.fixture(scope="module")
def bessel():
    return bessel_sweep()


@pytest.fixture(scope="module")
def stats(bessel, tmp_path_factory):
    path = write_space_t4(bessel, "time", tmp_path_factory.mktemp("t4") / "bessel_T4.json")
    return space_statistics(path, "bessel", "intel-xeon-vm", "time")


def test_space_t4_passes_the_packages_schema_and_statistics_read_it_in_seconds(bessel, stats):
    from autotuning_methodology.validators import validate_T4

    validate_T4(copy.deepcopy(space_t4(bessel, "time")))
    ok = bessel.table["status"] == "ok"
    assert stats.size == len(bessel.table)
    assert stats.total_performance_absolute_optimum() == pytest.approx(bessel.table.loc[ok, "time_ms"].min())
    total_ms = bessel.table[["compile_time_ms", "verification_time_ms", "benchmark_time_ms"]].sum(axis=1)
    assert stats.total_time_median() == pytest.approx(np.median(total_ms) / 1e3)  # the package's unit is s


def test_budget_is_the_packages_cutoff_in_ms(stats):
    b = budget(stats, ScoreSettings())
    assert 1 <= b["fevals_start"] < b["fevals_end"] <= stats.size
    assert b["time_end_ms"] == pytest.approx(b["fevals_end"] * stats.total_time_median() * 1e3)
    assert b["time_limit_ms"] == pytest.approx(1.1 * b["time_end_ms"])


def _oracle_runs(space, repetitions=4, length=30, seed=0, best_first=True):
    """Runs that evaluate the optimum first (or, without `best_first`, not at all), then random cheap-to-evaluate
    configurations."""
    rng = np.random.default_rng(seed)
    table = space.table
    ok = table.index[table["status"] == "ok"]
    best = table.loc[ok, "time_ms"].idxmin()
    cost = table[["compile_time_ms", "verification_time_ms", "benchmark_time_ms"]].sum(axis=1).drop(best)
    cheap = cost.nsmallest(3 * length).index  # so that every run has several evaluations in the scored range
    names = list(space.parameters)
    frames = []
    for rep in range(repetitions):
        order = [best, *rng.choice(cheap, size=length - 1, replace=False)] if best_first else \
            list(rng.choice(cheap, size=length, replace=False))
        rows = table.loc[order]
        charged = rows[["compile_time_ms", "verification_time_ms", "benchmark_time_ms"]].sum(axis=1).cumsum()
        frame = pd.DataFrame({f"param.{n}": rows[n].to_numpy() for n in names})
        frame["first_visit"] = True
        frame["sim_time_ms"] = charged.to_numpy()
        frame.insert(0, "repetition", rep)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def test_trace_records_refuse_a_clock_that_disagrees_with_the_space(bessel):
    runs = _oracle_runs(bessel, repetitions=1)
    index, names = SpaceIndex.of(bessel, "time"), list(bessel.parameters)
    assert len(trace_records(runs, index, names, "time")) == len(runs)
    runs.loc[3, "sim_time_ms"] += 5.0
    with pytest.raises(ValueError, match="disagrees"):
        trace_records(runs, index, names, "time")


def test_the_optimum_at_once_scores_one_and_scores_are_reproducible(bessel, stats, tmp_path):
    settings = ScoreSettings(time_resolution=200)
    curve = strategy_curve("oracle", _oracle_runs(bessel), bessel, "time", tmp_path)
    first = score_space(stats, {"oracle": curve}, settings, seed=1)
    again = score_space(stats, {"oracle": curve}, settings, seed=1)
    assert first["strategies"]["oracle"]["score"] == pytest.approx(1.0)
    np.testing.assert_array_equal(first["strategies"]["oracle"]["curve"], again["strategies"]["oracle"]["curve"])


def test_expected_rank_baseline_sits_one_rank_behind_the_packages(stats):
    """The best of M draws without replacement from N sits, on average, at 0-based position
    M (N + 1) / (M + 1) - 1 of the worst-first list (checked by enumerating a small case); the
    package's baseline indexes that list at M (N + 1) / (M + 1), one rank nearer the optimum."""
    from itertools import combinations

    n, m = 7, 3
    assert np.mean([max(c) for c in combinations(range(n), m)]) == pytest.approx(m * (n + 1) / (m + 1) - 1)

    package, expected = calculated_baseline(stats, "package"), calculated_baseline(stats, "expected_rank")
    worst_first = package._redwhite_index_dist
    big = len(worst_first)
    for draws in (1, 10, 100):
        index = round(draws * (big + 1) / (draws + 1))
        fevals = np.array([draws, draws])  # two points: the package returns its draws unsmoothed
        np.testing.assert_array_equal(package.get_curve(fevals, "fevals"), worst_first[[index] * 2])
        np.testing.assert_array_equal(expected.get_curve(fevals, "fevals"), worst_first[[index - 1] * 2])
    with pytest.raises(ValueError, match="unknown baseline 'exact'"):
        calculated_baseline(stats, "exact")


def test_a_spaces_group_is_the_configured_one_or_by_what_it_is_tuned_on():
    assert space_group("benchmark_hub_more", None) == "benchmark_hub_more"
    assert space_group("cpu", {"tau": -3.5}) == "cpu"
    assert space_group(None, None) == "time"
    assert space_group(None, {"tau": -3.5, "error": "mre", "beta": 1.0}) == "accuracy threshold"


def test_feasible_fraction(bessel):
    threshold = {"tau": -3.5, "error": "mre", "beta": 1.0}
    log_error = np.log10(bessel.table["mre"].to_numpy())
    ok = bessel.table["status"] == "ok"
    assert feasible_fraction(bessel, threshold) == pytest.approx(np.mean(log_error[ok] < -3.5))
    assert feasible_fraction(bessel, None) == 1.0


def test_scored_the_space_carries_its_configured_group(bessel, tmp_path):
    meta, parquet = tmp_path / "space.json", tmp_path / "space.parquet"
    bessel.save(parquet, meta)
    settings = ScoreSettings(time_resolution=50)
    run(parquet, meta, None, "rs", "rs", {}, True, 2, settings, 10.0, tmp_path / "rs.parquet", tmp_path / "rs.json")
    strategies = {"rs": {"algorithm": "rs", "constraint_aware": True}}
    score(parquet, meta, None, strategies, {"rs": tmp_path / "rs.parquet"}, settings, tmp_path / "s.parquet",
          tmp_path / "c.parquet", group="benchmark_hub_more")
    assert pd.read_parquet(tmp_path / "s.parquet")["group"].tolist() == ["benchmark_hub_more"]


def test_a_space_budget_written_once_gives_the_same_runs_and_refuses_another_setting(bessel, tmp_path):
    meta, parquet = tmp_path / "space.json", tmp_path / "space.parquet"
    bessel.save(parquet, meta)
    settings = ScoreSettings(time_resolution=50)
    threshold = {"tau": -3.5, "error": "mre", "beta": 1.0}
    space_budget(parquet, meta, threshold, settings, tmp_path / "budget.json")
    for name, budget_file in (("computed", None), ("read", tmp_path / "budget.json")):
        run(parquet, meta, threshold, "pso", "pso", {}, True, 2, settings, 10.0, tmp_path / f"{name}.parquet",
            tmp_path / f"{name}.json", budget=budget_file)
    assert pd.read_parquet(tmp_path / "read.parquet").equals(pd.read_parquet(tmp_path / "computed.parquet"))
    assert (tmp_path / "read.json").read_text() == (tmp_path / "computed.json").read_text()
    with pytest.raises(ValueError, match=r"budget\.json: field 'objective'"):
        run(parquet, meta, None, "pso", "pso", {}, True, 2, settings, 10.0, tmp_path / "x.parquet",
            tmp_path / "x.json", budget=tmp_path / "budget.json")
    with pytest.raises(ValueError, match=r"budget\.json: field 'settings'"):
        run(parquet, meta, threshold, "pso", "pso", {}, True, 2, ScoreSettings(), 10.0, tmp_path / "x.parquet",
            tmp_path / "x.json", budget=tmp_path / "budget.json")


def _package_arrays(runs, index, names, objective):
    """What the package's runner.write_results makes of trace_records (captured, not written)."""
    import warnings

    from autotuning_methodology.caching import ResultsDescription
    from autotuning_methodology.runner import write_results

    captured = {}
    description = ResultsDescription(
        run_folder=Path("unused"), application_name="k", device_name="d", group_name="g", group_display_name="g",
        stochastic=True, objective_time_keys=["compilation", "validation", "benchmark"],
        objective_performance_keys=[objective], minimization=True)
    description.set_results = captured.update
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the package warns at every constraint-violating proposal
        write_results([trace_records(f, index, names, objective) for _, f in runs.groupby("repetition", sort=True)],
                      description)
    return captured


def test_results_arrays_are_the_packages_write_results(bessel):
    """Aware and unaware runs (repeats, invalid and constraint-violating proposals), a run cut to twice the mean."""
    from analysis.indicators.methodology import results_arrays

    objective, values = objective_values(bessel, {"tau": -3.5, "error": "mre", "beta": 1.0})
    space = with_objective(bessel, objective, values)
    index, names = SpaceIndex.of(space, objective), list(space.parameters)
    data = space_data(space, [objective])
    frames = []
    for rep, (algorithm, aware) in enumerate([("pso", True), ("pso", False), ("firefly_algorithm", False),
                                             ("genetic_algorithm", False), ("diff_evo", True)]):
        trace = simulate_run(data, algorithm, {"constraint_aware": aware, "maxiter": 8}, len(space.table), rep)
        frame = trace.to_frame()
        frame.insert(0, "repetition", rep)
        frames.append(frame)
    runs = pd.concat(frames, ignore_index=True)
    # a constraint-violating proposal (as the constraint-unaware pymoo variants record them), mid-run
    alien = runs.iloc[[5]].copy()
    alien[f"param.{names[0]}"] = -12345
    runs = pd.concat([runs.iloc[:5], alien, runs.iloc[5:]], ignore_index=True)
    assert (~runs["first_visit"]).any()
    for case in (runs, runs[runs["repetition"] != 0]):  # the second: lengths that trigger the package's cut
        expected = _package_arrays(case, index, names, objective)
        got = results_arrays(case, index, names)
        assert set(got) == set(expected)
        for key, array in expected.items():
            assert got[key].dtype == array.dtype and got[key].shape == array.shape, key
            np.testing.assert_array_equal(got[key], array, err_msg=key)
    runs.loc[9, "sim_time_ms"] += 5.0
    with pytest.raises(ValueError, match="disagrees"):
        results_arrays(runs, index, names)


def test_result_files_stored_uncompressed_score_as_the_packages_compressed_ones(bessel, stats, tmp_path, monkeypatch):
    """The package's result arrays go to an uncompressed .npz (a third of a score was zlib); the curve,
    lower and upper bounds and score are equal to those from the package's own compressed file."""
    import zipfile

    from analysis.indicators import methodology

    runs = _oracle_runs(bessel, repetitions=6, seed=3)
    settings = ScoreSettings(time_resolution=200)
    scored = []
    for compressed in (False, True):
        folder = tmp_path / ("zlib" if compressed else "stored")
        with monkeypatch.context() as patched:
            if compressed:
                patched.setattr(methodology, "uncompressed_result_files", contextlib.nullcontext)
            curve = strategy_curve("oracle", runs, bessel, "time", folder)
        (stored,) = folder.rglob("*.npz")
        with zipfile.ZipFile(stored) as members:
            kinds = {m.compress_type for m in members.infolist()}
        assert kinds == ({zipfile.ZIP_DEFLATED} if compressed else {zipfile.ZIP_STORED})
        scored.append(score_space(stats, {"oracle": curve}, settings, seed=4)["strategies"]["oracle"])
    for key in ("curve", "lower", "upper"):
        np.testing.assert_array_equal(scored[0][key], scored[1][key], err_msg=key)
    assert scored[0]["score"] == scored[1]["score"]


def test_a_resample_of_runs_stacks_as_the_runs_it_draws(bessel):
    """`stack_repetitions` of drawn repetitions (with repeats, in draw order) is `results_arrays` of those runs
    relabelled in that order, which is tested equal to the package's write_results above."""
    from analysis.indicators.methodology import repetition_arrays, results_arrays, stack_repetitions

    long = _oracle_runs(bessel, repetitions=2, length=90, seed=2)
    short = _oracle_runs(bessel, repetitions=3, length=20, seed=1)
    # lengths 20 and 90: some draws trigger the package's cut, some not
    runs = pd.concat([short, long.assign(repetition=long.repetition + 3)], ignore_index=True)
    index, names = SpaceIndex.of(bessel, "time"), list(bessel.parameters)
    reps = repetition_arrays(runs, index, names)
    groups = [frame for _, frame in runs.groupby("repetition", sort=True)]
    for picked in ([0, 0, 4, 2, 4], [3, 1, 1, 0, 2], [4, 4, 4, 0, 0], [4, 0, 0, 1, 0]):
        drawn = pd.concat([groups[i].assign(repetition=k) for k, i in enumerate(picked)], ignore_index=True)
        expected, got = results_arrays(drawn, index, names), stack_repetitions([reps[i] for i in picked])
        cut = 90 > 2 * np.mean([90 if i > 2 else 20 for i in picked])
        assert len(got["fevals_results"]) == (int(np.mean([90 if i > 2 else 20 for i in picked]) * 2) if cut else
                                              max(90 if i > 2 else 20 for i in picked))
        assert set(got) == set(expected)
        for key, array in expected.items():
            np.testing.assert_array_equal(got[key], array, err_msg=f"{picked} {key}")


def test_resampled_scores_are_seeded_and_the_same_through_the_packages_own_arrays(bessel, monkeypatch):
    """Per strategy: `resamples` bootstrap rows of as many runs as it has and two halves; the same again with the same
    seeds, other scores with another seed; and equal to those made with the fast path off (the package's
    write_results on the drawn runs)."""
    from analysis.indicators.methodology import resampled_scores

    settings = ScoreSettings(time_resolution=100)
    space, objective = bessel, "time"
    runs = {"cheap": _oracle_runs(bessel, repetitions=6, length=40, seed=5, best_first=False)}
    first = resampled_scores(space, objective, runs, settings, {"cheap": 7}, resamples=5)
    assert list(first["sample"]) == ["bootstrap"] * 5 + ["half"] * 2
    assert list(first["runs"]) == [6] * 5 + [3] * 2
    pd.testing.assert_frame_equal(first, resampled_scores(space, objective, runs, settings, {"cheap": 7}, resamples=5))
    other = resampled_scores(space, objective, runs, settings, {"cheap": 8}, resamples=5)
    assert not np.array_equal(other["score"][:5], first["score"][:5])
    assert first["score"][:5].nunique() > 1  # the resamples differ
    monkeypatch.setenv("TSB_STOCK", "scoring")
    stock = resampled_scores(space, objective, runs, settings, {"cheap": 7}, resamples=5)
    pd.testing.assert_frame_equal(stock, first)


def test_runs_in_a_baseline_archives_form_score_as_the_runs_themselves(bessel, tmp_path, monkeypatch):
    """An archive gives a repeat of a configuration of the table back without its parameters and objectives
    (`archive.archived_form`); read back from Parquet (its integer parameters then floats), such runs give the
    package's arrays the full runs give, but for each unnamed repeat's own value (which the package only
    shape-checks), through the fast path and the package's own `write_results` alike, and the same score."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from analysis.indicators.methodology import UNNAMED_REPEAT, record_rows, results_arrays
    from analysis.simulate import archive

    data = space_data(bessel, ["time"])
    frames = []
    for rep, (algorithm, aware) in enumerate([("genetic_algorithm", True), ("pso", False), ("diff_evo", True)]):
        frame = simulate_run(data, algorithm, {"constraint_aware": aware, "maxiter": 8}, len(bessel.table), rep
                             ).to_frame()
        frame.insert(0, "repetition", rep)
        frames.append(frame)
    runs = pd.concat(frames, ignore_index=True)
    relative = f"constraint_aware/runs/{bessel.device}/{bessel.kernel}/mixed.parquet"
    pq.write_table(archive.archived_form(pa.Table.from_pandas(runs, preserve_index=False), relative,
                                         lambda key: bessel), tmp_path / "archived.parquet")
    archived = pd.read_parquet(tmp_path / "archived.parquet")
    index, names = SpaceIndex.of(bessel, "time"), list(bessel.parameters)
    unnamed = record_rows(archived, index, names) == UNNAMED_REPEAT
    np.testing.assert_array_equal(unnamed, ~runs["first_visit"].to_numpy())  # every repeat is of the table's
    assert unnamed.sum() > 10 and archived[f"param.{names[0]}"].dtype == float
    full, ours = results_arrays(runs, index, names), results_arrays(archived, index, names)
    package = _package_arrays(archived, index, names, "time")
    for key in full:
        np.testing.assert_array_equal(ours[key], package[key], err_msg=key)
        if key.startswith("objective_performance_results"):
            continue
        np.testing.assert_array_equal(ours[key], full[key], err_msg=key)
    # the study's own runs and score: the constraint-aware runner's simulated annealing (it repeats), scored
    meta, parquet = tmp_path / "space.json", tmp_path / "space.parquet"
    bessel.save(parquet, meta)
    settings = ScoreSettings(time_resolution=50)
    run(parquet, meta, None, "sa", "simulated_annealing", {}, True, 10, settings, 10.0, tmp_path / "sa.parquet",
        tmp_path / "sa.json")
    pq.write_table(archive.archived_form(pq.read_table(tmp_path / "sa.parquet"), relative, lambda key: bessel),
                   tmp_path / "sa_archived.parquet")
    assert pd.read_parquet(tmp_path / "sa_archived.parquet")[f"param.{names[0]}"].isna().sum() > 5
    strategies = {"sa": {"algorithm": "simulated_annealing", "constraint_aware": True}}
    for stock in ("", "1"):
        monkeypatch.setenv("TSB_STOCK", stock)
        for form in ("sa", "sa_archived"):
            score(parquet, meta, None, strategies, {"sa": tmp_path / f"{form}.parquet"}, settings,
                  tmp_path / f"{form}_s{stock}.parquet", tmp_path / f"{form}_c{stock}.parquet")
        for kind in ("s", "c"):
            pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / f"sa_archived_{kind}{stock}.parquet"),
                                          pd.read_parquet(tmp_path / f"sa_{kind}{stock}.parquet"), check_exact=True)
