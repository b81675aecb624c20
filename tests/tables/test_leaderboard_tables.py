"""The leaderboard's tables (analysis.tables.leaderboard) on hand-made scores: aggregates, ranks, the tests behind the
critical-difference diagram (against scipy and a Holm correction computed here), and seed 001's pyATF comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.figures.leaderboard import indistinct_groups, mean_ranks
from analysis.statistics import Bootstrap
from analysis.tables.leaderboard import leaderboard, pairwise, pyatf_comparison, space_table, user_page
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
