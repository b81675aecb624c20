"""The constraint-aware single-objective study (STUDY §6, seed 001 §V).

Kernel Tuner's GA, PSO, DE and Firefly run with and without constraint awareness on each space,
time-limited by the auto-tuning methodology's budget, and are scored with its performance score
(`analysis.indicators.methodology`, through `autotuning_methodology`). A benchmark_hub space is tuned on
`time`; a mixed-precision space with an accuracy threshold tau on `time_decay`, the kernel time
with seed 002's decay penalty (§V-C): a configuration whose log10 error is at least tau has its
time multiplied by exp(beta * (log10 error - tau)). This is seed 002's penalised speedup turned
into a time to minimise, so every strategy compares configurations exactly as it would there.

Stages, one call each from the rules: `run` (all repetitions of one strategy with or without
awareness on one space), `score` (every strategy on one space), `tables` (all spaces).

Each space belongs to a group (config `spaces[].group`; by default `time` or `accuracy threshold`
by what it is tuned on), and the gains table summarises all spaces, each group, and the GPU spaces.

A space whose methodology budget is fewer than `constraint_aware.min_budget_evaluations` evaluations
(the calculated random search's evaluations to the cutoff, `cutoff_fevals`) is kept out of every
aggregate: there a score measures the resample-until-accepted rule and noise, not search. Its rows
stay in the tables, flagged in column `excluded` with the reason (empty where the space counts).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from analysis.errors import InputError
from analysis.indicators.methodology import ScoreSettings, budget_for_space, run_accepted, score_runs
from analysis.io import write_csv, write_json, write_parquet, write_text
from analysis.objectives import custom_objective
from analysis.simulate import derive_seed, get_algorithm, resolve_options, simulate_run
from analysis.simulate.jobs import max_proposals, space_data
from analysis.spaces.space import STATUS_OK, Space

if TYPE_CHECKING:  # scipy.stats, which analysis.tables.comparison imports, costs every ca-run job about 0.3 s
    from analysis.tables.comparison import Bootstrap

log = logging.getLogger(__name__)

# Seed 001 (Willemsen et al.), §V-B: score gained by constraint awareness over its 24 spaces.
SEED_001_GAINS = {"genetic_algorithm": 0.801, "pso": 0.478, "diff_evo": 0.047, "firefly_algorithm": 0.245}
PENALISED = "time_decay"
ATTEMPTS = 20  # as the package's runner
# Default groups of a space (config spaces[].group null): by what it is tuned on.
TIME_GROUP, THRESHOLD_GROUP = "time", "accuracy threshold"
# Row sets of the gains table besides the groups (analysis.config.RESERVED_GROUPS keeps spaces off these names):
# every space, and every space tuned on time (the GPU spaces) whatever its group.
ALL_GROUP, GPU_GROUP = "all", "GPU"
# The default of constraint_aware.min_budget_evaluations (workflow/schemas/config.schema.yaml): a space whose
# budget is fewer evaluations than this is kept out of the aggregates.
MIN_BUDGET_EVALUATIONS = 20
# A run's stop reason when the strategy ended it itself, its own iteration limit (maxiter) spent before the
# time budget (analysis.simulate.budget.STOP_REASONS)
MAXITER_STOP = "strategy"


def space_group(group: str | None, threshold: Mapping[str, Any] | None) -> str:
    """The group of a space in the study tables: the configured one, else `accuracy threshold` for a space
    with a threshold (tuned on time_decay) and `time` for one tuned on time."""
    if group:
        return group
    return THRESHOLD_GROUP if threshold else TIME_GROUP


def accepted_run(data: Any, algorithm: str, options: Mapping[str, Any], size: int, limits: Mapping[str, Any],
                 max_proposals: int | None, identity: Mapping[str, Any]) -> tuple[Any, int, int]:
    """One repetition as the package's runner makes it: tuned again (new seed) while it would be rejected.

    Returns (trace, seed, attempts). After 20 rejected attempts the run is an error, as there.
    """
    for attempt in range(ATTEMPTS):
        seed = derive_seed(**identity, attempt=attempt)
        trace = simulate_run(data, algorithm, dict(options), size, seed, time_limit_ms=limits["time_limit_ms"],
                             max_proposals=max_proposals)
        if run_accepted(trace, limits):
            return trace, seed, attempt + 1
    raise RuntimeError(f"{identity}: no run in {ATTEMPTS} attempts had {limits['min_evaluations']} evaluations "
                       f"(two valid) within the scored time range")


def objective_values(space: Space, threshold: Mapping[str, Any] | None) -> tuple[str, np.ndarray]:
    """The objective tuned on `space` and its value per configuration (ms).

    Without a threshold it is the stored `time`; with one ({error, tau, beta}) it is `time_decay`.
    """
    time_ms = space.table[space.objective("time").column].to_numpy(dtype=float)
    if not threshold:
        return "time", time_ms
    error = space.table[space.objective(threshold["error"]).column].to_numpy(dtype=float)
    with np.errstate(divide="ignore"):
        log_error = np.log10(error)
    excess = np.maximum(log_error - float(threshold["tau"]), 0.0)
    # at tau itself the configuration is infeasible (seed 002: feasible iff error < tau) with factor 1
    return PENALISED, time_ms * np.exp(float(threshold["beta"]) * excess)


def with_objective(space: Space, name: str, values: np.ndarray) -> Space:
    """`space` with `name` as a stored objective (a copy when it is derived)."""
    if name in space.objective_columns:
        return space
    table = space.table.copy()
    table[name + "_ms"] = values
    objectives = [*space.objectives, custom_objective(name, "ms", "min")]
    return Space(space.kernel, space.device, dict(space.parameters), list(space.constraints), objectives, table,
                 dict(space.meta), origin=space.origin)


def feasible_fraction(space: Space, threshold: Mapping[str, Any] | None) -> float:
    """Share of measured configurations whose error is below the threshold (1 without one)."""
    measured = space.table["status"] == STATUS_OK
    if not threshold:
        return 1.0
    error = space.table.loc[measured, space.objective(threshold["error"]).column].to_numpy(dtype=float)
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log10(error) < float(threshold["tau"])))


def space_budget(space_parquet: str | Path, space_meta: str | Path, threshold: Mapping[str, Any] | None,
                 settings: ScoreSettings, out: str | Path) -> None:
    """The methodology's time budget of one space (`budget_for_space`), written once for all its strategies."""
    space = Space.load(space_parquet, space_meta)
    objective, values = objective_values(space, threshold)
    limits = budget_for_space(with_objective(space, objective, values), objective, settings)
    write_json({**limits, "objective": objective, "threshold": dict(threshold or {}), "settings": asdict(settings)},
               out)


