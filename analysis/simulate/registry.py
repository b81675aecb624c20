"""Registry of the simulated search algorithms and their options, shaped like Kernel Tuner's strategies.

Each option has Kernel Tuner's description and default (from the strategy module's own table) and,
declared here once, the type and range the suite accepts; `resolve_options` checks every value
against them, so a config is checked when it is read and a run never starts on a bad option.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Option:
    """One option: description and default (Kernel Tuner's), accepted type and range (the suite's).

    kind: "int" (a whole number, not a bool), "number" (int or float, finite, not a bool), "bool",
    or "choice" (one of `choices`). `low`/`high` bound int and number options, inclusively unless
    `low_open`/`high_open`.
    """

    description: str
    default: Any
    kind: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()

    @property
    def rule(self) -> str:
        """What the option accepts, e.g. `int >= 2`, `number in [0, 1]`, `one of: a, b`."""
        if self.kind == "choice":
            return "one of: " + ", ".join(self.choices)
        if self.kind == "bool":
            return "bool"
        bound = lambda x: f"{x:g}" if isinstance(x, float) else str(x)  # noqa: E731
        if self.low is not None and self.high is not None:
            return (f"{self.kind} in {'(' if self.low_open else '['}{bound(self.low)}, "
                    f"{bound(self.high)}{')' if self.high_open else ']'}")
        if self.low is not None:
            return f"{self.kind} {'>' if self.low_open else '>='} {bound(self.low)}"
        if self.high is not None:
            return f"{self.kind} {'<' if self.high_open else '<='} {bound(self.high)}"
        return self.kind

    def problem(self, value: Any) -> str | None:
        """Why `value` is not accepted (None: it is)."""
        found = f"found {type(value).__name__} {value!r}"
        if self.kind == "bool":
            return None if isinstance(value, bool) else f"must be a bool (true/false), {found}"
        if self.kind == "choice":
            return None if isinstance(value, str) and value in self.choices else f"must be {self.rule}, {found}"
        is_int = isinstance(value, int) and not isinstance(value, bool)
        if self.kind == "int" and not is_int:
            return f"must be an {self.rule}, {found}"
        if self.kind == "number" and not (is_int or (isinstance(value, float) and math.isfinite(value))):
            return f"must be a finite {self.rule}, {found}"
        too_low = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        too_high = self.high is not None and (value >= self.high if self.high_open else value > self.high)
        if too_low or too_high:
            return f"must be {'an' if self.kind == 'int' else 'a'} {self.rule}, {found}"
        return None


def _int(low: int | None = None, high: int | None = None) -> dict[str, Any]:
    return {"kind": "int", "low": low, "high": high}


def _number(low: float | None = None, high: float | None = None, low_open: bool = False) -> dict[str, Any]:
    return {"kind": "number", "low": low, "high": high, "low_open": low_open}


def _choice(values: Any) -> dict[str, Any]:
    return {"kind": "choice", "choices": tuple(values)}


_BOOL = {"kind": "bool"}
_PROBABILITY = _number(0, 1)
_POPSIZE = _int(2)
_MAXITER = _int(1)


def _table(options: dict[str, tuple[str, Any]], rules: dict[str, dict[str, Any]]) -> dict[str, Option]:
    """Kernel Tuner's {option: (description, default)} joined with the suite's rules, which must cover it exactly."""
    if set(options) != set(rules):
        raise RuntimeError(f"option rules {sorted(rules)} do not match the options {sorted(options)}; "
                           "Kernel Tuner's table changed: declare a type and range for every option")
    table = {key: Option(description, default, **rules[key]) for key, (description, default) in options.items()}
    for key, option in table.items():
        if option.problem(option.default) is not None:
            raise RuntimeError(f"default {option.default!r} of option {key!r} breaks its own rule {option.rule}")
    return table


def _kt_options(module: str, rules: dict[str, dict[str, Any]], drop: tuple[str, ...] = ()) -> dict[str, Option]:
    """The options of a Kernel Tuner strategy module (its `_options` table) with their rules."""
    table = importlib.import_module(f"kernel_tuner.strategies.{module}")._options
    return _table({key: value for key, value in table.items() if key not in drop}, rules)


def _kt_attr(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f"kernel_tuner.strategies.{module}"), name)


# Types and ranges, from what each option means in Kernel Tuner 1.5.0's strategy code. Population
# sizes of at least two (there is nothing to recombine or follow in one); probabilities in [0, 1];
# the names each strategy's code looks up (anything else fails there or, for GA, is a KeyError).
class _LazyTable(Mapping):
    """An options table built on first use: the NSGA tables read Kernel Tuner's pymoo strategy, and importing
    pymoo (about 0.25 s) is wasted on every run of a single-objective strategy."""

    def __init__(self, build: Callable[[], dict[str, Option]]) -> None:
        self._build = build
        self._table: dict[str, Option] | None = None

    def _get(self) -> dict[str, Option]:
        if self._table is None:
            self._table = self._build()
        return self._table

    def __getitem__(self, key: str) -> Option:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def _pymoo_rules() -> dict[str, dict[str, Any]]:
    return {
        "popsize": _POPSIZE,
        "crossover_operator": _choice(_kt_attr("pymoo_minimize", "supported_crossover_oper_names")),
        "crossover_prob": _PROBABILITY,
        "mutation_prob": _PROBABILITY,
    }


def _unaware_options() -> dict[str, Option]:
    from analysis.simulate.unaware import options as unaware_options

    rules = {**_pymoo_rules(), "mutation_eta": _number(0, low_open=True)}  # pymoo PM's distribution index
    return _table({key: value for key, value in unaware_options().items() if key != "ref_dirs_list"}, rules)


_GA_RULES = {
    "popsize": _POPSIZE,
    "maxiter": _MAXITER,
    "method": _choice(_kt_attr("genetic_algorithm", "supported_methods")),
    "mutation_chance": _int(1),  # a child mutates with chance 1 / mutation_chance
    "constraint_aware": _BOOL,
}
_PSO_RULES = {
    "popsize": _POPSIZE,
    "maxiter": _MAXITER,
    "w": _number(0),  # inertia weight
    "c1": _number(0),  # cognitive (own best) acceleration
    "c2": _number(0),  # social (swarm best) acceleration
    "constraint_aware": _BOOL,
}
_DE_RULES = {
    "popsize": _POPSIZE,
    "popsize_times_dimensions": _BOOL,
    "maxiter": _MAXITER,
    "F": _number(0, 2),  # differential weight; [0, 2] is differential evolution's range (Storn & Price)
    "CR": _PROBABILITY,  # crossover rate
    "method": _choice(_kt_attr("diff_evo", "supported_methods")),
    "constraint_aware": _BOOL,
}
_FIREFLY_RULES = {
    "popsize": _POPSIZE,
    "maxiter": _MAXITER,
    "B0": _number(0),  # attractiveness at distance 0
    "gamma": _number(0),  # light absorption
    "alpha": _number(0),  # randomisation step
    "constraint_aware": _BOOL,
}

# ref_dirs_list is filled in by the engine (memoised Riesz s-energy directions), never by users.
_PYMOO_OPTIONS = _LazyTable(lambda: _kt_options("pymoo_minimize", _pymoo_rules(), drop=("ref_dirs_list",)))
_UNAWARE_OPTIONS = _LazyTable(_unaware_options)


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm: the Kernel Tuner strategy behind it and its options table."""

    name: str
    strategy: str
    description: str
    options: Mapping[str, Option]  # read-only
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
            _PYMOO_OPTIONS,
            True,
        ),
        Algorithm(
            "nsga3",
            "nsga3",
            "NSGA-III as nsga2; reference directions by Riesz s-energy, as many as the population.",
            _PYMOO_OPTIONS,
            True,
        ),
        Algorithm(
            "nsga2_unaware",
            "nsga2",
            "NSGA-II with pymoo's integer random sampling, the chosen crossover and rounded polynomial mutation "
            "on parameter indices, no repair; an infeasible proposal costs one evaluation on its first visit "
            "(repeats are free, as for any configuration) and yields only the worst cost.",
            _UNAWARE_OPTIONS,
            True,
            unaware=True,
        ),
        Algorithm(
            "nsga3_unaware",
            "nsga3",
            "NSGA-III counterpart of nsga2_unaware.",
            _UNAWARE_OPTIONS,
            True,
            unaware=True,
        ),
        Algorithm(
            "genetic_algorithm",
            "genetic_algorithm",
            "Kernel Tuner's genetic algorithm; it stops before the budget (recorded as stopped_early) when its "
            "generations run out or its proposals, repeats and infeasible ones included, reach the space size.",
            _kt_options("genetic_algorithm", _GA_RULES),
            False,
        ),
        Algorithm(
            "pso",
            "pso",
            "Kernel Tuner's particle swarm optimisation.",
            _kt_options("pso", _PSO_RULES),
            False,
        ),
        Algorithm(
            "diff_evo",
            "diff_evo",
            "Kernel Tuner's differential evolution; its constraint-aware Latin-hypercube start is seeded from the "
            "run seed. Kernel Tuner 1.5.0 fails on spaces not much larger than popsize x dimensions.",
            _kt_options("diff_evo", _DE_RULES),
            False,
        ),
        Algorithm(
            "firefly_algorithm",
            "firefly_algorithm",
            "Kernel Tuner's firefly algorithm.",
            _kt_options("firefly_algorithm", _FIREFLY_RULES),
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


class OptionError(ValueError):
    """An unknown option, or a value outside its option's type and range; `option` names it."""

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


def check_option(name: str, option: str, value: Any) -> None:
    """OptionError unless `option` is an option of algorithm `name` and `value` fits its type and range."""
    algorithm = get_algorithm(name)
    if option not in algorithm.options:
        valid = ", ".join(algorithm.options) or "(none)"
        raise OptionError(f"unknown option(s) {[option]} for algorithm {name!r}; valid options: {valid}", option)
    problem = algorithm.options[option].problem(value)
    if problem is not None:
        raise OptionError(f"option {option!r} of algorithm {name!r} {problem}", option)


def resolve_options(name: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """All options of `name` with defaults filled in.

    ValueError on an unknown algorithm; OptionError (a ValueError) listing the valid options on an
    unknown option, or giving the accepted type and range on a bad value. Values are not converted.
    """
    algorithm = get_algorithm(name)
    options = dict(options or {})
    unknown = sorted(set(options) - set(algorithm.options), key=str)
    if unknown:
        valid = ", ".join(algorithm.options) or "(none)"
        raise OptionError(f"unknown option(s) {unknown} for algorithm {name!r}; valid options: {valid}",
                          str(unknown[0]))
    for option, value in options.items():
        check_option(name, option, value)
    resolved = {key: option.default for key, option in algorithm.options.items()}
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
            lines += ["| option | description | accepts | default |", "|---|---|---|---|"]
            for key, option in algorithm.options.items():
                lines.append(f"| `{key}` | {option.description.replace('|', '/')} | {option.rule} | "
                             f"`{option.default!r}` |")
        else:
            lines.append("No options; the budget sets the sample size.")
        lines.append("")
    return "\n".join(lines)
