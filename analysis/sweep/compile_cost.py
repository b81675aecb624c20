"""What Kernel Tuner's C backend pays to compile one host-CPU configuration on its own.

A host-CPU sweep compiles the optimisation variants of a precision combination together
(analysis.sweep.variants), so its cache cannot say what a real tuning run pays per
configuration: Kernel Tuner compiles every configuration it evaluates on its own (g++ -O3 of
that configuration's source). This module measures exactly that, with Kernel Tuner itself:
`tune_kernel` in per-configuration mode (the sweep's own harness, `compile_mode=
"per-configuration"`) on the configurations of a space, recording Kernel Tuner's
`compile_time`, `verification_time` and `benchmark_time` of each into a Kernel Tuner cache.

Measuring every configuration of the nine spaces takes hours on a 2-core machine, so the
configurations are measured in a fixed, seeded order (`measurement_order`) whose every
prefix is a stratified sample: the precision combinations (the strata) take turns, each
contributing its configurations in a shuffled order. The job (`measure_rounds`) measures
`chunk` more configurations of every kernel per round and is resumable at any moment
(Kernel Tuner skips what its cache holds; `cachefile.repair` mends an interrupted write),
so a later run extends the sample until it holds every configuration.

Configurations not (yet) measured get an imputed compile time (analysis.spaces.compile_cost).
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import manifest
from analysis.errors import InputError
from analysis.io import write_gzip, write_json
from analysis.sweep import cachefile, harness, progress
from analysis.sweep.configs import config_key
from analysis.sweep.merge import read_disjoint_caches
from analysis.sweep.provenance import command_first_line as _cmd_first_line
from analysis.sweep.provenance import cpu_model
from analysis.sweep.shard import measure_configs
from analysis.sweep.spec import KERNELS_DIR, KernelSpec

log = logging.getLogger(__name__)
ORDER_SEED = 20261125  # fixes the measurement order, so every prefix of it is the same sample everywhere
TARGET = "cpu"
SIZE = "cpu"
PAUSE_FILE = "PAUSE"  # while a file PAUSE* exists next to the caches, the job waits between configurations


def measurement_order(spec: KernelSpec, seed: int = ORDER_SEED, target: str = TARGET) -> list[dict[str, Any]]:
    """Every valid configuration of `spec`'s `target`, in an order whose prefixes are stratified samples.

    Strata are the precision combinations (the values of the spec's precision parameters); their
    turn order and the order within each are shuffled with `seed`, then they take turns.
    """
    configs = spec.valid_configs(target)
    prec = [p for p in spec.tune_params(target) if p in spec.precision]
    strata: dict[tuple, list[dict[str, Any]]] = {}
    for c in configs:
        strata.setdefault(tuple(c[p] for p in prec), []).append(c)
    rng = random.Random(f"{spec.name}:{seed}")
    groups = list(strata.values())
    rng.shuffle(groups)
    for g in groups:
        rng.shuffle(g)
    return [c for row in itertools.zip_longest(*groups) for c in row if c is not None]


def worker_share(order: Sequence[dict[str, Any]], count: int, worker: tuple[int, int]) -> list[dict[str, Any]]:
    """Worker i of n takes every n-th configuration of the first `count` of `order`."""
    i, n = worker
    return list(order[:count][i::n])


@dataclass
class PausableProgress(progress.Progress):
    """Progress that, after a configuration is measured, waits while a file `PAUSE*` exists in `folder`.

    Touching such a file (one per person or process that needs the machine) lets heavy work
    (a test suite, a study) run without disturbing the compile timings: the job holds between
    two configurations, never inside one's timing.
    """

    folder: Path | None = None

    def tick(self) -> None:
        super().tick()
        while self.folder is not None and any(self.folder.glob(f"{PAUSE_FILE}*")):
            time.sleep(2)


def cache_path(out_dir: str | Path, kernel: str, worker: tuple[int, int]) -> Path:
    return Path(out_dir) / f"{kernel}.w{worker[0]}of{worker[1]}.json"


def measure(kernel: str, cache: str | Path, *, count: int, worker: tuple[int, int] = (0, 1),
            iterations: int = 7) -> dict[str, Any]:
    """Measure this worker's share of the first `count` configurations of `kernel`'s order into `cache`."""
    spec = harness.load_spec(kernel)
    params = spec.tune_params(TARGET)
    names = list(params)
    todo = worker_share(measurement_order(spec), count, worker)
    cache = Path(cache)
    cache.parent.mkdir(parents=True, exist_ok=True)
    kept = cachefile.repair(cache)
    done = set(cachefile.read(cache)["cache"]) if cache.exists() else set()
    pending = [c for c in todo if config_key(c, names) not in done]
    if not pending:
        return {"kernel": kernel, "share": len(todo), "measured_now": 0, "in_cache": kept}
    tracker = PausableProgress(f"{kernel} compile cost {worker[0]}/{worker[1]}", len(todo), len(todo) - len(pending),
                               folder=cache.parent)
    _, measured, _ = measure_configs(spec, TARGET, SIZE, cache, params, pending, done, iterations=iterations,
                                     compile_mode="per-configuration", tracker=tracker)
    return {"kernel": kernel, "share": len(todo), "measured_now": measured, "in_cache": kept + measured,
            "load_average_1min": round(os.getloadavg()[0], 2)}


def measure_rounds(kernels: Sequence[str], out_dir: str | Path, *, chunk: int, worker: tuple[int, int] = (0, 1),
                   rounds: int | None = None, iterations: int = 7) -> None:
    """Round r measures the first r * `chunk` configurations of every kernel's order (this worker's share).

    Stops after `rounds` rounds, or when every configuration of every kernel is measured.
    """
    totals = {k: len(harness.load_spec(k).valid_configs(TARGET)) for k in kernels}
    for r in itertools.count(1):
        if rounds is not None and r > rounds:
            return
        for k in kernels:
            summary = measure(k, cache_path(out_dir, k, worker), count=min(r * chunk, totals[k]), worker=worker,
                              iterations=iterations)
            log.info("round %d: %s", r, summary)
        if all(r * chunk >= n for n in totals.values()):
            return


def _portable(flag: str) -> str:
    """A compiler flag with the checkout's absolute path replaced by a path relative to it, in <>."""
    root = str(KERNELS_DIR.parent.parent)
    return flag.replace(root + "/", "<").rstrip("/") + ">" if root in flag else flag


