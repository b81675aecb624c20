"""The leaderboard's tables (docs/leaderboard.md): every entry's methodology score over the spaces tuned on time.

- `tables/leaderboard.csv`: one row per entry: the mean of its per-space scores with a 95 % interval by a
  bootstrap over spaces, its mean rank, the spaces where it is best, its runs, failures and cost.
- `tables/leaderboard_spaces.csv`: entry x space: the score with the interval from resampling its runs
  (`analysis.indicators.leaderboard`), the rank among the entries scored there, and why a score is missing.
- `tables/pyatf_comparison.csv`: seed 001 §VI-D again: pyATF's techniques against Kernel Tuner's
  constraint-aware strategies with seed 001's hyperparameters, beside seed 001's values (config).
- `tables/leaderboard_pairs.csv`: the critical-difference test over the entries that have a score on every
  counted space (an entry run on fewer spaces, or without a score on some, is named and left out: a complete
  block design needs every entry on every space): Friedman's test over the spaces, then every pair of entries
  by Wilcoxon's signed-rank test, with Holm's correction (Benavoli, Corani and Mangili 2016 advise pairwise
  tests over a mean-rank post-hoc test).

A space whose methodology budget is fewer evaluations than `min_budget_evaluations` is in
leaderboard_spaces (flagged) and in no aggregate, as in the constraint-aware study.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from scipy import stats

from analysis.errors import InputError
from analysis.indicators.leaderboard import read_scores
from analysis.io import write_csv, write_parquet, write_text
from analysis.markdown import to_markdown
from analysis.simulate.registry import resolve_options
from analysis.statistics import Bootstrap, holm, p_text
from analysis.tables.constraint_aware import exclusion

# The entries of each side of seed 001 §VI-D's comparison (Fig. 6): pyATF's techniques against the four
# constraint-aware strategies with seed 001's hyperparameters (the constraint-aware study's aware runs).
PYATF_FAMILY = "pyATF"
CA_SIDE = ("ca_ga_aware", "ca_pso_aware", "ca_de_aware", "ca_firefly_aware")
DE_PAIR = ("ca_de_aware", "pyatf_differential_evolution")


def space_table(scores: pd.DataFrame, entries: Mapping[str, Mapping[str, Any]], min_budget: int) -> pd.DataFrame:
    """leaderboard_spaces: the score rows with the entry's names, the space's exclusion and the rank per space."""
    table = scores.copy()
    table.insert(1, "display", table["entry"].map(lambda e: entries[e]["display"]))
    table.insert(2, "family", table["entry"].map(lambda e: entries[e]["family"]))
    table["excluded"] = table["budget_evaluations"].map(lambda b: exclusion(b, min_budget))
    # rank 1 is the highest score among the entries scored on the space (ties share the mean rank)
    table["rank"] = table.groupby("space")["score"].rank(ascending=False, method="average")
    columns = ["entry", "display", "family", "space", "runs", "failed_runs", "score", "score_ci_low",
               "score_ci_high", "score_resamples", "rank", "budget_evaluations", "excluded", "missing_reason",
               "stopped_early", "stop_reasons", "mean_distinct_evaluations", "rejected_attempts"]
    return table[columns]


def _counted(spaces: pd.DataFrame) -> pd.DataFrame:
    """The rows of spaces in the aggregates (not excluded)."""
    return spaces[spaces["excluded"].fillna("") == ""]


def same_runs(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Entry -> the earlier entry whose algorithm and options, defaults filled in, are its own: a run's seed follows
    its identity, so the two make the same runs (Kernel Tuner's defaults can be a study's tuned settings). Entries
    whose algorithm the registry does not know (a user's file not loaded here) are not compared."""
    seen: dict[str, str] = {}
    twins = {}
    for name, entry in entries.items():
        if entry.get("algorithm") is None:
            continue
        try:
            key = json.dumps([entry["algorithm"], resolve_options(entry["algorithm"], entry["options"])],
                             sort_keys=True, default=str)
        except ValueError:
            continue
        if key in seen:
            twins[name] = seen[key]
        else:
            seen[key] = name
    return twins


