"""A check of seed 003's scores against `kernel_tuner.hyper.tune_hyper_params` itself (issue #47, item 3).

Kernel Tuner's hyperparameter tuner scores a configuration of a strategy with its Hypertuner backend: it writes
an experiments file (`autotuning_methodology.experiments.generate_experiment_file`, with the backend's own
settings: 25 repeats, its acceptance rule, cutoff percentiles, every time key) and runs the methodology's
pipeline on it (`get_strategy_scores`), which runs Kernel Tuner in simulation on each space's cache. The suite
scores the same configuration with its own runs (the leaderboard's runner, 25 runs per space) and scoring
(the methodology's score through `autotuning_methodology`; `analysis.hyperparams.single_objective`).

`lay_out` writes suite spaces as the backend reads them, with the export's own writer
(`analysis.spaces.export.write_experiment`: the T1 file, the Kernel Tuner cache with its restrictions and the
T4 file of each space), and returns the backend's `compiler_options` (applications, GPUs, and the backend's
own settings with the spaces' file pattern added). `kernel_tuner_scores` runs `tune_hyper_params` with
brute force over a grid on them, in a folder of its own (the backend's experiment folder, which it puts beside
Kernel Tuner's installation and shares between runs, is moved there for the call, see `_in_folder`), seeded
(`np.random.seed`, `random.seed`: Kernel Tuner's strategies and the package's bagging draw from the global
generators), and tallies each configuration's evaluations and revisits. With `charge_revisits=False` a
revisit carries no per-iteration `times`, so the methodology, which sums every time key of every evaluation,
charges it nothing, as Kernel Tuner's own budget and the suite's clock do. `suite_scores` runs and scores the
grid as seed 003's grid jobs do; `compare` puts the two side by side with a noise test.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kernel_tuner.util as kt_util
import numpy as np
import pandas as pd
from kernel_tuner.backends import hypertuner
from kernel_tuner.hyper import tune_hyper_params
from scipy import stats

from analysis import config as study_config
from analysis.hyperparams import single_objective as so
from analysis.indicators.constraint_aware import space_budget
from analysis.spaces.export import write_experiment
from analysis.spaces.methodology import ScoreSettings

# the settings of the constraint-aware study that seed 003's jobs are given (workflow/rules/common.smk,
# CA_SETTINGS); the others keep ScoreSettings' defaults
SUITE_SETTING_KEYS = ("cutoff_percentile", "cutoff_percentile_start", "cutoff_margin", "time_resolution",
                      "confidence_level")
Z_AGREE = 1.96  # |z| at most this: the two sides agree (a two-sided test at about 5 %)
STRATEGY = "dual_annealing"
_COPY_WITHOUT_TIMINGS = kt_util.copy_without_benchmark_timings
_PRINT_CONFIG = kt_util.print_config_output
_GET_SCORES = hypertuner.get_strategy_scores


def lay_out(names: Sequence[str], folder: str | Path, config: str | Path = study_config.FULL_STUDY,
            iterations: int = 1, repeats: int | None = None) -> dict[str, Any]:
    """Write the spaces `names` ("device/kernel", imported from `config` as the workflow imports them) under
    `folder` as the Hypertuner backend reads them, and return its `compiler_options`.

    Each space is written by `write_experiment` (kernels/KERNEL.json, cachefiles/KERNEL/DEVICE.json and
    _T4.json); the methodology's experiment file that writes is removed, as the backend writes its own. The
    backend runs every GPU with every application, so the spaces must be that product (ValueError otherwise),
    and a kernel's T1 file must be the same on every GPU. The options are the applications (their folder
    made absolute), the GPUs and the backend's own settings (`HypertunerFunctions(iterations).override`) with
    the spaces' file pattern added and, if given, its `repeats` (runs per space; the backend's are 25)."""
    pairs = [tuple(name.split("/", 1)) for name in names]
    devices, kernels = dict.fromkeys(d for d, _ in pairs), dict.fromkeys(k for _, k in pairs)
    missing = sorted(f"{d}/{k}" for d in devices for k in kernels if (d, k) not in pairs)
    if missing or len(set(pairs)) < len(pairs):
        raise ValueError(f"the backend runs every GPU with every application once; give each space once and "
                         f"every device with every kernel (missing: {', '.join(missing) or 'none'})")
    folder = Path(folder).resolve()
    applications: dict[str, dict[str, Any]] = {}
    gpus: list[str] = []
    pattern = None
    for name in names:
        space = study_config.import_config_space(config, name)
        t1_before = {p: p.read_text() for p in (folder / "kernels").glob("*.json")}
        experiments = write_experiment(space, folder)
        doc = json.loads(experiments.read_text())
        experiments.unlink()
        groups = doc["experimental_groups_defaults"]
        (app,), (gpu,) = groups["applications"], groups["gpus"]
        t1 = folder / app["folder"] / app["input_file"]
        if t1 in t1_before and t1_before[t1] != t1.read_text():
            raise ValueError(f"{name}: kernel {app['name']}'s T1 file differs from another GPU's; the backend "
                             "reads one per application")
        applications[app["name"]] = {**app, "folder": str(folder / app["folder"])}
        if gpu not in gpus:
            gpus.append(gpu)
        pattern = str(folder / groups["pattern_for_full_search_space_filenames"]["regex"])
    override = json.loads(json.dumps(hypertuner.HypertunerFunctions(iterations).override))
    override["experimental_groups_defaults"]["pattern_for_full_search_space_filenames"] = {"regex": pattern}
    if repeats is not None:
        override["experimental_groups_defaults"]["repeats"] = int(repeats)
    return {"gpus": gpus, "applications": list(applications.values()), "override": override}


@dataclass
class Tally:
    """Kernel Tuner's simulated evaluations while one configuration is scored (every repeat, every space)."""

    evaluations: int = 0  # proposals served from the cache
    revisits: int = 0  # of those, configurations this run had visited already
    revisit_times_ms: float = 0.0  # the per-iteration `times` those revisits carried (ms)
    by_config: dict[str, dict[str, Any]] = field(default_factory=dict)


