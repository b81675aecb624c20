"""Hyperparameter selection and the study tables on crafted indicator data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from analysis import config
from analysis.hyperparams import selection as hyperparams
from analysis.io import write_csv
from analysis.statistics import Bootstrap
from analysis.tables import comparison as tables
from analysis.tables import registry

GRIDS = {"nsga2": {"algorithm": "nsga2", "objective_set": "O3",
                   "options": {"popsize": [20, 40], "mutation_prob": [0.1, 0.2]}}}


def _final(rows):
    """Final-indicator rows: (device, kernel, setting, igd values per repetition)."""
    out = []
    for device, kernel, setting, values in rows:
        for rep, v in enumerate(values):
            out.append({"device": device, "kernel": kernel, "objective_set": "O3", "setting": setting,
                        "algorithm": "nsga2", "budget": 50, "repetition": rep, "igd_plus": v})
    return pd.DataFrame(out)


def _grid_final(y):
    """Grid finals whose per-setting medians are y[label][0] and IQRs y[label][1], on one space."""
    rows = []
    for label, (median, iqr) in y.items():
        rows.append(("d", "k", label, [median - iqr, median - iqr / 2, median, median + iqr / 2, median + iqr]))
    # IQR of [m-i, m-i/2, m, m+i/2, m+i] is i
    return _final(rows)


def test_grid_expansion_labels_and_options():
    settings = hyperparams.expand(GRIDS)
    assert list(settings) == ["hp_nsga2__popsize_20__mutation_prob_0.1", "hp_nsga2__popsize_20__mutation_prob_0.2",
                              "hp_nsga2__popsize_40__mutation_prob_0.1", "hp_nsga2__popsize_40__mutation_prob_0.2"]
    assert settings["hp_nsga2__popsize_40__mutation_prob_0.1"]["options"] == {"popsize": 40, "mutation_prob": 0.1}


def test_selection_takes_the_middle_of_an_odd_front():
    labels = list(hyperparams.expand(GRIDS))
    # front of three on (y1, y2): (1, 3), (2, 2), (3, 1); the fourth (4, 4) is dominated
    y = dict(zip(labels, [(1.0, 3.0), (2.0, 2.0), (3.0, 1.0), (4.0, 4.0)]))
    grid, picks = hyperparams.select(_grid_final(y), hyperparams.expand(GRIDS), seed=0)
    assert grid["on_front"].tolist() == [True, True, True, False]
    assert picks["setting"].tolist() == [labels[1]]
    assert picks["coin"].tolist() == ["none (odd front)"]
    assert (picks["popsize"].item(), picks["mutation_prob"].item()) == (20, 0.2)
    assert picks[["y1", "y2"]].to_numpy().tolist() == [[2.0, 2.0]]


def test_selection_of_an_even_front_is_a_seeded_recorded_coin():
    labels = list(hyperparams.expand(GRIDS))
    y = dict(zip(labels, [(1.0, 4.0), (2.0, 3.0), (3.0, 2.0), (4.0, 1.0)]))
    final, settings = _grid_final(y), hyperparams.expand(GRIDS)
    picks = {seed: hyperparams.select(final, settings, seed)[1].iloc[0] for seed in range(12)}
    assert {p["setting"] for p in picks.values()} == {labels[1], labels[2]}  # both middles occur
    for seed, p in picks.items():
        again = hyperparams.select(final, settings, seed)[1].iloc[0]
        assert (again["setting"], again["coin_seed"]) == (p["setting"], p["coin_seed"])
        assert p["coin"].startswith("heads") == (p["setting"] == labels[1])


def test_y1_averages_devices_first_then_kernels():
    label = "hp_nsga2__popsize_20__mutation_prob_0.1"
    settings = {label: hyperparams.expand(GRIDS)[label]}
    # kernel a on two devices (medians 1 and 3 -> 2), kernel b on one (median 10): y1 = (2 + 10) / 2 = 6,
    # not the flat mean over spaces (14 / 3)
    final = _final([("d1", "a", label, [1.0] * 3), ("d2", "a", label, [3.0] * 3), ("d1", "b", label, [10.0] * 3)])
    grid, _ = hyperparams.select(final, settings, 0)
    assert grid["y1"].item() == pytest.approx(6.0)
    assert grid["y2"].item() == 0.0 and grid["kernels"].item() == 2 and grid["spaces"].item() == 3


def test_picked_options_round_trip_through_the_csv(tmp_path):
    labels = list(hyperparams.expand(GRIDS))
    y = dict(zip(labels, [(1.0, 3.0), (2.0, 2.0), (3.0, 1.0), (4.0, 4.0)]))
    _, picks = hyperparams.select(_grid_final(y), hyperparams.expand(GRIDS), 0)
    write_csv(picks, tmp_path / "h.csv")
    options = hyperparams.picked_options(tmp_path / "h.csv", "nsga2", 50)
    assert options == {"popsize": 20, "mutation_prob": 0.2} and isinstance(options["popsize"], int)
    with pytest.raises(Exception, match="grid 'nsga2' at budget 100"):
        hyperparams.picked_options(tmp_path / "h.csv", "nsga2", 100)


def _runs_and_final(curves):
    """Per-run curves {setting: [(igd per k), ...]} at one budget -> (runs, final) frames."""
    rows = []
    for setting, reps in curves.items():
        for rep, values in enumerate(reps):
            for k, v in enumerate(values, start=1):
                rows.append({"device": "d", "kernel": "k", "objective_set": "O3", "setting": setting,
                             "algorithm": setting, "budget": len(values), "repetition": rep, "k": k,
                             "igd_plus": v, "eval_time_ms": 100.0 * k, "eval_compile_ms": 60.0 * k})
    runs = pd.DataFrame(rows)
    final = runs[runs["k"] == runs["budget"]].copy()
    final["eval_verification_ms"], final["eval_benchmark_ms"] = 10.0 * final["k"], 30.0 * final["k"]
    final["hv"] = 0.0
    final["valid_evaluations"] = final["k"]
    final["evaluations"] = final["k"]
    final["stopped_early"] = False
    return runs, final


def test_speedup_to_rs_quality_and_not_reached_rows():
    runs, final = _runs_and_final({
        "rs": [[5, 4, 3, 2]] * 3,          # q = 2 at budget 4, T_RS = 400
        "nsga2": [[4, 2, 2, 1]] * 3,       # median reaches 2 at k* = 2: T = 200 -> +100 %
        "nsga3": [[5, 5, 4, 3]] * 3,       # never reaches 2
    })
    per_space = tables.speedup(runs, final, "rs", ["nsga2", "nsga3"])
    row = per_space.set_index("setting")
    assert row.loc["nsga2", "k_star"] == 2 and row.loc["nsga2", "speedup_time_pct"] == pytest.approx(100.0)
    assert row.loc["nsga2", "speedup_evals_pct"] == pytest.approx(100.0)
    assert row.loc["nsga3", "status"] == "not reached" and np.isnan(row.loc["nsga3", "speedup_time_pct"])
    per_kernel = tables.speedup_per_kernel(per_space, Bootstrap(200, 0)).set_index("setting")
    assert per_kernel.loc["nsga3", "status"] == "not reached"
    assert per_kernel.loc["nsga2", "status"] == "reached in 1 of 1"


def test_significance_matches_scipy_and_tables_are_reproducible():
    rng = np.random.default_rng(3)
    curves = {"rs": [list(rng.random(4) + 1) for _ in range(8)],
              "nsga2": [list(rng.random(4)) for _ in range(8)],
              "nsga2_unaware": [list(rng.random(4) + 0.5) for _ in range(8)]}
    runs, final = _runs_and_final(curves)
    settings = {"rs": "rs", "nsga2": "nsga2", "nsga2_unaware": "nsga2_unaware"}
    built = registry.build(final, runs, settings, Bootstrap(500, 1))
    sig = built["significance"][0].set_index("setting")
    a = final.loc[final["setting"] == "nsga2", "igd_plus"]
    b = final.loc[final["setting"] == "rs", "igd_plus"]
    assert sig.loc["nsga2", "p_value"] == pytest.approx(mannwhitneyu(a, b).pvalue)
    assert sig.loc["nsga2", "a12"] == 1.0  # every nsga2 run beats every rs run
    assert set(built) >= {"aware_over_unaware", "aware_over_unaware_tests"}
    again = registry.build(final, runs, settings, Bootstrap(500, 1))
    for name, (frame, _, _) in built.items():
        pd.testing.assert_frame_equal(frame, again[name][0])
    assert registry.implied_tables(settings) == [n for n in built]


ALWAYS = ["indicators", "improvement_over_rs", "significance", "eval_time", "eval_time_parts",
          "speedup_to_rs_spaces", "speedup_to_rs"]


@pytest.mark.parametrize("settings, conditional", [
    ({"rs": "rs", "nsga2": "nsga2"}, []),
    ({"rs": "rs", "nsga2": "nsga2", "nsga3": "nsga3"}, ["nsga3_over_nsga2"]),
    ({"rs": "rs", "a": "nsga2", "b": "nsga2", "nsga3": "nsga3"}, []),  # two NSGA-II settings: no Table 3
    ({"rs": "rs", "nsga2": "nsga2", "nsga2_unaware": "nsga2_unaware"}, ["aware_over_unaware",
                                                                         "aware_over_unaware_tests"]),
    ({"rs": "rs", "nsga3_unaware": "nsga3_unaware"}, []),  # an unaware setting without its aware twin
])
def test_build_yields_exactly_the_tables_the_registry_implies(settings, conditional):
    runs, final = _runs_and_final({label: [[3, 2, 1]] * 3 for label in settings})
    built = registry.build(final, runs, settings, Bootstrap(50, 0))
    assert list(built) == registry.implied_tables(settings) == ALWAYS + conditional
    for name, (frame, title, docs) in built.items():
        assert title == registry.TABLES[name].title and docs and len(frame), name


def test_the_configs_imply_the_published_tables_and_every_table_has_a_report_caption():
    def algorithms(path):
        return {k: v["algorithm"] for k, v in config.load(path)["simulation"]["algorithms"].items()}

    full = registry.implied_tables(algorithms(config.ROOT / "config/config.yaml"))
    assert full == list(registry.TABLES)  # every table
    assert {name for name in registry.TABLES if (config.ROOT / "tables" / f"{name}.csv").is_file()} == set(full)
    tiny = registry.implied_tables(algorithms(config.ROOT / "config/test.yaml"))
    assert tiny == full  # the tiny config runs NSGA-II and NSGA-III too
    for table in registry.TABLES.values():
        assert (config.ROOT / "workflow" / table.caption).is_file(), table.name


def test_comparison_needs_one_random_search():
    runs, final = _runs_and_final({"nsga2": [[1, 1]]})
    with pytest.raises(ValueError, match="exactly one random-search"):
        registry.build(final, runs, {"nsga2": "nsga2"}, Bootstrap(100, 0))


def test_means_are_taken_per_scope_of_objective_sets():
    sets = {"O3": ["time", "memory", "mre"], "O5": ["time", "memory", "mre", "nrmse", "nmae"], "time": ["time"]}
    assert tables.scopes(["time", "O5", "O3"], sets) == [
        ("all", ["O3", "O5", "time"]), ("multi-objective", ["O3", "O5"]), ("O3", ["O3"]), ("O5", ["O5"]),
        ("time", ["time"])]
    assert tables.scopes(["O3"], sets) == [("all", ["O3"])]
    assert tables.scopes(["O5", "time"], sets) == [("all", ["O5", "time"]), ("O5", ["O5"]), ("time", ["time"])]

    frames = []
    for objective_set, (rs, nsga2) in {"O3": ([4, 2], [4, 1]), "time": ([4, 4], [4, 3])}.items():
        runs, final = _runs_and_final({"rs": [rs] * 3, "nsga2": [nsga2] * 3})
        frames.append((runs.assign(objective_set=objective_set), final.assign(objective_set=objective_set)))
    runs = pd.concat([r for r, _ in frames], ignore_index=True)
    final = pd.concat([f for _, f in frames], ignore_index=True)
    built = registry.build(final, runs, {"rs": "rs", "nsga2": "nsga2"}, Bootstrap(100, 0), sets)
    table = built["improvement_over_rs"][0].set_index("scope")
    assert table.loc["O3", "thesis_mean_pct"] == pytest.approx(50.0)
    assert table.loc["time", "thesis_mean_pct"] == pytest.approx(25.0)
    assert table.loc["all", "thesis_mean_pct"] == pytest.approx(37.5) and table.loc["all", "n_pairs"] == 2
    assert list(built["eval_time"][0]["scope"]) == ["all", "O3", "time"]


def test_paired_summary_counts_every_pair_and_bounds_the_undefined_ones():
    boot = Bootstrap(300, 4)
    baseline = np.array([0.0, 0.0, 2.0, 4.0, 1.0])
    other = np.array([0.0, 0.5, 1.0, 6.0, 1.0])
    spaces = np.array([f"d{i}/k" for i in range(5)])  # one pair per space
    row = tables.paired_summary(baseline, other, boot, spaces)
    assert list(row) == tables.DIFFERENCE_COLUMNS
    assert (row["n_spaces"], row["n_spaces_in_thesis_mean"]) == (5, 4)
    # both 0: equal (0); baseline 0 only: worse, undefined for the thesis, bounded -1; 2 -> 1: better (+0.5);
    # 4 -> 6: worse (thesis -0.5, bounded -1/3); 1 -> 1: equal
    assert (row["n_pairs"], row["n_better"], row["n_equal"], row["n_worse"]) == (5, 1, 2, 2)
    assert row["n_better"] + row["n_equal"] + row["n_worse"] == row["n_pairs"]
    assert (row["n_undefined"], row["n_in_thesis_mean"]) == (1, 4)
    assert row["thesis_mean_pct"] == pytest.approx(0.0)  # (0 + 50 - 50 + 0) / 4: the -1 pair is left out
    bounded = np.array([0.0, -1.0, 0.5, -1 / 3, 0.0]) * 100
    assert row["bounded_mean_pct"] == pytest.approx(bounded.mean())  # -16.7: the undefined pair counts
    assert row["bounded_sd_pct"] == pytest.approx(bounded.std(ddof=1))
    assert (row["bounded_ci_low_pct"], row["bounded_ci_high_pct"]) == pytest.approx(boot.ci(bounded))
    assert (row["thesis_ci_low_pct"], row["thesis_ci_high_pct"]) == pytest.approx(boot.ci(np.array([0, 50, -50, 0])))
    assert -100 <= row["bounded_ci_low_pct"] <= row["bounded_ci_high_pct"] <= 100
    one = tables.paired_summary(np.array([0.0]), np.array([0.0]), boot, ["d/k"])
    assert (one["n_equal"], one["bounded_mean_pct"]) == (1, 0.0) and np.isnan(one["bounded_sd_pct"])


def _spaces(per_space):
    """runs and final over several spaces: {device: {setting: [per-run curves]}}."""
    frames = [_runs_and_final(curves) for curves in per_space.values()]
    runs = pd.concat([r.assign(device=d) for d, (r, _) in zip(per_space, frames)], ignore_index=True)
    final = pd.concat([f.assign(device=d) for d, (_, f) in zip(per_space, frames)], ignore_index=True)
    return runs, final


SETTINGS = {"rs": "rs", "nsga2": "nsga2", "nsga3": "nsga3", "nsga2_unaware": "nsga2_unaware"}
DIFFERENCE_TABLES = ["improvement_over_rs", "nsga3_over_nsga2", "aware_over_unaware", "eval_time"]


def test_table_3_counts_the_pairs_where_the_baseline_found_the_whole_front():
    runs, final = _spaces({
        "d1": {"rs": [[3, 2]] * 3, "nsga2": [[1, 0]] * 3, "nsga3": [[1, 0.2]] * 3, "nsga2_unaware": [[3, 2]] * 3},
        "d2": {"rs": [[3, 2]] * 3, "nsga2": [[1, 0.4]] * 3, "nsga3": [[1, 0.2]] * 3, "nsga2_unaware": [[3, 2]] * 3},
        "d3": {"rs": [[3, 2]] * 3, "nsga2": [[1, 0]] * 3, "nsga3": [[1, 0]] * 3, "nsga2_unaware": [[3, 3]] * 3},
    })
    built = registry.build(final, runs, SETTINGS, Bootstrap(200, 0))
    t3 = built["nsga3_over_nsga2"][0].set_index("budget").loc[2]
    # d1: NSGA-II found the front, NSGA-III did not (worse, undefined, -100 %); d2: better (+50 %); d3: equal
    assert (t3["n_pairs"], t3["n_better"], t3["n_equal"], t3["n_worse"]) == (3, 1, 1, 1)
    assert (t3["n_undefined"], t3["n_in_thesis_mean"]) == (1, 2)
    assert t3["thesis_mean_pct"] == pytest.approx(25.0)  # the thesis's mean leaves d1 out
    assert t3["bounded_mean_pct"] == pytest.approx((-100 + 50 + 0) / 3)
    ablation = built["aware_over_unaware"][0].set_index("budget").loc[2]
    assert (ablation["n_better"], ablation["n_equal"], ablation["n_worse"]) == (3, 0, 0)
    assert ablation["bounded_mean_pct"] == pytest.approx((100 + 80 + 100) / 3)  # d2: (2 - 0.4) / 2
    # one naming for the four relative-difference tables, and every column documented in its .md
    for name in DIFFERENCE_TABLES:
        frame, _, docs = built[name]
        assert list(frame.columns[:4 + len(tables.DIFFERENCE_COLUMNS)]) == [
            "scope", "setting", "baseline", "budget", *tables.DIFFERENCE_COLUMNS], name
        assert (frame["n_better"] + frame["n_equal"] + frame["n_worse"] == frame["n_pairs"]).all()
        _assert_documented(frame, docs)


def _assert_documented(frame, docs):
    from fnmatch import fnmatch
    keys = [k for key in docs for k in key.split(" / ")]
    undocumented = [c for c in frame.columns if not any(fnmatch(c, k) for k in keys)]
    assert not undocumented, undocumented


def test_speedup_per_kernel_says_what_its_mean_covers_and_gives_a_figure_over_all_pairs():
    nan = np.nan
    per_space = pd.DataFrame(
        [("a", 100.0), ("a", 50.0), ("a", nan),              # 2 of 3 reached: median 50 over all three
         ("b", 30.0), ("b", 10.0), ("b", 20.0), ("b", nan),  # 3 of 4: median of (-inf, 10, 20, 30) = 15
         ("c", 100.0), ("c", nan), ("c", 20.0), ("c", nan),  # half reached: the median is not reached
         ("d", nan)], columns=["kernel", "speedup_time_pct"])
    per_space["device"] = [f"dev{i}" for i in range(len(per_space))]  # one pair per space
    per_space["speedup_evals_pct"] = per_space["speedup_time_pct"] / 2
    per_space["status"] = np.where(per_space["speedup_time_pct"].isna(), "not reached", "reached")
    per_space["setting"] = "nsga2"
    table = tables.speedup_per_kernel(per_space, Bootstrap(100, 0)).set_index("kernel")
    assert table["n_pairs"].tolist() == [3, 4, 4, 1] and table["n_reached"].tolist() == [2, 3, 2, 0]
    assert table["fraction_reached"].tolist() == pytest.approx([2 / 3, 3 / 4, 1 / 2, 0])
    assert table.loc["a", "reached_time_mean_pct"] == pytest.approx(75.0)  # the thesis's mean: reached only
    assert table["all_pairs_time_median_pct"].tolist()[:2] == pytest.approx([50.0, 15.0])
    assert table.loc[["c", "d"], "all_pairs_time_median_pct"].tolist() == [-np.inf, -np.inf]
    assert table.loc["a", "all_pairs_evals_median_pct"] == pytest.approx(25.0)
    assert table.loc["d", "status"] == "not reached" and np.isnan(table.loc["d", "reached_time_mean_pct"])


def test_eval_time_compares_only_runs_that_spent_the_budget():
    rows = []
    def add(device, setting, runs):  # runs: (evaluations, time) at budget 4
        for rep, (evaluations, t) in enumerate(runs):
            rows.append({"device": device, "kernel": "k", "objective_set": "O3", "setting": setting,
                         "budget": 4, "repetition": rep, "evaluations": evaluations, "eval_time_ms": t})
    for device in ("d1", "d2"):
        add(device, "rs", [(4, 400.0)] * 3)
    add("d1", "nsga2", [(2, 100.0), (2, 100.0), (4, 300.0)])  # two runs cut short by the proposal cap
    add("d2", "nsga2", [(3, 150.0)] * 3)                       # no run spent the budget
    row = tables.eval_time(pd.DataFrame(rows), "rs", ["nsga2"], Bootstrap(100, 0)).iloc[0]
    # old behaviour: medians over all runs, 75 % on d1 and 62.5 % on d2
    assert row["n_pairs"] == 1 and row["n_pairs_without_full_run"] == 1
    assert row["thesis_mean_pct"] == pytest.approx(25.0) and row["bounded_mean_pct"] == pytest.approx(25.0)
    assert (row["n_better"], row["n_equal"], row["n_worse"]) == (1, 0, 0)
    assert (row["n_pairs_with_runs_cut_short"], row["runs_cut_short"], row["baseline_runs_cut_short"]) == (2, 5, 0)
    assert row["thesis_mean_all_runs_pct"] == pytest.approx((75.0 + 62.5) / 2)


def _two_sets_per_space(per_space):
    """runs and final with objective sets O3 and O5 on every space: {device: {setting: [per-run curves]}} for O3;
    O5's curves are O3's plus a constant, so each space's two pairs move together."""
    runs, final = _spaces(per_space)
    o5_runs = runs.assign(objective_set="O5", igd_plus=runs["igd_plus"] + 0.5)
    o5_final = final.assign(objective_set="O5", igd_plus=final["igd_plus"] + 0.5)
    return pd.concat([runs, o5_runs], ignore_index=True), pd.concat([final, o5_final], ignore_index=True)


