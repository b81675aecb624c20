"""The checks of the config's `simulation` and `constraint_aware` sections, and of an algorithm setting anywhere in
a config (config.validate and analysis.hyperparams.checks call them)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from analysis.errors import ConfigError
from analysis.simulate.registry import ALGORITHMS, OptionError, get_algorithm, resolve_options
from analysis.spaces.study import excluded_spaces, study_kernels


def check_options(algorithm: str, options: dict[str, Any], field: str, source: str) -> None:
    """Every option of a setting is known to the registry and within its declared type and range."""
    try:
        resolve_options(algorithm, options)
    except OptionError as exc:
        raise ConfigError(source, str(exc), field=f"{field}.{exc.option}" if exc.option else field) from None


def check_algorithm(name: str, field: str, source: str):
    """The registry's algorithm `name`, whose Kernel Tuner strategy exists; else a ConfigError naming `field`."""
    try:
        algorithm = get_algorithm(name)
    except ValueError as exc:
        raise ConfigError(source, str(exc), field=field) from None
    if not algorithm.user and not algorithm.unaware:  # unaware variants compose pymoo in analysis.simulate.unaware
        from kernel_tuner.interface import strategy_map

        if algorithm.strategy not in strategy_map:
            raise ConfigError(source, f"algorithm '{name}' runs Kernel Tuner strategy '{algorithm.strategy}' "
                                      "(analysis/simulate/registry.py), which the installed Kernel Tuner does not "
                                      f"have (its strategies: {', '.join(sorted(strategy_map))})", field=field)
    return algorithm


def multi_objective_sets(config: dict[str, Any], names: Iterable[str]) -> list[str]:
    """Of the objective sets `names`, those with more than one objective."""
    return [name for name in names if len(config["objective_sets"][name]) > 1]


def studied_objective_sets(config: dict[str, Any]) -> dict[str, list[str]]:
    """"device/kernel" -> the objective sets the comparison runs on it, for every studied space (listed ones
    that are not excluded, and sweeps that become spaces): its own `objective_sets`, else simulation's."""
    default = config["simulation"]["objective_sets"]
    out = {f"{s['device']}/{s['kernel']}": s["objective_sets"] or default
           for s in config["spaces"] if not s.get("excluded")}
    out.update({f"{s['device']}/{s['kernel']}": default for s in config["sweeps"] if s.get("space", True)})
    return out


def single_objective_problem(algorithm: Any, config: dict[str, Any]) -> str | None:
    """Why a comparison setting of a single-objective algorithm cannot run (None: it can)."""
    if algorithm.multi_objective:
        return None
    for space, sets in studied_objective_sets(config).items():
        multi = multi_objective_sets(config, sets)
        if multi:
            objectives = ", ".join(config["objective_sets"][multi[0]])
            multi_algorithms = [a.name for a in ALGORITHMS.values() if a.multi_objective]
            declared = (f"{algorithm.name} does not declare multi_objective = True (a module attribute), so it "
                        "optimises a single objective" if algorithm.user
                        else f"'{algorithm.name}' optimises a single objective")
            return (f"{declared}, but a comparison setting runs on every "
                    f"objective set of every studied space, and space {space} runs on '{multi[0]}' ({objectives}). "
                    "Run single-objective settings only on one-objective sets (e.g. `objective_sets: [time]` on "
                    "those spaces, or simulation.objective_sets), or choose a multi-objective algorithm "
                    f"({', '.join(multi_algorithms)})")
    return None


def check_objective_set_names(config: dict[str, Any], source: str) -> None:
    """Every objective set that simulation and the spaces name is defined."""
    for i, name in enumerate(config["simulation"]["objective_sets"]):
        if name not in config["objective_sets"]:
            raise ConfigError(source,
                              f"unknown objective set '{name}' (defined: {', '.join(config['objective_sets'])})",
                              field=f"simulation.objective_sets[{i}]")
    for i, s in enumerate(config["spaces"]):
        for j, name in enumerate(s["objective_sets"] or []):
            if name not in config["objective_sets"]:
                raise ConfigError(source, f"unknown objective set '{name}' (defined: "
                                  f"{', '.join(config['objective_sets'])})", field=f"spaces[{i}].objective_sets[{j}]")


def check_algorithm_setting(config: dict[str, Any], source: str, where: str, setting: dict[str, Any]) -> None:
    """One setting of simulation.algorithms: its algorithm, options and objective sets (its `tuned` grid:
    analysis.hyperparams.checks)."""
    setting.setdefault("options", {})
    algorithm = check_algorithm(setting["algorithm"], f"{where}.algorithm", source)
    check_options(setting["algorithm"], setting["options"], f"{where}.options", source)
    problem = single_objective_problem(algorithm, config)
    if problem:
        raise ConfigError(source, problem, field=f"{where}.algorithm")


def check_simulation(config: dict[str, Any], source: str) -> None:
    """Section simulation: its objective sets exist; each setting's algorithm and options are known to the registry
    and in range, and a single-objective one runs only on one-objective sets."""
    check_objective_set_names(config, source)
    for label, setting in config["simulation"]["algorithms"].items():
        check_algorithm_setting(config, source, f"simulation.algorithms.{label}", setting)


def check_constraint_aware(config: dict[str, Any], source: str) -> None:
    """Study spaces exist; strategy options are valid and leave constraint_aware to the study;
    thresholds name kernels of the study."""
    ca = config["constraint_aware"]
    known = {f"{s['device']}/{s['kernel']}" for s in config["spaces"]}
    known |= {f"{s['device']}/{s['kernel']}" for s in config["sweeps"] if s.get("space", True)}
    excluded = excluded_spaces(config)
    for i, name in enumerate(ca["spaces"] or []):
        if name not in known:
            raise ConfigError(source, f"unknown space '{name}' (defined: {', '.join(sorted(known))})",
                              field=f"constraint_aware.spaces[{i}]")
        if name in excluded:
            raise ConfigError(source, f"space '{name}' is excluded from the studies ({excluded[name]}); drop it "
                                      "from this list or clear its `excluded`", field=f"constraint_aware.spaces[{i}]")
    for name, strategy in ca["strategies"].items():
        strategy.setdefault("options", {})
        where = f"constraint_aware.strategies.{name}.options"
        if "constraint_aware" in strategy["options"]:
            raise ConfigError(source, "constraint_aware is set by the study (every strategy runs both ways)",
                              field=f"{where}.constraint_aware")
        algorithm = check_algorithm(strategy["algorithm"], f"constraint_aware.strategies.{name}.algorithm",
                                     source)
        if "constraint_aware" not in algorithm.options:
            raise ConfigError(source, f"the constraint-aware study runs every strategy with and without constraint "
                                      f"awareness, but '{strategy['algorithm']}' has no constraint_aware option"
                                      + (" in its _options (Kernel Tuner's CostFunc reads it to repair infeasible "
                                         "proposals)" if algorithm.user else ""),
                              field=f"constraint_aware.strategies.{name}.algorithm")
        check_options(strategy["algorithm"], strategy["options"], where, source)
    kernels = study_kernels(config, studied_only=True)
    for kernel, threshold in ca["thresholds"].items():
        if kernel not in kernels:
            aside = " (excluded spaces aside)" if excluded else ""
            raise ConfigError(source, f"'{kernel}' is not a kernel of any space of the study{aside}, so its "
                                      f"threshold would apply to nothing (kernels: {', '.join(kernels)})",
                              field=f"constraint_aware.thresholds.{kernel}")
        threshold.setdefault("error", "mre")
        threshold.setdefault("beta", 1.0)
