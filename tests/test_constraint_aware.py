"""The constraint-aware study: time-limited runs, the methodology score through autotuning_methodology."""

from __future__ import annotations

import contextlib
import copy
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import config as study_config
from analysis.constraint_aware import (
    MAXITER_STOP,
    MIN_BUDGET_EVALUATIONS,
    feasible_fraction,
    gains,
    objective_values,
    space_group,
    stop_count,
    summary,
    summary_groups,
    tables,
    with_objective,
)
from analysis.errors import ConfigError, InputError
from analysis.indicators.methodology import (
    ScoreSettings,
    SpaceIndex,
    budget,
    calculated_baseline,
    run_accepted,
    score_space,
    space_statistics,
    space_t4,
    strategy_curve,
    trace_records,
    write_space_t4,
)
from analysis.simulate import simulate_run
from analysis.simulate.jobs import space_data
from analysis.spaces.importers import import_space
from analysis.tables.comparison import Bootstrap
from helpers import REPO

ROOT = REPO
SWEEP = ROOT / "data" / "sweeps" / "cpu" / "intel-xeon-vm"


@pytest.fixture(scope="module")
def bessel():
    """The real host-CPU Bessel sweep (448 configurations, constraints on the precision order)."""
    return import_space(SWEEP / "bessel.json.gz", definition=SWEEP / "bessel.yaml", kernel="bessel",
                        device="intel-xeon-vm")


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


def _run(space, algorithm, options, seed, **limits):
    return simulate_run(space_data(space, ["time"]), algorithm, options, len(space.table), seed, **limits)


def test_time_limited_run_stops_on_the_simulated_clock_and_reproduces(bessel):
    options = {"popsize": 10, "maxiter": 200, "method": "single_point", "mutation_chance": 5,
               "constraint_aware": True}
    limit = 20_000.0
    a = _run(bessel, "genetic_algorithm", options, 7, time_limit_ms=limit)
    b = _run(bessel, "genetic_algorithm", options, 7, time_limit_ms=limit)
    assert a.comparable() == b.comparable()
    assert a.meta["stop_reason"] == "time_limit" and not a.stopped_early
    clock = np.asarray(a.sim_time_ms)
    assert clock[-1] > limit and clock[~np.asarray(a.first_visit)].size >= 0
    last_charge = np.flatnonzero(np.asarray(a.first_visit))[-1]
    assert clock[last_charge - 1] <= limit  # the evaluation that crosses the limit is the last one charged


def test_proposal_cap_ends_a_run_and_counts_as_an_early_stop(bessel):
    options = {"popsize": 10, "maxiter": 1000, "method": "single_point", "mutation_chance": 5,
               "constraint_aware": True}
    trace = _run(bessel, "genetic_algorithm", options, 3, time_limit_ms=1e12, max_proposals=50)
    assert trace.meta["stop_reason"] == "proposal_cap" and trace.stopped_early
    assert len(trace) <= 50


def _oracle_runs(space, repetitions=4, length=30, seed=0):
    """Runs that evaluate the optimum first, then random cheap-to-evaluate configurations."""
    rng = np.random.default_rng(seed)
    table = space.table
    ok = table.index[table["status"] == "ok"]
    best = table.loc[ok, "time_ms"].idxmin()
    cost = table[["compile_time_ms", "verification_time_ms", "benchmark_time_ms"]].sum(axis=1).drop(best)
    cheap = cost.nsmallest(3 * length).index  # so that every run has several evaluations in the scored range
    names = list(space.parameters)
    frames = []
    for rep in range(repetitions):
        order = [best, *rng.choice(cheap, size=length - 1, replace=False)]
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


