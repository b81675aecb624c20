"""Compile a CUDA sweep ahead of the measuring process: one module per chunk of a precision combination.

Kernel Tuner's CUDA backends compile every configuration on its own, inside the process that
measures, from the kernel string Kernel Tuner writes for it: `#define` lines for the grid and
block sizes and every tunable parameter, `#define kernel_tuner 1`, `#line 1`, then kernel.cu.
Each nvcc run parses the same headers again (mostly cuda_fp16.h and cuda_bf16.h), one
configuration at a time, while the GPU waits (nvcc seconds alone and grouped:
benchmarks/reports/bench_gpu_lease.json).

Here the configurations of one precision combination are split into chunks of at most
`chunk` optimisation variants, and each chunk becomes one CUDA translation unit (this
module's `grouped_source`): the `#define`s common to the chunk's kernel strings once at the
top, then per variant its own copy of kernel.cu in its own namespace, compiled with the
`#define`s of that variant's own kernel string, the kernel header re-read, and the kernel
renamed `tsb_v<i>_<function>`:

    #define T_x half ...                     // common to the chunk (precision, kernel_tuner, ...)
    #include "precision.h"
    namespace tsb_v3 {
    #define block_size_x 128                 // this variant's own values, as Kernel Tuner writes them
    #define grid_size_x 131072
    #define bessel_i0 tsb_v3_bessel_i0
    #undef TSB_BESSEL_H
    #include "kernel.cu"
    ...
    }

The chunks are compiled by nvcc (`-cubin -arch=sm_XX`, Kernel Tuner's compiler options) in a
pool of processes, on every core but the measuring one, ahead of and alongside the measurement
(`ModuleBuilder`). `precompiled_compilation` swaps the CuPy backend's `compile` for the
duration of one `tune_kernel` call: it takes the kernel string Kernel Tuner wrote for the
configuration, checks that it is byte for byte the string its variant was generated from
(sha256; a mismatch is an error, so no configuration runs code made from other macro values),
waits for its module and hands Kernel Tuner that variant's function. Everything else,
verification, observers, benchmarking, the cache, is Kernel Tuner's own.

Each variant's machine code in its module is the code of the configuration compiled alone:
`tests/gpuvisit/test_cuda_modules.py` compiles a sample of every kernel both ways and compares the
`.text` section of the function (and its shared memory, constant bank and register count)
in the two cubins byte for byte (`cubin_functions`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import multiprocessing
import os
import shutil
import struct
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from kernel_tuner import core, util
from kernel_tuner.backends.cupy import CupyFunctions

from analysis.sweep import harness, variants
from analysis.sweep.kt_setup import cuda_options
from analysis.sweep.spec import KernelSpec, SpecError

log = logging.getLogger(__name__)
DEFAULT_CHUNK = 16  # variants per module: small enough that the first modules come quickly


def nvcc_path() -> str:
    """The nvcc on the PATH (or under /usr/local/cuda/bin)."""
    found = shutil.which("nvcc") or (shutil.which("nvcc", path="/usr/local/cuda/bin"))
    if not found:
        raise FileNotFoundError("nvcc is neither on the PATH nor in /usr/local/cuda/bin")
    return found


def nvcc_version(nvcc: str | None = None) -> str | None:
    """nvcc's last `--version` line (e.g. 'Build cuda_13.0.r13.0/compiler.36424714_0'), or None."""
    try:
        out = subprocess.run([nvcc or nvcc_path(), "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    release = [ln for ln in lines if "release" in ln]
    return " / ".join(release[:1] + lines[-1:]) if lines else None


def compiler_options(spec: KernelSpec) -> list[str]:
    """Kernel Tuner's compiler options of the sweep's cuda target (analysis.sweep.kt_setup.cuda_options)."""
    return list(cuda_options(spec)["compiler_options"])


def block_size_names(spec: KernelSpec, tune_params: Mapping[str, list]) -> list[str]:
    """The block size names Kernel Tuner ends up with in tune_kernel (its own checks and defaults)."""
    t = spec.target("cuda")
    names = list(t.block_size_names) if t.block_size_names else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = util.check_block_size_params_names_list(names, tune_params)
    util.append_default_block_size_names(names)
    return list(names) if names else list(util.default_block_size_names)


class KernelStrings:
    """The kernel string Kernel Tuner 1.5.0 writes for a configuration of a kernel's cuda target.

    Built with Kernel Tuner's own functions (KernelSource.prepare_list_of_files, setup_block_and_grid),
    so it is the text its CUDA backends would compile; no device is needed.
    """

    def __init__(self, spec: KernelSpec, size_name: str, tune_params: Mapping[str, list] | None = None):
        self.spec = spec
        self.size_name = size_name
        params = dict(tune_params or spec.tune_params("cuda"))
        self.names = block_size_names(spec, params)
        t = spec.target("cuda")
        self.grid_div = tuple(t.grid_div.get(f"grid_div_{a}") for a in "xyz")
        self.problem_size = spec.problem_size(size_name)
        # the lease measures with lang="CUPY"; the lang only matters for parameters named loop_unroll_factor*
        self.source = core.KernelSource(spec.function, str(spec.folder / "kernel.cu"), "CUPY", None)

    def __call__(self, params: Mapping[str, Any]) -> tuple[str, str]:
        """(kernel name, kernel string) of a configuration."""
        threads, grid = util.setup_block_and_grid(self.problem_size, self.grid_div, dict(params), self.names)
        name, text, temp_files = self.source.prepare_list_of_files(self.spec.function, dict(params), grid, threads,
                                                                   self.names)
        if temp_files:  # one source file: Kernel Tuner writes no secondary files
            raise SpecError(self.spec.path, f"unexpected secondary kernel sources {temp_files}")
        return name, text


def string_hash(kernel_string: str) -> str:
    """sha256 of a kernel string (what a variant was generated from and what Kernel Tuner must hand over)."""
    return hashlib.sha256(kernel_string.encode()).hexdigest()


def prefix_defines(kernel_string: str) -> dict[str, str]:
    """The `#define name value` lines Kernel Tuner put before `#line 1`, in order.

    Anything else in that prefix (Kernel Tuner writes `constexpr` lines for parameters named
    `loop_unroll_factor*`) is an error: such a variant cannot be grouped by macros alone.
    """
    if "#line 1\n" not in kernel_string:
        raise ValueError("kernel string has no '#line 1' after its defines")
    head = kernel_string.split("#line 1\n", 1)[0]
    for line in head.splitlines():
        if line.strip() and not line.startswith("#define "):
            raise ValueError(f"kernel string prefix holds '{line}', not a #define")
    return variants.kernel_defines(kernel_string)


@dataclass
class Chunk:
    """Up to `chunk` optimisation variants of one precision combination of one kernel: one module."""

    kernel: str
    index: int  # position in the kernel's chunk list (its module's file name)
    configs: list[dict[str, Any]]
    hashes: list[str]  # sha256 of each variant's Kernel Tuner kernel string
    common: dict[str, str]  # defines shared by every variant
    own: list[dict[str, str]]  # each variant's other defines

    @property
    def functions(self) -> list[str]:
        return [f"tsb_v{i}_{self.function}" for i in range(len(self.configs))]

    function: str = ""

    def source(self, spec: KernelSpec) -> str:
        return grouped_source(spec, self.common, self.own)


def grouped_source(spec: KernelSpec, common: Mapping[str, Any], own: Sequence[Mapping[str, Any]]) -> str:
    """The CUDA translation unit of one chunk: `common` defines once, one namespace per variant.

    The contract on kernel.cu that makes this possible (the same as the host-CPU grouping's on
    kernel.cpp, tested for every kernel): kernel.cu includes its header `<name>.h`, which has an
    include guard and includes precision.h; the optimisation parameters are read as macros; it
    defines exactly one `extern "C" __global__` function (the spec's `function`) and no
    `__constant__` or other global state.
    """
    guard = variants.header_guard(spec)
    lines = [f"#define {k} {v}" for k, v in common.items()]
    lines.append('#include "precision.h"')
    for i, defines in enumerate(own):
        lines += [f"namespace tsb_v{i} {{", *(f"#define {k} {v}" for k, v in defines.items()),
                  f"#define {spec.function} tsb_v{i}_{spec.function}", f"#undef {guard}", '#include "kernel.cu"',
                  f"#undef {spec.function}", *(f"#undef {k}" for k in defines), "}"]
    return "\n".join(lines) + "\n"


def precision_key(spec: KernelSpec, config: Mapping[str, Any]) -> tuple:
    """The precision combination of a configuration (what every variant of a chunk shares)."""
    return tuple(config[p] for p in spec.precision)


def make_chunks(spec: KernelSpec, configs: Sequence[Mapping[str, Any]], size_name: str, *,
                chunk: int = DEFAULT_CHUNK, strings: KernelStrings | None = None) -> list[Chunk]:
    """Chunks of `configs` (in their order): per precision combination, in order of first appearance,
    consecutive runs of at most `chunk` variants."""
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    strings = strings or KernelStrings(spec, size_name)
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for c in configs:
        groups.setdefault(precision_key(spec, c), []).append(c)
    out: list[Chunk] = []
    for members in groups.values():
        for start in range(0, len(members), chunk):
            part = [dict(c) for c in members[start:start + chunk]]
            texts = [strings(c)[1] for c in part]
            defines = [prefix_defines(t) for t in texts]
            keys = list(dict.fromkeys(k for d in defines for k in d))
            common = {k: defines[0][k] for k in keys if all(d.get(k) == defines[0].get(k) for d in defines)}
            own = [{k: v for k, v in d.items() if k not in common} for d in defines]
            out.append(Chunk(spec.name, len(out), part, [string_hash(t) for t in texts], common, own,
                             function=spec.function))
    return out


def nvcc_command(spec: KernelSpec, source: Path, output: Path, arch: str, nvcc: str | None = None) -> list[str]:
    """nvcc of a module: device code only, one cubin for `arch`, Kernel Tuner's compiler options."""
    return [nvcc or nvcc_path(), "-cubin", f"-arch={arch}", *compiler_options(spec), str(source), "-o", str(output)]


def build_module(job: Mapping[str, Any]) -> dict[str, Any]:
    """Compile one chunk's translation unit into a cubin (runs in a worker process; picklable job).

    job: kernel, index, source (text), out (cubin path), arch, nvcc. Returns seconds, ok and,
    on failure, nvcc's message; the source is kept beside a failed module.
    """
    spec = harness.load_spec(job["kernel"])
    out = Path(job["out"])
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".cu")
    src.write_text(job["source"])
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    start = time.perf_counter()
    proc = subprocess.run(nvcc_command(spec, src, tmp, job["arch"], job.get("nvcc")), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        return {"ok": False, "seconds": seconds, "error": proc.stderr[-4000:], "source": str(src)}
    os.replace(tmp, out)
    src.unlink()
    return {"ok": True, "seconds": seconds, "path": str(out)}


def _nice_worker() -> None:  # compile below the measuring process
    with contextlib.suppress(OSError):
        os.nice(10)


class ModuleBuilder:
    """Builds chunks' modules in a process pool, in submission order; `result(chunk)` waits for one.

    `jobs=0` builds in the calling process when a module is first asked for (tests, --plan).
    """

    def __init__(self, folder: str | Path, arch: str, *, jobs: int | None = None, nvcc: str | None = None):
        self.folder = Path(folder)
        self.arch = arch
        self.nvcc = nvcc or nvcc_path()
        self.jobs = max(0, (os.cpu_count() or 2) - 1) if jobs is None else jobs
        # spawned, not forked: the measuring process holds a CUDA context by the time workers start
        # a multiprocessing pool, which close() can terminate: at a lease's end, queued and running nvcc calls
        # must not hold up the exit
        spawn = multiprocessing.get_context("spawn")
        self.pool = spawn.Pool(self.jobs, initializer=_nice_worker) if self.jobs else None
        self.futures: dict[tuple[str, int], Any] = {}
        self.jobs_of: dict[tuple[str, int], dict[str, Any]] = {}
        self.results: dict[tuple[str, int], dict[str, Any]] = {}

    def path(self, chunk: Chunk) -> Path:
        return self.folder / chunk.kernel / f"module{chunk.index:05d}.cubin"

    def submit(self, spec: KernelSpec, chunk: Chunk) -> None:
        key = (chunk.kernel, chunk.index)
        if key in self.futures or key in self.jobs_of:
            return
        job = {"kernel": chunk.kernel, "index": chunk.index, "source": chunk.source(spec), "out": str(self.path(chunk)),
               "arch": self.arch, "nvcc": self.nvcc}
        if self.pool is not None:
            self.futures[key] = self.pool.apply_async(build_module, (job,))
        else:
            self.jobs_of[key] = job

    def result(self, chunk: Chunk, timeout: float | None = None) -> dict[str, Any]:
        """The build result of a submitted chunk (waits; TimeoutError after `timeout` seconds)."""
        key = (chunk.kernel, chunk.index)
        if key not in self.results:
            if key in self.futures:
                try:
                    self.results[key] = self.futures[key].get(timeout=timeout)
                except multiprocessing.TimeoutError:
                    raise TimeoutError(f"module {key} not built within {timeout} s") from None
            elif key in self.jobs_of:
                self.results[key] = build_module(self.jobs_of.pop(key))
            else:
                raise KeyError(f"module {key} was never submitted")
        return self.results[key]

    def discard(self, chunk: Chunk) -> None:
        """Delete a module file once its configurations are measured."""
        self.path(chunk).unlink(missing_ok=True)

    def close(self) -> None:
        """Stop building: the workers are terminated, with what is queued and running."""
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


class ModuleError(RuntimeError):
    """A module failed to build; the message is nvcc's (Kernel Tuner skips shared-memory failures by it)."""


class PrecompiledModules:
    """The compile step of `tune_kernel` calls over precompiled modules.

    `loader(path)` loads a cubin (cupy.RawModule(path=...) on a GPU) and returns an object with
    `get_function(name)`. `before_check(params)`, if given, runs before the function is handed
    over (the lease poisons the configuration's outputs with NaN there, so an output element that
    a kernel leaves unwritten counts as non-finite instead of keeping an earlier configuration's value).
    """

    def __init__(self, spec: KernelSpec, chunks: Sequence[Chunk], builder: ModuleBuilder, loader: Callable[[str], Any],
                 *, names: Sequence[str], before_check: Callable[[Mapping[str, Any]], None] | None = None,
                 wait_timeout: Callable[[], float | None] = lambda: None):
        self.spec = spec
        self.builder = builder
        self.loader = loader
        self.names = list(names)
        self.before_check = before_check
        self.wait_timeout = wait_timeout
        self.where: dict[str, tuple[Chunk, int]] = {}
        for ch in chunks:
            for i, c in enumerate(ch.configs):
                self.where[self.key(c)] = (ch, i)
        self.modules: dict[tuple[str, int], Any] = {}
        self.waited_s = 0.0
        self.handed = 0

    def key(self, params: Mapping[str, Any]) -> str:
        return ",".join(str(params[p]) for p in self.names)

    def function(self, params: Mapping[str, Any], kernel_string: str):
        """The device function of configuration `params`, after checking Kernel Tuner's kernel string."""
        key = self.key(params)
        if key not in self.where:
            raise KeyError(f"{self.spec.name}: configuration {key} has no precompiled module")
        chunk, i = self.where[key]
        if string_hash(kernel_string) != chunk.hashes[i]:
            raise ValueError(f"{self.spec.name}: Kernel Tuner's kernel string of {key} differs from the one its "
                             "module was generated from; refusing to run other code than its own")
        start = time.perf_counter()
        result = self.builder.result(chunk, timeout=self.wait_timeout())
        self.waited_s += time.perf_counter() - start
        if not result["ok"]:
            raise ModuleError(result["error"])
        mkey = (chunk.kernel, chunk.index)
        if mkey not in self.modules:
            self.modules[mkey] = self.loader(result["path"])
        if self.before_check is not None:
            self.before_check(params)
        self.handed += 1
        return self.modules[mkey].get_function(chunk.functions[i])

    def build_time_ms(self, params: Mapping[str, Any]) -> float:
        """nvcc milliseconds of the module holding `params` (shared by its variants)."""
        chunk, _ = self.where[self.key(params)]
        res = self.builder.results.get((chunk.kernel, chunk.index))
        return 1000.0 * res["seconds"] if res else float("nan")

    def variant_count(self, params: Mapping[str, Any]) -> int:
        """How many configurations share that module."""
        return len(self.where[self.key(params)][0].configs)

    def release(self, chunks: Sequence[Chunk]) -> None:
        """Drop loaded modules and their files once measured."""
        for ch in chunks:
            self.modules.pop((ch.kernel, ch.index), None)
            self.builder.discard(ch)


@contextlib.contextmanager
def _backend_compile(backend: type[Any] | None, compile: Callable) -> Iterator[None]:  # noqa: A002
    """While active, Kernel Tuner's CuPy backend (or `backend`) compiles with `compile(self, kernel_instance)`."""
    if backend is None:
        backend = CupyFunctions
    original = backend.compile
    backend.compile = compile
    try:
        yield
    finally:
        backend.compile = original


@contextlib.contextmanager
def precompiled_compilation(modules: PrecompiledModules, backend: type[Any] | None = None
                            ) -> Iterator[PrecompiledModules]:
    """While active, Kernel Tuner's CuPy backend takes each configuration's function from `modules`."""

    def compile(self, kernel_instance):  # noqa: A001 - Kernel Tuner's method name
        func = modules.function(kernel_instance.params, kernel_instance.kernel_string)
        self.func = func
        self.num_regs = getattr(func, "num_regs", None)
        return func

    with _backend_compile(backend, compile):
        yield modules


@contextlib.contextmanager
def nvcc_compilation(spec: KernelSpec, folder: str | Path, arch: str, loader: Callable[[str], Any],
                     backend: type[Any] | None = None, nvcc: str | None = None) -> Iterator[Path]:
    """While active, Kernel Tuner's CuPy backend compiles the kernel string it is handed with nvcc alone.

    For one-off runs beside the lease's modules (the correctness gate): the kernel string Kernel
    Tuner wrote is compiled as it is (`compile_alone`: Kernel Tuner's compiler options, one cubin
    for `arch`, into `folder`, named by the string's sha256) and its function loaded with `loader`,
    so the gate runs code from the same nvcc as the modules and needs neither PyCUDA nor NVRTC.
    """

    def compile(self, kernel_instance):  # noqa: A001 - Kernel Tuner's method name
        text = kernel_instance.kernel_string
        out = Path(folder) / f"{kernel_instance.name}-{string_hash(text)[:16]}.cubin"
        if not out.exists():
            compile_alone(spec, text, out, arch, nvcc)
        self.current_module = loader(str(out))
        self.func = self.current_module.get_function(kernel_instance.name)
        self.num_regs = getattr(self.func, "num_regs", None)
        return self.func

    with _backend_compile(backend, compile):
        yield Path(folder)


# ---- cubin inspection (tests and --verify): what a function's machine code is -----------------------------

EIATTR_REGCOUNT = 0x2F


def _sections(data: bytes) -> dict[str, tuple[int, int, bytes | int, int]]:
    """name -> (type, link, contents (or size for NOBITS), entsize) of a 64-bit little-endian ELF."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]

    def name(offset: int) -> str:
        end = data.index(b"\0", names_at + offset)
        return data[names_at + offset:end].decode()

    out = {}
    for h in headers:
        sh_name, sh_type, _, _, off, size, link, _, _, entsize = h
        out[name(sh_name)] = (sh_type, link, size if sh_type == 8 else data[off:off + size], entsize)
    return out


def _contents(section: tuple[int, int, bytes | int, int]) -> bytes:
    """A section's bytes (an error for a NOBITS section, which has only a size)."""
    contents = section[2]
    if isinstance(contents, int):
        raise ValueError("a NOBITS section has no contents")
    return contents


def cubin_functions(path: str | Path) -> dict[str, dict[str, Any]]:
    """Per kernel function of a cubin: its machine code (`text`), static shared memory bytes, the
    contents of its parameter constant bank and its register count."""
    data = Path(path).read_bytes()
    secs = _sections(data)
    symtab = secs.get(".symtab")
    symbols: list[str] = []
    if symtab is not None:
        strtab = _contents(secs[".strtab"])
        raw = _contents(symtab)
        for off in range(0, len(raw), 24):
            st_name, = struct.unpack_from("<I", raw, off)
            end = strtab.index(b"\0", st_name)
            symbols.append(strtab[st_name:end].decode())
    regs: dict[str, int] = {}
    info = secs.get(".nv.info")
    if info is not None:
        raw, pos = _contents(info), 0
        while pos + 4 <= len(raw):
            fmt, attr, size = raw[pos], raw[pos + 1], struct.unpack_from("<H", raw, pos + 2)[0]
            payload_len = size if fmt == 0x04 else 0  # other formats hold their value in the 4 header bytes
            payload = raw[pos + 4:pos + 4 + payload_len]
            if fmt == 0x04 and attr == EIATTR_REGCOUNT and len(payload) >= 8:
                sym, count = struct.unpack_from("<II", payload, 0)
                if sym < len(symbols):
                    regs[symbols[sym]] = count
            pos += 4 + payload_len
    out: dict[str, dict[str, Any]] = {}
    for name, (_, _, contents, _) in secs.items():
        if name.startswith(".text."):
            fn = name[len(".text."):]
            shared = secs.get(f".nv.shared.{fn}")
            const = secs.get(f".nv.constant0.{fn}")
            out[fn] = {"text": contents, "shared_bytes": shared[2] if shared else 0,
                       "constant0": const[2] if const else b"", "registers": regs.get(fn)}
    return out


def compile_alone(spec: KernelSpec, kernel_string: str, out: Path, arch: str, nvcc: str | None = None) -> Path:
    """The cubin of one configuration compiled on its own from its Kernel Tuner kernel string (for comparisons)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".cu")
    src.write_text(kernel_string)
    proc = subprocess.run(nvcc_command(spec, src, out, arch, nvcc), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed for {src}:\n{proc.stderr[-4000:]}")
    return out


def compile_space(kernel: str, size_name: str, folder: str | Path, arch: str, *, chunk: int = DEFAULT_CHUNK,
                  jobs: int | None = None, limit: int | None = None,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Compile the modules of a kernel's whole CUDA space (or its first `limit` configurations), no GPU needed.

    Returns counts, wall and nvcc seconds and the failed modules; the cubins stay in `folder`.
    """
    spec = harness.load_spec(kernel)
    configs = spec.valid_configs("cuda")[:limit] if limit else spec.valid_configs("cuda")
    start = time.perf_counter()
    chunks = make_chunks(spec, configs, size_name, chunk=chunk)
    generate_s = time.perf_counter() - start
    builder = ModuleBuilder(folder, arch, jobs=jobs)
    failed = []
    nvcc_s = 0.0
    try:
        for ch in chunks:
            builder.submit(spec, ch)
        for n, ch in enumerate(chunks, 1):
            res = builder.result(ch)
            nvcc_s += res["seconds"]
            if not res["ok"]:
                failed.append({"module": ch.index, "configurations": len(ch.configs), "error": res["error"][-1000:]})
            if progress is not None:
                progress(n, len(chunks))
    finally:
        builder.close()
    wall = time.perf_counter() - start
    return {"kernel": kernel, "arch": arch, "configurations": len(configs), "modules": len(chunks),
            "chunk": chunk, "jobs": builder.jobs, "wall_s": wall, "generate_s": generate_s, "nvcc_s": nvcc_s,
            "configurations_per_s": len(configs) / wall if wall > 0 else float("nan"), "failed": failed}


def compile_spaces(kernels: Sequence[str], size_name: str, out: str | Path, arch: str, *, chunk: int = DEFAULT_CHUNK,
                   jobs: int | None = None, limit: int | None = None, stream: TextIO | None = None) -> int:
    """`gpu-lease --compile-only`: compile each kernel's space into `out`/<kernel>, in the order given.

    Writes each kernel's `compile_space` summary as one JSON line to `stream` (default stdout). Stops
    at the first kernel with a module that failed to compile (logged) and returns 1; else 0.
    """
    stream = stream or sys.stdout
    for kernel in kernels:
        summary = compile_space(kernel, size_name, f"{out}/{kernel}", arch, chunk=chunk, jobs=jobs, limit=limit)
        print(json.dumps(summary), file=stream, flush=True)
        if summary["failed"]:
            log.error("%s: %d module(s) failed to compile", kernel, len(summary["failed"]))
            return 1
    return 0