def targets_of(kernel: str) -> list[str]:
    """The targets a kernel's spec defines."""
    return list(harness.load_spec(kernel).targets)


def publish(kernel: str, caches: Sequence[str | Path], out: str | Path, provenance: str | Path, *,
            note: str = "", data_dir: str | Path = "data") -> Path:
    """Merge a kernel's per-worker caches into one gzipped Kernel Tuner cache `out` (in measurement order)
    with a provenance JSON, and refresh data/MANIFEST.csv for `out`'s folder when it lies under `data_dir`.

    A configuration measured by two workers is an error; so is a cache of other tune_params.
    """
    import json

    import kernel_tuner


    spec = harness.load_spec(kernel)
    names = list(spec.tune_params(TARGET))
    header, entries = read_disjoint_caches(caches, names)
    if header is None:
        raise InputError(None, "no cache given", field="caches")
    header = {k: v for k, v in header.items() if k != "cache"}
    rank = {config_key(c, names): i for i, c in enumerate(measurement_order(spec))}
    unknown = sorted(set(entries) - set(rank))
    if unknown:
        raise InputError(caches[0], f"'{unknown[0]}' is not a valid configuration of {kernel}", field="cache")
    ordered = dict(sorted(entries.items(), key=lambda kv: rank[kv[0]]))
    prefix = len(ordered) == max(rank[k] for k in ordered) + 1
    out, provenance = Path(out), Path(provenance)
    write_gzip(json.dumps({**header, "cache": ordered}, indent=None).encode(), out)
    stamps = sorted(e["timestamp"] for e in ordered.values() if "timestamp" in e)
    compile_ms = [e["compile_time"] for e in ordered.values() if isinstance(e.get("compile_time"), (int, float))]
    write_json({
        "kernel": kernel, "target": TARGET, "size": SIZE, "what": "Kernel Tuner's C backend compiling, verifying and "
        "benchmarking each configuration on its own (tune_kernel, compile_mode per-configuration); compile_time is "
        "what a tuning run pays to compile that configuration",
        "configurations": len(ordered), "space_configurations": len(rank),
        "sample": {"order_seed": ORDER_SEED, "order": "analysis.sweep.compile_cost.measurement_order (precision "
                   "combinations take turns, shuffled within)", "is_prefix_of_order": prefix},
        "compile_time_ms": {"mean": sum(compile_ms) / len(compile_ms), "min": min(compile_ms), "max": max(compile_ms)}
        if compile_ms else None,
        "first": stamps[0] if stamps else None, "last": stamps[-1] if stamps else None,
        "note": note,
        "host": {"cpu_model": cpu_model(), "cpu_count": os.cpu_count()},
        "compiler": {"command": harness.CXX, "version": _cmd_first_line([harness.CXX, "--version"]),
                     "flags": ["-fPIC", *(_portable(f) for f in harness.port_compiler_options(spec))]},
        "software": {"kernel_tuner": getattr(kernel_tuner, "__version__", None)},
    }, provenance)
    manifest.record_measured(data_dir, out.parent, "measured by this suite (analysis.sweep.compile_cost, "
                                                   "`python -m analysis.cli compile-cost-measure` / "
                                                   "`compile-cost-publish`)")
    return out