SETS = {"O3": ["time", "memory", "mre"], "O5": ["time", "memory", "mre", "nrmse", "nmae"]}


def test_intervals_over_pairs_resample_spaces_and_say_how_many_stand_behind_a_mean():
    rng = np.random.default_rng(8)
    per_space = {f"d{i}": {"rs": [[3.0, 2.0]] * 3, "nsga2": [[2.0, float(v)]] * 3}
                 for i, v in enumerate(rng.uniform(0.2, 1.8, size=6))}
    runs, final = _two_sets_per_space(per_space)
    boot = Bootstrap(2000, 5)
    built = registry.build(final, runs, {"rs": "rs", "nsga2": "nsga2"}, boot, SETS)
    row = built["improvement_over_rs"][0].set_index("scope").loc["all"]
    assert (row["n_pairs"], row["n_spaces"], row["n_spaces_in_thesis_mean"]) == (12, 6, 6)
    med = final.groupby(["device", "objective_set"])[["setting", "igd_plus"]].apply(
        lambda g: g.groupby("setting")["igd_plus"].median()).sort_index()
    rel = (med["rs"] - med["nsga2"]) / med["rs"] * 100
    spaces = med.index.get_level_values("device") + "/k"
    assert row["thesis_mean_pct"] == pytest.approx(rel.mean())
    # the interval is the cluster bootstrap's over the 6 spaces, not the pair bootstrap's over 12 pairs
    assert (row["thesis_ci_low_pct"], row["thesis_ci_high_pct"]) == pytest.approx(boot.ci(rel.to_numpy(), spaces))
    assert (row["thesis_ci_low_pct"], row["thesis_ci_high_pct"]) != pytest.approx(boot.ci(rel.to_numpy()))
    assert "cluster bootstrap over spaces" in built["improvement_over_rs"][2]["note"]
    t5 = built["eval_time"][0].set_index("scope").loc["all"]
    assert (t5["n_pairs"], t5["n_spaces"]) == (12, 6)


