"""Coulombic potential: the reference against SciPy distances and a closed form, the C++ port against it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from analysis.sweep import harness

K = "coulombic"
DOUBLE = {"T_pos": "double", "T_q": "double", "T_acc": "double", "T_pot": "double"}


def _reference_module():
    return harness.load_reference(K)


def _errors(config):
    out = harness.run_cpu(K, {"threads": 1, "points_per_iter": 8, **config})["potential"]
    assert np.all(np.isfinite(out))
    return harness.error_metrics(out, harness.reference_outputs(K)["potential"])


def test_reference_matches_scipy_cdist():
    spec = harness.load_spec(K)
    for size_name in ("tiny", "cpu"):
        size = spec.size(size_name)
        inputs = harness.make_inputs(K, size_name)
        nx, ny = size["nx"], size["ny"]
        h = 1.0 / nx
        gx, gy = np.meshgrid((np.arange(nx) + 0.5) * h, (np.arange(ny) + 0.5) * h)
        points = np.stack([gx.ravel(), gy.ravel(), np.zeros(nx * ny)], axis=1)
        expected = (inputs["charge"][None, :] / cdist(points, inputs["atoms"].T)).sum(axis=1).reshape(ny, nx)
        np.testing.assert_allclose(harness.reference_outputs(K, size_name)["potential"], expected, rtol=1e-13)


def test_reference_single_atom_closed_form():
    """One charge q at height z above grid point (i, j): V = q/z there and q/sqrt(d^2 + z^2) elsewhere."""
    ref = _reference_module()
    size = {"nx": 8, "ny": 5, "natoms": 1}
    q, z, i, j = 0.75, 0.3, 5, 2
    atoms = np.array([[(i + 0.5) / 8], [(j + 0.5) / 8], [z]])
    v = ref.reference({"atoms": atoms, "charge": np.array([q])}, size)["potential"]
    assert v.shape == (5, 8)
    assert v[j, i] == pytest.approx(q / z, rel=1e-15)
    assert v[0, 0] == pytest.approx(q / math.sqrt((5 / 8) ** 2 + (2 / 8) ** 2 + z**2), rel=1e-15)


def test_data_stay_in_fp16_range():
    for size_name in ("tiny", "cpu"):
        inputs = harness.make_inputs(K, size_name)
        x, y, z = inputs["atoms"]
        assert 0 <= x.min() and x.max() < 1 and 0 <= y.min() and y.max() < 1
        assert 0.05 <= z.min() and z.max() <= 0.5 and inputs["charge"].min() >= 0.1
        v = harness.reference_outputs(K, size_name)["potential"]
        assert v.min() > 0 and v.max() < 1e3  # far below 65504; 1/r <= 1/0.05


def test_cpu_all_double_matches_reference():
    # tiny has nx = 20: with 8 points per iteration the row tail (4 points) is exercised
    for ppi, threads in ((1, 1), (8, 2)):
        out = harness.run_cpu(K, {"threads": threads, "points_per_iter": ppi, **DOUBLE})["potential"]
        np.testing.assert_allclose(out, harness.reference_outputs(K)["potential"], rtol=1e-12)


def test_precision_errors_are_ordered():
    single = _errors({"T_pos": "float", "T_q": "float", "T_acc": "float", "T_pot": "float"})
    half = _errors({"T_pos": "half", "T_q": "half", "T_acc": "half", "T_pot": "half"})
    bf16 = _errors({"T_pos": "bfloat16", "T_q": "bfloat16", "T_acc": "bfloat16", "T_pot": "bfloat16"})
    assert 1e-8 < single["mre"] < 1e-6
    assert 1e-4 < half["mre"] < 1e-2
    assert half["mre"] < bf16["mre"] < 1e-1


def test_sixteen_bit_accumulation_costs_more_than_sixteen_bit_storage():
    """Summing 64 terms in FP16 loses more than storing the charges or the result in FP16."""
    acc = _errors({**DOUBLE, "T_acc": "half", "T_pot": "half"})["mre"]
    charges = _errors({**DOUBLE, "T_q": "half"})["mre"]
    output = _errors({**DOUBLE, "T_pot": "half"})["mre"]
    assert charges < output < acc < 1e-2


def test_space_sizes():
    spec = harness.load_spec(K)
    assert len(spec.valid_configs("cpu")) == 528
    assert len(spec.valid_configs("cuda")) == 26136


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH")
def test_nvcc_compiles_a_mixed_configuration():
    harness.nvcc_compile(K, {"block_size_x": 32, "block_size_y": 8, "points_per_thread": 4, "atom_unroll": 4,
                             "exec_policy": 2, "T_pos": "half", "T_q": "bfloat16", "T_acc": "bfloat16",
                             "T_pot": "half"})
