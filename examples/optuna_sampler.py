"""An Optuna sampler (TPE or NSGA-II) as a Kernel Tuner strategy, through the ask/tell adapter
`analysis.simulate.asktell`.

Use it as any Kernel Tuner strategy module, e.g.
`tune_kernel(..., strategy=<this module>, strategy_options={"sampler": "nsga2"}, seed=1)`, or name
this file as a study's `algorithm:`.

One Optuna trial per proposal, through Optuna's ask/tell interface on an in-memory study with one
"minimize" direction per objective (Kernel Tuner's costs: an objective where higher is better
arrives negated). Each tunable parameter is an integer distribution over its value indices
(`IntDistribution(0, n - 1)`, in the order of its values), so the samplers can use the order of
numeric parameter values. TPE models the parameters jointly by default (option `multivariate`;
Optuna's own default is multivariate for one objective only): with several objectives independent
TPE was seen to re-propose configurations it had already evaluated until `stale_limit` ended the
run, long before the budget was spent.

A configuration that violates the restrictions, or fails to compile or run, is by default told as
an infeasible trial (option `invalid: infeasible`): a completed trial with the constraint value 1
(`Trial.set_constraint`; valid ones get 0) and, per objective, the worst cost of a valid
configuration seen so far (0 while none has been seen), so that TPE counts it among the bad trials
and NSGA-II ranks it below every feasible one. With `invalid: failed` it is told as a failed trial
(`TrialState.FAIL`), which Optuna's samplers ignore: they learn nothing about where the invalid
configurations are, and multi-objective TPE was seen to propose the same invalid configuration
over and over until `stale_limit` ended the run. Restriction violations cost no evaluation, revisits
are free, as in Kernel Tuner, and the adapter's `stale_limit` ends a run that stops proposing
anything new.

The sampler is seeded from the run's seed, so a run reproduces exactly. Optuna's log messages are
silenced (warnings and up still show) while a run is in progress.
"""

from __future__ import annotations

import optuna
from optuna.distributions import IntDistribution
from optuna.trial import TrialState

from analysis.simulate.asktell import ADAPTER_OPTIONS, ADAPTER_RULES, Cost, Problem, tune_with

display_name = "Optuna"
multi_objective = True

SAMPLERS = ("tpe", "nsga2")
INVALID = ("infeasible", "failed")

_options = {
    "sampler": ("Optuna sampler: tpe (TPESampler) or nsga2 (NSGAIISampler)", "tpe"),
    "n_startup_trials": ("TPE: trials sampled at random before TPE models the results", 10),
    "multivariate": ("TPE: model the parameters jointly (multivariate TPE) rather than one by one", True),
    "popsize": ("NSGA-II: population size", 20),
    "invalid": ("How an invalid configuration is told: infeasible (constraint violated, worst costs) or failed",
                "infeasible"),
    **ADAPTER_OPTIONS,
}
# stricter than the defaults' types, so that a config is checked against them when it is read
_option_rules = {
    "sampler": {"kind": "choice", "choices": SAMPLERS},
    "n_startup_trials": {"kind": "int", "low": 1},
    "popsize": {"kind": "int", "low": 2},
    "invalid": {"kind": "choice", "choices": INVALID},
    **ADAPTER_RULES,
}


def make_sampler(name: str, seed: int, n_startup_trials: int, multivariate: bool,
                 popsize: int) -> optuna.samplers.BaseSampler:
    """The Optuna sampler called `name` (one of SAMPLERS), seeded; ValueError on a bad name or size."""
    if name == "tpe":
        if n_startup_trials < 1:
            raise ValueError(f"option 'n_startup_trials' must be at least 1, found {n_startup_trials!r}")
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=n_startup_trials, multivariate=multivariate)
    if name == "nsga2":
        if popsize < 2:
            raise ValueError(f"option 'popsize' must be at least 2, found {popsize!r}")
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=popsize)
    raise ValueError(f"option 'sampler' must be one of: {', '.join(SAMPLERS)}, found {name!r}")


class OptunaOptimizer:
    """An Optuna study driven one trial at a time by ask/tell on a Problem's index encoding."""

    def __init__(self, problem: Problem) -> None:
        options = problem.options
        sampler = make_sampler(options["sampler"], problem.seed, options["n_startup_trials"], options["multivariate"],
                               options["popsize"])
        self.study = optuna.create_study(directions=["minimize"] * problem.n_objectives, sampler=sampler)
        self.names = problem.names
        self.distributions = {name: IntDistribution(0, size - 1) for name, size in zip(problem.names, problem.sizes)}
        if options["invalid"] not in INVALID:
            raise ValueError(f"option 'invalid' must be one of: {', '.join(INVALID)}, found {options['invalid']!r}")
        self.fail_invalid = options["invalid"] == "failed"
        self.worst: list[float] | None = None  # per objective, the worst valid cost seen so far
        self.pending: list[optuna.Trial] = []

    def ask(self) -> list[list[int]]:
        """One new trial's parameter indices (Optuna's samplers never finish by themselves)."""
        trial = self.study.ask(self.distributions)
        self.pending = [trial]
        return [[trial.params[name] for name in self.names]]

    def tell(self, candidates: list[tuple[int, ...]], costs: list[Cost]) -> None:
        """Complete each pending trial with its costs; an invalid one as infeasible, or failed (option `invalid`)."""
        for cost in costs:
            if cost is not None:
                self.worst = list(cost) if self.worst is None else [max(w, c) for w, c in zip(self.worst, cost)]
        for trial, cost in zip(self.pending, costs):
            if cost is None and self.fail_invalid:
                self.study.tell(trial, state=TrialState.FAIL)
                continue
            trial.set_constraint("valid", 0.0 if cost is not None else 1.0)
            if cost is None:
                cost = self.worst if self.worst is not None else [0.0] * len(self.study.directions)
            self.study.tell(trial, list(cost))
        self.pending = []


def tune(searchspace, runner, tuning_options):
    """Kernel Tuner strategy interface: run an Optuna sampler through `analysis.simulate.asktell.tune_with`."""
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        return tune_with(OptunaOptimizer, _options, searchspace, runner, tuning_options)
    finally:
        optuna.logging.set_verbosity(verbosity)
