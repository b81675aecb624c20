"""Registry of the simulated search algorithms and their options, shaped like Kernel Tuner's strategies.

Each option has Kernel Tuner's description and default (from the strategy module's own table) and,
declared here once, the type and range the suite accepts; `resolve_options` checks every value
against them, so a config is checked when it is read and a run never starts on a bad option.

Besides the registered names, an algorithm may be a user's own strategy module in Kernel Tuner's
convention, named by a path to a `.py` file or by a dotted import path (`get_algorithm`): a module
with `tune(searchspace, runner, tuning_options)` and an `_options` table `{name: (description,
default)}`, optionally `multi_objective = True` (it handles several objectives: Kernel Tuner's cost
function then returns a tuple per configuration; without it the module is single-objective) and
`display_name` (its name in tables and legends). The type each of its options accepts is that of
its default (bool, int, number for a float, str; anything for another default).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from analysis.names import DISPLAY, is_user_spec, user_display
from analysis.strategy_files import import_strategy, strategy_path

KINDS = ("int", "number", "bool", "choice", "str", "any")  # an Option's kinds (its docstring says what each accepts)


@dataclass(frozen=True)
class Option:
    """One option: description and default (Kernel Tuner's), accepted type and range (the suite's).

    kind: "int" (a whole number, not a bool), "number" (int or float, finite, not a bool), "bool",
    "choice" (one of `choices`), "str" (any string) or "any" (any value: a user strategy's option whose
    default is none of these). `low`/`high` bound int and number options, inclusively unless
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
        if self.kind in ("bool", "str", "any"):
            return self.kind
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
        if self.kind == "any":
            return None
        if self.kind == "str":
            return None if isinstance(value, str) else f"must be a string, {found}"
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
    pymoo would slow down every run of a single-objective strategy, which never uses it."""

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
    # lazy: the unaware variants' module imports pymoo (about 0.5 s), which a registry lookup does not need
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
    """One algorithm: the Kernel Tuner strategy behind it, its options table and its display name.

    A registered algorithm names a Kernel Tuner strategy (`strategy`, a key of Kernel Tuner's
    strategy_map) or an unaware variant composed here; a user's (`module` set) is its own module,
    `strategy` then being the module's name.
    """

    name: str
    strategy: str
    description: str
    options: Mapping[str, Option]  # read-only
    multi_objective: bool
    unaware: bool = False
    display: str = ""
    module: ModuleType | None = None

    @property
    def user(self) -> bool:
        """Whether this is a user's strategy module rather than a registered algorithm."""
        return self.module is not None

    @property
    def kt_strategy(self) -> str | ModuleType:
        """What `tune_kernel`'s `strategy` argument is for this algorithm: its strategy's name, or the user's module."""
        return self.module if self.module is not None else self.strategy  # self.user

    @property
    def source(self) -> str:
        """Where the search code comes from, for documentation."""
        if self.user:
            return f"user strategy `{self.name}`"
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


def _inferred_rule(default: Any) -> dict[str, Any]:
    """The rule of a user strategy's option: the type of its default."""
    if isinstance(default, bool):
        return _BOOL
    if isinstance(default, int):
        return {"kind": "int"}
    if isinstance(default, float):
        return {"kind": "number"}
    if isinstance(default, str):
        return {"kind": "str"}
    return {"kind": "any"}


# The other single-objective strategies of Kernel Tuner's strategy map, for the leaderboard
# (docs/leaderboard.md), run with Kernel Tuner's own defaults. Their rules are those of a user strategy's
# options (the type of the default, `_inferred_rule`), tightened where Kernel Tuner's code names its choices.
def _other_kt_options(strategy: str) -> dict[str, Option]:
    """The options table of the strategy `strategy` names in Kernel Tuner's strategy map (its module's name
    may differ: gen_hybrid_vndx), with the rules above."""
    from kernel_tuner.interface import strategy_map

    module = strategy_map[strategy]
    rules = {key: _inferred_rule(default) for key, (_, default) in module._options.items()}
    if strategy == "pyatf_strategies":
        rules["searchtechnique"] = _choice(module.supported_searchtechniques)
    if "method" in rules and isinstance(getattr(module, "supported_methods", None), list):  # dual_annealing
        rules["method"] = _choice(module.supported_methods)
    return _table(module._options, rules)