def test_simulated_random_search_follows_the_calculated_baseline_on_its_clock(tmp_path):
    """Simulated RS against the package's calculated RS on benchmark_hub convolution/A100.

    On the suite's clock RS must make as many evaluations per second as the baseline assumes;
    were the units or the charged times off (ms for s, repeats charged), it would not. (The best
    time found is not compared: late in the budget simulated RS is measurably worse than the
    calculated expectation, which is reported, not asserted.)
    """
    from autotuning_methodology.baseline import RandomSearchCalculatedBaseline

    from analysis.constraint_aware import accepted_run
    from analysis.indicators.methodology import budget_for_space

    hub = ROOT / "data" / "benchmark_hub"
    space = import_space(hub / "cachefiles" / "convolution_milo" / "A100.json.gz",
                         definition=hub / "kernels" / "convolution_milo.json", kernel="convolution", device="A100")
    limits = budget_for_space(space, "time", ScoreSettings())
    data = space_data(space, ["time"])
    runs = []
    for rep in range(64):
        trace, _, _ = accepted_run(data, "rs", {}, len(space.table), limits, None, {"test": "rs", "repetition": rep})
        assert run_accepted(trace, limits) and trace.meta["stop_reason"] == "time_limit"
        frame = trace.to_frame()
        frame.insert(0, "repetition", rep)
        runs.append(frame)
    runs = pd.concat(runs, ignore_index=True)
    stats = space_statistics(write_space_t4(space, "time", tmp_path / "t4.json"), "convolution", "A100", "time")
    baseline = RandomSearchCalculatedBaseline(stats)
    per_second = 1.0 / stats.get_time_per_feval("mean_per_feval")
    for t in (100.0, 500.0, 1500.0, 2500.0):
        inside = runs[runs["sim_time_ms"] <= 1e3 * t].groupby("repetition")
        assert inside.size().mean() == pytest.approx(t * per_second, rel=0.06)
        assert baseline.time_to_fevals(np.array([t]))[0] == pytest.approx(t * per_second, abs=1)


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


def test_random_search_runs_as_the_reference_and_cannot_run_unaware(bessel, tmp_path):
    from analysis.constraint_aware import run

    meta = tmp_path / "space.json"
    parquet = tmp_path / "space.parquet"
    bessel.save(parquet, meta)
    settings = ScoreSettings(time_resolution=50)
    run(parquet, meta, None, "rs", "rs", {}, True, 2, settings, 10.0, tmp_path / "rs.parquet", tmp_path / "rs.json")
    runs = pd.read_parquet(tmp_path / "rs.parquet")
    assert sorted(runs["repetition"].unique()) == [0, 1] and runs["first_visit"].all()
    assert set(runs["stop_reason"]) == {"time_limit"}
    with pytest.raises(ValueError, match="cannot run constraint-unaware"):
        run(parquet, meta, None, "rs", "rs", {}, False, 2, settings, 10.0, tmp_path / "x.parquet", tmp_path / "x.json")
    # scored, the space carries its configured group (a column of the scores)
    from analysis.constraint_aware import score

    strategies = {"rs": {"algorithm": "rs", "constraint_aware": True}}
    score(parquet, meta, None, strategies, {"rs": tmp_path / "rs.parquet"}, settings, tmp_path / "s.parquet",
          tmp_path / "c.parquet", group="benchmark_hub_more")
    assert pd.read_parquet(tmp_path / "s.parquet")["group"].tolist() == ["benchmark_hub_more"]


def test_decay_penalty_and_feasible_fraction(bessel):
    threshold = {"tau": -3.5, "error": "mre", "beta": 1.0}
    name, values = objective_values(bessel, threshold)
    table = bessel.table
    log_error = np.log10(table["mre"].to_numpy())
    time_ms = table["time_ms"].to_numpy()
    feasible = log_error < -3.5
    assert name == "time_decay"
    np.testing.assert_allclose(values[feasible], time_ms[feasible])
    np.testing.assert_allclose(values[~feasible], time_ms[~feasible] * np.exp(log_error[~feasible] + 3.5))
    ok = table["status"] == "ok"
    assert feasible_fraction(bessel, threshold) == pytest.approx(np.mean(log_error[ok] < -3.5))
    assert objective_values(bessel, None)[0] == "time"
    derived = with_objective(bessel, name, values)
    assert "time_decay" in derived.objective_columns and "time_decay" not in bessel.objective_columns


