"""The constraint-aware study's text: the gains per group of spaces, the spaces kept out, the runs that ended by
their own iteration limit, gain against density, the table per space, and docs/constraint-aware.md's measured
example of how a score moves on half of the runs."""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import binomtest, mannwhitneyu

from analysis import paths
from analysis.tables import literature
from analysis.tables.constraint_aware import GPU_GROUP
from analysis.tables.readme.data import Tables, counted, kept_out, resampled
from analysis.tables.readme.text import interval, name, num, table


def gains_table(t: Tables) -> str:
    """Constraint-aware gain per group of spaces and strategy, and RS's score, over the spaces that count."""
    g = t["constraint_aware_gains"]
    algos = [a for a in dict.fromkeys(g["algorithm"]) if a != "rs"]
    rows = []
    for group in dict.fromkeys(g["group"]):
        part = g[g["group"] == group].set_index("algorithm")
        n = int(part["spaces"].max())
        out = int(part["spaces_excluded"].max()) if "spaces_excluded" in part.columns else 0
        row = [f"{group} ({n}{f'; {out} kept out' if out else ''})"]
        for a in algos:
            r = part.loc[a]
            row.append(f"{interval(r['gain'], r['gain_ci_low'], r['gain_ci_high'], 2)}{spaces_apart(r)}"
                       if int(r["spaces"]) else "–")
        row.append(num(part.loc["rs", "score_aware"], 2) if "rs" in part.index else "–")
        rows.append(row)
    seed = g.drop_duplicates("algorithm").set_index("algorithm")["seed001_gain"]
    rows.append(["seed 001 (published)", *(num(seed[a], 3) for a in algos), ""])
    return table(["spaces", *(name(a) for a in algos), "RS score"], rows)


def spaces_apart(r: pd.Series) -> str:
    """'; k of n above 0, m below' of a gains-table row: the spaces whose own gain interval (over resamples of
    their runs) lies above / below 0; empty where the spaces were not resampled."""
    if pd.isna(r.get("spaces_gain_above", math.nan)):
        return ""
    return f"; {int(r['spaces_gain_above'])} of {int(r['spaces'])} above 0, {int(r['spaces_gain_below'])} below"


def excluded_spaces(t: Tables, docs: str = "docs/constraint-aware.md") -> str:
    """The spaces kept out of the constraint-aware aggregates, each with its budget and RS's score there, why, and
    the groups that lose most of their spaces (`docs`: the path of docs/constraint-aware.md from the rendered file)."""
    sc = t["constraint_aware_scores"]
    if "excluded" not in sc.columns:
        return ""
    out = sc[kept_out(sc)].drop_duplicates("space")
    if out.empty:
        return ""
    runs = t["constraint_aware_runs"]
    rs = runs[runs["algorithm"] == "rs"].set_index("space")["score"]
    parts = []
    for reason, frame in out.sort_values(["budget_evaluations", "space"]).groupby("excluded", sort=False):
        spaces = ", ".join(f"{r['space']} ({int(r['budget_evaluations'])}"
                           + (f"; RS {num(rs[r['space']], 2)}" if r["space"] in rs.index else "") + ")"
                           for _, r in frame.iterrows())
        parts.append(f"*{reason}*: {spaces}")
    text = ("**Spaces kept out** of every mean, count and correlation of the constraint-aware study (column "
            "`excluded` of `tables/constraint_aware_scores.csv`), each with its budget in evaluations and random "
            "search's score there. " + "; ".join(parts) + ". On so few evaluations a score measures the package's "
            "resample-until-accepted rule and noise, not search: a sound random search scores about 0, and does "
            "not there.")
    every = sc.drop_duplicates("space")
    losing = [(group, int(f["space"].isin(out["space"]).sum()), len(f)) for group, f in every.groupby("group")]
    losing = [(group, k, n) for group, k, n in losing if 2 * k > n]
    if losing:
        text += (" " + "; ".join(f"{k} of the {n} spaces of group {group}" for group, k, n in losing)
                 + f" are kept out ([what to do about it]({docs}#spaces-with-too-small-a-budget)).")
    return text