def missing_summary(reasons: pd.Series) -> str:
    """Why an entry has no score on some spaces, one clause per kind: spaces with failed runs grouped by the failure
    (with the range of failed runs per space), spaces not run grouped by the entry's budget limit, other reasons."""
    failed: dict[str, list[int]] = {}
    runs: dict[str, str] = {}
    other: dict[str, int] = {}
    for reason in reasons.fillna("no score"):
        head, _, message = reason.partition(" runs failed: ")
        if message:
            count, _, of = head.partition(" of ")
            failed.setdefault(message, []).append(int(count))
            runs[message] = of
            continue
        if reason.startswith("not run: budget "):
            reason = "not run: budget over its " + reason.split(", over its ", 1)[-1]
        other[reason] = other.get(reason, 0) + 1
    clauses = []
    for message, counts in failed.items():
        span = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}–{max(counts)}"
        clauses.append(f"{len(counts)} with failed runs ({span} of {runs[message]} each): {message}")
    clauses += [f"{n} {reason}" for reason, n in other.items()]
    return "; ".join(clauses)


def leaderboard(spaces: pd.DataFrame, entries: Mapping[str, Mapping[str, Any]], boot: Bootstrap,
                costs: Mapping[str, float]) -> pd.DataFrame:
    """One row per entry, best mean score first."""
    counted = _counted(spaces)
    all_spaces = counted["space"].nunique()
    twins = same_runs(entries)
    best = counted.loc[counted.groupby("space")["score"].transform("max") == counted["score"]]
    rows = []
    for name, entry in entries.items():
        mine = counted[counted["entry"] == name]
        scored = mine.dropna(subset=["score"])
        values = scored["score"].to_numpy(dtype=float)
        low, high = boot.ci(values)
        notes = []
        if entry["fewer_runs"]:
            notes.append(f"{entry['repetitions']} runs per space (costly; leaderboard.fewer_runs)")
        if entry.get("max_budget_evaluations") is not None:
            notes.append(f"run only on spaces with budgets up to {entry['max_budget_evaluations']} evaluations "
                         "(costly; leaderboard.fewer_spaces)")
        if len(scored) < all_spaces:
            notes.append(f"no score on {all_spaces - len(scored)} of {all_spaces} spaces: "
                         + missing_summary(mine.loc[mine["score"].isna(), "missing_reason"]))
        if name in twins:
            notes.append(f"the same runs as {entries[twins[name]]['display']} ({twins[name]}): the same algorithm and "
                         "options once Kernel Tuner's defaults are filled in")
        rows.append({
            "entry": name, "display": entry["display"], "family": entry["family"], "kt_name": entry["kt_name"],
            "options": json.dumps(entry["options"], sort_keys=True) if entry["options"] else "Kernel Tuner's defaults",
            "runs_per_space": entry["repetitions"], "n_spaces": len(scored),
            "failed_runs": int(mine["failed_runs"].sum()),
            "mean_score": float(values.mean()) if len(values) else math.nan, "ci_low": low, "ci_high": high,
            "mean_rank": float(scored["rank"].mean()) if len(scored) else math.nan,
            "spaces_best": int((best["entry"] == name).sum()),
            "cost_per_run": costs.get(name, math.nan), "note": "; ".join(notes),
        })
    table = pd.DataFrame(rows)
    return table.sort_values(["mean_score", "entry"], ascending=[False, True], na_position="last",
                             kind="stable").reset_index(drop=True)


