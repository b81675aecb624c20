"""common/precision.h on the CPU: the execution policies' host approximations against libm, and the
policy dispatch per type (accurate = libm in the type, fast for float and narrower, approx for 16-bit)."""

from __future__ import annotations

import ctypes
import subprocess
import textwrap

import numpy as np
import pytest

from analysis.sweep import harness

FUNCTIONS = ("pexp", "plog", "psin", "pcos", "psqrt", "prsqrt")
NUMPY = {"pexp": np.exp, "plog": np.log, "psin": np.sin, "pcos": np.cos, "psqrt": np.sqrt,
         "prsqrt": lambda x: 1 / np.sqrt(x)}
TYPES = {"double": "double", "float": "float", "half": "half", "bfloat16": "bfloat16"}


def _library(tmp_path, policy: int) -> ctypes.CDLL:
    """Every policy-aware function in every type, as `void <f>_<type>(const double *x, double *y, int n)`."""
    body = ['#include "precision.h"']
    for f in FUNCTIONS:
        for t in TYPES:
            value = f"{f}(x[i])" if t == "double" else f"(double)tsb_to_float({f}(cast<{t}>(x[i])))"
            body.append(f'extern "C" void {f}_{t}(const double *x, double *y, int n) '
                        f'{{ for (int i = 0; i < n; i++) y[i] = {value}; }}')
    src = tmp_path / f"p{policy}.cpp"
    src.write_text("\n".join(body) + "\n")
    lib = tmp_path / f"p{policy}.so"
    subprocess.run([harness.CXX, *harness.cxx_flags(), f"-Dexec_policy={policy}", "-fPIC", "-shared", str(src),
                    "-o", str(lib)], check=True, capture_output=True)
    return ctypes.CDLL(str(lib))


def _call(lib, name: str, x: np.ndarray) -> np.ndarray:
    y = np.empty_like(x)
    fn = getattr(lib, name)
    fn.restype = None
    fn(x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p), ctypes.c_int(x.size))
    return y


def _inputs(f: str) -> np.ndarray:
    if f == "pexp":
        return np.linspace(-20, 20, 4001)
    if f in ("plog", "psqrt", "prsqrt"):
        return np.geomspace(1e-3, 1e3, 4001)
    return np.linspace(-30, 30, 4001)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("precision")
    return {p: _library(folder, p) for p in (0, 1, 2)}


@pytest.mark.parametrize("f", FUNCTIONS)
def test_double_is_accurate_in_every_policy(libs, f):
    x = _inputs(f)
    for p in (0, 1, 2):
        np.testing.assert_allclose(_call(libs[p], f"{f}_double", x), NUMPY[f](x), rtol=1e-15)


@pytest.mark.parametrize("f", FUNCTIONS)
def test_float_policies(libs, f):
    x = _inputs(f).astype(np.float32).astype(np.float64)
    exact = NUMPY[f](x)
    scale = np.maximum(np.abs(exact), 1.0 if f in ("psin", "pcos", "plog") else 0.0)  # absolute near 0
    accurate = np.max(np.abs(_call(libs[0], f"{f}_float", x) - exact) / scale)
    fast = np.max(np.abs(_call(libs[1], f"{f}_float", x) - exact) / scale)
    assert accurate < 2e-7
    assert fast < 2e-5  # sin/cos lose ~1e-5 at |x| = 30 in the float reduction, like __sinf
    assert np.array_equal(_call(libs[2], f"{f}_float", x), _call(libs[1], f"{f}_float", x))  # approx = fast


@pytest.mark.parametrize("f", ["pexp", "plog", "psin", "pcos", "psqrt", "prsqrt"])
@pytest.mark.parametrize("t,ulp", [("half", 2.0 ** -10), ("bfloat16", 2.0 ** -7)])
def test_16bit_policies(libs, f, t, ulp):
    x = _inputs(f) / (4 if f == "pexp" and t == "half" else 1)  # half overflows above e^11
    xt = _round(x, t)  # inputs representable in the type: the error is the function's alone
    exact = NUMPY[f](xt)
    scale = np.maximum(np.abs(exact), 1.0 if f in ("psin", "pcos", "plog") else 0.0)
    errors = [np.max(np.abs(_call(libs[p], f"{f}_{t}", xt) - exact) / scale) for p in (0, 1, 2)]
    assert errors[0] <= ulp and errors[1] <= ulp  # one rounding to the 16-bit type
    assert errors[2] <= 4 * ulp  # the approximation costs at most a few 16-bit ulps
    assert not np.array_equal(_call(libs[2], f"{f}_{t}", xt), _call(libs[0], f"{f}_{t}", xt))


def _round(x: np.ndarray, t: str) -> np.ndarray:
    from analysis.sweep.precision import decode, encode

    return decode(encode(x, t, for_c=True), t)


def test_header_compiles_for_both_gpu_generations_in_every_policy(tmp_path):
    if not harness.nvcc_available():
        pytest.skip("nvcc is not on the PATH")
    src = tmp_path / "k.cu"
    src.write_text(textwrap.dedent('''
        #include "precision.h"
        extern "C" __global__ void k(half *a, bfloat16 *b, float *c, double *d) {
            int i = threadIdx.x;
            a[i] = pexp(a[i]) + psin(a[i]) + pcos(a[i]) + plog(a[i]) + psqrt(a[i]) + prsqrt(a[i]) + pacos(a[i]);
            b[i] = pexp(b[i]) + psin(b[i]) + pcos(b[i]) + plog(b[i]) + psqrt(b[i]) + prsqrt(b[i]) + pasin(b[i]);
            c[i] = pexp(c[i]) + psin(c[i]) + pcos(c[i]) + plog(c[i]) + psqrt(c[i]) + prsqrt(c[i]);
            d[i] = pexp(d[i]) + psin(d[i]) + pcos(d[i]) + plog(d[i]) + psqrt(d[i]) + prsqrt(d[i]);
        }'''))
    for policy in (0, 1, 2):
        cmd = ["nvcc", "-std=c++17", f"-I{harness.COMMON_DIR}", f"-Dexec_policy={policy}",
               *[f"-gencode=arch=compute_{a[3:]},code={a}" for a in harness.NVCC_ARCHS], "-c", str(src),
               "-o", str(tmp_path / "k.o")]  # -c: host and device passes (the shared functions are __host__ too)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
