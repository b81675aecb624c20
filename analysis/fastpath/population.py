"""pymoo's `Population.get` reading each individual's value once.

pymoo reads a population's attribute (X, F, CV, FEAS, rank, crowding, ...) with `Population.get`,
which indexes the population array once per individual and calls `Individual.get`; that asks
`hasattr(individual, key)` and then `getattr(individual, key)`, so a property such as FEAS (a NumPy
comparison) is computed twice. NSGA-II/III read the population's attributes many times per
generation, so the reads are a noticeable share of a simulated run.

`population_get` gives the same arrays: the same values per individual in population order (each
property evaluated once: pymoo's properties are pure), converted by the same `np.array`. A key that
is no attribute (getattr raises AttributeError, the case where hasattr is false) is read from the
individual's data dict, or None, as `Individual.get` does. Keyword arguments, a key asked for twice
(pymoo then fills one shared list twice), a population that is not one-dimensional, or an
individual of a class that overrides `get` go to pymoo's own method.
The two replicated methods are pinned in `analysis.fastpath.pins`.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from pymoo.core.individual import Individual
from pymoo.core.population import Population

from analysis.fastpath.patching import swapped

__all__ = ["individual_values_read_once", "population_get"]


_PYMOO_GET = Population.get


def _value(individual: Individual, key: str) -> Any:
    """`individual.get(key)` with the attribute read once."""
    try:
        return getattr(individual, key)
    except AttributeError:
        return individual.data.get(key)


def population_get(self: Population, *args: str, to_numpy: bool = True, **kwargs: Any) -> Any:
    """`Population.get(*args, to_numpy=to_numpy)`: one array (or list) per key, a tuple of them for several."""
    individuals = self.tolist() if self.ndim == 1 and not kwargs and len(set(args)) == len(args) else None
    if individuals is None or any(getattr(type(individual), "get", None) is not Individual.get
                                  for individual in individuals):
        return _PYMOO_GET(self, *args, to_numpy=to_numpy, **kwargs)
    res: list[list] | list[np.ndarray] = [[_value(individual, key) for individual in individuals] for key in args]
    if to_numpy:
        res = [np.array(values) for values in res]
    return res[0] if len(args) == 1 else tuple(res)


def individual_values_read_once() -> contextlib.AbstractContextManager:
    """Let pymoo's populations answer `get` with `population_get` while active."""
    return swapped(Population, get=population_get)