def read_budget(path: str | Path, objective: str, threshold: Mapping[str, Any] | None,
                settings: ScoreSettings) -> dict[str, Any]:
    """The limits `space_budget` wrote to `path`, checked against the objective, threshold and settings of the run."""
    import json

    try:
        stored = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read the space's budget: {exc}") from None
    expected = {"objective": objective, "threshold": dict(threshold or {}), "settings": asdict(settings)}
    for field, value in expected.items():
        if stored.get(field) != value:
            raise InputError(path, f"is {stored.get(field)!r}, the run has {value!r}; the budget belongs to "
                                   "another study setting (rerun rule ca_budget)", field)
    return {key: value for key, value in stored.items() if key not in expected}


def run(space_parquet: str | Path, space_meta: str | Path, threshold: Mapping[str, Any] | None, name: str,
        algorithm: str, options: Mapping[str, Any], constraint_aware: bool, repetitions: int,
        settings: ScoreSettings, proposal_cap: float, out: str | Path, budget_out: str | Path,
        budget: str | Path | None = None) -> None:
    """All repetitions of one strategy (with or without constraint awareness) on one space.

    Each run is limited by the methodology's time budget on the simulated clock and by
    `proposal_cap` x the space size proposals; its seed comes from its identity. A run the
    package's runner would reject (too few evaluations in the scored time range) is made again
    with the next seed, as there; `attempts` records how many it took. The budget is read from
    `budget` (written by `space_budget`) or, without it, computed here.
    """
    space = Space.load(space_parquet, space_meta)
    objective, values = objective_values(space, threshold)
    space = with_objective(space, objective, values)
    if budget is not None:
        limits = read_budget(budget, objective, threshold, settings)
    else:
        limits = budget_for_space(space, objective, settings)
    # random search draws valid configurations only and has no constraint_aware option
    if "constraint_aware" in get_algorithm(algorithm).options:
        options = {**options, "constraint_aware": bool(constraint_aware)}
    elif not constraint_aware:
        raise ValueError(f"{algorithm} only proposes valid configurations: it cannot run constraint-unaware")
    options = resolve_options(algorithm, options)
    data = space_data(space, [objective])
    size = len(space.table)
    cap = max_proposals(space, proposal_cap)
    columns: dict[str, list] = {}
    started = time.perf_counter()
    for rep in range(repetitions):
        identity = dict(space=f"{space.device}/{space.kernel}", objective=objective, threshold=threshold,
                        algorithm=algorithm, options=options, time_limit_ms=limits["time_limit_ms"], repetition=rep)
        trace, seed, attempts = accepted_run(data, algorithm, options, size, limits, cap, identity)
        # an accepted run has two valid evaluations or more (run_accepted), so no block is empty and the
        # column types are those that concatenating a frame per run gives
        n = len(trace)
        block = {"repetition": [rep] * n, "seed": [seed] * n, **trace.columns(), "attempts": [attempts] * n,
                 "stop_reason": [trace.meta["stop_reason"]] * n, "stopped_early": [trace.stopped_early] * n}
        for key, values in block.items():
            columns.setdefault(key, []).extend(values)
        log.info("%s run %d/%d: %d evaluations (%d distinct), %.0f of %.0f s simulated, stop: %s; %.1f s elapsed",
                 name, rep + 1, repetitions, len(trace), trace.evaluations_spent, trace.sim_time_ms[-1] / 1e3
                 if len(trace) else 0.0, limits["time_limit_ms"] / 1e3, trace.meta["stop_reason"],
                 time.perf_counter() - started)
    runs = pd.DataFrame(columns)
    runs.attrs.update(strategy=name, algorithm=algorithm, constraint_aware=bool(constraint_aware))
    write_parquet(runs, out)
    write_json({**limits, "objective": objective, "threshold": dict(threshold or {}),
                "max_proposals": cap}, budget_out)