def complete_entries(board: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The entries with a score on every counted space (in the board's order), and those with a score on some but
    not all (left out of the pairwise tests)."""
    most = int(board["n_spaces"].max()) if len(board) else 0
    complete = board.loc[(board["n_spaces"] == most) & (most > 0), "entry"].tolist()
    partial = board.loc[(board["n_spaces"] > 0) & (board["n_spaces"] < most), "entry"].tolist()
    return complete, partial


def pairwise(spaces: pd.DataFrame, entries: Sequence[str],
             left_out: Sequence[str] = ()) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Friedman's test over the complete blocks (spaces where every entry in `entries` has a score), then Wilcoxon's
    signed-rank test of every pair over them with Holm's correction. Returns the pairs and the Friedman summary;
    `left_out` (entries not tested, for want of a score on every space) is recorded in both."""
    counted = _counted(spaces)
    wide = counted.pivot(index="space", columns="entry", values="score")[list(entries)]
    complete = wide.dropna()
    summary = {"entries": len(entries), "complete_spaces": len(complete), "friedman_statistic": math.nan,
               "friedman_p": math.nan, "left_out": list(left_out)}
    if len(complete) >= 2 and len(entries) >= 3:
        result = stats.friedmanchisquare(*[complete[e].to_numpy() for e in entries])
        summary.update(friedman_statistic=float(result.statistic), friedman_p=float(result.pvalue))
    ranks = complete.rank(axis=1, ascending=False).mean()
    rows = []
    for i, a in enumerate(entries):
        for b in entries[i + 1:]:
            difference = complete[a] - complete[b]
            p = math.nan
            if len(complete) >= 2 and (difference != 0).any():
                p = float(stats.wilcoxon(complete[a], complete[b]).pvalue)
            rows.append({"entry_a": a, "entry_b": b, "mean_rank_a": float(ranks.get(a, math.nan)),
                         "mean_rank_b": float(ranks.get(b, math.nan)), "median_difference": float(difference.median())
                         if len(complete) else math.nan, "p": p})
    pairs = pd.DataFrame(rows, columns=["entry_a", "entry_b", "mean_rank_a", "mean_rank_b", "median_difference", "p"])
    tested = pairs["p"].notna()
    pairs["p_holm"] = math.nan
    if tested.any():
        pairs.loc[tested, "p_holm"] = holm(pairs.loc[tested, "p"].to_list())
    pairs["significant"] = pairs["p_holm"] < 0.05
    pairs["complete_spaces"] = len(complete)
    pairs["friedman_p"] = summary["friedman_p"]
    pairs["left_out"] = ", ".join(left_out)
    return pairs, summary


def mean_ranks(pairs: pd.DataFrame) -> dict[str, float]:
    """Each entry's mean rank over the complete spaces, as the pairs table has it."""
    a = pairs[["entry_a", "mean_rank_a"]].set_axis(["entry", "rank"], axis=1)
    b = pairs[["entry_b", "mean_rank_b"]].set_axis(["entry", "rank"], axis=1)
    both = pd.concat([a, b]).drop_duplicates("entry")
    return dict(zip(both["entry"], both["rank"].astype(float), strict=True))


def left_out_entries(pairs: pd.DataFrame) -> list[str]:
    """The entries the pairwise tests left out, as the pairs table has them (an empty cell reads back as NaN)."""
    if pairs.empty or "left_out" not in pairs or pd.isna(pairs["left_out"].iloc[0]):
        return []
    return [e for e in str(pairs["left_out"].iloc[0]).split(", ") if e]


def pyatf_comparison(spaces: pd.DataFrame, entries: Mapping[str, Mapping[str, Any]], boot: Bootstrap,
                     seed_001: Mapping[str, Any]) -> pd.DataFrame:
    """Seed 001 §VI-D: the mean score of each side over the spaces where all of its entries have a score, with a
    bootstrap interval over spaces and seed 001's value beside it; then DE against DE per space."""
    counted = _counted(spaces)
    pyatf = [n for n, e in entries.items() if e["family"] == PYATF_FAMILY]
    sides = {"pyATF (6 techniques)": (pyatf, seed_001.get("pyatf_mean")),
             "Kernel Tuner constraint-aware (seed 001 hyperparameters)": (
                 [n for n in CA_SIDE if n in entries], seed_001.get("constraint_aware_mean"))}
    wide = counted.pivot(index="space", columns="entry", values="score")
    rows: list[dict[str, Any]] = []
    members = [n for names, _ in sides.values() for n in names]
    if not members or not set(members) <= set(wide.columns):
        return pd.DataFrame(rows)
    both = wide[members].dropna()
    for side, (names, theirs) in sides.items():
        per_space = both[names].mean(axis=1).to_numpy(dtype=float)
        low, high = boot.ci(per_space)
        rows.append({"row": "mean score", "side": side, "entries": ", ".join(entries[n]["display"] for n in names),
                     "space": "all", "n_spaces": len(both), "score": float(per_space.mean()) if len(both) else math.nan,
                     "ci_low": low, "ci_high": high, "seed_001": theirs,
                     "seed_001_spaces": seed_001.get("spaces")})
    if len(both) >= 2:
        a = both[sides["Kernel Tuner constraint-aware (seed 001 hyperparameters)"][0]].mean(axis=1)
        b = both[pyatf].mean(axis=1)
        low, high = boot.ci((a - b).to_numpy(dtype=float))
        p = float(stats.wilcoxon(a, b).pvalue) if (a != b).any() else math.nan
        rows.append({"row": "difference (constraint-aware - pyATF)", "side": "paired by space", "entries": "",
                     "space": "all", "n_spaces": len(both), "score": float((a - b).mean()), "ci_low": low,
                     "ci_high": high, "wilcoxon_p": p})
    if set(DE_PAIR) <= set(wide.columns):
        ours, theirs = DE_PAIR
        for space, row in wide[list(DE_PAIR)].iterrows():
            rows.append({"row": "DE against DE", "side": f"{entries[ours]['display']} - {entries[theirs]['display']}",
                         "entries": "", "space": space, "n_spaces": 1, "score": row[ours] - row[theirs],
                         "score_kt": row[ours], "score_pyatf": row[theirs]})
    return pd.DataFrame(rows)


def aggregate_curves(curves: pd.DataFrame, spaces: pd.DataFrame) -> pd.DataFrame:
    """Each entry's mean score curve over the counted spaces where it has a score (seed 001 Fig. 6's curve), on the
    common grid of time fractions."""
    counted = _counted(spaces).dropna(subset=["score"])[["entry", "space"]]
    kept = curves.merge(counted, on=["entry", "space"])
    out = kept.groupby(["entry", "time_fraction"], sort=False).agg(score=("score", "mean"),
                                                                   n_spaces=("space", "nunique")).reset_index()
    return out


def user_page(entry: str, board: pd.DataFrame, spaces: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """A user entry's page: its place among every leaderboard entry (by mean score, with the interval, and by mean
    rank) and its score and rank on each space, as a table and a Markdown page."""
    row = board.set_index("entry").loc[entry]
    place = int(board.index[board["entry"] == entry][0]) + 1
    by_rank = board.sort_values(["mean_rank", "entry"], na_position="last").reset_index(drop=True)
    rank_place = int(by_rank.index[by_rank["entry"] == entry][0]) + 1
    mine = spaces[spaces["entry"] == entry][["space", "score", "score_ci_low", "score_ci_high", "rank", "excluded",
                                            "missing_reason"]]
    n = len(board)
    summary = (f"{row['display']}: place {place} of {n} by mean score ({row['mean_score']:.3f}, 95 % interval "
               f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}] over {int(row['n_spaces'])} spaces), place {rank_place} "
               f"of {n} by mean rank ({row['mean_rank']:.2f}); best on {int(row['spaces_best'])} spaces. Whether a "
               "difference from another strategy is real: tables/leaderboard_pairs.csv (Wilcoxon, Holm).")
    text = to_markdown(mine, f"{row['display']} on the leaderboard", SPACES_DOCS)
    return mine.assign(entry=entry), text.replace("\n\n", f"\n\n{summary}\n\n", 1)


