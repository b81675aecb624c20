"""The quality indicators the `indicators` stage computes for every run, by name.

Each indicator is one function of one signature, `function(points, reference)`:

- `points`: n x m, one row per distinct configuration the run evaluated, in evaluation order and cut to
  the budget, normalised with the true front (`analysis.indicators.jobs.NormalisedFront`) so that every
  objective is minimised; a row of NaN is an evaluation that yields no point (failed, invalid, or
  non-finite in an objective of the set);
- `reference`: r x m, the normalised true front Z (unique points, r >= 1).

An anytime indicator returns one value per row of `points` (its value after that evaluation); `jobs` pads
the curve to the budget with its last value (with `empty` when the run evaluated nothing), writes it as a
column of the curve table and its last value as a column of the final table. A final indicator returns one
float, a column of the final table only. The columns are the names below, in this order, between the
identity and count columns and `eval_time_ms`; a new indicator is a module with its function and an entry
here (docs/extending.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from analysis.indicators.hypervolume import hypervolume
from analysis.indicators.igd import igd_plus_curve


@dataclass(frozen=True)
class Indicator:
    """One registered indicator: its function, which direction is better, whether it is anytime or final."""

    function: Callable[[np.ndarray, np.ndarray], np.ndarray | float]
    direction: str  # "min": lower is better; "max": higher is better
    anytime: bool  # True: a curve over k and its last value; False: one value per run
    description: str
    empty: float = math.nan  # anytime only: the value of a run that evaluated nothing within its budget


INDICATORS: dict[str, Indicator] = {
    "igd_plus": Indicator(
        igd_plus_curve, "min", True,
        "IGD+ (Ishibuchi et al., 2015) of the valid points so far against the true front; +inf before the first",
        empty=math.inf),
    "hv": Indicator(
        hypervolume, "max", False,
        "hypervolume (moocore) of the run's valid points up to 1.1 in every normalised objective; 0 without one"),
}