def score(space_parquet: str | Path, space_meta: str | Path, threshold: Mapping[str, Any] | None,
          strategies: Mapping[str, Mapping[str, Any]], run_files: Mapping[str, str | Path],
          settings: ScoreSettings, out_scores: str | Path, out_curves: str | Path, group: str | None = None) -> None:
    """Score every strategy's runs on one space; write per-strategy scores and curves.

    `group` is the space's configured group (None: the default of `space_group`), a column of the scores.
    """
    space = Space.load(space_parquet, space_meta)
    objective, values = objective_values(space, threshold)
    space = with_objective(space, objective, values)
    runs = {name: pd.read_parquet(path) for name, path in run_files.items()}
    label = f"{space.device}/{space.kernel}"
    seed = derive_seed(space=label, objective=objective, purpose="methodology score")
    result, limits = score_runs(space, objective, runs, settings, seed)
    counts = space.meta.get("counts", {})
    density = counts.get("constrained", len(space.table)) / counts.get("cartesian", len(space.table))
    group = space_group(group, threshold)
    rows, curves = [], []
    span = result["time_range_s"]
    fraction = np.linspace(0.0, 1.0, len(span))  # the time range is a linspace: the same grid on every space
    for name, scored in result["strategies"].items():
        spec = strategies[name]
        frame = runs[name]
        per_run = frame.groupby("repetition").agg(stopped=("stopped_early", "first"), reason=("stop_reason", "first"),
                                                  distinct=("first_visit", "sum"), attempts=("attempts", "first"))
        rows.append({
            "space": label, "kernel": space.kernel, "device": space.device, "objective": objective,
            "threshold": threshold.get("tau") if threshold else math.nan,
            "feasible_fraction": feasible_fraction(space, threshold), "density": density,
            "strategy": name, "algorithm": spec["algorithm"], "constraint_aware": bool(spec["constraint_aware"]),
            "score": scored["score"], "real_fraction": scored["real_fraction"], "runs": len(per_run),
            "stopped_early": int(per_run["stopped"].sum()),
            "stop_reasons": ";".join(f"{k}:{v}" for k, v in sorted(per_run["reason"].value_counts().items())),
            "mean_distinct_evaluations": float(per_run["distinct"].mean()),
            "rejected_attempts": int(per_run["attempts"].sum() - len(per_run)),
            "time_limit_s": limits["time_limit_ms"] / 1e3, "cutoff_fevals": limits["fevals_end"],
            "group": group,
        })
        curves.append(pd.DataFrame({
            "space": label, "algorithm": spec["algorithm"], "constraint_aware": bool(spec["constraint_aware"]),
            "time_fraction": fraction, "time_s": span, "score": scored["curve"],
            "score_lower": scored["lower"], "score_upper": scored["upper"],
        }))
    write_parquet(pd.DataFrame(rows), out_scores)
    write_parquet(pd.concat(curves, ignore_index=True), out_curves)
    log.info("%s: %s", label, {r["strategy"]: round(r["score"], 3) for r in rows})