def _tallied(tally: Tally, charge_revisits: bool):
    """Kernel Tuner's `copy_without_benchmark_timings` and `print_config_output` (its simulation runner calls
    them on a revisit and on a first visit), counting; without `charge_revisits`, a revisit's `times` emptied."""
    def copy(result: dict) -> dict:
        out = _COPY_WITHOUT_TIMINGS(result)
        if "compile_time" in result:  # a cache entry revisited (not a proposal outside the restrictions)
            tally.evaluations += 1
            tally.revisits += 1
            times = result.get("times")
            if isinstance(times, list):
                tally.revisit_times_ms += float(sum(times))
                if not charge_revisits:
                    out["times"] = []
        return out

    def first(*args: Any, **kwargs: Any) -> None:
        tally.evaluations += 1
        _PRINT_CONFIG(*args, **kwargs)

    return copy, first


def _scores_of(tally: Tally):
    """The backend's `get_strategy_scores`, recording each configuration's score and tally."""
    def scores(path: str, *args: Any, **kwargs: Any) -> dict[str, dict[str, float]]:
        tally.evaluations = tally.revisits = 0
        tally.revisit_times_ms = 0.0
        result = _GET_SCORES(path, *args, **kwargs)
        (strategy,) = json.loads(Path(path).read_text())["search_strategies"]
        params = {p["name"]: p["value"] for p in strategy.get("search_method_hyperparameters", [])}
        ((name, scored),) = result.items()
        tally.by_config[so.slug(params)] = {"strategy_name": name, "hyper_score": scored["score"],
                                            "hyper_error": scored["error"], "evaluations": tally.evaluations,
                                            "revisits": tally.revisits,
                                            "revisit_time_s": tally.revisit_times_ms / 1e3}
        return result

    return scores