LEADERBOARD_DOCS = {
    "entry": "The entry's name (results/leaderboard/); a `ca_` entry is the constraint-aware study's strategy.",
    "mean_score": "Mean over spaces of the methodology's performance score (0: the calculated random-search "
                  "baseline; 1: the optimum all along).",
    "ci_low": "95 % percentile interval of the mean by a bootstrap over spaces (tables.bootstrap_resamples).",
    "mean_rank": "Mean over its spaces of its rank among the entries scored there (1: best).",
    "spaces_best": "Spaces where its score is the highest.",
    "cost_per_run": "Wall seconds per run over the seconds of one calibration run (benchmarks/bench_leaderboard.py, "
                    "leaderboard.cost_file; empty for a constraint-aware entry, whose runs that study makes, and "
                    "where not measured).",
    "n_spaces": "Spaces with a score (excluded spaces and spaces with a failed run are not counted).",
}
SPACES_DOCS = {
    "score_ci_low": "95 % percentile interval of the score over bootstrap resamples of the runs "
                    "(leaderboard.score_resamples).",
    "rank": "Rank among the entries scored on the space (1: highest score).",
    "excluded": "Why the space counts in no aggregate (budget under constraint_aware.min_budget_evaluations).",
    "missing_reason": "Why there is no score: the number of failed runs and the first failure's last line.",
}
PYATF_DOCS = {
    "score": "Mean score over the spaces where every entry of both sides has a score; for DE against DE, the "
             "difference of the two scores on the space.",
    "seed_001": "Seed 001's value over its spaces (§VI-D, Fig. 6), from the config (leaderboard.seed_001).",
    "ci_low": "95 % percentile interval by a bootstrap over spaces.",
}
PAIRS_DOCS = {
    "p": "Wilcoxon's signed-rank test over the complete spaces (every tested entry scored); empty where the two "
         "entries' scores are equal on every space.",
    "p_holm": "p with Holm's correction over all pairs with a p.",
    "friedman_p": "Friedman's test of the tested entries over the complete spaces.",
    "left_out": "Entries with a score on some spaces but not all, so in no pair (a complete block design).",
}


