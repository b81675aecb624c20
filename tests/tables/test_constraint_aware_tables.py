"""The constraint-aware study's tables: gains per space, the row sets and their summary, the spaces kept out of
every aggregate, runs that ended by their own iteration limit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis import config as study_config
from analysis.errors import ConfigError, InputError
from analysis.statistics import Bootstrap
from analysis.tables import literature
from analysis.tables.constraint_aware import (
    MAXITER_STOP,
    MIN_BUDGET_EVALUATIONS,
    gains,
    stop_count,
    summary,
    summary_groups,
    tables,
)
from helpers import ca_config


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
    gains_of_seed_001 = literature.values("seed001_gains")
    table = summary(out, Bootstrap(resamples=200, seed=1), gains_of_seed_001).set_index(["group", "algorithm"])
    assert table.loc[("all", "pso"), "spaces_gaining"] == 1 and table.loc[("all", "pso"), "gain"] == pytest.approx(0)
    assert pd.isna(table.loc[("all", "rs"), "spaces_gaining"])  # no gain to count, not zero spaces


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
                                                   "benchmark_hub_more", "GPU tuned on time"]
    rows = table.set_index(["group", "algorithm"])
    gpu = rows.loc[("GPU tuned on time", "pso")]
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
    cfg = study_config.validate(ca_config())
    assert cfg["constraint_aware"]["min_budget_evaluations"] == MIN_BUDGET_EVALUATIONS == 20
    assert study_config.validate(ca_config(min_budget_evaluations=0))["constraint_aware"]["min_budget_evaluations"] == 0
    for bad in (-1, 2.5, "20"):
        with pytest.raises(ConfigError) as exc:
            study_config.validate(ca_config(min_budget_evaluations=bad))
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
    from analysis.kt.budget import STOP_REASONS

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


def _resamples(space, scores, halves=(None, None)):
    """ca_resample rows of one space: strategy -> its bootstrap scores (and the two half-run scores)."""
    rows = []
    for strategy, values in scores.items():
        rows += [{"space": space, "strategy": strategy, "sample": "bootstrap", "resample": b, "runs": 10, "score": v}
                 for b, v in enumerate(values)]
        rows += [{"space": space, "strategy": strategy, "sample": "half", "resample": h, "runs": 5, "score": v}
                 for h, v in enumerate(halves) if v is not None]
    return pd.DataFrame(rows)


def test_per_space_intervals_pair_independent_aware_and_unaware_resamples(tmp_path):
    """The score interval is the 2.5-97.5 percentile of a strategy's resamples; the gain's, of resample b of the aware
    runs minus resample b of the unaware runs (not aware minus unaware intervals); the gains table counts the spaces
    whose gain interval lies above / below 0, not those whose point gain does."""
    rng = np.random.default_rng(0)
    unaware = rng.normal(0.5, 0.05, 200)
    aware_a = unaware + 0.1 + rng.normal(0, 0.01, 200)  # gains 0.1 in every resample: interval above 0
    aware_b = rng.normal(0.51, 0.05, 200)  # point gain 0.01 > 0, but its interval straddles 0
    frames = {"a/x": ({"pso_aware": aware_a, "pso_unaware": unaware, "rs": rng.normal(0, 0.01, 200)}, 0.1),
              "b/y": ({"pso_aware": aware_b, "pso_unaware": unaware, "rs": rng.normal(0, 0.01, 200)}, 0.01)}
    files, curves, resample_files = [], [], []
    for i, (space, (scores, gain)) in enumerate(frames.items()):
        files.append(tmp_path / f"s{i}.parquet")
        _space_scores(space, 0.2 * (i + 1), "time", gain).to_parquet(files[-1])
        curves.append(tmp_path / f"c{i}.parquet")
        pd.DataFrame({"space": [space], "time_fraction": [0.0], "score": [0.0]}).to_parquet(curves[-1])
        for strategy, values in scores.items():
            resample_files.append(tmp_path / f"r{i}{strategy}.parquet")
            _resamples(space, {strategy: values}, (0.7, 0.8)).to_parquet(resample_files[-1])
    tables(files, curves, tmp_path, tmp_path / "curves.parquet", resamples=200, seed=0, resample_files=resample_files)
    per_space = pd.read_csv(tmp_path / "constraint_aware_scores.csv").set_index(["space", "algorithm"])
    a = per_space.loc[("a/x", "pso")]
    assert (a["score_unaware_ci_low"], a["score_unaware_ci_high"]) == pytest.approx(tuple(np.percentile(unaware,
                                                                                                       [2.5, 97.5])))
    assert (a["gain_ci_low"], a["gain_ci_high"]) == pytest.approx(tuple(np.percentile(aware_a - unaware, [2.5, 97.5])))
    assert a["gain_ci_low"] > 0.05  # far narrower than the difference of the two score intervals
    assert a["score_aware_ci_low"] - a["score_unaware_ci_high"] < 0
    b = per_space.loc[("b/y", "pso")]
    assert b["gain"] > 0 and b["gain_ci_low"] < 0 < b["gain_ci_high"]
    assert math.isnan(per_space.loc[("a/x", "rs"), "gain_ci_low"])
    summary_row = pd.read_csv(tmp_path / "constraint_aware_gains.csv").set_index(["group", "algorithm"]).loc[
        ("all", "pso")]
    assert (summary_row["spaces_gaining"], summary_row["spaces_gain_above"], summary_row["spaces_gain_below"]) == \
        (2, 1, 0)
    runs = pd.read_csv(tmp_path / "constraint_aware_runs.csv")
    assert list(runs.columns[list(runs.columns).index("score"):][:7]) == [
        "score", "score_ci_low", "score_ci_high", "score_resamples", "score_first_half", "score_second_half",
        "half_runs"]
    row = runs.set_index(["space", "strategy"]).loc[("b/y", "pso_aware")]
    assert (row["score_first_half"], row["score_second_half"], row["half_runs"], row["score_resamples"]) == \
        (0.7, 0.8, 5, 200)
    assert "spaces_gain_above" in (tmp_path / "constraint_aware_gains.md").read_text()


def test_tables_without_resamples_leave_the_interval_columns_empty(tmp_path):
    per_space, table = _tables(tmp_path, [("A100/convolution", 0.2, "time", 0.1)])
    assert per_space["gain_ci_low"].isna().all() and per_space["score_aware_ci_high"].isna().all()
    assert table["spaces_gain_above"].isna().all()
    assert pd.read_csv(tmp_path / "constraint_aware_runs.csv")["score_ci_low"].isna().all()


def test_resample_files_are_checked_naming_the_file_and_the_strategy(tmp_path):
    scores = tmp_path / "s.parquet"
    _space_scores("a/x", 0.2, "time", 0.1).to_parquet(scores)
    bad = tmp_path / "bad.parquet"
    _resamples("a/x", {"pso_aware": [0.1, 0.2]}).drop(columns="sample").to_parquet(bad)
    with pytest.raises(InputError, match="ca-resample") as exc:
        tables([scores], [scores], tmp_path, tmp_path / "curves.parquet", resamples=10, seed=0, resample_files=[bad])
    assert exc.value.path == str(bad) and exc.value.field == "sample"
    partial = tmp_path / "partial.parquet"
    _resamples("a/x", {"pso_aware": [0.1, 0.2], "rs": [0.0, 0.1]}).to_parquet(partial)
    with pytest.raises(ValueError, match="pso_unaware"):
        tables([scores], [scores], tmp_path, tmp_path / "curves.parquet", resamples=10, seed=0,
               resample_files=[partial])