def test_gains_pair_aware_and_unaware_per_space():
    rows = []
    for space, density in (("a/x", 0.4), ("b/y", 0.9)):
        for aware, score in ((True, 0.6), (False, 0.2)):
            rows.append({"space": space, "kernel": space[-1], "device": space[0], "objective": "time",
                         "threshold": math.nan, "feasible_fraction": 1.0, "density": density,
                         "algorithm": "pso", "constraint_aware": aware, "score": score if space == "a/x" else -score,
                         "real_fraction": 1.0, "runs": 10, "stop_reasons": "time_limit:10", "cutoff_fevals": 50})
    reference = {**rows[0], "algorithm": "rs", "constraint_aware": True, "score": -0.05}
    out = gains(pd.DataFrame(rows + [reference]))
    pso = out[out["algorithm"] == "pso"]
    assert list(pso["space"]) == ["a/x", "b/y"]
    np.testing.assert_allclose(pso["gain"], [0.4, -0.4])
    # random search has no unaware twin: its score stands alone and it gains nothing
    rs = out[out["algorithm"] == "rs"].iloc[0]
    assert rs["score_aware"] == -0.05 and math.isnan(rs["score_unaware"]) and math.isnan(rs["gain"])

    out["group"] = "time"
    table = summary(out, Bootstrap(resamples=200, seed=1)).set_index(["group", "algorithm"])
    assert table.loc[("all", "pso"), "spaces_gaining"] == 1 and table.loc[("all", "pso"), "gain"] == pytest.approx(0)
    assert pd.isna(table.loc[("all", "rs"), "spaces_gaining"])  # no gain to count, not zero spaces


def _config(**ca):
    return {"spaces": [{"kernel": "convolution", "device": "A100", "source": "x.json"}], "constraint_aware": ca}


def test_config_rejects_constraint_aware_in_options_and_unknown_spaces():
    with pytest.raises(ConfigError, match=r"constraint_aware\.strategies\.ga\.options\.constraint_aware"):
        study_config.validate(_config(strategies={"ga": {"algorithm": "genetic_algorithm",
                                                         "options": {"constraint_aware": True}}}))
    with pytest.raises(ConfigError, match=r"unknown space 'A100/bessel'"):
        study_config.validate(_config(spaces=["A100/bessel"]))
    with pytest.raises(ConfigError, match="popsz"):
        study_config.validate(_config(strategies={"pso": {"algorithm": "pso", "options": {"popsz": 3}}}))
    cfg = study_config.validate(_config(spaces=None, thresholds={"convolution": {"tau": -4}}))
    assert cfg["constraint_aware"]["thresholds"]["convolution"] == {"tau": -4, "error": "mre", "beta": 1.0}
    assert set(cfg["constraint_aware"]["strategies"]) == {"ga", "pso", "de", "firefly"}


def test_a_spaces_group_is_the_configured_one_or_by_what_it_is_tuned_on():
    assert space_group("benchmark_hub_more", None) == "benchmark_hub_more"
    assert space_group("cpu", {"tau": -3.5}) == "cpu"
    assert space_group(None, None) == "time"
    assert space_group(None, {"tau": -3.5, "error": "mre", "beta": 1.0}) == "accuracy threshold"


def _space_scores(space, density, group, gain, objective="time", budget=100, maxiter=(0, 0), real=(1.0, 1.0)):
    """One space's scores as rule ca_score writes them: PSO with and without awareness (gaining `gain`) and RS,
    10 runs each; `maxiter` of the aware and unaware runs ended by PSO's own iteration limit, the rest by time;
    `real`: the aware and unaware share of the scored time range backed by runs; `budget`: in evaluations."""
    device, kernel = space.split("/")
    base = {"space": space, "kernel": kernel, "device": device, "objective": objective,
            "threshold": -3.5 if objective == "time_decay" else math.nan, "feasible_fraction": 1.0,
            "density": density, "runs": 10, "time_limit_s": 1.0, "cutoff_fevals": budget, "group": group}

    def stops(n):
        return ";".join(f"{r}:{k}" for r, k in (("strategy", n), ("time_limit", 10 - n)) if k)

    return pd.DataFrame([
        {**base, "strategy": "pso_aware", "algorithm": "pso", "constraint_aware": True, "score": 0.5 + gain,
         "real_fraction": real[0], "stop_reasons": stops(maxiter[0])},
        {**base, "strategy": "pso_unaware", "algorithm": "pso", "constraint_aware": False, "score": 0.5,
         "real_fraction": real[1], "stop_reasons": stops(maxiter[1])},
        {**base, "strategy": "rs", "algorithm": "rs", "constraint_aware": True, "score": 0.01, "real_fraction": 1.0,
         "stop_reasons": stops(0)},
    ])


