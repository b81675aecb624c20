"""InvK: the reference against forward kinematics and the generating angles, the C++ port against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.sweep import harness

K = "invk"


def end_effector(theta: np.ndarray) -> np.ndarray:
    """Forward kinematics with complex numbers: (x, y, phi) of joint angles (n, 3)."""
    a = np.cumsum(theta, axis=1)
    tip = (np.array([1.0, 0.8, 0.5]) * np.exp(1j * a)).sum(axis=1)
    return np.stack([tip.real, tip.imag, a[:, 2]], axis=1)


@pytest.mark.parametrize("size_name", ["tiny", "cpu"])
def test_reference_reaches_the_targets(size_name):
    target = harness.make_inputs(K, size_name)["target"]
    theta = harness.reference_outputs(K, size_name)["theta"]
    assert theta.shape == target.shape
    np.testing.assert_allclose(end_effector(theta), target, rtol=0, atol=1e-12)
    # one elbow branch: th2 in (0, pi), so the solution is unique and equals the drawn angles
    spec = harness.load_spec(K)
    drawn = harness.load_reference(K).joint_angles(spec.size(size_name), spec.seed)
    np.testing.assert_allclose(theta, drawn, rtol=0, atol=1e-12)


def test_targets_stay_in_16bit_range_and_away_from_singularities():
    target = harness.make_inputs(K, "cpu")["target"]
    theta = harness.reference_outputs(K, "cpu")["theta"]
    assert np.abs(target).max() < 6
    assert theta[:, 1].min() > 0.29 and theta[:, 1].max() < 2.41
    assert theta[:, 2].min() < 0 < theta[:, 2].max()  # th3 crosses zero: NMAE, not MRE


@pytest.mark.parametrize("ppt", [1, 4])
def test_cpu_all_double_matches_reference(ppt):
    ref = harness.reference_outputs(K, "tiny")["theta"]
    config = {"threads": 2, "ppt": ppt, "T_in": "double", "T_calc": "double", "T_out": "double"}
    out = harness.run_cpu(K, config, "tiny")["theta"]
    assert np.max(np.abs(out - ref)) <= 1e-12 * np.max(np.abs(ref))


def test_cpu_precisions_give_ordered_plausible_errors():
    ref = harness.reference_outputs(K, "tiny")["theta"]

    def nmae(t_in, t_calc, t_out):
        out = harness.run_cpu(K, {"threads": 1, "ppt": 2, "T_in": t_in, "T_calc": t_calc, "T_out": t_out},
                              "tiny")["theta"]
        assert np.all(np.isfinite(out)), (t_in, t_calc, t_out)
        return harness.error_metrics(out, ref)["nmae"]

    single = nmae("float", "float", "float")
    half = nmae("half", "half", "half")
    bf16 = nmae("bfloat16", "bfloat16", "bfloat16")
    half_storage = nmae("half", "double", "half")
    assert 1e-9 < single < 1e-5
    assert 1e-4 < half < 1e-2
    assert half < bf16 < 1e-1
    # 16-bit storage with double intermediates is more accurate than 16-bit arithmetic
    assert single < half_storage < half


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH")
@pytest.mark.parametrize("config", [
    {"block_size_x": 1024, "ppt": 8, "exec_policy": 2, "T_in": "half", "T_calc": "bfloat16", "T_out": "half"},
    {"block_size_x": 32, "ppt": 1, "exec_policy": 1, "T_in": "bfloat16", "T_calc": "half", "T_out": "double"},
])
def test_nvcc_compiles(config):
    harness.nvcc_compile(K, config)