def maxiter_table(t: Tables) -> str:
    """How much of each gain rests on runs that ended by the strategy's own iteration limit."""
    g = t["constraint_aware_gains"]
    if "maxiter_share_aware" not in g.columns:
        return ""
    algos = [a for a in dict.fromkeys(g["algorithm"]) if a != "rs"]
    rows = []
    for group in dict.fromkeys(g["group"]):
        part = g[g["group"] == group].set_index("algorithm")
        row = [f"{group} ({int(part['spaces'].max())})"]
        for a in algos:
            r = part.loc[a]
            if not int(r["spaces"]):
                row.append("–")
                continue
            rest = int(r["spaces"]) - int(r["spaces_maxiter"])
            row.append(f"{num(100 * r['maxiter_share_aware'], 0)} / {num(100 * r['maxiter_share_unaware'], 0)} %; "
                       f"{num(100 * r['real_fraction_aware'], 0)} / {num(100 * r['real_fraction_unaware'], 0)} %; "
                       f"{num(r['gain_without_maxiter'], 2)} over {rest}")
        rows.append(row)
    return "\n\n".join([
        "**Runs that ended by their own iteration limit** (seed 001's `maxiter` values, kept as seed 001 did, "
        "end some runs before the time budget; the score holds such a run's last value to the end of the scored "
        "time range). Per row set and strategy: the runs that ended so, aware / unaware, mean % over spaces; the "
        "share of the scored time range backed by runs, aware / unaware, mean %; and the mean gain without the "
        "spaces where at least half of either's runs ended so, over the spaces left (`maxiter_share_*`, "
        "`real_fraction_*`, `gain_without_maxiter` in `tables/constraint_aware_gains.csv`):",
        table(["spaces", *(name(a) for a in algos)], rows),
    ])


def readme_constraint_aware(t: Tables) -> str:
    return "\n\n".join([
        "**Constraint awareness** (Kernel Tuner's GA, PSO, DE and Firefly with and without "
        "`constraint_aware`, scored with the auto-tuning methodology; `tables/constraint_aware_gains.csv`). "
        "Gain = aware − unaware score, mean over spaces with a 95 % bootstrap interval (over spaces)"
        + ("; and the spaces whose own gain lies above or below 0, by its 95 % interval over resamples of the "
           "space's runs (`gain_ci_low`/`_high` of `tables/constraint_aware_scores.csv`)"
           if resampled(t["constraint_aware_scores"], "gain_ci_low") else "") + ":",
        gains_table(t),
        *filter(None, [excluded_spaces(t), maxiter_table(t), density_gains(t)]),
    ])