OTHER_KT_STRATEGIES = {
    "minimize": "Kernel Tuner's local optimisation with a scipy.optimize.minimize method, snapped to the grid.",
    "basinhopping": "Kernel Tuner's basin hopping (scipy.optimize.basinhopping) on the snapped grid.",
    "dual_annealing": "Kernel Tuner's dual annealing (scipy.optimize.dual_annealing) on the snapped grid.",
    "greedy_mls": "Kernel Tuner's greedy multi-start local search (random dimension order).",
    "ordered_greedy_mls": "Kernel Tuner's greedy multi-start local search in the parameters' order.",
    "greedy_ils": "Kernel Tuner's greedy iterated local search.",
    "mls": "Kernel Tuner's multi-start local search.",
    "simulated_annealing": "Kernel Tuner's simulated annealing.",
    "skopt": "Kernel Tuner's scikit-optimize Bayesian optimisation (random-forest learner by default).",
    "bayes_opt": "Kernel Tuner's Bayesian optimisation with a Gaussian process.",
    "hybrid_vndx": "Kernel Tuner's LLM-generated hybrid variable neighbourhood descent (hybrid_vndx).",
    "adaptive_tabu_greywolf": "Kernel Tuner's LLM-generated adaptive tabu grey wolf optimiser.",
    "pyatf_strategies": "pyATF's search techniques on Kernel Tuner's cost function (option searchtechnique).",
}
ALGORITHMS.update({
    name: Algorithm(name, name, description, _LazyTable(functools.partial(_other_kt_options, name)), False)
    for name, description in OTHER_KT_STRATEGIES.items()
})


# Every registered algorithm is shown by its name in analysis.names (the one source of display names).
ALGORITHMS = {name: replace(a, display=DISPLAY[name]) for name, a in ALGORITHMS.items()}


def algorithm_names() -> list[str]:
    """Names of all registered algorithms."""
    return list(ALGORITHMS)


# Strategy options the suite sets itself (Kernel Tuner's common options): never a user's to set.
RESERVED_OPTIONS = ("max_fevals", "time_limit")
_USER_ALGORITHMS: dict[str, Algorithm] = {}


def get_algorithm(name: str) -> Algorithm:
    """The algorithm called `name`: a registered one, or a user's strategy module named by a path to a `.py`
    file (relative to the working directory) or a dotted import path, loaded once per process.

    ValueError, naming `name`, for an unknown name (listing the registered ones), a file or module that
    cannot be imported, or a module that breaks Kernel Tuner's strategy convention.
    """
    entry = ALGORITHMS.get(name)
    if entry is not None:
        return entry
    if not is_user_spec(name):
        raise ValueError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(ALGORITHMS)}, or a user "
                         "strategy as a path to a .py file or a dotted import path (docs/your-tuner.md)")
    key = str(strategy_path(name)) if name.endswith(".py") else name
    if key not in _USER_ALGORITHMS:
        _USER_ALGORITHMS[key] = user_algorithm(name, import_strategy(name))
    return _USER_ALGORITHMS[key]


def seed_name(name: str) -> str:
    """The algorithm as a run's identity, and so its seed, holds it: a registered name or a dotted import path as it
    is; a `.py` strategy file by its file name without the folder (`file:mytuner`), so that `/tmp/x/mytuner.py`,
    `./mytuner.py` and `mytuner.py` make the same runs wherever the file lies or however the path is written. Two
    different files of one name share seeds as two versions of one strategy do (an edited file keeps its seeds, so
    a change is compared run for run); give a file another name to draw other seeds."""
    if name.endswith(".py") and name not in ALGORITHMS:
        return f"file:{Path(name).stem}"
    return name


