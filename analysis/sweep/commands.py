"""Sub-commands of `python -m analysis.cli` for sweeps: sweep-shard, sweep-merge, sweep-publish, the
compile-cost measurement and kernel-sizes. A GPU visit's commands are `python -m gpuvisit`'s (gpuvisit.cli).

Each handler parses its arguments and makes one call into analysis.sweep.

Each handler imports the library it needs when it runs, not at the top: every job of the workflow starts here,
and importing what all handlers need would add seconds to each (measured by benchmarks/bench_startup.py, report in
benchmarks/reports/bench_startup.md). These command modules are the only ones whose imports wait for a call
without a comment of their own (tests/test_layout.py).
"""

from __future__ import annotations

import argparse
import logging

from analysis.errors import json_argument

log = logging.getLogger("analysis.cli")


def _tune_params(a: argparse.Namespace) -> dict | None:
    """--tune-params (JSON: narrowed value lists), or None for the spec's own."""
    return json_argument("--tune-params", a.tune_params, lambda v: v is None or isinstance(v, dict),
                         "a JSON object of value lists") or None


def _shard(a: argparse.Namespace) -> None:
    from analysis.sweep.configs import parse_shard
    from analysis.sweep.shard import sweep_shard

    summary = sweep_shard(a.kernel, a.target, a.size, a.cache, shard=parse_shard(a.shard), iterations=a.iterations,
                          tune_params=_tune_params(a), provenance=a.provenance, compile_mode=a.compile)
    log.info("sweep %s/%s shard %s: %s", a.kernel, a.target, a.shard, summary)


def _merge(a: argparse.Namespace) -> None:
    from analysis.sweep.merge import merge

    summary = merge(a.kernel, a.target, a.size, a.shards, a.cache, a.definition, a.provenance,
                    tune_params=_tune_params(a), shard_provenance=a.shard_provenance)
    log.info("sweep %s/%s merged: %s -> %s", a.kernel, a.target, summary, a.cache)


def _publish(a: argparse.Namespace) -> None:
    from analysis.sweep.publish import publish

    dest = publish(a.cache, a.definition, a.provenance, kernel=a.kernel, target=a.target, label=a.label,
                   data_dir=a.data_dir)
    log.info("published %s/%s into %s (MANIFEST.csv updated)", a.kernel, a.target, dest)


def _compile_measure(a: argparse.Namespace) -> None:
    from analysis.sweep import compile_cost
    from analysis.sweep.configs import parse_shard
    from analysis.sweep.spec import kernels_with_target

    compile_cost.measure_rounds(a.kernels or kernels_with_target(compile_cost.TARGET), a.out, chunk=a.chunk,
                                worker=parse_shard(a.worker), rounds=a.rounds, iterations=a.iterations)


def _compile_publish(a: argparse.Namespace) -> None:
    from analysis.sweep import compile_cost

    dest = compile_cost.publish(a.kernel, a.caches, a.out, a.provenance, note=a.note)
    log.info("published %s's per-configuration compile measurements into %s (MANIFEST.csv updated)", a.kernel, dest)


def _sizes(a: argparse.Namespace) -> int:
    from analysis.sweep import sizes

    return sizes.main(a.readme, a.check)


def add_commands(sub) -> None:
    """Register the sweep sub-commands on the CLI's sub-parser set (`description`: the one-line summary)."""
    s = sub.add_parser("sweep-shard", description="measure one shard of a kernel's sweep into a Kernel Tuner cache",
                       epilog="Resumable: rerun after a crash and Kernel Tuner skips what the cache holds. The "
                              "correctness gate runs first; nothing is measured when it fails.")
    s.add_argument("--kernel", required=True)
    s.add_argument("--target", required=True, choices=["cpu", "cuda"])
    s.add_argument("--size", required=True, help="named problem size of the kernel's spec")
    s.add_argument("--shard", default="0/1", help="i/n: the i-th of n contiguous configuration ranges")
    s.add_argument("--iterations", type=int, default=7)
    s.add_argument("--tune-params", default="{}", help="JSON: narrowed value lists (sub-lists of the spec's)")
    s.add_argument("--cache", required=True)
    s.add_argument("--provenance", required=True)
    s.add_argument("--compile", default="per-configuration", choices=["per-configuration", "grouped"],
                   help="cpu: Kernel Tuner compiling every configuration on its own (default), or one library per "
                        "precision combination holding its optimisation variants (faster; its cache records no "
                        "per-configuration compile cost, so the space then needs compile_times)")
    s.set_defaults(func=_shard)

    s = sub.add_parser("sweep-merge", description="merge shard caches into one cache, definition and provenance",
                       epilog="Every valid configuration must be in exactly one shard.")
    s.add_argument("--kernel", required=True)
    s.add_argument("--target", required=True, choices=["cpu", "cuda"])
    s.add_argument("--size", required=True)
    s.add_argument("--tune-params", default="{}")
    s.add_argument("--shards", nargs="+", required=True)
    s.add_argument("--shard-provenance", nargs="*", default=[])
    s.add_argument("--cache", required=True, help="merged cache (.json.gz gzipped)")
    s.add_argument("--definition", required=True, help="YAML with tune_params and constraints")
    s.add_argument("--provenance", required=True)
    s.set_defaults(func=_merge)

    s = sub.add_parser("sweep-publish", description="copy a merged sweep into data/sweeps/<target>/<label>/",
                       epilog="Refreshes data/MANIFEST.csv for that folder.")
    s.add_argument("--kernel", required=True)
    s.add_argument("--target", required=True, choices=["cpu", "cuda"])
    s.add_argument("--label", required=True, help="device label, e.g. the CPU model")
    s.add_argument("--cache", required=True)
    s.add_argument("--definition", required=True)
    s.add_argument("--provenance", required=True)
    s.add_argument("--data-dir", default="data")
    s.set_defaults(func=_publish)

    s = sub.add_parser("compile-cost-measure", description="time compiling host-CPU configurations one by one",
                       epilog="Resumable; the configurations come in a stratified order, so every prefix of it is "
                              "a sample of the space.")
    s.add_argument("--kernels", nargs="*", default=[], help="default: every kernel with a cpu target")
    s.add_argument("--out", required=True, help="folder of the per-worker Kernel Tuner caches")
    s.add_argument("--chunk", type=int, default=60, help="configurations of each kernel added per round")
    s.add_argument("--rounds", type=int, default=None, help="stop after this many rounds (default: all configurations)")
    s.add_argument("--worker", default="0/1", help="i/n: this process takes every n-th configuration (one per core)")
    s.add_argument("--iterations", type=int, default=7)
    s.set_defaults(func=_compile_measure)

    s = sub.add_parser("compile-cost-publish",
                       description="merge a kernel's compile measurements into data/ with provenance",
                       epilog="Joins the per-worker caches of compile-cost-measure.")
    s.add_argument("--kernel", required=True)
    s.add_argument("--caches", nargs="+", required=True)
    s.add_argument("--out", required=True, help="the merged cache (.json.gz)")
    s.add_argument("--provenance", required=True)
    s.add_argument("--note", default="", help="how the measurement was run (machine load, workers)")
    s.set_defaults(func=_compile_publish)

    s = sub.add_parser("kernel-sizes", description="write the kernels' space sizes into workflow/kernels/README.md",
                       epilog="Computed from the specs, next to seed 002 Table II.")
    s.add_argument("--readme", default="workflow/kernels/README.md")
    s.add_argument("--check", action="store_true", help="write nothing; exit 1 when the README differs")
    s.set_defaults(func=_sizes)
