"""The fast path: exact, faster equivalents of Kernel Tuner, pymoo and autotuning_methodology internals.

Simulated runs spend most of their time in library code written for real tuning sessions (a
Python loop per proposal, a pass over the whole space per neighbour query, objects per individual).
The modules here replace such code, while a run is active, by equivalents that give the same
results, draw the same random numbers in the same order and leave the generators in the same state:

    group        replaces (see `pins.PINS` for every replicated function)           module
    runner       CostFunc._run_configs, SimulationRunner.run, print_config_output   runner
    snapping     unscale_and_snap_to_nearest(_valid)                                 snapping
    neighbours   Searchspace neighbour queries (Hamming, adjacent, strictly-adj.)    neighbours
    searchspace  a Searchspace per run (copied instead of rebuilt)                   searchspace
    lhs          Searchspace.get_LHS_sample_indices                                  lhs
    diff_evo     kernel_tuner.strategies.diff_evo's loop                             diff_evo
    mating       pymoo's mating loop, Kernel Tuner's pymoo mutation and repair       mating, kt_operators
    duplicates   pymoo/Kernel Tuner duplicate eliminations                           duplicates
    population   pymoo's Population.get                                              population
    portable     NSGA-III's hyperplane solve, in a fixed float order                 portable
    scoring      autotuning_methodology's result arrays (analysis.indicators.methodology)
    bagging      the methodology's isotonic curve and bagged interval (scikit-learn fits)  bagging

The library itself is never edited: `patching.swapped` sets an attribute for the duration of a
run and restores it. Every replicated function is pinned by the sha256 of its source
(`pins.PINS`); a group whose pins do not match the installed library is refused at first use
with the difference (`python -m analysis.cli fastpath --diff`). The library internals the study's
own code relies on (tune_kernel's set-up, pymoo_minimize.tune's pieces, one private method of
autotuning_methodology) are pinned too (`pins.HARNESS_PINS`), checked where they are relied on.

`TSB_STOCK=1` in the environment turns the fast path off: the suite then runs the stock
libraries (only the study's own semantics remain: seeding, the simulated clock, the
constraint-unaware strategies, the shipped NSGA-III reference directions). `TSB_STOCK=lhs,mating`
turns off just those groups. Results are the same either way (tests/fastpath/test_stock.py runs
the tiny study under TSB_STOCK=1 and compares its tables byte for byte); only time differs.
Upgrading a library: run stock, diff the pinned sources, mend the replicas, re-pin.
"""

from __future__ import annotations

import os

from analysis.errors import InputError
from analysis.fastpath.pins import check_once

GROUPS = ("runner", "snapping", "neighbours", "searchspace", "lhs", "diff_evo", "mating", "duplicates",
          "population", "portable", "scoring", "bagging")
ENV = "TSB_STOCK"


def stock_groups() -> frozenset[str]:
    """The groups `TSB_STOCK` turns off: none (unset, empty or 0), all (1), or a comma-separated list."""
    value = os.environ.get(ENV, "").strip()
    if value in ("", "0"):
        return frozenset()
    if value == "1":
        return frozenset(GROUPS)
    groups = {part.strip() for part in value.split(",") if part.strip()}
    unknown = sorted(groups - set(GROUPS))
    if unknown:
        raise InputError(f"environment variable {ENV}",
                         f"unknown fast-path group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)} (or 1 for all)")
    return frozenset(groups)


def enabled(group: str) -> bool:
    """Whether `group`'s equivalents are applied: not turned off by TSB_STOCK, and its pins checked against the
    installed libraries (once per process; a mismatch raises `pins.PinMismatch`)."""
    if group not in GROUPS:
        raise ValueError(f"unknown fast-path group {group!r}")
    if group in stock_groups():
        return False

    check_once(group)
    return True
