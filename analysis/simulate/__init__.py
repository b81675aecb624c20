"""The `simulate` stage (workflow/rules/simulate.smk): Kernel Tuner's search strategies replayed on exhaustive caches.

`engine.simulate_run` is one run; `jobs` is what a simulate job does (all repetitions of one setting at
each budget); `registry` names the algorithms and checks their options (a new algorithm goes there, or
in a file of its own: docs/your-tuner.md); `KernelTunerSpace` (analysis.kt.space) is a space as Kernel Tuner sees
it (tune_params, restrictions, cache); `reference` runs the same through plain `tune_kernel`, to check
the engine against; `constraint_aware` runs the constraint-aware study's strategies to the methodology's
budget. The engine's exact, faster equivalents of library code are in `analysis.fastpath`.

The names below are imported on first use, so that importing one submodule stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "KernelTunerSpace": "analysis.kt.space",
    "Trace": "analysis.simulate.trace",
    "algorithm_names": "analysis.simulate.registry",
    "derive_seed": "analysis.simulate.seeding",
    "get_algorithm": "analysis.simulate.registry",
    "options_markdown": "analysis.simulate.registry",
    "prepare_space": "analysis.simulate.engine",
    "resolve_options": "analysis.simulate.registry",
    "seed_name": "analysis.simulate.registry",
    "simulate_run": "analysis.simulate.engine",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'analysis.simulate' has no attribute {name!r}")
