"""Registry of the simulated search algorithms and their options, shaped like Kernel Tuner's strategies."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from analysis.simulate.unaware import options as unaware_options


def _kt_options(module: str, drop: tuple[str, ...] = ()) -> dict[str, tuple[str, Any]]:
    """The options table {option: (description, default)} of a Kernel Tuner strategy module."""
    table = importlib.import_module(f"kernel_tuner.strategies.{module}")._options
    return {key: value for key, value in table.items() if key not in drop}


# ref_dirs_list is filled in by the engine (memoised Riesz s-energy directions), never by users.
_PYMOO_OPTIONS = _kt_options("pymoo_minimize", drop=("ref_dirs_list",))
_UNAWARE_OPTIONS = {key: value for key, value in unaware_options().items() if key != "ref_dirs_list"}


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm: the Kernel Tuner strategy behind it and its options table."""

    name: str
    strategy: str
    description: str
    options: dict[str, tuple[str, Any]]
    multi_objective: bool
    unaware: bool = False

    @property
    def source(self) -> str:
        """Where the search code comes from, for documentation."""
        if self.unaware:
            return f"pymoo `{self.strategy.upper()}` composed in `analysis.simulate.unaware`"
        return f"Kernel Tuner strategy `{self.strategy}`"


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in [
        Algorithm(
            "rs",
            "random_sample",
            "Uniform sample without replacement of `budget` valid configurations (Kernel Tuner random_sample).",
            {},
            True,
        ),
        Algorithm(
            "nsga2",
            "nsga2",
            "NSGA-II with Kernel Tuner's constraint-aware sampling, neighbourhood mutation and repair.",
            dict(_PYMOO_OPTIONS),
            True,
        ),
        Algorithm(
            "nsga3",
            "nsga3",
            "NSGA-III as nsga2; reference directions by Riesz s-energy, as many as the population.",
            dict(_PYMOO_OPTIONS),
            True,
        ),
        Algorithm(
            "nsga2_unaware",
            "nsga2",
            "NSGA-II with pymoo's integer random sampling, the chosen crossover and rounded polynomial mutation "
            "on parameter indices, no repair; an infeasible proposal costs one evaluation on its first visit "
            "(repeats are free, as for any configuration) and yields only the worst cost.",
            dict(_UNAWARE_OPTIONS),
            True,
            unaware=True,
        ),
        Algorithm(
            "nsga3_unaware",
            "nsga3",
            "NSGA-III counterpart of nsga2_unaware.",
            dict(_UNAWARE_OPTIONS),
            True,
            unaware=True,
        ),
        Algorithm(
            "genetic_algorithm",
            "genetic_algorithm",
            "Kernel Tuner's genetic algorithm; it stops before the budget (recorded as stopped_early) when its "
            "generations run out or its proposals, repeats and infeasible ones included, reach the space size.",
            _kt_options("genetic_algorithm"),
            False,
        ),
        Algorithm(
            "pso",
            "pso",
            "Kernel Tuner's particle swarm optimisation.",
            _kt_options("pso"),
            False,
        ),
        Algorithm(
            "diff_evo",
            "diff_evo",
            "Kernel Tuner's differential evolution; its constraint-aware Latin-hypercube start is seeded from the "
            "run seed. Kernel Tuner 1.5.0 fails on spaces not much larger than popsize x dimensions.",
            _kt_options("diff_evo"),
            False,
        ),
        Algorithm(
            "firefly_algorithm",
            "firefly_algorithm",
            "Kernel Tuner's firefly algorithm.",
            _kt_options("firefly_algorithm"),
            False,
        ),
    ]
}


def algorithm_names() -> list[str]:
    """Names of all registered algorithms."""
    return list(ALGORITHMS)


def get_algorithm(name: str) -> Algorithm:
    """The registered algorithm called `name`; ValueError listing valid names otherwise."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(ALGORITHMS)}") from None


def resolve_options(name: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """All options of `name` with defaults filled in; ValueError listing valid options on an unknown one."""
    algorithm = get_algorithm(name)
    options = dict(options or {})
    unknown = sorted(set(options) - set(algorithm.options))
    if unknown:
        valid = ", ".join(algorithm.options) or "(none)"
        raise ValueError(f"unknown option(s) {unknown} for algorithm {name!r}; valid options: {valid}")
    resolved = {key: default for key, (_, default) in algorithm.options.items()}
    resolved.update(options)
    return resolved


def options_markdown(names: list[str] | None = None) -> str:
    """Render the registry as Markdown: one section with an options table per algorithm."""
    lines: list[str] = []
    for name in names or list(ALGORITHMS):
        algorithm = get_algorithm(name)
        objectives = "single and multi-objective" if algorithm.multi_objective else "single objective only"
        lines += [f"### `{name}`", "", f"{algorithm.description} ({objectives}; {algorithm.source})", ""]
        if algorithm.options:
            lines += ["| option | description | default |", "|---|---|---|"]
            for option, (description, default) in algorithm.options.items():
                lines.append(f"| `{option}` | {description.replace('|', '/')} | `{default!r}` |")
        else:
            lines.append("No options; the budget sets the sample size.")
        lines.append("")
    return "\n".join(lines)
