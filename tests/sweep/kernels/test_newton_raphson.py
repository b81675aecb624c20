"""Newton-Raphson: the reference against independent root finders, the C++ port against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.sweep import harness

K = "newton_raphson"
ALL = ("T_coef", "T_x0", "T_early", "T_late", "T_dp", "T_root")
DOUBLE = {p: "double" for p in ALL}


def _errors(config):
    out = harness.run_cpu(K, {"threads": 1, "polys_per_iter": 8, **config})["root"]
    assert np.all(np.isfinite(out))
    return harness.error_metrics(out, harness.reference_outputs(K)["root"])


def test_reference_matches_companion_matrix_roots():
    """10 float64 Newton steps converge to the one positive root found by np.roots (eigenvalues)."""
    inputs = harness.make_inputs(K, "tiny")
    ref = harness.reference_outputs(K, "tiny")["root"]
    coef = inputs["coef"]
    for i in range(0, coef.shape[1], 7):
        roots = np.roots(coef[::-1, i])  # highest degree first
        positive = roots[(np.abs(roots.imag) < 1e-9) & (roots.real > 0)].real
        assert positive.size == 1  # a0 < 0 < a1..a4: exactly one sign change
        assert ref[i] == pytest.approx(positive[0], rel=1e-12)


def test_reference_matches_scalar_power_form_newton():
    """A plain Python loop with p and p' as sums of powers (not Horner) gives the same 10th iterate."""
    inputs = harness.make_inputs(K, "tiny")
    ref = harness.reference_outputs(K, "tiny")["root"]
    for i in range(0, ref.size, 31):
        a = [float(c) for c in inputs["coef"][:, i]]
        x = float(inputs["x0"][i])
        for _ in range(10):
            p = sum(a[k] * x**k for k in range(5))
            dp = sum(k * a[k] * x ** (k - 1) for k in range(1, 5))
            x -= p / dp
        assert ref[i] == pytest.approx(x, rel=1e-13)


def test_data_stay_in_fp16_range():
    """Iterates start above the root and descend, so |p| and |p'| at x0 bound them: below FP16's 65504."""
    for size_name in ("tiny", "cpu"):
        inputs = harness.make_inputs(K, size_name)
        a0, a1, a2, a3, a4 = inputs["coef"]
        x = inputs["x0"]
        ref = harness.reference_outputs(K, size_name)["root"]
        assert np.all(a0 < 0) and np.all(np.stack([a1, a2, a3, a4]) > 0)
        assert np.all(x >= ref) and 0.5 <= ref.min() and ref.max() <= 2.0
        p = (((a4 * x + a3) * x + a2) * x + a1) * x + a0
        dp = ((4 * a4 * x + 3 * a3) * x + 2 * a2) * x + a1
        assert p.max() < 2.3e4 and dp.max() < 1.1e4


def test_cpu_all_double_matches_reference():
    for ppi in (1, 8):
        out = harness.run_cpu(K, {"threads": 2, "polys_per_iter": ppi, **DOUBLE})["root"]
        np.testing.assert_allclose(out, harness.reference_outputs(K)["root"], rtol=1e-12)


def test_precision_errors_are_ordered():
    single = _errors({p: "float" for p in ALL})
    half = _errors({p: "half" for p in ALL})
    bf16 = _errors({p: "bfloat16" for p in ALL})
    assert 1e-9 < single["nrmse"] < 1e-6
    assert 1e-5 < half["nrmse"] < 1e-2
    assert half["nrmse"] < bf16["nrmse"] < 1e-1


def test_late_steps_repair_early_low_precision():
    """Newton is self-correcting: 16-bit early steps followed by double late steps lose nothing."""
    for early in ("half", "bfloat16"):
        assert _errors({**DOUBLE, "T_early": early})["mre"] < 1e-14
    # ... while 16-bit coefficients move the root itself
    assert 1e-5 < _errors({**DOUBLE, "T_coef": "half"})["mre"] < 1e-3


def test_new_precision_parameters_act_as_intended():
    """T_dp only steers convergence; T_x0 is repaired by the steps; T_root rounds the output."""
    # a float derivative in every step: the double late steps still converge to the double root
    assert _errors({**DOUBLE, "T_dp": "float"})["mre"] < 1e-14
    # ... but in a float run it changes the iterates (the derivative is really evaluated in T_dp)
    single = {p: "float" for p in ALL}
    out_f = harness.run_cpu(K, {"threads": 1, "polys_per_iter": 8, **single})["root"]
    out_h = harness.run_cpu(K, {"threads": 1, "polys_per_iter": 8, **single, "T_dp": "half"})["root"]
    assert not np.array_equal(out_f, out_h)
    # a half derivative in an all-half run stays finite
    assert _errors({p: "half" for p in ALL})["mre"] < 1e-2
    # start values rounded to half: Newton forgets them
    assert _errors({**DOUBLE, "T_x0": "half"})["mre"] < 1e-14
    # the output type rounds the root: half's relative half-ulp is 2^-11
    e = _errors({**DOUBLE, "T_root": "half"})["mre"]
    assert 1e-5 < e < 2.0**-11


def test_space_sizes():
    spec = harness.load_spec(K)
    assert spec.precision_combinations("cpu") == spec.precision_combinations("cuda") == 533  # Table II: 468
    assert len(spec.valid_configs("cpu")) == 4 * 533
    assert len(spec.valid_configs("cuda")) == 12 * 533


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH")
def test_nvcc_compiles_mixed_configurations():
    config = {"block_size_x": 1024, "polys_per_thread": 2, "T_coef": "bfloat16", "T_x0": "bfloat16",
              "T_early": "bfloat16", "T_late": "float", "T_dp": "bfloat16", "T_root": "half"}
    assert config in harness.load_spec(K).valid_configs("cuda")
    harness.nvcc_compile(K, config)
