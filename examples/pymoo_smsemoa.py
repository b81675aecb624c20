"""SMS-EMOA (pymoo) as a Kernel Tuner strategy, through the ask/tell adapter `analysis.simulate.asktell`.

Use it as any Kernel Tuner strategy module, e.g.
`tune_kernel(..., strategy=<this module>, strategy_options={"popsize": 20}, seed=1)`, or name this
file as a study's `algorithm:`.

The search runs on parameter indices (one integer per tunable parameter): pymoo's integer random
sampling, then SBX crossover and polynomial mutation on the indices, rounded back to integers, and
SMS-EMOA's survival (non-dominated sorting, then the least hypervolume contribution leaves). It is
constraint-unaware: a configuration that violates the restrictions, or fails to compile or run, is
told to pymoo as infeasible (constraint value G = 1 > 0), so feasibility-first selection and
survival rank it below every valid one. pymoo still needs finite objective values for it (SMS-EMOA
normalises the population's objectives, infeasible members included, before its hypervolume
maths): it gets, per objective, the worst cost of a valid configuration seen so far (0 while none
has been seen), never Kernel Tuner's float-max marker. Restriction violations cost no evaluations;
revisits are free; the adapter's `stale_limit` ends a run that stops proposing anything new, and
the run also ends when pymoo's mating cannot produce a new offspring.

With one objective non-dominated sorting is plain sorting and SMS-EMOA is an elitist
(mu + lambda) genetic algorithm; it runs on any number of objectives (`multi_objective = True`).
pymoo's hypervolume contributions need two objective columns, so with one objective pymoo is given
a second, constant one: every point ties on it, so it changes no comparison, and the survival is
SMS-EMOA's in one dimension (within a front of equal values, which all contribute nothing, the
first goes).
Every random draw comes from the run's seed (pymoo's `setup(seed=...)`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pymoo.algorithms.moo.sms import SMSEMOA
from pymoo.core.evaluator import Evaluator
from pymoo.core.problem import Problem as PymooProblem
from pymoo.core.termination import NoTermination
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.operators.repair.rounding import RoundingRepair
from pymoo.operators.sampling.rnd import IntegerRandomSampling
from pymoo.problems.static import StaticProblem

from analysis.simulate.asktell import ADAPTER_OPTIONS, ADAPTER_RULES, Cost, Problem, tune_with

display_name = "SMS-EMOA"
multi_objective = True

_options = {
    "popsize": ("Population size (also the number of offspring per generation)", 20),
    "crossover_prob": ("Probability that a pair of parents is recombined by SBX crossover", 0.9),
    "crossover_eta": ("Distribution index of SBX crossover on parameter indices", 15.0),
    "mutation_eta": ("Distribution index of polynomial mutation on parameter indices", 20.0),
    **ADAPTER_OPTIONS,
}
# stricter than the defaults' types, so that a config is checked against them when it is read
_option_rules = {
    "popsize": {"kind": "int", "low": 2},
    "crossover_prob": {"kind": "number", "low": 0, "high": 1},
    "crossover_eta": {"kind": "number", "low": 0, "low_open": True},
    "mutation_eta": {"kind": "number", "low": 0, "low_open": True},
    **ADAPTER_RULES,
}


class SMSEMOAOptimizer:
    """pymoo's SMS-EMOA driven by ask/tell on a Problem's index encoding (see the module docstring)."""

    def __init__(self, problem: Problem) -> None:
        options = problem.options
        if options["popsize"] < 2:
            raise ValueError(f"option 'popsize' must be at least 2, found {options['popsize']!r}")
        self.n_objectives = problem.n_objectives
        self.padding = max(0, 2 - problem.n_objectives)  # a constant column for pymoo's 2-D+ hypervolume
        self.space = PymooProblem(n_var=len(problem.sizes), n_obj=problem.n_objectives + self.padding, n_ieq_constr=1,
                                  xl=np.zeros(len(problem.sizes)), xu=np.array(problem.sizes) - 1.0, vtype=int)
        self.algorithm = SMSEMOA(
            pop_size=options["popsize"],
            sampling=IntegerRandomSampling(),
            crossover=SBX(prob=options["crossover_prob"], eta=options["crossover_eta"], vtype=float,
                          repair=RoundingRepair()),
            mutation=PM(eta=options["mutation_eta"], vtype=float, repair=RoundingRepair()),
            eliminate_duplicates=True,
        )
        self.algorithm.setup(self.space, termination=NoTermination(), seed=problem.seed, verbose=False,
                             progress=False)
        self.worst = np.zeros(problem.n_objectives)  # per objective, the worst valid cost seen so far
        self.seen_valid = False
        self.pending: Any = None  # the pymoo Population last asked for

    def ask(self) -> list[list[int]]:
        """The next generation's offspring (the initial sample first); [] once pymoo can make none."""
        if not self.algorithm.has_next():
            return []
        self.pending = self.algorithm.ask()
        if self.pending is None or len(self.pending) == 0:
            return []
        return np.rint(self.pending.get("X")).astype(int).tolist()

    def tell(self, candidates: list[tuple[int, ...]], costs: list[Cost]) -> None:
        """Give pymoo the costs: valid ones as they are (feasible), invalid ones as G = 1 with the worst costs."""
        valid = [c for c in costs if c is not None]
        if valid:
            batch_worst = np.max(np.array(valid, dtype=float), axis=0)
            self.worst = np.maximum(self.worst, batch_worst) if self.seen_valid else batch_worst
            self.seen_valid = True
        F = np.array([self.worst if c is None else c for c in costs], dtype=float).reshape(-1, self.n_objectives)
        F = np.hstack([F, np.zeros((len(F), self.padding))])
        G = np.array([[1.0 if c is None else 0.0] for c in costs])
        Evaluator().eval(StaticProblem(self.space, F=F, G=G), self.pending)
        self.algorithm.tell(infills=self.pending)


def tune(searchspace, runner, tuning_options):
    """Kernel Tuner strategy interface: run SMS-EMOA (pymoo) through `analysis.simulate.asktell.tune_with`."""
    return tune_with(SMSEMOAOptimizer, _options, searchspace, runner, tuning_options)