def stop_count(reasons: Any, reason: str) -> int:
    """How many runs a `stop_reasons` cell ("reason:count;reason:count", rule ca_score) counts for `reason`."""
    if not isinstance(reasons, str):
        return 0
    for part in filter(None, reasons.split(";")):
        name, _, count = part.partition(":")
        if name == reason:
            return int(count)
    return 0


def exclusion(budget_evaluations: float, minimum: int) -> str:
    """Why a space with this budget (evaluations) is kept out of the aggregates; empty when it counts.

    A budget is too small when it is fewer than `minimum` evaluations (a budget of exactly `minimum` counts).
    """
    if budget_evaluations < minimum:
        return f"budget under {minimum} evaluations (constraint_aware.min_budget_evaluations)"
    return ""


def is_excluded(frame: pd.DataFrame) -> pd.Series:
    """Per row, whether its space is kept out of the aggregates (a non-empty `excluded`; empty reads back as NaN)."""
    return frame["excluded"].notna() & (frame["excluded"].astype(str) != "")


def gains(scores: pd.DataFrame, min_budget_evaluations: int = MIN_BUDGET_EVALUATIONS) -> pd.DataFrame:
    """Per space and algorithm: score with and without awareness and the gain (aware - unaware), the share of
    the scored time range backed by runs and of the runs that ended by the strategy's own iteration limit,
    each with and without awareness, the space's budget in evaluations and, where it is fewer than
    `min_budget_evaluations`, why the space is kept out of the aggregates (`exclusion`).

    Random search (the reference) has only the aware column: it never proposes an invalid
    configuration. Its score checks the calculated baseline (about 0 for a sound random search).
    """
    meta = ["space", "kernel", "device", "objective", "threshold", "feasible_fraction", "density", "algorithm"]
    scores = scores.assign(maxiter_share=[stop_count(r, MAXITER_STOP) / n
                                          for r, n in zip(scores["stop_reasons"], scores["runs"])])
    aware = scores[scores["constraint_aware"]].set_index(["space", "algorithm"])
    unaware = scores[~scores["constraint_aware"]].set_index(["space", "algorithm"])
    if aware.index.duplicated().any() or unaware.index.duplicated().any():
        raise ValueError("more than one strategy per (space, algorithm, awareness)")
    differing = scores.groupby("space")["cutoff_fevals"].nunique() > 1
    if differing.any():
        raise ValueError(f"strategies of one space scored with different budgets: {list(differing[differing].index)}")
    wide = aware[[c for c in meta if c not in ("space", "algorithm")]].copy()
    wide["score_aware"] = aware["score"]
    wide["score_unaware"] = unaware["score"].reindex(wide.index)
    wide["gain"] = wide["score_aware"] - wide["score_unaware"]
    for column in ("real_fraction", "maxiter_share"):
        wide[f"{column}_aware"] = aware[column]
        wide[f"{column}_unaware"] = unaware[column].reindex(wide.index)
    wide["budget_evaluations"] = aware["cutoff_fevals"].astype(int)
    wide["excluded"] = [exclusion(b, min_budget_evaluations) for b in wide["budget_evaluations"]]
    extra = ["real_fraction_aware", "real_fraction_unaware", "maxiter_share_aware", "maxiter_share_unaware",
             "budget_evaluations", "excluded"]
    wide = wide.reset_index()[meta + ["score_aware", "score_unaware", "gain"] + extra]
    return wide.sort_values(["algorithm", "density", "space"], ignore_index=True)