def _tables(tmp_path, spaces, **kwargs):
    """The constraint-aware tables of `spaces` (each the arguments of `_space_scores`, or a dict of them):
    (scores, gains) as read back from the CSV files; the runs table and curves stay in `tmp_path`."""
    files, curves = [], []
    for i, args in enumerate(spaces):
        frame = _space_scores(**args) if isinstance(args, dict) else _space_scores(*args)
        files.append(tmp_path / f"s{i}.parquet")
        frame.to_parquet(files[-1])
        curves.append(tmp_path / f"c{i}.parquet")
        pd.DataFrame({"space": [frame["space"].iloc[0]], "time_fraction": [0.0], "score": [0.0]}).to_parquet(curves[-1])
    tables(files, curves, tmp_path, tmp_path / "curves.parquet", resamples=200, seed=0, **kwargs)
    return pd.read_csv(tmp_path / "constraint_aware_scores.csv"), pd.read_csv(tmp_path / "constraint_aware_gains.csv")


def test_tables_group_spaces_as_configured_and_summarise_all_gpu_spaces(tmp_path):
    # four time-tuned (GPU) spaces in two configured groups, gain rising with density, and a thresholded one
    per_space, table = _tables(tmp_path, [
        ("A100/convolution", 0.2, "benchmark_hub", 0.1), ("A100/dedispersion", 0.5, "benchmark_hub", 0.3),
        ("RTX_3090/gemm", 0.7, "benchmark_hub_more", 0.4), ("RTX_3090/pnpoly", 0.9, "benchmark_hub_more", 0.6),
        ("host-cpu/bessel", 0.3, "accuracy threshold", -0.5, "time_decay")])
    pso = per_space[per_space["algorithm"] == "pso"].set_index("space")
    assert pso.loc["RTX_3090/gemm", "group"] == "benchmark_hub_more" and per_space.columns[-1] == "group"
    assert list(dict.fromkeys(table["group"])) == ["all", "accuracy threshold", "benchmark_hub",
                                                   "benchmark_hub_more", "GPU"]
    rows = table.set_index(["group", "algorithm"])
    gpu = rows.loc[("GPU", "pso")]
    assert gpu["spaces"] == 4 and gpu["gain"] == pytest.approx(0.35) and gpu["spaces_gaining"] == 4
    assert gpu["gain_density_spearman"] == pytest.approx(1.0)  # over all four GPU spaces, across the groups
    assert rows.loc[("all", "pso"), "spaces"] == 5 and rows.loc[("all", "pso"), "gain_density_spearman"] < 1.0
    assert math.isnan(rows.loc[("benchmark_hub", "pso"), "gain_density_spearman"])  # two spaces: no correlation
    doc = (tmp_path / "constraint_aware_gains.md").read_text()
    assert "GPU, every space tuned on time" in doc and "on GPU: over all GPU spaces" in doc


def test_no_gpu_row_set_when_it_would_repeat_one_group(tmp_path):
    # the default groups: the GPU spaces are exactly the group `time`
    _, table = _tables(tmp_path, [("A100/convolution", 0.2, "time", 0.1), ("A100/dedispersion", 0.5, "time", 0.3),
                                  ("host-cpu/bessel", 0.3, "accuracy threshold", -0.5, "time_decay")])
    assert list(dict.fromkeys(table["group"])) == ["all", "accuracy threshold", "time"]
    # and when every space is a GPU space, they are all of them
    only = gains(pd.concat([_space_scores("a/x", 0.2, "g1", 0.1), _space_scores("b/y", 0.4, "g2", 0.2)]))
    only["group"] = only["space"].map({"a/x": "g1", "b/y": "g2"})
    assert [g for g, _ in summary_groups(only)] == ["all", "g1", "g2"]


def test_scores_without_a_group_column_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "old.parquet"
    _space_scores("a/x", 0.2, "time", 0.1).drop(columns="group").to_parquet(path)
    with pytest.raises(InputError, match="no column 'group'") as exc:
        tables([path], [path], tmp_path, tmp_path / "curves.parquet", resamples=200, seed=0)
    assert exc.value.path == str(path) and exc.value.field == "group"


REASON = "budget under {} evaluations (constraint_aware.min_budget_evaluations)"


