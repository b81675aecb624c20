"""Compile once per precision combination: a host-CPU sweep's optimisation variants in one library.

Kernel Tuner's C backend compiles every configuration on its own (g++ -O3), so compiling, not
measuring, dominates a host-CPU sweep (benchmarks/reports/bench_sweep.md). The configurations of one
precision combination differ only in their optimisation parameters (threads, tile sizes,
unrolling, ...), so this module writes one translation unit per precision combination that
holds each of those variants as its own copy of kernel.cpp, compiled with that variant's
`#define`s, and gives each a timed entry point of its own:

    namespace tsb_v3 {                  // variant 3: threads=2, tile_x=8
    #define threads 2
    #define tile_x 8
    #define convolution2d tsb_v3_convolution2d
    #undef TSB_CONVOLUTION2D_H          // the kernel header is read again with these macros
    #include "kernel.cpp"
    extern "C" float tsb_timed_v3(...)  // times one call of tsb_v3_convolution2d
    ...
    }

The precision parameters (and Kernel Tuner's other `#define`s: grid and block sizes,
`kernel_tuner`) are defined once at the top, exactly as Kernel Tuner writes them. A
configuration therefore runs its own code, compiled from the same text with the same macro
values as Kernel Tuner would compile it alone; `tests/sweep/test_variants.py` checks that
every variant's output is bit-identical to the configuration compiled on its own.

`grouped_compilation` swaps Kernel Tuner's `CompilerFunctions.compile` for the duration of one
`tune_kernel` call (the library itself is not changed): the first configuration of a precision
combination builds the library of all that combination's pending variants, and each later one
loads its entry point. Kernel Tuner's `compile_time` of a configuration is therefore the look-up
(the build usually falls in Kernel Tuner's untimed warm-up run); the sweep records the build
itself as two more cache fields, `library_build_time` (ms) and `library_variants` (how many
configurations share that build). Everything else, verification, observers, benchmarking and
the cache, is Kernel Tuner's own.

The contract on kernel.cpp that makes this possible (tested for every kernel): its system
headers are included at the top, its optimisation parameters are read as macros, it defines
exactly one `extern "C"` function (the spec's `function`) and no global state, and its
kernel header has an include guard.
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from analysis.sweep import harness
from analysis.sweep.precision import ctype_name
from analysis.sweep.spec import KernelSpec, SpecError

_GUARD = re.compile(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\b", re.MULTILINE)
_SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s*<[^>]+>", re.MULTILINE)


def header_guard(spec: KernelSpec) -> str:
    """The include guard of the kernel's arithmetic header `<name>.h`."""
    header = spec.folder / f"{spec.name}.h"
    match = _GUARD.search(header.read_text()) if header.is_file() else None
    if match is None:
        raise SpecError(header, "has no include guard (#ifndef X / #define X); grouped compilation needs one")
    return match.group(1)


def entry_point(index: int) -> str:
    """Name of variant `index`'s timed entry point in a grouped library."""
    return f"tsb_timed_v{index}"


def timed_wrapper(spec: KernelSpec, entry: str, callee: str) -> list[str]:
    """Lines of `extern "C" float entry(<the kernel's arguments>)`: one call of `callee`, its wall time in ms.

    Kernel Tuner 1.5.0's C backend always takes the function's return value as the time (it
    sets restype to float), so the port stays `void` and this wrapper times one call with
    clock_gettime(CLOCK_MONOTONIC) from <time.h> (what std::chrono::steady_clock reads on Linux),
    so that no compile parses <chrono>, a large header.
    """
    params, call = [], []
    for a in spec.arguments:
        ctype = a.type if a.type in spec.precision else ctype_name(a.type)
        params.append(f"{ctype} *{a.name}" if a.is_array else f"{ctype} {a.name}")
        call.append(a.name)
    return [f'extern "C" float {entry}({", ".join(params)}) {{',
            "    struct timespec start, stop;",
            "    clock_gettime(CLOCK_MONOTONIC, &start);",
            f"    {callee}({', '.join(call)});",
            "    clock_gettime(CLOCK_MONOTONIC, &stop);",
            "    return (float)((stop.tv_sec - start.tv_sec) * 1e3 + (stop.tv_nsec - start.tv_nsec) * 1e-6);",
            "}"]


def grouped_source(spec: KernelSpec, common_defines: Mapping[str, Any], variants: Sequence[Mapping[str, Any]]) -> str:
    """The translation unit of one precision combination: `common_defines` once, one namespace per variant.

    `variants[i]` holds variant i's optimisation parameters (the macros that differ between variants).
    """
    source = spec.folder / "kernel.cpp"
    if not source.is_file():
        raise SpecError(source, "missing (every kernel folder has kernel.cpp)")
    guard = header_guard(spec)
    system = _SYSTEM_INCLUDE.findall(source.read_text())
    lines = [f"#define {k} {v}" for k, v in common_defines.items()]
    lines += ["#include <time.h>", *(s.strip() for s in system), '#include "precision.h"']
    for i, variant in enumerate(variants):
        own = f"tsb_v{i}_{spec.function}"
        lines += [f"namespace tsb_v{i} {{", *(f"#define {k} {v}" for k, v in variant.items()),
                  f"#define {spec.function} {own}", f"#undef {guard}", '#include "kernel.cpp"',
                  f"#undef {spec.function}", *timed_wrapper(spec, entry_point(i), own),
                  *(f"#undef {k}" for k in variant), "}"]
    return "\n".join(lines) + "\n"


