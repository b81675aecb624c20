"""The commands of a GPU visit: `python -m gpuvisit <command>` (gpu-lease, gpu-lease-merge, gpu-bundle,
gpu-plan-doc, cuda-compile-cost).

Each handler parses its arguments and makes one call into the package (gpu-lease: one per mode); `main` turns
an InputError (bad input a user can fix: it names the file or the option and the field) into a one-line message
and exit status 2, as `python -m analysis.cli` does.

Each handler imports the module it needs when it runs, not at the top, so that a command loads only what it uses:
`--help` and `gpu-bundle` run without Kernel Tuner and the lease's modules, `cuda-compile-cost` without the
measuring ones. This is the package's only module whose imports wait for a call without a comment of their own
(tests/test_layout.py).
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from analysis import logs, numerics
from analysis.errors import ArgumentError

log = logging.getLogger("gpuvisit.cli")


def _lease(a: argparse.Namespace) -> int:
    from gpuvisit import cuda_modules, guard, lease, plan

    if a.plan:
        print(plan.plan_report(a.kernels or None, a.resume, size_name=a.size, gpu=a.gpu,
                               visit_minutes=a.visit_minutes, reserve_s=a.reserve_s))
        return 0
    if a.compile_only:
        if not a.kernels or not a.out:
            raise ArgumentError("--compile-only", "needs --kernels and --out")
        return cuda_modules.compile_spaces(a.kernels, a.size, a.out, a.arch, chunk=a.chunk, jobs=a.jobs,
                                           limit=a.max_configs)
    if a.deadline_min is None or not a.out:
        raise ArgumentError("--deadline-min", "a lease needs --deadline-min and --out (or --plan, or --compile-only)")
    print(lease.visit_summary(lease.lease(
        a.out, a.deadline_min, kernels=a.kernels or None, resume_paths=a.resume, work=a.work, size_name=a.size,
        iterations=a.iterations, chunk=a.chunk, jobs=a.jobs, batch_min=a.batch, energy_window=a.energy_window,
        reserve_s=a.reserve_s, max_configs=a.max_configs)), flush=True)
    guard.exit_watchdog()
    return 0


def _merge(a: argparse.Namespace) -> None:
    from gpuvisit import merge

    summary = merge.merge_packs(a.packs, a.out, gpu=a.gpu, size_name=a.size)
    log.info("merged lease packs into %s: %s", a.out, summary)


def _compile_cost(a: argparse.Namespace) -> None:
    from gpuvisit import compile_cost

    if a.reopen:
        n = compile_cost.reopen(a.kernel, a.reopen, a.cache)
        log.info("%s: %d measured configurations of %s in the open cache %s", a.kernel, n, a.reopen, a.cache)
    elif a.publish:
        if not a.provenance:
            raise ArgumentError("--publish", "needs --provenance")
        out = compile_cost.publish(a.kernel, a.cache, a.publish, a.provenance, arch=a.arch, note=a.note)
        log.info("published %s", out)
    else:
        log.info("%s: %s", a.kernel, compile_cost.measure(a.kernel, a.cache, count=a.count, arch=a.arch,
                                                          seconds=a.seconds))


def _bundle(a: argparse.Namespace) -> None:
    from gpuvisit import bundle

    manifest = bundle.build(a.out, python_version=a.python_version, platforms=a.platform, packs=a.packs)
    log.info("bundle in %s: %d wheels, %d packs, %.1f MiB in all", a.out, len(manifest["wheels"]),
             len(manifest["packs"]), manifest["bytes"] / 2**20)


def _plan_doc(a: argparse.Namespace) -> int:
    from gpuvisit import plan

    return plan.render_doc(a.doc, a.report, check=a.check)


# defaults, literal so that registering the commands imports nothing heavy (tests check them against
# gpuvisit's modules' constants)
DEFAULTS = {"size": "gpu", "chunk": 16, "batch": 256, "energy_window": 0.0, "reserve_s": 60.0, "visit_minutes": 12.0,
            "doc": "docs/kernels.md", "report": "benchmarks/reports/bench_gpu_lease.json"}


def add_commands(sub: Any) -> None:
    """Register the GPU visit's sub-commands on a sub-parser set."""
    d = DEFAULTS
    s = sub.add_parser("gpu-lease", description="sweep the kernels' CUDA spaces on a lent GPU until a deadline",
                       epilog="Smallest space first, resuming earlier visits; --plan prints the plan, --compile-only "
                              "compiles the spaces without a GPU (docs/kernels.md, GPU sweeps in short leases).")
    s.add_argument("--deadline-min", type=float, default=None, help="minutes from the start until everything, "
                   "packing included, must be done")
    s.add_argument("--out", default=None, help="folder of the visit's pack files (at most 8, 16 MiB each)")
    s.add_argument("--resume", nargs="*", default=[], help="earlier visits' pack files or folders of them")
    s.add_argument("--kernels", nargs="*", default=[], help="default: all nine")
    s.add_argument("--work", default=None, help="work folder (default: a fixed folder under the system's temp "
                   "directory, so a restarted lease continues its visit)")
    s.add_argument("--size", default=d["size"])
    s.add_argument("--iterations", type=int, default=7)
    s.add_argument("--chunk", type=int, default=d["chunk"], help="optimisation variants per module")
    s.add_argument("--jobs", type=int, default=None, help="nvcc processes (default: cores - 1)")
    s.add_argument("--batch", type=int, default=d["batch"], help="configurations per tune_kernel call "
                   "(whole precision combinations)")
    s.add_argument("--energy-window", type=float, default=d["energy_window"],
                   help="record energy with Kernel Tuner's NVML observer, measuring power for this many seconds per "
                        "configuration (Kernel Tuner 1.5.0 makes it at least 1 s); 0, the default: no energy")
    s.add_argument("--reserve-s", type=float, default=d["reserve_s"], help="seconds kept before the deadline "
                   "for packing")
    s.add_argument("--max-configs", type=int, default=None, help="at most this many pending configurations per "
                   "kernel (samples, benchmarks)")
    s.add_argument("--plan", action="store_true", help="print the order, counts and estimated time; measure nothing")
    s.add_argument("--visit-minutes", type=float, default=d["visit_minutes"], help="usable minutes per visit "
                   "(--plan)")
    s.add_argument("--gpu", default=None, help="--plan: only packs of this GPU")
    s.add_argument("--compile-only", action="store_true", help="compile the kernels' whole CUDA spaces into --out "
                   "(no GPU needed)")
    s.add_argument("--arch", default="sm_90", help="--compile-only: the GPU architecture")
    s.set_defaults(func=_lease)

    s = sub.add_parser("gpu-lease-merge", description="join every visit's lease packs of one GPU into caches",
                       epilog="A complete space becomes a merged cache, definition and provenance; an incomplete "
                              "one a partial cache.")
    s.add_argument("--packs", nargs="+", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--gpu", default=None)
    s.add_argument("--size", default=d["size"])
    s.set_defaults(func=_merge)

    s = sub.add_parser("cuda-compile-cost", description="time nvcc compiling CUDA configurations one by one (no GPU)",
                       epilog="What Kernel Tuner's PyCUDA backend pays per configuration; resumable, in a stratified "
                              "order; --publish closes the cache into data/ with provenance.")
    s.add_argument("--kernel", required=True)
    s.add_argument("--cache", required=True, help="the open Kernel Tuner cache measured into (resumed)")
    s.add_argument("--count", type=int, default=None, help="the first this many configurations of the order")
    s.add_argument("--seconds", type=float, default=None, help="stop after this long")
    s.add_argument("--arch", default="sm_90")
    s.add_argument("--publish", default=None, help="write the measurements to this .json.gz instead of measuring")
    s.add_argument("--provenance", default=None)
    s.add_argument("--note", default="", help="--publish: how the measurement was run (machine load)")
    s.add_argument("--reopen", default=None,
                   help="a published measurement (.json.gz) to write into --cache, to continue or publish it again")
    s.set_defaults(func=_compile_cost)

    s = sub.add_parser("gpu-bundle", description="build what the GPU machine needs and lacks, under 64 MiB",
                       epilog="Wheels, the project and an offline install script.")
    s.add_argument("--out", required=True)
    s.add_argument("--python-version", default="3.12")
    s.add_argument("--platform", nargs="+", default=None, help="pip platform tags (default: manylinux x86_64)")
    s.add_argument("--packs", default=None,
                   help="earlier visits' packs to carry (e.g. data/sweeps/cuda/nvidia-h200/packs); visit.sh resumes "
                        "from them")
    s.set_defaults(func=_bundle)

    s = sub.add_parser("gpu-plan-doc", description="write the GPU lease plan into docs/kernels.md",
                       epilog="Replaces the generated section between its markers.")
    s.add_argument("--doc", default=d["doc"])
    s.add_argument("--report", default=d["report"])
    s.add_argument("--check", action="store_true", help="write nothing; exit 1 when the section differs")
    s.set_defaults(func=_plan_doc)


def parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m gpuvisit`, one sub-command per entry point."""
    p = argparse.ArgumentParser(prog="python -m gpuvisit", formatter_class=argparse.RawDescriptionHelpFormatter,
                                description="Borrow a GPU for time-boxed visits: plan them, pack what a lent machine "
                                            "needs, measure until a deadline,\nmerge the visits' packs into "
                                            "data/sweeps/ (docs/kernels.md, GPU sweeps in short leases).\nBad input "
                                            "ends with a one-line message naming the file or option and exit "
                                            "status 2.")
    p.add_argument("--log", help="also write the log to this file")
    sub = p.add_subparsers(dest="command", required=True, title="commands", metavar="<command>",
                           help="one of the commands listed below")
    add_commands(sub)
    width = max(map(len, sub.choices)) + 2
    p.epilog = "\n".join(["commands (`<command> --help` for a command's arguments):",
                          *(f"  {name:<{width}}{s.description}" for name, s in sub.choices.items())])
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command; bad input ends with its one-line message and exit status 2 (a check that fails, 1)."""
    args = parser().parse_args(argv)
    logs.configure(args.log)
    kernels = numerics.state()
    log.log(logging.INFO if kernels["pinned"] else logging.WARNING, "%s", numerics.describe(kernels))
    return logs.run_command(args, log)
