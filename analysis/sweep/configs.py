"""The configurations a sweep measures: the target's tune_params (optionally narrowed), Kernel Tuner's
cache keys, and the split of the valid configurations into contiguous shards.

Shard i of n holds the valid configurations [i*N/n, (i+1)*N/n) in Kernel Tuner's order, so the
shards of one sweep hold every valid configuration exactly once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analysis.errors import SweepError
from analysis.sweep import harness
from analysis.sweep.spec import KernelSpec

THREADS_PARAM = "threads"  # a cpu target's OpenMP thread count, by the kernels' convention


def resolve_tune_params(spec: KernelSpec, target: str, override: Mapping[str, list] | None) -> dict[str, list]:
    """The target's tune_params, optionally narrowed (same names, values from the spec's lists, spec order)."""
    full = spec.tune_params(target)
    if not override:
        return full
    out = {}
    for p, values in override.items():
        if p not in full:
            raise SweepError(spec.path, f"override names unknown parameter (known: {', '.join(full)})",
                             field=f"tune_params.{p}")
        if not isinstance(values, list) or not values or any(v not in full[p] for v in values):
            raise SweepError(spec.path, f"override {values!r} must be a non-empty sub-list of {full[p]}",
                             field=f"tune_params.{p}")
    for p, values in full.items():
        out[p] = [v for v in values if v in override[p]] if p in override else values
    return out


def config_key(config: Mapping[str, Any], names: Sequence[str]) -> str:
    """Kernel Tuner's cache key of a configuration."""
    return ",".join(str(config[p]) for p in names)


def shard_configs(spec: KernelSpec, target: str, tune_params: Mapping[str, list], shard: int, shards: int):
    """The valid configurations of shard `shard` of `shards` (contiguous ranges in Kernel Tuner's order)."""
    if not 0 <= shard < shards:
        raise SweepError(None, f"shard {shard} is not in 0..{shards - 1}", field="shard")
    configs = spec.valid_configs(target, tune_params)
    n = len(configs)
    return configs[shard * n // shards:(shard + 1) * n // shards]


def shard_cores(kernel: str, target: str, tune_params: Mapping[str, list] | None, shard: tuple[int, int]) -> int:
    """Cores a shard's configurations use at once: the largest `threads` among them on cpu, else 1.

    The sweep rule declares it as the job's threads, so that a shard measuring two-thread
    configurations never shares the machine's cores with another shard (on a 2-core machine,
    two-thread times measured beside a second shard varied by a coefficient of variation of
    0.5-0.9 between runs, one-thread times by 0.02-0.05).
    """
    spec = harness.load_spec(kernel)
    if target != "cpu" or THREADS_PARAM not in spec.target(target).own_params:
        return 1
    configs = shard_configs(spec, target, resolve_tune_params(spec, target, tune_params), *shard)
    return max((int(c[THREADS_PARAM]) for c in configs), default=1)


def parse_shard(text: str) -> tuple[int, int]:
    """'i/n' -> (i, n)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise SweepError(None, f"'{text}' is not of the form i/n", field="shard") from None
    if n < 1 or not 0 <= i < n:
        raise SweepError(None, f"'{text}': need 0 <= i < n", field="shard")
    return i, n