def density_gains(t: Tables) -> str:
    """Seed 001's finding revisited: gain against density over the GPU spaces, and GEMM's gain against the rest."""
    g = t["constraint_aware_gains"]
    every = t["constraint_aware_scores"]
    all_gpu = every[every["objective"] == "time"]
    sc = counted(every)
    gpu = sc[sc["objective"] == "time"]
    if gpu.empty:
        return ""
    algos = [a for a in dict.fromkeys(sc["algorithm"]) if a != "rs"]
    # the gains table's row set of exactly the GPU spaces: GPU, or all when every space is one
    row_set = GPU_GROUP if (g["group"] == GPU_GROUP).any() else "all" if len(all_gpu) == len(every) else None
    spaces = gpu["space"].nunique()
    out = all_gpu["space"].nunique() - spaces
    density = literature.values("seed001_density")
    text = (f"**Gain and density** (seed 001 found the largest aware − unaware differences on its sparsest "
            f"spaces, hotspot at {num(density['hotspot'], 1)} % and GEMM at {num(density['GEMM'], 1)} % "
            f"of the Cartesian product valid). The {spaces} GPU spaces here"
            + (f" (without the {out} kept out above)" if out else "") + " are "
            f"{num(100 * gpu['density'].min(), 1)}–{num(100 * gpu['density'].max(), 1)} % valid.")
    if row_set:
        rho = g[g["group"] == row_set].set_index("algorithm")["gain_density_spearman"]
        text += (" Over them, the Spearman correlation of the gain with density is " +
                 ", ".join(f"{name(a)} {num(rho.get(a, math.nan), 2)}" for a in algos) +
                 " (negative: sparser spaces gain more; `gain_density_spearman`).")
    sparse = gpu[gpu["kernel"] == "gemm"]
    if sparse.empty:
        return text
    rest = gpu[gpu["kernel"] != "gemm"]
    apart = resampled(gpu, "gain_ci_low")
    rows = []
    for a in algos:
        sa, ra = sparse[sparse["algorithm"] == a], rest[rest["algorithm"] == a]
        row = [name(a), num(sa["gain"].mean(), 2)]
        if apart:
            row.append(above_below(sa))
        row.append(num(ra["gain"].mean(), 2))
        if apart:
            row.append(above_below(ra))
        rows.append([*row, num(sa["gain"].mean() - ra["gain"].mean(), 2), num(larger_p(sa["gain"], ra["gain"]), 3)])
    dens = sparse["density"].drop_duplicates()
    header = ["algorithm", "GEMM gain", *(["GEMM spaces above / below 0"] if apart else []), "other GPU gain",
              *(["other spaces above / below 0"] if apart else []), "difference", "p (GEMM larger)"]
    return "\n\n".join([
        text + f" Mean gain on the GEMM spaces ({sparse['space'].nunique()}, "
        f"{num(100 * dens.min(), 1)}–{num(100 * dens.max(), 1)} % valid) against the other "
        f"{rest['space'].nunique()} GPU spaces (`tables/constraint_aware_scores.csv`)"
        + ("; the spaces whose own gain interval lies above / below 0" if apart else "")
        + "; and the p-value of a one-sided Mann–Whitney U test that GEMM's gains are larger:",
        table(header, rows),
    ])


def above_below(frame: pd.DataFrame) -> str:
    """'k / m of n': rows of a scores table whose gain interval lies above / below 0."""
    return (f"{int((frame['gain_ci_low'] > 0).sum())} / {int((frame['gain_ci_high'] < 0).sum())} "
            f"of {len(frame)}")


def larger_p(first: pd.Series, second: pd.Series) -> float:
    """p-value of the one-sided Mann–Whitney U test that `first` is stochastically larger than `second` (NaN when
    either has no value)."""
    first, second = first.dropna(), second.dropna()
    if first.empty or second.empty:
        return math.nan
    return float(mannwhitneyu(first, second, alternative="greater").pvalue)


def gain_cell(r: pd.Series) -> str:
    """A space's gain, with its interval over resamples of the runs where the table has one."""
    if pd.isna(r.get("gain_ci_low", math.nan)):
        return num(r["gain"], 2)
    return interval(r["gain"], r["gain_ci_low"], r["gain_ci_high"], 2)