def test_a_space_under_the_minimum_budget_is_flagged_and_counts_in_no_aggregate(tmp_path):
    # budgets 19 (fewer than the default minimum of 20: kept out), 20 (exactly the minimum: counts), 25, 40;
    # group h has only a kept-out space. The kept-out spaces' gains would undo the correlation with density.
    per_space, table = _tables(tmp_path, [
        dict(space="a/small", density=0.2, group="g", gain=0.9, budget=19),
        dict(space="b/edge", density=0.5, group="g", gain=0.1, budget=20),
        dict(space="c/big", density=0.8, group="g", gain=0.3, budget=25),
        dict(space="e/big", density=0.9, group="g", gain=0.5, budget=40),
        dict(space="d/tiny", density=0.6, group="h", gain=-0.8, budget=5),
    ])
    flags = per_space.drop_duplicates("space").set_index("space")["excluded"].fillna("")
    assert flags.to_dict() == {"a/small": REASON.format(20), "b/edge": "", "c/big": "", "d/tiny": REASON.format(20),
                               "e/big": ""}
    budgets = per_space.drop_duplicates("space").set_index("space")["budget_evaluations"]
    assert budgets.to_dict() == {"a/small": 19, "b/edge": 20, "c/big": 25, "d/tiny": 5, "e/big": 40}
    assert per_space.columns[-2:].tolist() == ["excluded", "group"]
    rows = table.set_index(["group", "algorithm"])
    pso = rows.loc[("all", "pso")]
    assert (pso["spaces"], pso["spaces_excluded"], pso["spaces_gaining"]) == (3, 2, 3)
    assert pso["gain"] == pytest.approx(0.3) and pso["score_aware"] == pytest.approx(0.8)
    assert pso["gain_density_spearman"] == pytest.approx(1.0)  # over the three spaces that count
    assert (rows.loc[("all", "rs"), "spaces"], rows.loc[("all", "rs"), "spaces_excluded"]) == (3, 2)
    assert (rows.loc[("g", "pso"), "spaces"], rows.loc[("g", "pso"), "spaces_excluded"]) == (3, 1)
    # a group whose every space is kept out keeps its rows, with nothing counted
    h = rows.loc[("h", "pso")]
    assert (h["spaces"], h["spaces_excluded"]) == (0, 1) and math.isnan(h["gain"]) and pd.isna(h["spaces_gaining"])
    # the runs table and the curves carry the flag too
    runs = pd.read_csv(tmp_path / "constraint_aware_runs.csv")
    assert set(runs.loc[runs["excluded"].notna(), "space"]) == {"a/small", "d/tiny"} and len(runs) == 15
    curves = pd.read_parquet(tmp_path / "curves.parquet").set_index("space")["excluded"]
    assert curves["a/small"] == REASON.format(20) and curves["c/big"] == ""
    docs = (tmp_path / "constraint_aware_gains.md").read_text()
    assert "`spaces_excluded`" in docs and "`gain_without_maxiter`" in docs


@pytest.mark.parametrize("minimum, kept_out", [(0, set()), (19, set()), (20, {"a/x"}), (21, {"a/x", "b/y"}),
                                               (26, {"a/x", "b/y", "c/z"})])
def test_the_minimum_budget_is_configurable(tmp_path, minimum, kept_out):
    per_space, table = _tables(tmp_path, [("a/x", 0.2, "g", 0.1, "time", 19), ("b/y", 0.5, "g", 0.2, "time", 20),
                                          ("c/z", 0.8, "g", 0.3, "time", 25)], min_budget_evaluations=minimum)
    reasons = per_space.drop_duplicates("space").set_index("space")["excluded"].dropna()
    assert set(reasons.index) == kept_out and set(reasons) <= {REASON.format(minimum)}
    pso = table.set_index(["group", "algorithm"]).loc[("all", "pso")]
    assert (pso["spaces"], pso["spaces_excluded"]) == (3 - len(kept_out), len(kept_out))


def test_the_minimum_budget_is_a_config_key_with_a_default_of_20():
    cfg = study_config.validate(_config())
    assert cfg["constraint_aware"]["min_budget_evaluations"] == MIN_BUDGET_EVALUATIONS == 20
    assert study_config.validate(_config(min_budget_evaluations=0))["constraint_aware"]["min_budget_evaluations"] == 0
    for bad in (-1, 2.5, "20"):
        with pytest.raises(ConfigError) as exc:
            study_config.validate(_config(min_budget_evaluations=bad))
        assert exc.value.field == "constraint_aware.min_budget_evaluations"


