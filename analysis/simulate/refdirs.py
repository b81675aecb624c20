"""Memoised NSGA-III reference directions (Riesz s-energy), identical to what Kernel Tuner computes."""

from __future__ import annotations

import functools
import logging

import numpy as np

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=64)
def _energy_directions(n_obj: int, n_points: int) -> np.ndarray:
    """Compute the directions once per (n_obj, n_points) in this process.

    pymoo 0.6.2 always draws them with its fixed default seed (the factory's `do` runs under
    seed=1 and a `seed` keyword is swallowed), so the objective count and the number of points
    determine them completely, which is what makes memoising safe.
    """
    from pymoo.util.ref_dirs import get_reference_directions

    logger.debug("computing %d energy reference directions for %d objectives", n_points, n_obj)
    directions = get_reference_directions("energy", n_obj, n_points)
    directions.setflags(write=False)
    return directions


def reference_directions(n_obj: int, n_points: int) -> np.ndarray:
    """A fresh copy of the memoised directions, as Kernel Tuner's nsga3 would compute them."""
    return np.array(_energy_directions(n_obj, n_points))
