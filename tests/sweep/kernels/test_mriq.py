"""MRI-Q: the reference against brute-force loops and closed forms, the C++ port against the reference, nvcc."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.sweep import harness

KERNEL = "mriq"
DOUBLE = {"T_k": "double", "T_x": "double", "T_c": "double", "T_q": "double", "exec_policy": 0}


def _errors(config: dict, size_name: str = "tiny") -> dict[str, float]:
    out = harness.run_cpu(KERNEL, config, size_name)
    ref = harness.reference_outputs(KERNEL, size_name)
    return harness.worst([harness.error_metrics(out[n], ref[n]) for n in ref])


def test_reference_matches_brute_force_loops():
    inputs = harness.make_inputs(KERNEL, "tiny")
    ref = harness.reference_outputs(KERNEL, "tiny")
    rng = np.random.default_rng(0)
    for i in rng.choice(inputs["x"].size, size=12, replace=False):
        terms = [(inputs["phiMag"][k], 2 * math.pi * (inputs["kx"][k] * inputs["x"][i]
                                                      + inputs["ky"][k] * inputs["y"][i]
                                                      + inputs["kz"][k] * inputs["z"][i]))
                 for k in range(inputs["kx"].size)]
        assert math.isclose(ref["Qr"][i], math.fsum(m * math.cos(a) for m, a in terms), rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose(ref["Qi"][i], math.fsum(m * math.sin(a) for m, a in terms), rel_tol=1e-12, abs_tol=1e-12)


def test_reference_matches_complex_exponential_and_closed_forms():
    spec = harness.load_spec(KERNEL)
    ref_mod = harness.load_reference(KERNEL)
    inputs = harness.make_inputs(KERNEL, "cpu")
    ref = harness.reference_outputs(KERNEL, "cpu")
    pos = np.stack([inputs["x"], inputs["y"], inputs["z"]], axis=1)
    k = np.stack([inputs["kx"], inputs["ky"], inputs["kz"]], axis=1)
    q = np.exp(2j * np.pi * np.einsum("xd,kd->xk", pos, k)).dot(inputs["phiMag"])
    np.testing.assert_allclose(ref["Qr"], q.real, atol=1e-10 * np.abs(q).max())
    np.testing.assert_allclose(ref["Qi"], q.imag, atol=1e-10 * np.abs(q).max())
    # one k-sample on the kx axis: Q = phiMag * exp(2 pi i kx x) exactly; k = 0: Q = sum of phiMag
    size = spec.size("tiny")
    one = dict(harness.make_inputs(KERNEL, "tiny"))
    one.update(kx=np.array([0.05]), ky=np.zeros(1), kz=np.zeros(1), phiMag=np.array([1.5]))
    out = ref_mod.reference(one, size)
    np.testing.assert_allclose(out["Qr"], 1.5 * np.cos(2 * np.pi * 0.05 * one["x"]), atol=1e-13)
    np.testing.assert_allclose(out["Qi"], 1.5 * np.sin(2 * np.pi * 0.05 * one["x"]), atol=1e-13)
    one.update(kx=np.zeros(3), ky=np.zeros(3), kz=np.zeros(3), phiMag=np.array([0.5, 1.0, 2.0]))
    out = ref_mod.reference(one, size)
    np.testing.assert_allclose(out["Qr"], 3.5, rtol=1e-15)
    np.testing.assert_allclose(out["Qi"], 0.0, atol=1e-15)


def test_inputs_follow_the_documented_ranges():
    for size_name in ("tiny", "cpu"):
        inputs = harness.make_inputs(KERNEL, size_name)
        kmax = 0.5 * 64 / 230.0
        for name in ("kx", "ky", "kz"):
            assert -kmax <= inputs[name].min() and inputs[name].max() < kmax
        assert 0 <= inputs["phiMag"].min() and inputs["phiMag"].max() < 2
        assert np.abs(inputs["x"]).max() == 115.0  # a 230 mm field of view, -g/2 .. g/2-1 voxels
        # phases reach tens of turns, and the voxel coordinates are not exact in half precision
        assert np.abs(np.stack([inputs["x"], inputs["y"], inputs["z"]], 1) @ np.stack(
            [inputs["kx"], inputs["ky"], inputs["kz"]])).max() > 15
        # bfloat16 rounds the voxel coordinates at every size (8 mantissa bits)
        assert np.any(harness.decode(harness.encode(inputs["x"], "bfloat16", for_c=True), "bfloat16") != inputs["x"])
    # at the cpu size (spacing 230/12 mm) half rounds them too
    x = harness.make_inputs(KERNEL, "cpu")["x"]
    assert np.any(x.astype(np.float16) != x)


@pytest.mark.parametrize("voxels_per_iter", [1, 4])
def test_cpu_all_double_matches_reference(voxels_per_iter):
    out = harness.run_cpu(KERNEL, {"threads": 2, "voxels_per_iter": voxels_per_iter, **DOUBLE})
    ref = harness.reference_outputs(KERNEL)
    for name in ("Qr", "Qi"):
        np.testing.assert_allclose(out[name], ref[name], rtol=1e-9, atol=1e-12 * np.abs(ref[name]).max())


def test_cpu_precisions_give_ordered_finite_errors():
    base = {"threads": 1, "voxels_per_iter": 2}
    single = _errors({**base, "T_k": "float", "T_x": "float", "T_c": "float", "T_q": "float", "exec_policy": 0})
    half_out = _errors({**base, **DOUBLE, "T_q": "half"})
    half = _errors({**base, "T_k": "half", "T_x": "half", "T_c": "half", "T_q": "half", "exec_policy": 0})
    bf16 = _errors({**base, "T_k": "bfloat16", "T_x": "bfloat16", "T_c": "bfloat16", "T_q": "bfloat16",
                    "exec_policy": 0})
    for e in (single, half_out, half, bf16):
        assert all(np.isfinite(v) for v in e.values())
    # NMAE (the meaningful metric): float ~3e-6, half output ~2e-4, all-half ~2e-2 (48-turn
    # phases at a 1/32-turn ulp), all-bfloat16 ~0.2
    assert 1e-7 < single["nmae"] < 1e-4
    assert 1e-5 < half_out["nmae"] < 1e-3
    assert 1e-3 < half["nmae"] < 1e-1
    assert half["nmae"] < bf16["nmae"] < 1.0


def test_each_type_parameter_has_its_own_effect():
    """Narrowing one of T_k, T_x, T_c, T_q alone (the others double) raises the error, float < half < bfloat16."""
    base = {"threads": 1, "voxels_per_iter": 2}
    exact = _errors({**base, **DOUBLE}, "cpu")["nmae"]
    for name in ("T_k", "T_x", "T_c", "T_q"):
        e = [_errors({**base, **DOUBLE, name: t}, "cpu")["nmae"] for t in ("float", "half", "bfloat16")]
        assert exact < 1e-12 < e[0] < e[1] < e[2] < 1.0, (name, e)


@pytest.mark.parametrize("t_c", ["float", "half", "bfloat16"])
def test_execution_policy_changes_cos_sin_and_stays_finite(t_c):
    """fast changes float results, approx changes 16-bit ones (fast float cos/sin rounded to 16 bits are
    mostly the accurate ones); all finite."""
    base = {"threads": 1, "voxels_per_iter": 2, **DOUBLE, "T_c": t_c}
    ref = harness.reference_outputs(KERNEL, "cpu")
    outs = [harness.run_cpu(KERNEL, {**base, "exec_policy": p}, "cpu") for p in (0, 1, 2)]
    for out in outs:
        assert all(np.all(np.isfinite(out[n])) for n in ref)
    if t_c == "float":  # approx is fast for float
        assert any(np.any(outs[1][n] != outs[0][n]) for n in ref)
        assert all(np.array_equal(outs[2][n], outs[1][n]) for n in ref)
    elif t_c == "half":
        assert any(np.any(outs[2][n] != outs[0][n]) for n in ref)
    # bfloat16: the 16-bit approximations (about 3e-4 off) rarely cross a bfloat16 rounding
    # boundary (ulp 2^-8), and a changed term is absorbed by the coarser bfloat16 sum, so Q may
    # not change at all; precision.h's own tests check the bfloat16 approximations
    errs = [harness.worst([harness.error_metrics(o[n], ref[n]) for n in ref])["nmae"] for o in outs]
    # the policies cost accuracy of their own order at most: fast ~1e-7 relative, approx ~1e-3
    assert errs[1] < 10 * errs[0] + 1e-5 and errs[2] < 10 * errs[0] + 1e-2, errs


def test_space_sizes():
    spec = harness.load_spec(KERNEL)
    assert spec.precision_combinations("cpu") == spec.precision_combinations("cuda") == 640  # Table II: 640
    assert len(spec.valid_configs("cpu")) == 3840
    assert 0.75 * 29_916 <= len(spec.valid_configs("cuda")) <= 1.25 * 29_916
    assert all(c["exec_policy"] == 0 for c in spec.valid_configs("cpu") if c["T_c"] == "double")


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: CUDA version not compiled")
@pytest.mark.parametrize("config", [
    {"block_size_x": 128, "voxels_per_thread": 4, "use_shared": 1, "exec_policy": 2,
     "T_k": "half", "T_x": "bfloat16", "T_c": "half", "T_q": "half"},
    {"block_size_x": 1024, "voxels_per_thread": 2, "use_shared": 0, "exec_policy": 1,
     "T_k": "double", "T_x": "float", "T_c": "bfloat16", "T_q": "bfloat16"},
    {"block_size_x": 32, "voxels_per_thread": 8, "use_shared": 1, "exec_policy": 0,
     "T_k": "float", "T_x": "half", "T_c": "double", "T_q": "float"},
])
def test_cuda_compiles(config):
    harness.nvcc_compile(KERNEL, config)
