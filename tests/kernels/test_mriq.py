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
        terms = [(inputs["phiMag"][k], 2 * math.pi * (inputs["kx"][k] * inputs["x"][i] + inputs["ky"][k] * inputs["y"][i]
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
        assert max(harness.error_metrics(out[name], ref[name]).values()) <= harness.load_spec(KERNEL).tolerance


def test_cpu_precisions_give_ordered_finite_errors():
    base = {"threads": 1, "voxels_per_iter": 2, "exec_policy": 0}
    single = _errors({**base, "T_k": "float", "T_x": "float", "T_c": "float", "T_q": "float"})
    half_out = _errors({**base, **DOUBLE, "T_q": "half"})
    half = _errors({**base, "T_k": "half", "T_x": "half", "T_c": "half", "T_q": "half"})
    bf16 = _errors({**base, "T_k": "bfloat16", "T_x": "bfloat16", "T_c": "bfloat16", "T_q": "bfloat16"})
    for e in (single, half_out, half, bf16):
        assert all(np.isfinite(v) for v in e.values())
    # NMAE (the meaningful metric): float ~3e-6, half output ~2e-4, all-half ~2e-2 (48-turn
    # phases at a 1/32-turn ulp), all-bfloat16 ~0.2
    assert 1e-7 < single["nmae"] < 1e-4
    assert 1e-5 < half_out["nmae"] < 1e-3
    assert 1e-3 < half["nmae"] < 1e-1
    assert half["nmae"] < bf16["nmae"] < 1.0
    # the input types are separate knobs: 16-bit k-space samples alone (phases of tens of
    # turns get their relative rounding) cost more than float; at the tiny size half holds
    # the voxel coordinates exactly (spacing 28.75 mm), bfloat16 does not
    half_k = _errors({**base, **DOUBLE, "T_k": "half"})
    half_x = _errors({**base, **DOUBLE, "T_x": "half"})
    bf16_x = _errors({**base, **DOUBLE, "T_x": "bfloat16"})
    assert single["nmae"] < half_k["nmae"] < 1e-1
    assert half_x["nmae"] < 1e-12
    assert single["nmae"] < bf16_x["nmae"] < 1.0


def test_cpu_exec_policy_changes_only_float_and_16_bit_cos_sin():
    base = {"threads": 1, "voxels_per_iter": 2}

    def run(t_c, policy):
        out = harness.run_cpu(KERNEL, {**base, **DOUBLE, "T_c": t_c, "T_q": t_c, "exec_policy": policy}, "tiny")
        assert all(np.all(np.isfinite(v)) for v in out.values()), (t_c, policy)
        return out

    ref = harness.reference_outputs(KERNEL, "tiny")

    def nmae(out):
        return max(harness.error_metrics(out[n], ref[n])["nmae"] for n in ref)

    double = [run("double", p) for p in (0, 1, 2)]
    assert all(np.array_equal(double[0][n], d[n]) for d in double[1:] for n in ref)
    single = [run("float", p) for p in (0, 1, 2)]
    assert not np.array_equal(single[0]["Qr"], single[1]["Qr"])
    assert all(np.array_equal(single[1][n], single[2][n]) for n in ref)  # float has no approx form
    assert nmae(single[1]) < 1e-4  # the fast polynomials are about as accurate as float itself
    for t16 in ("half", "bfloat16"):
        out = [run(t16, p) for p in (0, 1, 2)]
        if t16 == "half":  # the 16-bit approximations differ (bfloat16's 8 bits may round them away)
            assert not np.array_equal(out[0]["Qr"], out[2]["Qr"])
        errors = [nmae(o) for o in out]
        assert max(errors) < 1.0
        assert errors[2] < 3 * errors[0]  # an approximate cos/sin costs little next to 16-bit phases


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: CUDA version not compiled")
@pytest.mark.parametrize("config", [
    {"block_size_x": 128, "voxels_per_thread": 4, "k_unroll": 4, "use_shared": 1, "exec_policy": 2,
     "T_k": "half", "T_x": "bfloat16", "T_c": "half", "T_q": "half"},
    {"block_size_x": 512, "voxels_per_thread": 2, "k_unroll": 1, "use_shared": 0, "exec_policy": 1,
     "T_k": "double", "T_x": "float", "T_c": "bfloat16", "T_q": "bfloat16"},
    {"block_size_x": 64, "voxels_per_thread": 4, "k_unroll": 4, "use_shared": 0, "exec_policy": 0,
     "T_k": "float", "T_x": "half", "T_c": "double", "T_q": "float"},
])
def test_cuda_compiles(config):
    harness.nvcc_compile(KERNEL, config)