def test_held_out_scopes_leave_out_the_spaces_the_hyperparameters_were_selected_on():
    per_space = {"d0": {"rs": [[3.0, 2.0]] * 3, "nsga2": [[2.0, 0.2]] * 3},   # +90 %: selection spaces
                 "d1": {"rs": [[3.0, 2.0]] * 3, "nsga2": [[2.0, 0.2]] * 3},
                 "d2": {"rs": [[3.0, 2.0]] * 3, "nsga2": [[2.0, 1.0]] * 3},   # +50 %: held out
                 "d3": {"rs": [[3.0, 2.0]] * 3, "nsga2": [[2.0, 1.0]] * 3}}
    runs, final = _two_sets_per_space(per_space)
    settings = {"rs": "rs", "nsga2": "nsga2", "nsga2_unaware": "nsga2_unaware"}
    runs = pd.concat([runs, runs[runs["setting"] == "rs"].assign(setting="nsga2_unaware")], ignore_index=True)
    final = pd.concat([final, final[final["setting"] == "rs"].assign(setting="nsga2_unaware")], ignore_index=True)
    built = registry.build(final, runs, settings, Bootstrap(200, 0), SETS, selection_spaces=["d0/k", "d1/k"])
    for name in ("improvement_over_rs", "eval_time", "aware_over_unaware"):
        # (no multi-objective scope: every set here has several objectives, so it would be `all` again)
        assert built[name][0]["scope"].drop_duplicates().tolist() == [
            "all", "all held-out", "O3", "O3 held-out", "O5", "O5 held-out"], name
    t2 = built["improvement_over_rs"][0]
    t2 = t2[t2["setting"] == "nsga2"].set_index("scope")
    held = t2.loc["all held-out"]
    assert (held["n_pairs"], held["n_spaces"]) == (4, 2)
    assert held["thesis_mean_pct"] == pytest.approx(
        ((2.0 - 1.0) / 2.0 * 2 + (2.5 - 1.5) / 2.5 * 2) / 4 * 100)
    assert t2.loc["all", "thesis_mean_pct"] > held["thesis_mean_pct"]
    assert (t2.loc["O3 held-out", "n_pairs"], t2.loc["O3 held-out", "n_spaces"]) == (2, 2)
    assert "d0/k, d1/k" in built["improvement_over_rs"][2]["note"]
    # no selection spaces, or none among a scope's spaces: no held-out twin
    plain = registry.build(final, runs, settings, Bootstrap(200, 0), SETS)
    assert not plain["improvement_over_rs"][0]["scope"].str.contains("held-out").any()
    other = registry.build(final, runs, settings, Bootstrap(200, 0), SETS, selection_spaces=["elsewhere/k"])
    assert not other["improvement_over_rs"][0]["scope"].str.contains("held-out").any()


