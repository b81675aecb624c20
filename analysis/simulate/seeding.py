"""Seeds for simulated runs: stable derivation and the global generators Kernel Tuner draws from."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import random
from typing import Any

import numpy as np

from analysis.fastpath.lhs import lhs_sample_indices
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

    With `memo` (the space's, shared by its runs) the sample comes from `analysis.fastpath.lhs`, which
    remembers the configuration closest to each Latin-hypercube point between runs; without it,
    from Kernel Tuner's own method (the tune_kernel reference does this).

    The swap happens only when a strategy actually asks for an LHS sample, so runs that never need
    one never import `scipy.stats` (a slow import).
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


def _seeded_class(original: type, rng: np.random.Generator) -> type:
    """A subclass of scipy's `LatinHypercube` class `original` that draws from `rng` unless given a generator."""

    class SeededLatinHypercube(original):
        """LatinHypercube drawing from the run's generator unless given one."""

        def __init__(self, d: int, **kwargs: Any) -> None:
            if kwargs.get("rng") is None and kwargs.get("seed") is None:
                kwargs["rng"] = rng
            super().__init__(d, **kwargs)

    return SeededLatinHypercube


def _seeded_qmc(rng: np.random.Generator) -> contextlib.AbstractContextManager:
    """Swap `scipy.stats.qmc.LatinHypercube` for a subclass drawing from `rng` unless given a generator."""
    from scipy.stats import qmc

    return swapped(qmc, LatinHypercube=_seeded_class(qmc.LatinHypercube, rng))


class TickClock:
    """A stand-in for the `time` module of Kernel Tuner's bayes_opt: every reading is one tick after the one
    before, so a run's clock readings depend on the order of its steps alone, not on the machine's speed or load.

    Kernel Tuner (1.5.0) bayes_opt's default method, "multi-ultrafast", refits its Gaussian process and
    predicts again when the last round of evaluations took at least `predict_eval_ratio` (5) times as long as
    the last prediction, and otherwise after `predict_eval_ratio` rounds. In simulation an evaluation is a cache
    lookup, so the wall-clock clause decided only now and then, by the machine's speed and load: the same run
    refitted at other rounds on another machine, or again on the same one (docs/study.md). On this clock each
    measured stretch is one tick long, so the clause never holds and the model is refitted every
    `predict_eval_ratio + 1` rounds, as the wall clock mostly had it in simulation. The other methods read the
    clock only for their log of timings."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def perf_counter(self) -> float:
        return float(next(self._ticks))

    def perf_counter_ns(self) -> int:
        return next(self._ticks)


def seeded_bayes_opt(seed: int) -> contextlib.AbstractContextManager:
    """Make Kernel Tuner's bayes_opt reproducible while active.

    Kernel Tuner (1.5.0) draws bayes_opt's initial sample from `LatinHypercube(d=...)`, imported into its
    module when it loads, without a seed (OS entropy): the same run differed every time, also within one
    process. While active, that name is a subclass drawing from a generator seeded from the run seed, and
    the module's clock is a `TickClock` of the run's own (its refits would otherwise follow the wall clock).
    """
    from kernel_tuner.strategies import bayes_opt

    rng = np.random.default_rng([seed, 0x424F4C48])  # second word: "BOLH", apart from the other streams
    return swapped(bayes_opt, LatinHypercube=_seeded_class(bayes_opt.LatinHypercube, rng), time=TickClock())