def summary_groups(per_space: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The row sets of the gains table: all spaces, each group (sorted), then GPU, every space tuned on
    time whatever its group, where those spaces are neither all spaces nor exactly one group (it would
    repeat that row set)."""
    groups = [(ALL_GROUP, per_space)] + [(g, f) for g, f in per_space.groupby("group")]
    gpu = per_space[per_space["objective"] != PENALISED]
    if len(gpu) and all(set(gpu["space"]) != set(f["space"]) for _, f in groups):
        groups.append((GPU_GROUP, gpu))
    return groups


def summary(per_space: pd.DataFrame, boot: Bootstrap) -> pd.DataFrame:
    """Per algorithm and row set of `summary_groups`: mean scores and gain over the row set's spaces that are
    not excluded (`gains`), SD, bootstrap CI, Spearman correlation of gain with density, how much of the
    runs ended by the strategy's own iteration limit and the gain without the spaces where most did, and
    seed 001's gain. The row sets are those of every space, excluded or not, so a group whose spaces are
    all excluded keeps its rows (with no spaces and no gain)."""
    rows = []
    for group, frame in summary_groups(per_space):
        excluded = is_excluded(frame)
        for algorithm in dict.fromkeys(frame["algorithm"]):
            f = frame[~excluded & (frame["algorithm"] == algorithm)]
            g = f["gain"].dropna().to_numpy(dtype=float)
            lo, hi = boot.ci(g) if len(g) else (math.nan, math.nan)
            # spaces where at least half the runs of either variant ended by maxiter: there the late part of
            # the scored time range holds the last value of fewer than half of the runs
            maxiter = (f["maxiter_share_aware"] >= 0.5) | (f["maxiter_share_unaware"] >= 0.5)
            rest = f.loc[~maxiter, "gain"].dropna()
            rows.append({
                "group": group, "algorithm": algorithm, "spaces": len(f),
                "spaces_excluded": int((excluded & (frame["algorithm"] == algorithm)).sum()),
                "score_aware": _mean(f["score_aware"]), "score_unaware": _mean(f["score_unaware"]),
                "gain": float(g.mean()) if len(g) else math.nan,
                "gain_sd": float(g.std(ddof=1)) if len(g) > 1 else math.nan,
                "gain_ci_low": lo, "gain_ci_high": hi, "spaces_gaining": int((g > 0).sum()) if len(g) else pd.NA,
                "seed001_gain": SEED_001_GAINS.get(algorithm, math.nan),
                "gain_density_spearman": _spearman(f["density"], f["gain"]),  # NaN for rs: no gains
                "real_fraction_aware": _mean(f["real_fraction_aware"]),
                "real_fraction_unaware": _mean(f["real_fraction_unaware"]),
                "maxiter_share_aware": _mean(f["maxiter_share_aware"]),
                "maxiter_share_unaware": _mean(f["maxiter_share_unaware"]),
                "spaces_maxiter": int(maxiter.sum()) if len(g) else pd.NA,
                "gain_without_maxiter": float(rest.mean()) if len(rest) else math.nan,
            })
    frame = pd.DataFrame(rows)
    for column in ("spaces_gaining", "spaces_maxiter"):  # empty for rs: no gain to count
        frame[column] = frame[column].astype("Int64")
    return frame


def _mean(values: pd.Series) -> float:
    """Mean of the values that are not NaN (NaN when none)."""
    values = values.dropna()
    return float(values.mean()) if len(values) else math.nan


def _spearman(x: pd.Series, y: pd.Series) -> float:
    """Spearman rank correlation (NaN when fewer than three spaces or no spread)."""
    from scipy.stats import spearmanr

    if len(x) < 3 or x.nunique() < 2 or y.nunique() < 2:
        return math.nan
    return float(spearmanr(x, y).statistic)


SCORES_DOCS = {
    "space": "device/kernel", "kernel": "kernel", "device": "device",
    "objective": "objective tuned: time, or time_decay (time with seed 002's decay penalty above the threshold)",
    "threshold": "log10 error threshold tau (empty for time)",
    "feasible_fraction": "share of measured configurations with log10 error below tau",
    "density": "constrained / Cartesian size of the space (seed 001 Table III)",
    "algorithm": "Kernel Tuner strategy (rs: random search, the reference, valid configurations only)",
    "score_aware": "performance score with constraint_aware=True, or of rs (0 = calculated RS baseline, 1 = optimum "
                   "at once)",
    "score_unaware": "performance score with constraint_aware=False (empty for rs)",
    "gain": "score_aware - score_unaware",
    "real_fraction_aware": "share of the scored time range backed by the constraint-aware runs (the package's real "
                           "stopping point: beyond it fewer than half of the runs go on, and the curve holds its "
                           "last value)",
    "real_fraction_unaware": "the same for the constraint-unaware runs (empty for rs)",
    "maxiter_share_aware": "share of the constraint-aware runs that ended by the strategy's own iteration limit "
                           "(stop reason strategy; seed 001's maxiter) before the time budget",
    "maxiter_share_unaware": "the same for the constraint-unaware runs (empty for rs)",
    "budget_evaluations": "the methodology's budget in evaluations: those the calculated random search needs to get "
                          "95 % of the way from the median to the optimum (cutoff_fevals)",
    "excluded": "why the space is kept out of every aggregate (budget_evaluations under "
                "constraint_aware.min_budget_evaluations); empty where it counts",
    "group": "the space's group (config spaces[].group; by default time for a space tuned on time, accuracy "
             "threshold for one with a threshold)",
}
GAINS_DOCS = {
    "group": "spaces summarised: all; each group of the scores table; GPU, every space tuned on time (objective "
             "time, not time_decay) whatever its group, listed when those spaces are neither all spaces nor "
             "exactly one group",
    "algorithm": "Kernel Tuner strategy (rs: random search, the reference; no gain)",
    "spaces": "number of spaces counted: those of the row set that are not excluded (every other column is over "
              "them)",
    "spaces_excluded": "spaces of the row set kept out (budget under constraint_aware.min_budget_evaluations; "
                       "column excluded of the scores table)",
    "score_aware": "mean score over spaces, constraint-aware",
    "score_unaware": "mean score over spaces, constraint-unaware", "gain": "mean gain over spaces",
    "gain_sd": "SD of the gain over spaces",
    "gain_ci_low": "95 % percentile-bootstrap interval of the mean gain, lower end",
    "gain_ci_high": "95 % percentile-bootstrap interval of the mean gain, upper end",
    "spaces_gaining": "spaces where awareness raised the score",
    "seed001_gain": "gain reported by seed 001 over its 24 spaces",
    "gain_density_spearman": "Spearman correlation of the gain with the space density over the spaces of the "
                             "row set (on GPU: over all GPU spaces; empty for fewer than three spaces)",
    "real_fraction_aware": "mean over spaces of the share of the scored time range backed by the constraint-aware "
                           "runs (beyond it the curve holds its last value)",
    "real_fraction_unaware": "the same for the constraint-unaware runs",
    "maxiter_share_aware": "mean over spaces of the share of constraint-aware runs that ended by the strategy's own "
                           "iteration limit (seed 001's maxiter) before the time budget",
    "maxiter_share_unaware": "the same for the constraint-unaware runs",
    "spaces_maxiter": "spaces where at least half of the runs with or without awareness ended by the iteration "
                      "limit",
    "gain_without_maxiter": "mean gain over the other spaces (empty when none): the gain that does not rest on runs "
                            "that ended by their iteration limit",
}


def _read_scores(path: str | Path) -> pd.DataFrame:
    """One space's scores (rule ca_score); an error naming the file when it predates the `group` column."""
    frame = pd.read_parquet(path)
    if "group" not in frame.columns:
        raise InputError(path, "has no column 'group' (written before spaces had groups); score the space again",
                         field="group")
    return frame


def tables(score_files: Sequence[str | Path], curve_files: Sequence[str | Path], out_dir: str | Path,
           curves_out: str | Path, resamples: int, seed: int,
           min_budget_evaluations: int = MIN_BUDGET_EVALUATIONS) -> None:
    """tables/constraint_aware_{runs,scores,gains} (.csv; .md for the last two) and all spaces' curves.

    A space whose budget is fewer than `min_budget_evaluations` evaluations is flagged in column `excluded`
    of the runs and scores tables (and of the curves) and counts in no row of the gains table.
    """
    from analysis.spaces.table import to_markdown

    out_dir = Path(out_dir)
    scores = pd.concat([_read_scores(f) for f in score_files], ignore_index=True)
    per_space = gains(scores, min_budget_evaluations)
    per_space["group"] = per_space["space"].map(scores.groupby("space")["group"].first())
    excluded = per_space.drop_duplicates("space").set_index("space")["excluded"]
    from analysis.tables.comparison import Bootstrap

    summary_frame = summary(per_space, Bootstrap(resamples=resamples, seed=seed))
    scores = scores.sort_values(["space", "algorithm", "constraint_aware"], ignore_index=True)
    scores["excluded"] = scores["space"].map(excluded)
    write_csv(scores, out_dir / "constraint_aware_runs.csv")  # per strategy: score, stops, budget
    write_csv(per_space, out_dir / "constraint_aware_scores.csv")
    write_text(to_markdown(per_space, "Performance score per space, with and without constraint awareness",
                           SCORES_DOCS), out_dir / "constraint_aware_scores.md")
    write_csv(summary_frame, out_dir / "constraint_aware_gains.csv")
    write_text(to_markdown(summary_frame, "Score gained by constraint awareness, mean over spaces", GAINS_DOCS),
               out_dir / "constraint_aware_gains.md")
    curves = pd.concat([pd.read_parquet(f) for f in curve_files], ignore_index=True)
    curves["excluded"] = curves["space"].map(excluded).fillna("")
    write_parquet(curves, curves_out)