def test_table_4_gives_n_per_cell_flags_fewer_than_three_and_resamples_devices():
    rows = []
    for device, kernel, sets in (("cpu", "a", ("O3", "O5")),                        # one space: n = 2
                                 ("cpu", "b", ("O3", "O5")), ("gpu", "b", ("O3", "O5"))):  # two spaces: n = 4
        for oset in sets:
            rows.append({"device": device, "kernel": kernel, "objective_set": oset, "setting": "nsga2",
                         "status": "reached", "speedup_time_pct": 100.0 + len(rows) * 10,
                         "speedup_evals_pct": 50.0 + len(rows)})
    per_space = pd.DataFrame(rows)
    boot = Bootstrap(500, 1)
    table = tables.speedup_per_kernel(per_space, boot, selection_spaces=["cpu/a"]).set_index("kernel")
    assert table["n"].tolist() == [2, 4] and table["n_spaces_reached"].tolist() == [1, 2]
    assert table["n_flag"].tolist() == [tables.SMALL_N_FLAG, ""]
    assert table["n_spaces_held_out"].tolist() == [0, 2]
    # one space: no interval over spaces; two: the cluster bootstrap over the devices
    assert np.isnan(table.loc["a", ["reached_time_ci_low_pct", "reached_time_ci_high_pct"]].astype(float)).all()
    b = per_space[per_space["kernel"] == "b"]
    assert tuple(table.loc["b", ["reached_time_ci_low_pct", "reached_time_ci_high_pct"]]) == pytest.approx(
        boot.ci(b["speedup_time_pct"].to_numpy(), b["device"].to_numpy()))
    assert table.loc["a", "reached_time_sd_pct"] == pytest.approx(np.std([100.0, 110.0], ddof=1))
