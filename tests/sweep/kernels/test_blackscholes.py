"""Black-Scholes: the reference against SciPy's exact normal CDF, the C++ port against the reference, nvcc."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from analysis.sweep import harness

KERNEL = "blackscholes"
DOUBLE = {"T_in": "double", "T_out": "double", "T_c": "double", "T_cnd": "double", "exec_policy": 0}


def _errors(config: dict, size_name: str = "tiny") -> dict[str, float]:
    out = harness.run_cpu(KERNEL, config, size_name)
    ref = harness.reference_outputs(KERNEL, size_name)
    return harness.worst([harness.error_metrics(out[n], ref[n]) for n in ref])


def test_reference_matches_exact_black_scholes():
    inputs = harness.make_inputs(KERNEL, "cpu")
    ref = harness.reference_outputs(KERNEL, "cpu")
    s, x, t, r, v = inputs["S"], inputs["X"], inputs["T"], 0.02, 0.30
    d1 = (np.log(s / x) + (r + v * v / 2) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)
    call = s * scipy.stats.norm.cdf(d1) - x * np.exp(-r * t) * scipy.stats.norm.cdf(d2)
    put = x * np.exp(-r * t) * scipy.stats.norm.cdf(-d2) - s * scipy.stats.norm.cdf(-d1)
    # the Abramowitz-Stegun CND is within 7.5e-8 of the exact one
    np.testing.assert_allclose(ref["call"], call, rtol=0, atol=7.5e-8 * (s + x).max())
    np.testing.assert_allclose(ref["put"], put, rtol=0, atol=7.5e-8 * (s + x).max())
    assert np.abs(ref["call"] - call).max() > 1e-12  # the reference uses the polynomial, not the exact CDF
    # put-call parity
    np.testing.assert_allclose(ref["call"] - ref["put"], s - x * np.exp(-r * t), atol=1e-12 * x.max())


def test_reference_cnd_against_erfc_loops():
    ref_mod = harness.load_reference(KERNEL)
    ds = np.linspace(-8.0, 8.0, 161)
    approx = ref_mod.cnd(ds)
    for d, a in zip(ds, approx):
        assert abs(a - 0.5 * math.erfc(-d / math.sqrt(2.0))) < 7.5e-8


def test_inputs_and_prices_follow_the_documented_ranges():
    inputs = harness.make_inputs(KERNEL, "cpu")
    assert 5 <= inputs["S"].min() and inputs["S"].max() < 30
    assert 1 <= inputs["X"].min() and inputs["X"].max() < 100
    assert 0.25 <= inputs["T"].min() and inputs["T"].max() < 10
    ref = harness.reference_outputs(KERNEL, "cpu")
    assert 0.1 < np.mean(ref["call"] < 1e-3) < 0.2  # why MRE is not meaningful
    assert ref["call"].mean() > 1 and ref["put"].mean() > 1  # why NRMSE and NMAE are
    assert max(ref["call"].max(), ref["put"].max()) < 100  # far from the FP16 limit


def _run(exec_policy=0, **types):
    config = {"threads": 1, "options_per_iter": 2, **DOUBLE, "exec_policy": exec_policy, **types}
    return harness.run_cpu(KERNEL, config)


@pytest.mark.parametrize("options_per_iter", [1, 4])
def test_cpu_all_double_matches_reference(options_per_iter):
    out = harness.run_cpu(KERNEL, {"threads": 2, "options_per_iter": options_per_iter, **DOUBLE})
    ref = harness.reference_outputs(KERNEL)
    for name in ("call", "put"):
        np.testing.assert_allclose(out[name], ref[name], rtol=1e-9, atol=1e-12 * np.abs(ref[name]).max())
    assert max(_errors({"threads": 2, "options_per_iter": options_per_iter, **DOUBLE}).values()) \
        <= harness.load_spec(KERNEL).tolerance


def test_cpu_precisions_give_ordered_finite_errors():
    base = {"threads": 1, "options_per_iter": 2, "exec_policy": 0}
    single = _errors({**base, "T_in": "float", "T_out": "float", "T_c": "float", "T_cnd": "float"})
    half_out = _errors({**base, **DOUBLE, "T_out": "half"})
    half = _errors({**base, "T_in": "half", "T_out": "half", "T_c": "half", "T_cnd": "half"})
    bf16 = _errors({**base, "T_in": "bfloat16", "T_out": "bfloat16", "T_c": "bfloat16", "T_cnd": "bfloat16"})
    for e in (single, half_out, half, bf16):
        assert all(np.isfinite(v) for v in e.values())
    # NMAE: float ~2e-7, half output ~2e-4, all-half ~1e-3, all-bfloat16 ~1e-2
    assert 1e-9 < single["nmae"] < 1e-5
    assert 1e-5 < half_out["nmae"] < 1e-3
    assert half_out["nmae"] < half["nmae"] < 1e-2
    assert half["nmae"] < bf16["nmae"] < 1e-1
    # the CND alone in 16 bits loses less than the whole computation in 16 bits
    assert _errors({**base, **DOUBLE, "T_cnd": "half"})["nmae"] < half["nmae"]


@pytest.mark.parametrize("t", ["float", "half", "bfloat16"])
def test_exec_policy_changes_narrow_transcendentals_and_stays_finite(t):
    types = {"T_c": t, "T_cnd": t}
    base = _run(**types)
    for p in (1, 2):
        out = _run(exec_policy=p, **types)
        for name in ("call", "put"):
            assert np.all(np.isfinite(out[name])), (t, p, name)
        # fast changes float; for 16-bit types its float-accurate results mostly round
        # back to the same 16-bit values, approx (16-bit approximations) changes them
        if (t == "float") == (p == 1):
            assert not np.array_equal(out["call"], base["call"]), (t, p)
    # double transcendentals ignore the policy
    np.testing.assert_array_equal(_run(exec_policy=1)["call"], _run()["call"])


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: CUDA version not compiled")
@pytest.mark.parametrize("config", [
    {"block_size_x": 128, "options_per_thread": 2, "exec_policy": 2,
     "T_in": "half", "T_out": "bfloat16", "T_c": "half", "T_cnd": "half"},
    {"block_size_x": 512, "options_per_thread": 4, "exec_policy": 1,
     "T_in": "float", "T_out": "half", "T_c": "float", "T_cnd": "bfloat16"},
    {"block_size_x": 64, "options_per_thread": 1, "exec_policy": 0,
     "T_in": "double", "T_out": "double", "T_c": "double", "T_cnd": "half"},
])
def test_cuda_compiles(config):
    harness.nvcc_compile(KERNEL, config)
