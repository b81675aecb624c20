"""Seeds for simulated runs: stable derivation and the global generators Kernel Tuner draws from."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import random
from typing import Any

import numpy as np

from analysis.fastpath.patching import swapped

logger = logging.getLogger(__name__)

SEED_BITS = 31  # stays a valid seed for random, NumPy's legacy generator and pymoo


def _canonical(value: Any) -> Any:
    """Turn tuples, sets and NumPy scalars into plain JSON-able values with a fixed order."""
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=repr)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def derive_seed(**identity: Any) -> int:
    """Stable seed from a run's identity (space, objectives, algorithm, options, budget, repetition)."""
    text = json.dumps(_canonical(identity), sort_keys=True, separators=(",", ":"), allow_nan=True)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % (2**SEED_BITS)


def seed_globals(seed: int) -> None:
    """Seed Python's `random` and NumPy's global generator, which Kernel Tuner strategies draw from."""
    random.seed(seed)
    np.random.seed(seed % 2**32)


def seeded_latin_hypercube(seed: int, memo: dict | None = None) -> contextlib.AbstractContextManager:
    """Make Searchspace.get_LHS_sample_indices reproducible while active.

    Kernel Tuner (1.5.0) builds `scipy.stats.qmc.LatinHypercube(d)` without a seed, i.e. from OS
    entropy, when diff_evo starts constraint-aware. It imports the class at call time, so swapping
    the module attribute for a subclass with a seeded generator for the duration of that call is
    enough. All LHS draws within one run share one generator seeded from the run seed.

    With `memo` (the space's, shared by its runs) the sample comes from `lhs_sample_indices`, which
    remembers the configuration closest to each Latin-hypercube point between runs; without it,
    from Kernel Tuner's own method (the tune_kernel reference does this).

    The swap happens only when a strategy actually asks for an LHS sample: importing
    `scipy.stats` costs ~0.5 s, which most runs (and most simulate jobs) never need.
    """
    from kernel_tuner.searchspace import Searchspace

    rng = np.random.default_rng([seed, 0x4C4853])  # second word: "LHS", keeps it apart from other streams
    original_method = Searchspace.get_LHS_sample_indices

    def seeded_lhs_indices(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _seeded_qmc(rng):
            if memo is None:
                return original_method(self, *args, **kwargs)
            return lhs_sample_indices(self, *args, memo=memo, original=original_method, **kwargs)

    return swapped(Searchspace, get_LHS_sample_indices=seeded_lhs_indices)


# sha256 of the source of Kernel Tuner 1.5.0's Searchspace.get_LHS_sample_indices, which
# `lhs_sample_indices` replicates (a test compares it with the installed one)
KT_LHS_SHA256 = "3ed82471dc61ccedac5d76c7fa1880ee2082aef1b5e3ae879ba4ce2d92977d89"


def lhs_sample_indices(searchspace: Any, num_samples: int, memo: dict, original: Any) -> list[int]:
    """Kernel Tuner's Searchspace.get_LHS_sample_indices with the closest configuration of each point memoised.

    Kernel Tuner draws a Latin hypercube of parameter-index points; a point that is a valid
    configuration is taken as it is, any other is replaced by the configuration with the smallest
    sum of absolute index differences (the first such, by np.argmin over the whole space). That
    search is a pass over every configuration, and in constraint-aware DE runs the same points come
    back (100 runs on an 11,130-configuration space: 140,573 searches, 11,142 distinct points), so
    the answer is kept in `memo` per point. On a miss it is computed by Kernel Tuner's own private
    function into Kernel Tuner's buffers, as there. Everything else is done as there: the draw
    (`qmc.LatinHypercube` looked up at call time, so the seeded one), the look-ups, the
    de-duplication through a set and the fill-up with random samples. The cases Kernel Tuner treats
    specially (a sample as large as the space or larger) go to `original`.
    """
    from scipy.stats import qmc

    if num_samples >= searchspace.size:
        return original(searchspace, num_samples)
    if searchspace.params_values_indices is None:
        searchspace._Searchspace__prepare_neighbors_index()
    points = qmc.LatinHypercube(len(searchspace.params_values)).integers(
        l_bounds=searchspace.get_param_indices_lower_bounds(),
        u_bounds=searchspace.get_param_indices_upper_bounds(),
        n=num_samples,
        endpoint=True)
    points = np.array(points, dtype=searchspace.params_values_indices.dtype)
    indices = []
    for point in points:
        index = searchspace.get_param_config_index(searchspace.get_param_config_from_param_indices(point))
        if index is None:
            key = ("lhs_closest", point.dtype.str, point.tobytes())
            index = memo.get(key)
            if index is None:
                searchspace._Searchspace__calc_sum_of_index_differences(point)
                index = memo[key] = np.argmin(searchspace._alloc_sum_of_index_differences).item()
        indices.append(index)
    indices = list(set(indices))
    while len(indices) < num_samples:
        indices.extend(searchspace.get_random_sample_indices(num_samples - len(indices)).tolist())
        indices = list(set(indices))
    return indices


def _seeded_qmc(rng: np.random.Generator) -> contextlib.AbstractContextManager:
    """Swap `scipy.stats.qmc.LatinHypercube` for a subclass drawing from `rng` unless given a generator."""
    from scipy.stats import qmc

    original = qmc.LatinHypercube

    class SeededLatinHypercube(original):  # type: ignore[valid-type, misc]
        """LatinHypercube drawing from the run's generator unless given one."""

        def __init__(self, d: int, **kwargs: Any) -> None:
            if kwargs.get("rng") is None and kwargs.get("seed") is None:
                kwargs["rng"] = rng
            super().__init__(d, **kwargs)

    return swapped(qmc, LatinHypercube=SeededLatinHypercube)