def build(spec: KernelSpec, common_defines: Mapping[str, Any], variants: Sequence[Mapping[str, Any]],
          lib: Path) -> Path:
    """Compile the grouped translation unit into the shared library `lib` (its source next to it)."""
    text = grouped_source(spec, common_defines, variants)
    src = lib.with_suffix(".cc")
    src.write_text(text)
    flags = ["-fPIC", *harness.port_compiler_options(spec), "-shared"]  # as Kernel Tuner's C backend
    proc = subprocess.run([harness.CXX, str(src), *flags, "-o", str(lib)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{harness.CXX} failed for {spec.name}'s variants {list(variants)} with "
                           f"{dict(common_defines)} ({src}):\n{proc.stderr[-4000:]}")
    src.unlink()
    return lib


def kernel_defines(kernel_string: str) -> dict[str, str]:
    """The `#define name value` lines Kernel Tuner put before `#line 1`."""
    head = kernel_string.split("#line 1\n", 1)[0]
    out = {}
    for line in head.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0] == "#define":
            out[parts[1]] = parts[2]
    return out


class GroupedLibraries:
    """Libraries of a sweep's precision combinations, built on first use into a private folder.

    `configs` are the configurations the `tune_kernel` call will measure; the optimisation
    parameters are the target's own, the rest (precision) select the library. Nothing is
    reused between sweeps: every library is built (and timed) afresh.
    """

    def __init__(self, spec: KernelSpec, target: str, configs: Sequence[Mapping[str, Any]]):
        self.spec = spec
        self.own = list(spec.target(target).own_params)
        self.selecting = [p for p in spec.tune_params(target) if p not in self.own]  # the precision parameters
        self.groups: dict[tuple, list[tuple]] = {}
        for c in configs:
            variants = self.groups.setdefault(self._group(c), [])
            v = tuple(c[p] for p in self.own)
            if v not in variants:
                variants.append(v)
        self.libs: dict[tuple, Any] = {}
        self.build_seconds: dict[tuple, float] = {}
        self.folder: Path | None = None

    @property
    def builds(self) -> int:
        return len(self.build_seconds)

    def _group(self, params: Mapping[str, Any]) -> tuple:
        return tuple(params[k] for k in self.selecting)

    def function(self, params: Mapping[str, Any], kernel_string: str):
        """The ctypes entry point of configuration `params` (building its combination's library if needed)."""
        group = self._group(params)
        variant = tuple(params[p] for p in self.own)
        variants = self.groups.get(group)
        if variants is None or variant not in variants:
            raise KeyError(f"{self.spec.name}: configuration {dict(params)} is not among the sweep's configurations")
        if group not in self.libs:
            if self.folder is None:
                self.folder = Path(tempfile.mkdtemp(prefix=f"tsb-{self.spec.name}-variants-"))
            defines = kernel_defines(kernel_string)
            common = {k: v for k, v in defines.items() if k not in self.own}
            start = time.perf_counter()
            lib = build(self.spec, common, [dict(zip(self.own, v)) for v in variants],
                        self.folder / f"group{len(self.libs)}.so")
            self.libs[group] = ctypes.CDLL(str(lib))
            self.build_seconds[group] = time.perf_counter() - start
        func = getattr(self.libs[group], entry_point(variants.index(variant)))
        func.restype = ctypes.c_float
        return func

    def build_time_ms(self, params: Mapping[str, Any]) -> float:
        """Milliseconds the library holding configuration `params` took to build (NaN before it was built)."""
        return 1000 * self.build_seconds.get(self._group(params), float("nan"))

    def variant_count(self, params: Mapping[str, Any]) -> int:
        """How many variants that library holds."""
        return len(self.groups.get(self._group(params), []))

    def close(self) -> None:
        """Delete the library files (loaded libraries stay mapped until the process ends)."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


@contextlib.contextmanager
def grouped_compilation(libraries: GroupedLibraries) -> Iterator[GroupedLibraries]:
    """While active, Kernel Tuner's C backend takes each configuration's function from `libraries`."""
    from kernel_tuner.backends.compiler import CompilerFunctions

    original = CompilerFunctions.compile

    def compile(self, kernel_instance):  # noqa: A001 - Kernel Tuner's method name
        return libraries.function(kernel_instance.params, kernel_instance.kernel_string)

    CompilerFunctions.compile = compile
    try:
        yield libraries
    finally:
        CompilerFunctions.compile = original
        libraries.close()
