"""The checks of the config's `hyperparameters` (the thesis's grids) and `hyperparameters_so` (seed 003's) sections,
with the `tuned` grid of each comparison setting (config.validate calls them)."""

from __future__ import annotations

from typing import Any

from analysis.errors import ConfigError
from analysis.hyperparams.selection import expand
from analysis.hyperparams.single_objective import SectionError, check
from analysis.simulate.checks import check_algorithm, check_options, multi_objective_sets
from analysis.spaces.study import study_kernels, time_space_keys


def check_hyperparameters(config: dict[str, Any], source: str, explicit_kernels: bool = True) -> None:
    """Section hyperparameters: its training kernels are studied, each grid's algorithm, options and values are
    known and in range, each comparison setting's `tuned` names a grid that runs, and no setting's label is a
    grid setting's. `explicit_kernels`: the config gave hyperparameters.kernels (a typo there is an error)."""
    sim = config["simulation"]
    grids = config["hyperparameters"]["grids"]
    studied = check_training_kernels(config, source, explicit_kernels)
    for label, setting in sim["algorithms"].items():
        tuned = setting.get("tuned")
        if tuned is not None:
            check_tuned(config, source, f"simulation.algorithms.{label}", setting, tuned, studied)
    for name, grid in grids.items():
        check_grid(config, source, f"hyperparameters.grids.{name}", grid)
    clash = sorted(set(sim["algorithms"]) & set(expand(grids)))
    if clash:
        raise ConfigError(source, f"label '{clash[0]}' is also the label of a grid setting",
                          field=f"simulation.algorithms.{clash[0]}")


def check_training_kernels(config: dict[str, Any], source: str, explicit_kernels: bool) -> list[str]:
    """hyperparameters.kernels are kernels of the study with a studied space; returns the studied kernels."""
    hp = config["hyperparameters"]
    kernels = study_kernels(config)
    studied = study_kernels(config, studied_only=True)
    for i, kernel in enumerate(hp["kernels"]):
        if explicit_kernels and kernel not in kernels:
            raise ConfigError(source, f"'{kernel}' is not a kernel of any space of the study (kernels: "
                                      f"{', '.join(kernels)})", field=f"hyperparameters.kernels[{i}]")
        if explicit_kernels and kernel not in studied:
            raise ConfigError(source, f"every space of kernel '{kernel}' is excluded from the studies, so the grid "
                                      "would have no training space of it", field=f"hyperparameters.kernels[{i}]")
    training = set(hp["kernels"]) & set(kernels)
    if training and not training & set(studied):
        raise ConfigError(source, f"every space of the training kernels ({', '.join(sorted(training))}) is excluded "
                                  "from the studies, so the grid would have no training space left",
                          field="hyperparameters.kernels")
    return studied


def check_tuned(config: dict[str, Any], source: str, where: str, setting: dict[str, Any], tuned: str,
                 studied: list[str]) -> None:
    """A setting's `tuned`: a grid of its algorithm (or its aware twin's) that runs, at every budget."""
    sim = config["simulation"]
    hp = config["hyperparameters"]
    grids = hp["grids"]
    if tuned not in grids:
        raise ConfigError(source, f"unknown hyperparameter grid '{tuned}' (defined: {', '.join(grids)})",
                          field=f"{where}.tuned")
    # A constraint-unaware twin may take its aware algorithm's picks (same options).
    grid_algorithm = grids[tuned]["algorithm"]
    if setting["algorithm"] not in (grid_algorithm, f"{grid_algorithm}_unaware"):
        raise ConfigError(source, f"grid '{tuned}' tunes {grid_algorithm}, not "
                          f"{setting['algorithm']} (nor its constraint-unaware twin)",
                          field=f"{where}.tuned")
    if not set(hp["kernels"]) & set(studied):
        raise ConfigError(source, f"takes the picks of grid '{tuned}', but no studied space has a "
                                  f"training kernel (hyperparameters.kernels: {hp['kernels']}), "
                                  "so no grid runs",
                          field=f"{where}.tuned")
    missing = sorted(set(sim["budgets"]) - set(hp["budgets"] or sim["budgets"]))
    if missing:
        raise ConfigError(source, f"grid '{tuned}' has no runs at budgets {missing}",
                          field="hyperparameters.budgets")


def check_grid(config: dict[str, Any], source: str, where: str, grid: dict[str, Any]) -> None:
    """One grid of hyperparameters.grids: its objective set, algorithm, fixed options and varied values."""
    grid.setdefault("fixed", {})
    if grid["objective_set"] not in config["objective_sets"]:
        raise ConfigError(source, f"unknown objective set '{grid['objective_set']}'",
                          field=f"{where}.objective_set")
    algorithm = check_algorithm(grid["algorithm"], f"{where}.algorithm", source)
    if not algorithm.multi_objective and multi_objective_sets(config, [grid["objective_set"]]):
        objectives = config["objective_sets"][grid["objective_set"]]
        raise ConfigError(source, f"'{algorithm.name}' optimises a single objective, but objective set "
                                  f"'{grid['objective_set']}' has {len(objectives)} ({', '.join(objectives)}); "
                                  "tune it on a one-objective set, or choose a multi-objective algorithm",
                          field=f"{where}.objective_set")
    check_options(grid["algorithm"], grid["fixed"], f"{where}.fixed", source)
    for option, values in grid["options"].items():
        if option in grid["fixed"]:
            raise ConfigError(source, f"option '{option}' is both varied (options) and held (fixed)",
                              field=f"{where}.fixed.{option}")
        for i, value in enumerate(values):
            try:
                check_options(grid["algorithm"], {option: value}, f"{where}.options", source)
            except ConfigError as exc:  # name the listed value
                raise ConfigError(source, exc.detail, field=f"{where}.options.{option}[{i}]") from None


def check_hyperparameters_so(config: dict[str, Any], source: str) -> None:
    """Section hyperparameters_so's grids and spaces (analysis.hyperparams.single_objective.check)."""
    try:
        check(config["hyperparameters_so"], time_space_keys(config))
    except SectionError as exc:
        raise ConfigError(source, str(exc), field=f"hyperparameters_so.{exc.field}") from None
