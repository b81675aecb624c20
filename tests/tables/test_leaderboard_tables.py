"""The leaderboard's tables (analysis.tables.leaderboard) on hand-made scores: aggregates, ranks, the tests behind the
critical-difference diagram (against scipy and a Holm correction computed here), and seed 001's pyATF comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.errors import InputError
from analysis.figures.leaderboard import indistinct_groups
from analysis.statistics import Bootstrap, p_text
from analysis.tables.leaderboard import (
    complete_entries,
    leaderboard,
    left_out_entries,
    mean_ranks,
    missing_summary,
    pairwise,
    pyatf_comparison,
    read_costs,
    same_runs,
    space_table,
    user_page,
)
from helpers import LB_ENTRIES as ENTRIES
from helpers import LB_SPACES as SPACES
from helpers import LB_VALUES as VALUES
from helpers import lb_scores as _scores


def test_aggregates_ranks_and_exclusions() -> None:
    values = {k: list(v) for k, v in VALUES.items()}
    values["c"][1] = math.nan  # a failed run on GPU1
    budgets = [100] * 7 + [5]  # GPU7/k: budget under 20, in no aggregate
    spaces = space_table(_scores(values, budgets), ENTRIES, 20)
    assert spaces.loc[spaces["space"] == "GPU7/k", "excluded"].str.contains("budget under 20").all()
    board = leaderboard(spaces, ENTRIES, Bootstrap(2000, 0), {"a": 1.5}).set_index("entry")
    counted = [s for s in SPACES if s != "GPU7/k"]
    for name in ENTRIES:
        mine = [v for s, v in zip(SPACES, values[name], strict=True) if s in counted and not math.isnan(v)]
        assert board.loc[name, "mean_score"] == pytest.approx(np.mean(mine))
        assert board.loc[name, "n_spaces"] == len(mine)
    assert board.loc["c", "n_spaces"] == 6 and "no score on 1 of 7 spaces" in board.loc["c", "note"]
    wide = pd.DataFrame(values, index=SPACES).loc[counted]
    ranks = wide.rank(axis=1, ascending=False)
    assert board.loc["a", "mean_rank"] == pytest.approx(ranks["a"].mean())
    best = wide.idxmax(axis=1)
    assert board.loc["a", "spaces_best"] == int((best == "a").sum())
    assert board.loc["a", "cost_per_run"] == 1.5 and math.isnan(board.loc["b", "cost_per_run"])
    assert list(board.index) == list(board["mean_score"].sort_values(ascending=False).index)
    low, high = board.loc["a", ["ci_low", "ci_high"]]
    assert low < board.loc["a", "mean_score"] < high


def test_pairwise_tests_are_scipys_with_holms_correction() -> None:
    spaces = space_table(_scores(VALUES), ENTRIES, 20)
    names = list(ENTRIES)
    pairs, friedman = pairwise(spaces, names)
    wide = pd.DataFrame(VALUES, index=SPACES)
    assert friedman["friedman_p"] == pytest.approx(stats.friedmanchisquare(*[wide[n] for n in names]).pvalue)
    raw = {(a, b): stats.wilcoxon(wide[a], wide[b]).pvalue for i, a in enumerate(names) for b in names[i + 1:]}
    got = {(r.entry_a, r.entry_b): r.p for r in pairs.itertuples()}
    assert got == pytest.approx(raw)
    # Holm: sort the m p-values, multiply the k-th smallest by (m - k + 1), carry the running maximum, cap at 1
    m, running, holm = len(raw), 0.0, {}
    for k, (key, p) in enumerate(sorted(raw.items(), key=lambda kv: kv[1])):
        running = max(running, (m - k) * p)
        holm[key] = min(1.0, running)
    assert {(r.entry_a, r.entry_b): r.p_holm for r in pairs.itertuples()} == pytest.approx(holm)
    assert (pairs["significant"] == (pairs["p_holm"] < 0.05)).all()


def test_the_tests_leave_out_an_entry_without_a_score_on_every_space_not_the_spaces() -> None:
    values = {k: list(v) for k, v in VALUES.items()}
    values["c"][1] = math.nan  # c has no score on GPU1: it leaves the tests, GPU1 stays in them
    spaces = space_table(_scores(values), ENTRIES, 20)
    board = leaderboard(spaces, ENTRIES, Bootstrap(200, 0), {})
    tested, left_out = complete_entries(board)
    assert set(tested) == set(ENTRIES) - {"c"} and left_out == ["c"]
    pairs, friedman = pairwise(spaces, tested, left_out)
    wide = pd.DataFrame(values, index=SPACES)
    assert friedman["complete_spaces"] == len(SPACES) and friedman["left_out"] == ["c"]
    assert friedman["friedman_p"] == pytest.approx(stats.friedmanchisquare(*[wide[n] for n in tested]).pvalue)
    assert "c" not in set(pairs["entry_a"]) | set(pairs["entry_b"])
    assert len(pairs) == len(tested) * (len(tested) - 1) // 2
    assert (pairs["left_out"] == "c").all() and (pairs["complete_spaces"] == len(SPACES)).all()


def test_left_out_entries_read_back_from_the_pairs_file(tmp_path) -> None:
    spaces = space_table(_scores(VALUES), ENTRIES, 20)
    for left_out in ([], ["c"], ["c", "b"]):
        tested = [e for e in ENTRIES if e not in left_out]
        pairs, _ = pairwise(spaces, tested, left_out)
        pairs.to_csv(tmp_path / "pairs.csv", index=False)  # an empty cell reads back as NaN
        assert left_out_entries(pd.read_csv(tmp_path / "pairs.csv")) == left_out
    assert left_out_entries(pairs.iloc[0:0]) == []


def test_two_entries_with_equal_scores_everywhere_have_no_test() -> None:
    values = {k: list(v) for k, v in VALUES.items()}
    values["b"] = list(values["a"])
    pairs, _ = pairwise(space_table(_scores(values), ENTRIES, 20), list(ENTRIES))
    same = pairs[(pairs["entry_a"] == "a") & (pairs["entry_b"] == "b")].iloc[0]
    assert math.isnan(same["p"]) and math.isnan(same["p_holm"]) and not same["significant"]
    assert pairs.drop(same.name)["p_holm"].notna().all()


def test_entries_with_the_same_options_once_defaults_are_filled_in_are_named_twins() -> None:
    entries = {
        "diff_evo": {"algorithm": "diff_evo", "options": {}},
        "ca_de": {"algorithm": "diff_evo", "options": {"method": "best1bin", "CR": 0.6, "F": 0.7, "popsize": 16,
                                                      "constraint_aware": True}},
        "ca_de_other": {"algorithm": "diff_evo", "options": {"popsize": 30}},
        "mine": {"algorithm": "/not/loaded/here.py", "options": {}},
        "handmade": {"options": {}},
    }
    assert same_runs(entries) == {"ca_de": "diff_evo"}


def test_missing_scores_are_summarised_by_kind() -> None:
    reasons = pd.Series(["3 of 25 runs failed: ValueError: boom", "12 of 25 runs failed: ValueError: boom",
                         "1 of 25 runs failed: KeyError: 'x'",
                         "not run: budget 1050 evaluations, over its 400 (leaderboard.fewer_spaces)",
                         "not run: budget 598 evaluations, over its 400 (leaderboard.fewer_spaces)", "no runs"])
    assert missing_summary(reasons) == (
        "2 with failed runs (3–12 of 25 each): ValueError: boom; 1 with failed runs (1 of 25 each): KeyError: 'x'; "
        "2 not run: budget over its 400 (leaderboard.fewer_spaces); 1 no runs")


@pytest.mark.parametrize(("text", "message", "field"), [
    ("entry,seconds\na,1\n", "no column 'cost_per_run'", "cost_per_run"),
    ("entry,cost_per_run\na,1\na,2\n", "entry 'a' appears more than once", "entry"),
    ("entry,cost_per_run\na,1\nb,fast\n", "cost_per_run of 'b' is not a non-negative number", "cost_per_run"),
])
def test_a_bad_cost_file_is_refused_with_its_name_and_field(tmp_path, text, message, field) -> None:
    path = tmp_path / "cost.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as error:
        read_costs(path)
    assert str(path) in str(error.value) and error.value.field == field


def test_a_cost_file_gives_each_entry_its_cost(tmp_path) -> None:
    path = tmp_path / "cost.csv"
    path.write_text("entry,cost_per_run,spaces\na,1.5,3\nb,,0\n")
    with pytest.raises(ValueError, match="'b'"):
        read_costs(path)
    path.write_text("entry,cost_per_run,spaces\na,1.5,3\nb,0.25,2\n")
    assert read_costs(path) == {"a": 1.5, "b": 0.25}


def test_p_values_in_sentences() -> None:
    assert p_text(0.0004) == "p < 0.001" and p_text(0.01234) == "p = 0.0123"
    assert p_text(float("nan")) == "p not computed"


def test_critical_difference_bars_join_only_entries_no_test_tells_apart() -> None:
    pairs = pd.DataFrame({"entry_a": ["a", "a", "a", "b", "b", "c"], "entry_b": ["b", "c", "d", "c", "d", "d"],
                          "mean_rank_a": [1.0, 1.0, 1.0, 2.0, 2.0, 3.0], "mean_rank_b": [2.0, 3.0, 4.0, 3.0, 4.0, 4.0],
                          "significant": [False, False, True, False, True, False]})
    ranks = mean_ranks(pairs)
    assert ranks == {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    # a-b-c: no pair apart; a-d and b-d apart, c-d not
    assert indistinct_groups(ranks, pairs) == [("a", "b", "c"), ("c", "d")]


def test_pyatf_comparison_sides_and_de_against_de() -> None:
    spaces = space_table(_scores(VALUES), ENTRIES, 20)
    table = pyatf_comparison(spaces, ENTRIES, Bootstrap(2000, 0), {"constraint_aware_mean": 0.342,
                                                                   "pyatf_mean": -2.361, "spaces": 24})
    means = table[table["row"] == "mean score"].set_index("side")
    ca = means.loc["Kernel Tuner constraint-aware (seed 001 hyperparameters)"]
    assert ca["score"] == pytest.approx(np.mean(VALUES["ca_de_aware"])) and ca["seed_001"] == 0.342
    pyatf = means.loc["pyATF (6 techniques)"]
    assert pyatf["score"] == pytest.approx(np.mean(VALUES["pyatf_differential_evolution"]))
    difference = table[table["row"].str.startswith("difference")].iloc[0]
    assert difference["score"] == pytest.approx(ca["score"] - pyatf["score"])
    assert difference["wilcoxon_p"] == pytest.approx(
        stats.wilcoxon(VALUES["ca_de_aware"], VALUES["pyatf_differential_evolution"]).pvalue)
    de = table[table["row"] == "DE against DE"]
    assert len(de) == len(SPACES)
    assert list(de["score"]) == pytest.approx(list(np.subtract(VALUES["ca_de_aware"],
                                                               VALUES["pyatf_differential_evolution"])))


def test_a_user_entrys_page_gives_its_place_among_every_entry() -> None:
    entries = {**ENTRIES, "mine": {**ENTRIES["b"], "family": "user", "display": "Mine"}}
    values = {**VALUES, "mine": [v + 0.05 for v in VALUES["b"]]}
    spaces = space_table(_scores(values), entries, 20)
    board = leaderboard(spaces, entries, Bootstrap(500, 0), {})
    table, text = user_page("mine", board, spaces)
    place = list(board["entry"]).index("mine") + 1
    assert f"place {place} of {len(entries)} by mean score" in text and text.startswith("# Mine on the leaderboard")
    assert list(table["rank"]) == list(spaces.loc[spaces["entry"] == "mine", "rank"])