@contextlib.contextmanager
def _in_folder(folder: Path, tally: Tally, charge_revisits: bool) -> Iterator[None]:
    """Run Kernel Tuner's hyper tuner in `folder`: the working directory (its cache and the experiments files
    go there) and its backend's experiment folder (the backend puts it beside Kernel Tuner's installation,
    `Path(__file__).parent.parent.parent / "hyperparamtuning"`, read when it writes each file; its module's
    `__file__` points under `folder` for the call, so that folder is `folder`/hyperparamtuning), with the
    tallying functions in place; everything restored after."""
    saved = hypertuner.__file__
    copy, first = _tallied(tally, charge_revisits)
    hypertuner.__file__ = str(folder / "kernel_tuner" / "backends" / "hypertuner.py")
    kt_util.copy_without_benchmark_timings, kt_util.print_config_output = copy, first
    hypertuner.get_strategy_scores = _scores_of(tally)
    try:
        with contextlib.chdir(folder):
            yield
    finally:
        hypertuner.__file__ = saved
        kt_util.copy_without_benchmark_timings, kt_util.print_config_output = _COPY_WITHOUT_TIMINGS, _PRINT_CONFIG
        hypertuner.get_strategy_scores = _GET_SCORES


def kernel_tuner_scores(grid: Mapping[str, Sequence[Any]], options: Mapping[str, Any], folder: str | Path,
                        seed: int, charge_revisits: bool = True, strategy: str = STRATEGY) -> pd.DataFrame:
    """`tune_hyper_params(strategy, grid, [], ...)` with brute force over the grid on the spaces of `options`
    (`lay_out`'s), run in `folder` (made if missing; it must not hold an earlier run: the methodology reuses its
    results), seeded with `seed`. Per configuration (`single_objective.slug`, grid order): Kernel Tuner's score
    (`hyper_score`, the methodology's aggregate, rounded by it to 3 decimals), its `hyper_error` (the package's
    spread of the score over time, not an error of the mean), and the tally of its evaluations."""
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / "hyperparamtuning").exists():
        raise ValueError(f"{folder} holds an earlier run (hyperparamtuning/); the methodology would reuse it")
    tally = Tally()
    np.random.seed(seed)
    random.seed(seed)
    with _in_folder(folder, tally, charge_revisits):
        results, _ = tune_hyper_params(strategy, {k: list(v) for k, v in grid.items()}, [],
                                       cache=str(folder / "hyper_cache.json"), compiler_options=dict(options),
                                       verbose=False, quiet=True)
    rows = []
    for result in results:
        name = so.slug({k: result[k] for k in grid})
        rows.append({"configuration": name, "kernel_tuner_score": float(result["score"]), **tally.by_config[name]})
    return pd.DataFrame(rows)


def suite_settings(config: str | Path = study_config.FULL_STUDY) -> tuple[ScoreSettings, float]:
    """The score settings and proposal cap seed 003's jobs run with (the constraint-aware study's)."""
    ca = study_config.load(config)["constraint_aware"]
    return ScoreSettings.from_config({k: ca[k] for k in SUITE_SETTING_KEYS}), float(ca["proposal_cap"])


def suite_scores(names: Sequence[str], grid: Mapping[str, Sequence[Any]], folder: str | Path,
                 repetitions: int = 25, resamples: int = 20, config: str | Path = study_config.FULL_STUDY,
                 strategy: str = STRATEGY) -> pd.DataFrame:
    """The suite's score of each grid configuration on the spaces `names`, as seed 003's grid jobs make it:
    each space stored with its budget (rule ca_budget), `repetitions` runs per space (`run_chunk`), scored
    with `resamples` bootstrap resamples (`score_chunk`), the mean over the spaces (`mean_scores`; every space
    counts). `suite_se` is the standard deviation of that mean over the resamples (resample b of every space
    averaged): the standard error of the score over runs."""
    folder = Path(folder)
    settings, cap = suite_settings(config)
    triples = []
    for name in names:
        where = folder / name.replace("/", "_")
        where.mkdir(parents=True, exist_ok=True)
        space = study_config.import_config_space(config, name)
        space.save(where / "space.parquet", where / "space.json")
        space_budget(where / "space.parquet", where / "space.json", None, settings, where / "budget.json")
        triples.append((where / "space.parquet", where / "space.json", where / "budget.json"))
    configs = {k: v for k, v in so.configurations(grid).items() if k != so.DEFAULT}
    so.run_chunk(triples, strategy, configs, repetitions, settings, cap, folder / "runs.parquet")
    so.score_chunk(strategy, [folder / "runs.parquet"], triples, repetitions, settings, resamples,
                   folder / "scores.parquet", folder / "resamples.parquet")
    return suite_table(folder)


