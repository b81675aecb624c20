"""How a sweep hands a kernel to Kernel Tuner: per-target options and problem size, the timed C
source, the scratch folder Kernel Tuner works in, and the pinned OpenMP runtime.

The shard sweep (analysis.sweep.shard), its correctness gate and the GPU lease
(gpuvisit.measure, gpuvisit.cuda_modules) share these, so that every path
compiles and launches a kernel the same way.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from analysis.sweep import harness, variants
from analysis.sweep.spec import KernelSpec

log = logging.getLogger(__name__)


def cuda_options(spec: KernelSpec) -> dict[str, Any]:
    """Kernel Tuner options of the cuda target: language, nvcc flags, grid divisors, block size names."""
    t = spec.target("cuda")
    opts: dict[str, Any] = dict(lang="CUDA", compiler_options=["-std=c++17", f"-I{harness.COMMON_DIR}",
                                                               f"-I{spec.folder}"], **t.grid_div)
    if t.block_size_names:
        opts["block_size_names"] = list(t.block_size_names)
    return opts


def problem_size(spec: KernelSpec, target: str, size_name: str) -> list[int]:
    """Kernel Tuner's problem size: the spec's on cuda; on cpu the element count of the first output."""
    if target == "cuda":
        return spec.problem_size(size_name)
    first_out = next(a for a in spec.arguments if a.role == "output")
    return [int(np.prod(spec.shape(first_out, size_name)))]


def timed_cpu_source(spec: KernelSpec) -> str:
    """Source handed to the C backend: kernel.cpp plus a wrapper returning the call's wall time in ms."""
    return "\n".join(["#include <time.h>", '#include "kernel.cpp"',
                      *variants.timed_wrapper(spec, f"tsb_timed_{spec.function}", spec.function)]) + "\n"


def scratch_dir(cache: str | Path) -> Path:
    """The folder Kernel Tuner works in for the shard whose cache is `cache` (next to it, in the results tree)."""
    cache = Path(cache).resolve()
    return cache.parent / f"{cache.name}.kt-scratch"


@contextlib.contextmanager
def kernel_tuner_scratch(cache: str | Path) -> Iterator[Path]:
    """While active, the working directory is the shard's scratch folder.

    Kernel Tuner 1.5.0 writes its temporary sources and libraries (temp_*.cc, .o, .so; the
    sources of a failed compile are kept for its error message) with tempfile.mkstemp in
    the current directory. Running it from a folder next to the shard's cache keeps them in
    the results tree, never in the checkout. The folder is removed when empty; leftovers
    (from a failed compile) stay there with a warning naming them.
    """
    folder = scratch_dir(cache)
    folder.mkdir(parents=True, exist_ok=True)
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(previous)
        left = sorted(p.name for p in folder.iterdir())
        if left:
            log.warning("%s: Kernel Tuner left %d temporary file(s), e.g. %s", folder, len(left), left[0])
        else:
            folder.rmdir()


def pin_openmp_runtime() -> None:
    """Keep libgomp loaded for the life of the process.

    Kernel Tuner's C backend unloads each configuration's library after measuring it. When
    that library was the only user of libgomp, the OpenMP runtime is unmapped while its
    worker threads (started by a configuration with threads > 1) are still spinning in it,
    and the process dies with SIGSEGV at a later configuration. One process-wide reference
    keeps the runtime mapped.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("gomp") or "libgomp.so.1"
    ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
