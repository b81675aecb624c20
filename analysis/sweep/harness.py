"""Helpers for kernel authors and tests: load a kernel, run its C++ port, compile its CUDA version.

    from analysis.sweep.harness import load_spec, run_cpu, reference_outputs, error_metrics
    spec = load_spec("bessel")
    out = run_cpu("bessel", {"kmax": 24, "T_x": "double", ...}, "tiny")   # name -> float64 array
    ref = reference_outputs("bessel", "tiny")
    error_metrics(out["y"], ref["y"])                                     # {mre, nrmse, nmae}
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from analysis.sweep import expr
from analysis.sweep.metrics import error_metrics, worst  # noqa: F401  (re-exported for kernel tests)
from analysis.sweep.precision import decode, encode, storage_dtype  # noqa: F401
from analysis.sweep.spec import COMMON_DIR, KernelSpec, SpecError, kernel_dir, list_kernels, load_spec  # noqa: F401

CXX = os.environ.get("CXX", "g++")
CXX_FLAGS = ["-O3", "-fopenmp", "-std=c++17"]
NVCC_ARCHS = ("sm_80", "sm_90")
_CTYPES = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint32": ctypes.c_uint32,
           "double": ctypes.c_double, "float": ctypes.c_float}
# the NumPy scalar type of each scalar argument type (the sweeps and the GPU visits build arguments with it)
NP_SCALARS: dict[str, Callable[[Any], np.generic]] = {
    "int32": np.int32, "int64": np.int64, "uint32": np.uint32, "double": np.float64, "float": np.float32}


def cxx_flags() -> list[str]:
    """Compiler flags of the host-CPU ports (also given to Kernel Tuner's C backend)."""
    return [*CXX_FLAGS, f"-I{COMMON_DIR}"]


def port_compiler_options(spec: KernelSpec) -> list[str]:
    """The options a sweep compiles a kernel's C++ port with (Kernel Tuner adds -fPIC itself): its folder included."""
    return [*cxx_flags(), f"-I{spec.folder}"]


def load_reference(kernel: str) -> ModuleType:
    """The kernel's reference.py as a module (make_inputs, reference)."""
    path = kernel_dir(kernel) / "reference.py"
    if not path.is_file():
        raise SpecError(path, "missing (every kernel folder has reference.py)")
    spec = importlib.util.spec_from_file_location(f"tsb_kernel_{kernel}_reference", path)
    assert spec is not None and spec.loader is not None  # a .py file's spec, with its source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for fn in ("make_inputs", "reference"):
        if not callable(getattr(module, fn, None)):
            raise SpecError(path, "function is missing", field=fn)
    return module


@lru_cache(maxsize=32)
def _inputs_cached(kernel: str, size_name: str, mtime: float) -> dict[str, np.ndarray]:
    spec = load_spec(kernel)
    ref = load_reference(kernel)
    inputs = ref.make_inputs(spec.size(size_name), spec.seed)
    _check_arrays(spec, inputs, "input", size_name, "make_inputs")
    return inputs


@lru_cache(maxsize=32)
def _reference_cached(kernel: str, size_name: str, mtime: float) -> dict[str, np.ndarray]:
    spec = load_spec(kernel)
    inputs = make_inputs(kernel, size_name)
    out = load_reference(kernel).reference({k: v.copy() for k, v in inputs.items()}, spec.size(size_name))
    _check_arrays(spec, out, "output", size_name, "reference")
    return out


def _mtime(kernel: str) -> float:
    d = kernel_dir(kernel)
    return max((d / f).stat().st_mtime for f in ("spec.yaml", "reference.py") if (d / f).exists())


def make_inputs(kernel: str, size_name: str = "tiny") -> dict[str, np.ndarray]:
    """The kernel's deterministic float64 inputs at a size (checked against the spec's shapes)."""
    return _inputs_cached(kernel, size_name, _mtime(kernel))


def reference_outputs(kernel: str, size_name: str = "tiny") -> dict[str, np.ndarray]:
    """The float64 reference result of every output argument at a size."""
    return _reference_cached(kernel, size_name, _mtime(kernel))


def _check_arrays(spec: KernelSpec, arrays: Any, role: str, size_name: str, fn: str) -> None:
    path = spec.folder / "reference.py"
    if not isinstance(arrays, dict):
        raise SpecError(path, f"must return a dict of arrays, not {type(arrays).__name__}", field=fn)
    for a in spec.arguments:
        if a.role != role:
            continue
        if a.name not in arrays:
            raise SpecError(path, f"result lacks array '{a.name}'", field=fn)
        arr = np.asarray(arrays[a.name])
        want = spec.shape(a, size_name)
        if arr.shape != want and arr.size != int(np.prod(want)):
            raise SpecError(path, f"'{a.name}' has shape {arr.shape}, spec says {want}", field=fn)


def define_flags(params: Mapping[str, Any]) -> list[str]:
    """`-Dname=value` for every parameter (what Kernel Tuner's `#define` lines amount to)."""
    return [f"-D{k}={v}" for k, v in params.items()]


def _build_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"tsb-harness-{os.getuid()}"
    d.mkdir(exist_ok=True)
    return d


def compile_cpu(kernel: str, params: Mapping[str, Any]) -> Path:
    """Compile kernel.cpp with `params` as defines into a shared library (reused while the sources are unchanged)."""
    source = kernel_dir(kernel) / "kernel.cpp"
    if not source.is_file():
        raise SpecError(source, "missing (every kernel folder has kernel.cpp)")
    cmd_tail = [*cxx_flags(), *define_flags(params), "-fPIC", "-shared"]
    h = hashlib.sha256()
    for f in (source, *sorted(source.parent.glob("*.h")), *sorted(COMMON_DIR.glob("*.h"))):
        h.update(f.read_bytes())
    h.update(" ".join(cmd_tail).encode())
    lib = _build_dir() / f"{kernel}-{h.hexdigest()[:20]}.so"
    if not lib.exists():
        tmp = lib.with_suffix(f".{os.getpid()}.tmp")
        proc = subprocess.run([CXX, str(source), *cmd_tail, "-o", str(tmp)], capture_output=True, text=True)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise RuntimeError(f"{CXX} failed for {source} with {dict(params)}:\n{proc.stderr[-4000:]}")
        os.replace(tmp, lib)
    return lib


def kernel_arguments(spec: KernelSpec, params: Mapping[str, Any], inputs: Mapping[str, np.ndarray],
                     size_name: str, *, for_c: bool) -> list[np.ndarray | np.generic]:
    """Encoded arguments in call order: inputs rounded to their types, zeroed outputs, typed scalars."""
    args: list[np.ndarray | np.generic] = []
    for a in spec.arguments:
        if a.role == "scalar":
            args.append(NP_SCALARS[a.type](spec.scalar_value(a, size_name)))
            continue
        typ = spec.arg_type(a, params)
        shape = spec.shape(a, size_name)
        if a.role == "input":
            args.append(encode(np.asarray(inputs[a.name]).reshape(shape), typ, for_c=for_c))
        else:
            args.append(np.zeros(shape, dtype=storage_dtype(typ, for_c=for_c)))
    return args


def run_cpu(kernel: str, params: Mapping[str, Any], size_name: str = "tiny") -> dict[str, np.ndarray]:
    """Run the C++ port once for a configuration; float64 outputs by argument name.

    `params` must give every tunable parameter of the cpu target (precision included).
    """
    spec = load_spec(kernel)
    missing = [p for p in spec.tune_params("cpu") if p not in params]
    if missing:
        raise ValueError(f"{kernel}: configuration lacks parameters {missing}")
    fn = getattr(ctypes.CDLL(str(compile_cpu(kernel, params))), spec.function)
    fn.restype = None
    return call_port(spec, fn, params, size_name)


def call_port(spec: KernelSpec, fn: Any, params: Mapping[str, Any], size_name: str) -> dict[str, np.ndarray]:
    """Call a compiled C function with the kernel's arguments for `params` once; float64 outputs by name."""
    args = kernel_arguments(spec, params, make_inputs(spec.name, size_name), size_name, for_c=True)
    fn(*[a.ctypes.data_as(ctypes.c_void_p) if isinstance(a, np.ndarray) else _CTYPES[sa.type](a.item())
         for a, sa in zip(args, spec.arguments)])
    return {a.name: decode(arr, spec.arg_type(a, params)) for a, arr in zip(spec.arguments, args)
            if a.role == "output"}


def nvcc_available() -> bool:
    """Whether nvcc is on the PATH."""
    return shutil.which("nvcc") is not None


def cuda_defines(spec: KernelSpec, params: Mapping[str, Any], size_name: str = "gpu") -> dict[str, Any]:
    """The `#define`s Kernel Tuner's CUDA backends insert: block and grid sizes, then the parameters."""
    target = spec.target("cuda")
    names = target.block_size_names or ("block_size_x", "block_size_y", "block_size_z")
    defines: dict[str, Any] = {}
    problem = spec.problem_size(size_name) + [1] * (3 - len(target.problem_size))
    for axis, bname, n in zip("xyz", names, problem):
        divs = target.grid_div.get(f"grid_div_{axis}", [bname] if bname in params else [])
        div = 1
        for d in divs:
            div *= int(expr.evaluate(d, {**spec.size(size_name), **params}))
        defines[f"grid_size_{axis}"] = -(-n // div)
    for axis, bname in zip("xyz", names):
        defines[f"block_size_{axis}"] = params.get(bname, 1)
    defines.update(params)
    return defines


def nvcc_compile(kernel: str, params: Mapping[str, Any], archs: tuple[str, ...] = NVCC_ARCHS) -> None:
    """Compile kernel.cu for every arch in `archs` in one nvcc call; raise with nvcc's message on failure."""
    spec = load_spec(kernel)
    source = kernel_dir(kernel) / "kernel.cu"
    if not source.is_file():
        raise SpecError(source, "missing (every kernel folder has kernel.cu)")
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
    # -fatbin: device code only, as Kernel Tuner's CUDA backends compile it (no host pass)
    cmd = ["nvcc", "-std=c++17", f"-I{COMMON_DIR}", *gencode, *define_flags(cuda_defines(spec, params)),
           "-fatbin", str(source), "-o", os.devnull]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed for {source} with {dict(params)}:\n{proc.stderr[-4000:]}")


def covering_sample(kernel: str, target: str) -> list[dict[str, Any]]:
    """A small list of valid configurations in which every value of every parameter appears.

    Greedy set cover over (parameter, value) pairs, deterministic; a value that no valid
    configuration takes is an error naming the spec field.
    """
    spec = load_spec(kernel)
    valid = spec.valid_configs(target)
    params = spec.tune_params(target)
    wanted = {(p, v) for p, vals in params.items() for v in vals}
    reachable = {(p, c[p]) for c in valid for p in c}
    unreachable = sorted(wanted - reachable, key=str)
    if unreachable:
        p, v = unreachable[0]
        fld = f"precision.{p}" if p in spec.precision else f"targets.{target}.tune_params.{p}"
        raise SpecError(spec.path, f"value {v!r} appears in no valid configuration", field=fld)
    chosen: list[dict[str, Any]] = []
    left = set(wanted)
    while left:
        best = max(valid, key=lambda c: sum((p, c[p]) in left for p in c))
        chosen.append(best)
        left -= {(p, best[p]) for p in best}
    return chosen


def all_double_config(kernel: str, target: str) -> dict[str, Any]:
    """The first valid configuration (Kernel Tuner order) with every precision parameter double.

    The execution policy, if the kernel has one, is 0 (accurate). Parameters named in the
    spec's optional `reference_params` (e.g. enough series terms)
    take the values given there: that configuration must reproduce the float64 reference.
    """
    spec = load_spec(kernel)
    fixed = {p: v for p, v in spec.reference_params.items() if p in spec.tune_params(target)}
    for c in spec.valid_configs(target):
        if all(c[p] == spec.reference_value(p) for p in spec.precision) and all(c[p] == v for p, v in fixed.items()):
            return c
    reference = {p: spec.reference_value(p) for p in spec.precision}
    raise SpecError(spec.path, f"no valid configuration has the reference precision {reference} and {fixed}",
                    field=f"targets.{target}.constraints")