def suite_table(folder: str | Path) -> pd.DataFrame:
    """`suite_scores`' table from the score and resample files it wrote in `folder`."""
    folder = Path(folder)
    scores = pd.read_parquet(folder / "scores.parquet")
    resampled = pd.read_parquet(folder / "resamples.parquet")
    table = so.mean_scores(scores, resampled, list(dict.fromkeys(scores["space"])))
    se = (resampled.groupby(["configuration", "resample"])["score"].mean().groupby("configuration").std(ddof=1))
    distinct = scores.groupby("entry")["mean_distinct_evaluations"].mean()
    out = table.rename(columns={"score": "suite_score", "ci_low": "suite_ci_low", "ci_high": "suite_ci_high"})
    out["suite_se"] = out["configuration"].map(se)
    out["suite_distinct_evaluations"] = out["configuration"].map(distinct)
    return out[["configuration", "suite_score", "suite_ci_low", "suite_ci_high", "suite_se",
                "suite_distinct_evaluations"]]


def compare(kernel_tuner: pd.DataFrame, suite: pd.DataFrame) -> pd.DataFrame:
    """Kernel Tuner's and the suite's scores per configuration (in Kernel Tuner's order): `difference` (Kernel
    Tuner's minus the suite's), `z` (the difference over sqrt(2) x the suite's standard error: both sides score
    the same number of runs of the same strategy, so each is taken to have the suite's error, and the
    difference sqrt(2) times it) and `agree` (|z| <= Z_AGREE)."""
    table = kernel_tuner.merge(suite, on="configuration", how="left", validate="one_to_one")
    table["difference"] = table["kernel_tuner_score"] - table["suite_score"]
    table["z"] = table["difference"] / (math.sqrt(2) * table["suite_se"])
    table["agree"] = table["z"].abs() <= Z_AGREE
    return table


def summary(table: pd.DataFrame) -> dict[str, Any]:
    """A comparison's agreement count, mean difference, Spearman rank correlation of the two sides' scores
    (NaN with fewer than 3 configurations) and the configuration each side picks (the highest score; the first
    in grid order on a tie)."""
    rho = (float(stats.spearmanr(table["kernel_tuner_score"], table["suite_score"]).statistic)
           if len(table) >= 3 else math.nan)
    return {"configurations": len(table), "agree": int(table["agree"].sum()),
            "mean_difference": float(table["difference"].mean()), "spearman": rho,
            "kernel_tuner_pick": str(table["configuration"].iloc[int(np.argmax(table["kernel_tuner_score"]))]),
            "suite_pick": str(table["configuration"].iloc[int(np.argmax(table["suite_score"]))])}


def check(names: Sequence[str], grid: Mapping[str, Sequence[Any]], seed: int, repetitions: int = 25,
          resamples: int = 20, config: str | Path = study_config.FULL_STUDY, strategy: str = STRATEGY,
          modes: Sequence[bool] = (True, False), folder: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """The whole check in a temporary folder (or `folder`): the spaces laid out once (Kernel Tuner's side runs
    `repetitions` repeats per space, as the suite), the suite's scores, and Kernel Tuner's in each mode of
    `modes` (`charge_revisits`), each seeded with `seed`, compared. Returns
    "charged" (revisits charged, as Kernel Tuner runs) and/or "free" (revisits charged nothing) -> `compare`."""
    with tempfile.TemporaryDirectory(prefix="tsb-kt-hyper-") if folder is None else contextlib.nullcontext(
            str(folder)) as tmp:
        root = Path(tmp)
        options = lay_out(names, root / "spaces", config, repeats=repetitions)
        suite = suite_scores(names, grid, root / "suite", repetitions, resamples, config, strategy)
        out = {}
        for charged in modes:
            mode = "charged" if charged else "free"
            theirs = kernel_tuner_scores(grid, options, root / f"kernel_tuner_{mode}", seed, charged, strategy)
            out[mode] = compare(theirs, suite)
        return out