def test_the_cli_passes_the_minimum_to_the_tables(tmp_path):
    from analysis import cli

    files = []
    for i, (space, evaluations) in enumerate((("a/x", 12), ("b/y", 30))):
        files.append(tmp_path / f"s{i}.parquet")
        _space_scores(space, 0.5, "g", 0.1, budget=evaluations).to_parquet(files[-1])
    curve = tmp_path / "curve.parquet"
    pd.DataFrame({"space": ["a/x"], "time_fraction": [0.0], "score": [0.0]}).to_parquet(curve)
    for minimum, kept_out in ((None, {"a/x"}), ("13", {"a/x"}), ("12", set()), ("31", {"a/x", "b/y"})):
        args = ["ca-tables", "--scores", *map(str, files), "--curves", str(curve), "--out-dir", str(tmp_path),
                "--curves-out", str(tmp_path / "curves.parquet"), "--bootstrap-resamples", "50"]
        cli.main(args + (["--min-budget-evaluations", minimum] if minimum else []))
        scores = pd.read_csv(tmp_path / "constraint_aware_scores.csv")
        assert set(scores.loc[scores["excluded"].notna(), "space"]) == kept_out, minimum


def test_stop_reasons_are_counted_per_reason():
    from analysis.simulate.budget import STOP_REASONS

    assert MAXITER_STOP in STOP_REASONS
    assert stop_count("strategy:74;time_limit:26", "strategy") == 74
    assert stop_count("strategy:74;time_limit:26", "time_limit") == 26
    assert stop_count("time_limit:100", "strategy") == 0
    assert stop_count("proposal_cap:3;strategy:7", "strategy") == 7
    assert stop_count(math.nan, "strategy") == 0


def test_how_much_of_a_gain_rests_on_runs_that_ended_by_their_iteration_limit(tmp_path):
    per_space, table = _tables(tmp_path, [
        # every aware run ended by PSO's iteration limit, and the curve holds its last value after 30 % of the range
        dict(space="a/x", density=0.2, group="g", gain=0.6, maxiter=(10, 4), real=(0.3, 1.0)),
        # half of the unaware runs did: the space counts among those resting on them
        dict(space="b/y", density=0.5, group="g", gain=0.2, maxiter=(2, 5), real=(1.0, 0.9)),
        # fewer than half of either
        dict(space="c/z", density=0.8, group="g", gain=-0.1, maxiter=(4, 1)),
        # kept out (budget): its runs count in no share
        dict(space="d/w", density=0.4, group="g", gain=0.9, maxiter=(10, 10), real=(0.1, 0.1), budget=3),
    ])
    pso = per_space[per_space["algorithm"] == "pso"].set_index("space")
    assert pso.loc["a/x", ["maxiter_share_aware", "maxiter_share_unaware"]].tolist() == [1.0, 0.4]
    assert pso.loc["b/y", ["real_fraction_aware", "real_fraction_unaware"]].tolist() == [1.0, 0.9]
    rows = table.set_index(["group", "algorithm"])
    row = rows.loc[("all", "pso")]
    assert row["maxiter_share_aware"] == pytest.approx((1.0 + 0.2 + 0.4) / 3)
    assert row["maxiter_share_unaware"] == pytest.approx((0.4 + 0.5 + 0.1) / 3)
    assert row["real_fraction_aware"] == pytest.approx((0.3 + 1.0 + 1.0) / 3)
    assert row["real_fraction_unaware"] == pytest.approx((1.0 + 0.9 + 1.0) / 3)
    assert row["gain"] == pytest.approx(0.7 / 3)
    assert row["spaces_maxiter"] == 2 and row["gain_without_maxiter"] == pytest.approx(-0.1)
    rs = rows.loc[("all", "rs")]  # random search stops on time; it has no gain to attribute
    assert rs["maxiter_share_aware"] == 0 and math.isnan(rs["maxiter_share_unaware"])
    assert pd.isna(rs["spaces_maxiter"]) and math.isnan(rs["gain_without_maxiter"])


def test_without_a_space_free_of_iteration_limit_stops_no_gain_is_left(tmp_path):
    _, table = _tables(tmp_path, [("a/x", 0.2, "g", 0.1, "time", 100, (5, 0)),
                                  ("b/y", 0.5, "g", 0.2, "time", 100, (0, 9))])
    row = table.set_index(["group", "algorithm"]).loc[("all", "pso")]
    assert row["spaces_maxiter"] == 2 and math.isnan(row["gain_without_maxiter"])


def test_a_space_budget_written_once_gives_the_same_runs_and_refuses_another_setting(bessel, tmp_path):
    from analysis.constraint_aware import run, space_budget

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
