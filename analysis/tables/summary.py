"""One strategy against the baselines (issue #34): a one-page table per comparison setting.

For a strategy setting S of the comparison, one row per (space, objective set, budget) cell: the
median final IGD+ of S and of the baselines, the relative improvement over RS of S and of NSGA-II and
NSGA-III (the thesis's (m_RS - m_A) / m_RS per cell, as `tables.improvement` averages it), S's rank
among S and the baselines by median, and S against each baseline: two-sided Mann-Whitney U on the
final IGD+, Holm-adjusted within the cell over the baselines, the Vargha-Delaney A12 and a verdict.

The baselines are the comparison's settings by algorithm: `rs` (exactly one such setting is
needed), and `nsga2` and `nsga3` where there is exactly one setting of each. A baseline that is
absent has no columns at all (not NaN-filled columns); the table's notes say which are present.

Runs cut short (fewer evaluations than their budget: the proposal cap or the strategy's own end)
count as `tables.improvement` and `tables.significance` count them: with the final IGD+ of their
last evaluation, in the medians and in the tests alike. They are counted in columns of their own.

Statistics come from `analysis.statistics` (`relative_improvement`, `holm`) and `analysis.tables.comparison`
(`_medians`, `significance` with its Mann-Whitney U and A12, `is_cut_short`); this module only arranges them
per cell.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.io import write_csv, write_text
from analysis.markdown import to_markdown
from analysis.statistics import holm, relative_improvement
from analysis.tables import comparison as tables

log = logging.getLogger(__name__)

ALPHA = 0.05
# Baseline role (its algorithm's registry name) -> the name shown in notes and figures, in column order.
BASELINES = {"rs": "RS", "nsga2": "NSGA-II", "nsga3": "NSGA-III"}
BETTER, WORSE, NO_DIFFERENCE = "better", "worse", "no difference"


def baselines(settings: Mapping[str, str]) -> dict[str, str]:
    """Baseline role (rs, nsga2, nsga3) -> its setting label, from `settings` (comparison label -> algorithm).

    RS is the one setting of algorithm `rs` (none or several: ValueError); NSGA-II and NSGA-III are
    baselines only where exactly one setting has algorithm `nsga2` / `nsga3`, and absent otherwise.
    """
    found = {role: [s for s, a in settings.items() if a == role] for role in BASELINES}
    if len(found["rs"]) != 1:
        raise ValueError(f"the summary needs exactly one random-search setting (algorithm 'rs'), found {found['rs']}")
    return {role: labels[0] for role, labels in found.items() if len(labels) == 1}


def summary_settings(settings: Mapping[str, str]) -> list[str]:
    """The comparison settings that get a summary, in `settings` order: every one that is not a baseline.

    None where the comparison has not exactly one RS setting (nothing to summarise against; the
    study's tables stop on such a comparison anyway).
    """
    try:
        roles = baselines(settings)
    except ValueError:
        return []
    return [s for s in settings if s not in roles.values()]


def verdict(p_holm: float, a12: float, alpha: float = ALPHA) -> str | float:
    """'better' (p_holm < alpha and A12 > 0.5), 'worse' (p_holm < alpha and A12 < 0.5), else 'no difference';
    NaN where there is no test (the baseline has no runs in the cell)."""
    if not (np.isfinite(p_holm) and np.isfinite(a12)):
        return np.nan
    if p_holm < alpha and a12 > 0.5:
        return BETTER
    if p_holm < alpha and a12 < 0.5:
        return WORSE
    return NO_DIFFERENCE


def _tests(final: pd.DataFrame, setting: str, roles: Mapping[str, str]) -> pd.DataFrame:
    """S against each baseline per cell (`tables.significance`, one baseline at a time), Holm over the baselines
    of the cell; one row per cell, columns p_holm_<role> and a12_<role>."""
    parts = []
    for role, label in roles.items():
        sig = tables.significance(final, label, [setting])
        if len(sig):
            parts.append(sig.assign(role=role)[tables.CELL + ["role", "p_value", "a12"]])
    if not parts:
        return pd.DataFrame(columns=tables.CELL).set_index(tables.CELL)
    sig = pd.concat(parts, ignore_index=True)
    sig["p_holm"] = sig.groupby(tables.CELL, observed=True)["p_value"].transform(lambda p: holm(p.to_numpy()))
    wide = sig.set_index(tables.CELL + ["role"])[["p_holm", "a12"]].unstack("role")
    wide.columns = [f"{what}_{role}" for what, role in wide.columns]
    return wide


def build(final: pd.DataFrame, settings: Mapping[str, str], setting: str, alpha: float = ALPHA) -> pd.DataFrame:
    """The summary of `setting` (S) against the baselines of `settings` (comparison label -> algorithm): one row per
    (space, objective set, budget) cell where both S and RS have runs, sorted by cell. Columns: `COLUMN_DOCS`."""
    roles = baselines(settings)
    if setting not in settings:
        raise ValueError(f"'{setting}' is not a comparison setting ({', '.join(settings)})")
    if setting in roles.values():
        raise ValueError(f"'{setting}' is a baseline; summarise one of {summary_settings(settings)}")
    final = final[final["setting"].isin([setting, *roles.values()])]
    med = tables._medians(final, "igd_plus")
    if setting not in med or roles["rs"] not in med:
        raise ValueError(f"no cell has runs of both '{setting}' and RS ('{roles['rs']}')")
    med = med.reindex(columns=[setting, *roles.values()])
    med = med[med[setting].notna() & med[roles["rs"]].notna()]
    counts = final.assign(short=tables.is_cut_short(final)).groupby(tables.CELL + ["setting"], observed=True)
    n_runs = counts.size().unstack("setting").reindex(index=med.index, columns=[setting, *roles.values()])
    short = counts["short"].sum().unstack("setting").reindex(index=med.index, columns=[setting, *roles.values()])

    out = pd.DataFrame(index=med.index)
    out["n_runs"] = n_runs[setting].astype(int)
    out["runs_cut_short"] = short[setting].astype(int)
    out["baseline_runs_cut_short"] = short[list(roles.values())].fillna(0).sum(axis=1).astype(int)
    out["median"] = med[setting]
    for role, label in roles.items():
        out[f"median_{role}"] = med[label]
    rs = med[roles["rs"]].to_numpy()
    out["improvement_pct"] = relative_improvement(rs, med[setting].to_numpy()) * 100
    for role, label in roles.items():
        if role != "rs":
            out[f"improvement_{role}_pct"] = relative_improvement(rs, med[label].to_numpy()) * 100
    ranks = med.rank(axis=1, method="min", ascending=True)
    out["rank"] = ranks[setting].astype(int)
    out["n_ranked"] = med.notna().sum(axis=1).astype(int)
    tests = _tests(final, setting, roles).reindex(med.index)
    for role in roles:
        p = tests.get(f"p_holm_{role}", pd.Series(np.nan, index=med.index)).astype(float)
        a12 = tests.get(f"a12_{role}", pd.Series(np.nan, index=med.index)).astype(float)
        out[f"p_holm_{role}"] = p
        out[f"a12_{role}"] = a12
        out[f"vs_{role}"] = [verdict(pv, av, alpha) for pv, av in zip(p, a12)]
    out = out.reset_index()
    out.insert(0, "setting", setting)
    out["budget"] = out["budget"].astype(int)
    for col in ("device", "kernel", "objective_set"):
        out[col] = out[col].astype(str)
    return out.sort_values(tables.CELL, kind="stable").reset_index(drop=True)


def column_docs(settings: Mapping[str, str], setting: str, alpha: float = ALPHA) -> dict[str, str]:
    """The Markdown table's column notes; the note names the baselines present and absent."""
    roles = baselines(settings)
    present = ", ".join(f"{BASELINES[r]} = setting '{s}'" for r, s in roles.items())
    absent = [BASELINES[r] for r in BASELINES if r not in roles]
    note = (f"S = setting '{setting}' (algorithm {settings[setting]}); baselines: {present}"
            + (f"; absent (no single setting of that algorithm in the comparison, so no columns): "
               f"{', '.join(absent)}" if absent else "") + f"; alpha = {alpha}")
    return {
        "setting": "S, the strategy summarised",
        "device / kernel / objective_set / budget": "the cell: space, objective set and evaluations per run; one row "
                                                   "per cell where both S and RS have runs",
        "n_runs": "runs (repetitions) of S in the cell",
        "runs_cut_short / baseline_runs_cut_short": "runs of S / of the baselines together that ended with fewer "
                                                    "evaluations than the budget (proposal cap or the strategy's own "
                                                    "end); as in tables.improvement they count in the medians and the "
                                                    "tests with the IGD+ of their last evaluation",
        "median / median_*": "median final IGD+ over the runs of S / of the baseline (rs, nsga2, nsga3); NaN where "
                             "the baseline has no runs in the cell",
        "improvement_pct / improvement_*_pct": "relative improvement over RS in % of S / of NSGA-II / of NSGA-III: "
                                               "(m_RS - m) / m_RS x 100 of the medians m, the per-cell value whose "
                                               "mean is thesis_mean_pct of tables/improvement_over_rs.csv; at most "
                                               "100, unbounded below, 0 when both medians are 0, NaN where only "
                                               "m_RS is 0 (behind an RS that found the optimum); > 0 favours the "
                                               "algorithm",
        "rank": "S's rank by median final IGD+ among S and the baselines with runs in the cell: 1 = best; ties "
                "share the best rank of the tie (min, e.g. 1, 1, 3)",
        "n_ranked": "settings ranked: S and the baselines with runs in the cell",
        "p_holm_*": "two-sided Mann-Whitney U of S's final IGD+ against the baseline's (p = 1 where both are the "
                    "same constant), Holm-adjusted within the cell over the baselines with runs there",
        "a12_*": "Vargha-Delaney A12: P(S's IGD+ < the baseline's) + 0.5 P(tie); > 0.5 favours S",
        "vs_*": f"'{BETTER}' where p_holm < {alpha} and A12 > 0.5, '{WORSE}' where p_holm < {alpha} and A12 < 0.5, "
                f"else '{NO_DIFFERENCE}'; empty where the baseline has no runs in the cell",
        "note": note,
    }


def title(settings: Mapping[str, str], setting: str) -> str:
    """The Markdown table's title."""
    names = [BASELINES[r] for r in baselines(settings)]
    return f"{setting} against {', '.join(names)}: final IGD+ per space, objective set and budget"


def run(final_parquet: str | Path, settings: Mapping[str, str], setting: str, csv: str | Path, md: str | Path,
        alpha: float = ALPHA) -> pd.DataFrame:
    """Build the summary of `setting` from the study's final.parquet and write it as CSV and Markdown; returns it."""
    frame = build(pd.read_parquet(final_parquet), settings, setting, alpha)
    write_csv(frame, csv)
    write_text(to_markdown(frame, title(settings, setting), column_docs(settings, setting, alpha)), md)
    counts = frame[[c for c in frame if c.startswith("vs_")]].apply(lambda s: s.value_counts()).fillna(0)
    log.info("summary of %s: %d cells -> %s, %s; verdicts:\n%s", setting, len(frame), csv, md, counts.to_string())
    return frame