def user_algorithm(name: str, module: ModuleType) -> Algorithm:
    """A user's strategy module as an Algorithm, its contract checked (ValueError naming `name` and the attribute).

    The contract is Kernel Tuner's (`tune_kernel(strategy=module)` accepts the same module): a callable
    `tune(searchspace, runner, tuning_options)` and `_options = {name: (description, default)}`. Optional:
    `multi_objective` (bool, default False), `display_name` (str, default the module's file stem or
    last dotted component) and `_option_rules = {name: rule}`, stricter rules than the type of the
    default for some options, in Option's terms (`{"kind": "int", "low": 2}`, `{"kind": "number",
    "low": 0, "high": 1}`, `{"kind": "choice", "choices": ["a", "b"]}`), so that a config is checked
    against them when it is read.
    """
    where = f"strategy {name!r}"
    if not callable(getattr(module, "tune", None)):
        raise ValueError(f"{where} has no function tune(searchspace, runner, tuning_options), which a Kernel Tuner "
                         "strategy module defines")
    table = getattr(module, "_options", None)
    if table is None:
        raise ValueError(f"{where} has no _options table (Kernel Tuner's convention: _options = "
                         "dict(name=(description, default), ...); an empty dict if it takes no options)")
    if not isinstance(table, Mapping):
        raise ValueError(f"{where}: _options must be a dict of name -> (description, default), found "
                         f"{type(table).__name__}")
    options = _declared_options(where, table)
    _apply_option_rules(where, getattr(module, "_option_rules", None) or {}, options)
    multi = getattr(module, "multi_objective", False)
    if not isinstance(multi, bool):
        raise ValueError(f"{where}: multi_objective must be True or False, found {multi!r}")
    display = user_display(name, module)
    paragraph = (module.__doc__ or "").strip().split("\n\n")[0]
    description = " ".join(paragraph.split()) or f"User strategy {name}."
    return Algorithm(name, module.__name__, description, options, multi, display=display, module=module)


def _declared_options(where: str, table: Mapping[Any, Any]) -> dict[str, Option]:
    """A user strategy's `_options` table as Options, each typed by its default (`_inferred_rule`)."""
    options: dict[str, Option] = {}
    for key, value in table.items():
        if not (isinstance(key, str) and isinstance(value, (tuple, list)) and len(value) == 2
                and isinstance(value[0], str)):
            raise ValueError(f"{where}: _options[{key!r}] must be a (description, default) pair, found {value!r}")
        if key in RESERVED_OPTIONS:
            raise ValueError(f"{where}: _options declares {key!r}, which the suite sets itself from the run's budget")
        options[key] = Option(value[0], value[1], **_inferred_rule(value[1]))
    return options


def _apply_option_rules(where: str, rules: Any, options: dict[str, Option]) -> None:
    """A user strategy's `_option_rules` applied to its options (in place), each rule checked and its option's
    default checked against it."""
    if not isinstance(rules, Mapping):
        raise ValueError(f"{where}: _option_rules must be a dict of option -> rule, found {type(rules).__name__}")
    for key, rule in rules.items():
        if key not in options:
            raise ValueError(f"{where}: _option_rules names {key!r}, which is not in its _options "
                             f"({', '.join(options) or 'none'})")
        try:
            option = Option(options[key].description, options[key].default,
                            **{**rule, "choices": tuple(rule.get("choices", ()))})
            if option.kind not in KINDS:
                raise TypeError(f"unknown kind {option.kind!r}")
        except TypeError as exc:
            raise ValueError(f"{where}: _option_rules[{key!r}] must be a rule such as {{'kind': 'int', 'low': 1}} "
                             f"or {{'kind': 'choice', 'choices': [...]}} ({exc})") from None
        problem = option.problem(option.default)
        if problem is not None:
            raise ValueError(f"{where}: the default of option {key!r} breaks its own rule: {problem}")
        options[key] = option


def strategy_source(name: str) -> str | None:
    """The file of a user strategy that lies under the working directory (a .py path as given, or a dotted
    path's module file), for a workflow to track so that editing it reruns its runs; None for a registered
    algorithm, an installed package's module, or a name that does not resolve (the config check reports it)."""
    if name in ALGORITHMS or not is_user_spec(name):
        return None
    if name.endswith(".py"):
        path = strategy_path(name)
        if not path.is_file():
            return None
        return name if Path(name).is_file() else str(path)
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    origin = Path(found.origin) if found is not None and found.origin else None
    if origin is None or not origin.is_file() or Path.cwd().resolve() not in origin.resolve().parents:
        return None
    if Path(sys.prefix).resolve() in origin.resolve().parents or "site-packages" in origin.parts:
        return None  # an installed package (a virtual environment may lie in the working directory)
    return os.path.relpath(origin.resolve(), Path.cwd().resolve())




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
