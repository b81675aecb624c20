"""The results in README.md and docs/results.md are rendered from the published tables, not typed."""

from __future__ import annotations

import shutil

import pandas as pd

from analysis import results
from conftest import REPO

README, DOC, TABLES, CONFIG = REPO / "README.md", REPO / "docs/results.md", REPO / "tables", REPO / "config/config.yaml"


def test_committed_results_equal_their_rendering_from_the_committed_tables():
    for path, text in results.expected(README, DOC, TABLES, CONFIG).items():
        assert path.read_text() == text, (
            f"{path.relative_to(REPO)} is not what the tables give: run `python -m analysis.cli readme-results`")


def test_a_hand_edited_number_fails_the_check(tmp_path, capsys):
    readme, doc = tmp_path / "README.md", tmp_path / "results.md"
    shutil.copy(README, readme)
    shutil.copy(DOC, doc)
    assert results.main(readme, doc, TABLES, CONFIG, check=True) == 0
    table2 = pd.read_csv(TABLES / "improvement_over_rs.csv")
    row = table2[(table2["scope"] == "multi-objective") & (table2["setting"] == "nsga2")].iloc[-1]
    typed = results.num(row["thesis_mean_pct"])
    text = readme.read_text()
    assert typed in text
    readme.write_text(text.replace(typed, typed + "1", 1))
    assert results.main(readme, doc, TABLES, CONFIG, check=True) == 1
    assert "README.md: differs" in capsys.readouterr().out


def test_counts_are_computed_from_the_significance_table(tmp_path):
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    sig = pd.read_csv(folder / "significance.csv")
    t = results.Tables(folder, CONFIG)
    row = sig[(sig["setting"] == "nsga2") & (sig["objective_set"] == "time")].iloc[0]
    before = results.significance_table(t, ["time"], ["nsga2"])
    # make one time-only NSGA-II pair at that budget a clear loss to RS
    sig.loc[row.name, ["p_holm", "a12"]] = [0.001, 0.1]
    sig.to_csv(folder / "significance.csv", index=False)
    after = results.significance_table(results.Tables(folder, CONFIG), ["time"], ["nsga2"])
    assert before != after
    cell = after.splitlines()[2].split(" | ")[2 + sorted(sig["budget"].unique()).index(row["budget"])]
    assert "/ 1 of" in cell


def test_numbers_are_rounded_with_a_true_minus_and_no_negative_zero():
    assert results.num(-1.66) == "−1.7"
    assert results.num(-0.04) == "0.0"
    assert results.num(float("nan")) == "–"
    assert results.interval(97.54, 95.46, 1234.5) == "97.5 [95.5, 1,234.5]"


def test_the_thesis_gap_sentence_counts_the_pairs_it_leaves_out(tmp_path):
    """Table 3's prose says how many pairs the thesis's mean drops, and that each is a loss."""
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    t3 = pd.read_csv(folder / "nsga3_over_nsga2.csv")
    top = t3["budget"].max()
    at = (t3["scope"] == "O5") & (t3["setting"] == "nsga3") & (t3["budget"] == top)
    t3.loc[at, ["n_pairs", "n_better", "n_equal", "n_worse", "n_undefined", "n_in_thesis_mean"]] = [9, 4, 2, 3, 3, 6]
    t3.loc[at, ["thesis_mean_pct", "bounded_mean_pct", "bounded_ci_low_pct", "bounded_ci_high_pct"]] = [56.0, 4.0, -48.7, 55.5]
    t3.to_csv(folder / "nsga3_over_nsga2.csv", index=False)
    text = results.thesis_gap(results.Tables(folder, CONFIG), "nsga3_over_nsga2", "O5", "nsga3", "nsga2")
    assert f"At budget {top} on O5, NSGA-III is better than NSGA-II in 4, equal in 2 and worse in 3 of 9 pairs" in text
    assert "covers 6 of them: it leaves out the 3 pairs where NSGA-II found the whole front" in text
    assert "bounded mean is 4.0 % [−48.7, 55.5]" in text


def test_censored_median_ranks_not_reached_last():
    nan = float("nan")
    assert results.censored_median([10.0, 20.0, nan]) == 10.0
    assert results.censored_median([10.0, nan, nan]) == float("-inf")
    assert results.censored_median([30.0, 10.0, 20.0]) == 20.0


def test_gemm_gain_against_the_other_gpu_spaces_is_computed_from_the_scores(tmp_path):
    """The density paragraph: GEMM's mean gain and the other GPU spaces', from the per-space scores."""
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    sc = pd.read_csv(folder / "constraint_aware_scores.csv")
    gpu_spaces = sorted(sc.loc[sc["objective"] == "time", "space"].unique())
    sc.loc[sc["kernel"] == "gemm", "kernel"] = "gemm_elsewhere"  # only the two chosen spaces are GEMM
    gemm = sc["space"].isin(gpu_spaces[:2])
    sc.loc[gemm, "kernel"] = "gemm"
    sc.loc[gemm & (sc["algorithm"] == "pso"), "gain"] = [0.5, 0.25]
    sc.to_csv(folder / "constraint_aware_scores.csv", index=False)
    text = results.density_gains(results.Tables(folder, CONFIG))
    rest = sc[(sc["objective"] == "time") & ~gemm & (sc["algorithm"] == "pso")]["gain"]
    row = next(line for line in text.splitlines() if line.startswith("| PSO |"))
    assert row.split(" | ")[1:3] == ["0.38", "2 of 2"]
    assert row.split(" | ")[3] == results.num(rest.mean(), 2)
    assert f"The {len(gpu_spaces)} GPU spaces here" in text