def read_costs(path: str | Path) -> dict[str, float]:
    """Entry -> cost per run in calibration runs, from benchmarks/bench_leaderboard.py's CSV; an InputError naming
    the file and the field if a column is missing, an entry repeats or a cost is not a number."""
    frame = pd.read_csv(path)
    for column in ("entry", "cost_per_run"):
        if column not in frame:
            raise InputError(path, f"no column {column!r} (leaderboard.cost_file: the CSV of "
                                   "benchmarks/bench_leaderboard.py)", column)
    repeated = sorted(frame.loc[frame["entry"].duplicated(), "entry"])
    if repeated:
        raise InputError(path, f"entry {repeated[0]!r} appears more than once", "entry")
    costs = pd.to_numeric(frame["cost_per_run"], errors="coerce")
    bad = frame.loc[costs.isna() | (costs < 0), "entry"].tolist()
    if bad:
        raise InputError(path, f"cost_per_run of {bad[0]!r} is not a non-negative number", "cost_per_run")
    return dict(zip(frame["entry"], costs.astype(float), strict=True))


def tables(score_files: Sequence[str | Path], curve_files: Sequence[str | Path],
           entries: Mapping[str, Mapping[str, Any]], out_dir: str | Path, curves_out: str | Path,
           bootstrap_resamples: int, bootstrap_seed: int, min_budget: int, seed_001: Mapping[str, Any],
           cost_file: str | Path | None = None) -> None:
    """Write the leaderboard's tables (CSV and Markdown) to `out_dir` and the aggregate curves to `curves_out`."""
    out_dir = Path(out_dir)
    boot = Bootstrap(bootstrap_resamples, bootstrap_seed)
    costs: dict[str, float] = {}
    if cost_file:
        costs = read_costs(cost_file)
    spaces = space_table(read_scores(score_files, entries), entries, min_budget)
    board = leaderboard(spaces, entries, boot, costs)
    pairs, friedman = pairwise(spaces, *complete_entries(board))
    comparison = pyatf_comparison(spaces, entries, boot, seed_001)
    curves = pd.concat([pd.read_parquet(p) for p in curve_files], ignore_index=True)
    write_csv(board, out_dir / "leaderboard.csv")
    title = (f"Leaderboard: methodology score over {spaces.loc[spaces['excluded'].fillna('') == '', 'space'].nunique()}"
             f" spaces tuned on time (Friedman's test of the {friedman['entries']} entries scored on every one of "
             f"them: {p_text(friedman['friedman_p'])})")
    write_text(to_markdown(board, title, LEADERBOARD_DOCS), out_dir / "leaderboard.md")
    write_csv(spaces, out_dir / "leaderboard_spaces.csv")
    write_text(to_markdown(spaces, "Leaderboard: score per entry and space", SPACES_DOCS),
               out_dir / "leaderboard_spaces.md")
    write_csv(comparison, out_dir / "pyatf_comparison.csv")
    write_text(to_markdown(comparison, "Seed 001 §VI-D again: pyATF's techniques against the constraint-aware "
                                       "strategies", PYATF_DOCS), out_dir / "pyatf_comparison.md")
    write_csv(pairs, out_dir / "leaderboard_pairs.csv")
    write_text(to_markdown(pairs, f"Leaderboard: pairwise tests behind the critical-difference diagram "
                                  f"({friedman['entries']} entries with a score on all {friedman['complete_spaces']} "
                                  f"spaces; left out: {', '.join(friedman['left_out']) or 'none'})", PAIRS_DOCS),
               out_dir / "leaderboard_pairs.md")
    write_parquet(aggregate_curves(curves, spaces), curves_out)
    for entry in (name for name, e in entries.items() if e["family"] == "user"):
        table, text = user_page(entry, board, spaces)
        write_csv(table, out_dir / "summary" / f"leaderboard_{entry}.csv")
        write_text(text, out_dir / "summary" / f"leaderboard_{entry}.md")