def doc_constraint_aware(t: Tables) -> str:
    sc = t["constraint_aware_scores"]
    runs = t["constraint_aware_runs"]
    algos = [a for a in dict.fromkeys(sc["algorithm"]) if a != "rs"]
    rows = []
    for space, part in sc.groupby("space", sort=False):
        p = part.set_index("algorithm")
        first = p.iloc[0]
        rs = runs[(runs["space"] == space) & (runs["algorithm"] == "rs")]
        budget = runs[runs["space"] == space]["cutoff_fevals"]
        left_out = bool(kept_out(part).any())
        rows.append([space, first["objective"], num(100 * first["density"], 1),
                     (f"{int(budget.min())}" if budget.min() == budget.max()
                      else f"{int(budget.min())}–{int(budget.max())}")
                     + (" (kept out)" if left_out else ""),
                     *(gain_cell(p.loc[a]) if a in p.index else "–" for a in algos),
                     num(rs["score"].iloc[0], 2) if len(rs) else "–"])
    return "\n\n".join([
        "## The constraint-aware study",
        "### Gain per group of spaces (`tables/constraint_aware_gains.csv`)",
        gains_table(t),
        *filter(None, [excluded_spaces(t, "constraint-aware.md"), maxiter_table(t)]),
        "![Score per space with and without constraint awareness, and the gain against density]"
        "(../figures/constraint_aware/spaces.png)",
        "### Per space (`tables/constraint_aware_scores.csv`, `tables/constraint_aware_runs.csv`)",
        "Density: valid share of the Cartesian product, in %. Budget: the methodology's budget in "
        "evaluations (`cutoff_fevals`)" + ("; \"kept out\": a space left out of every aggregate for its small "
                                           "budget (column `excluded`)" if "excluded" in sc.columns else "")
        + ". The gain per strategy"
        + (" with its 95 % interval over resamples of the space's runs" if resampled(sc, "gain_ci_low") else "")
        + ", and random search's score:",
        table(["space", "objective", "density %", "budget", *(name(a) for a in algos), "RS score"], rows),
    ])


# docs/constraint-aware.md's measured example of how a score depends on the number of runs, from
# tables/constraint_aware_runs.csv (each strategy scored on each half of its runs, rule ca_resample)
CA_DOC = paths.DOCS / "constraint-aware.md"


RUNS_BEGIN = ("<!-- run-count:begin: generated by `python -m analysis.cli readme-results` from "
              "tables/constraint_aware_runs.csv; do not edit -->")


RUNS_END = "<!-- run-count:end -->"


def render_run_count(t: Tables) -> str:
    """How the scores of the spaces that count move on half of the runs: per (space, strategy), the score on each
    half of its runs against the score on all of them and its 95 % interval over resamples of the runs, a sign
    test of the direction, and the pair that moves most as the example."""
    runs = t["constraint_aware_runs"]
    if not resampled(runs, "score_first_half"):
        return "Not measured in these tables (rule `ca_resample`, `constraint_aware.score_resamples`)."
    r = counted(runs).dropna(subset=["score", "score_first_half", "score_second_half"])
    if r.empty:
        return "No space that counts has scores on half of its runs."
    first, second, full = r["score_first_half"], r["score_second_half"], r["score"]
    above, below = (first > full) & (second > full), (first < full) & (second < full)
    moved = (first + second) / 2 - full
    sided = int(above.sum() + below.sum())
    test = binomtest(int(above.sum()), sided).pvalue if sided else math.nan
    outside = ((first > r["score_ci_high"]) | (first < r["score_ci_low"])) & \
        ((second > r["score_ci_high"]) | (second < r["score_ci_low"]))
    e = r.loc[moved.abs().idxmax()]
    sizes = f"{int(r['runs'].max())} runs" if r["runs"].nunique() == 1 else f"{int(r['runs'].min())}–" \
        f"{int(r['runs'].max())} runs"
    return (
        f"Measured on the study's {len(r)} (space, strategy) pairs of the spaces that count ({sizes} each; "
        "`score_first_half`, `score_second_half`, `score_ci_low`/`_high` of `tables/constraint_aware_runs.csv`): "
        f"scored on each half of its runs, a strategy scores above its score on all of them on both halves in "
        f"{int(above.sum())} pairs and below on both in {int(below.sum())} (two-sided sign test over those "
        f"{sided}: p = {num(test, 3)}); the mean of the two halves minus the score on all runs is "
        f"{num(moved.median(), 3)} in the median pair ({num(moved.min(), 3)} to {num(moved.max(), 3)}); in "
        f"{int(outside.sum())} pairs both halves lie outside the 95 % interval of the score on all runs. The pair "
        f"that moves most: {e['strategy']} on {e['space']}, {num(e['score_first_half'], 3)} and "
        f"{num(e['score_second_half'], 3)} on its two halves of {int(e['half_runs'])} runs, "
        f"{interval(e['score'], e['score_ci_low'], e['score_ci_high'], 3)} on all {int(e['runs'])}.")
