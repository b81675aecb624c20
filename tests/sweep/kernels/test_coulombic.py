"""Coulombic potential: the reference against SciPy distances and a closed form, the C++ port against it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from analysis.sweep import harness

K = "coulombic"
DOUBLE = {"T_pos": "double", "T_q": "double", "T_pot": "double", "exec_policy": 0}


def _reference_module():
    return harness.load_reference(K)


def _run(config):
    out = harness.run_cpu(K, {"threads": 1, "points_per_iter": 8, "dynamic_schedule": 0, "exec_policy": 0,
                              **config})["potential"]
    assert np.all(np.isfinite(out))
    return out


def _errors(config):
    out = _run(config)
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
    # tiny has nx = 20: with 8 (16) points per iteration the row tail of 4 points is exercised
    for ppi, threads, dynamic in ((1, 1, 0), (8, 2, 0), (16, 2, 1), (2, 2, 1)):
        opt = {"threads": threads, "points_per_iter": ppi, "dynamic_schedule": dynamic}
        out = harness.run_cpu(K, {**opt, **DOUBLE})["potential"]
        np.testing.assert_allclose(out, harness.reference_outputs(K)["potential"], rtol=1e-12)


@pytest.mark.parametrize("types", [
    {"T_pos": "half", "T_q": "bfloat16", "T_pot": "float", "exec_policy": 2},
    {"T_pos": "float", "T_q": "double", "T_pot": "half", "exec_policy": 1},
])
def test_every_optimisation_variant_is_bit_identical_to_one_point_per_iteration(types):
    """Point blocks and the row schedule change which points share an atom and which thread takes a row, never the
    order of a point's terms: every valid optimisation setting gives the one-point, one-thread result bit for bit."""
    spec = harness.load_spec(K)
    own = list(spec.target("cpu").own_params)
    base = harness.run_cpu(K, {"threads": 1, "points_per_iter": 1, "dynamic_schedule": 0, **types})["potential"]
    assert np.all(np.isfinite(base))
    settings = {tuple(c[p] for p in own) for c in spec.valid_configs("cpu") if all(c[p] == v for p, v in types.items())}
    assert len(settings) == 15
    for values in sorted(settings):
        opt = dict(zip(own, values))
        np.testing.assert_array_equal(harness.run_cpu(K, {**opt, **types})["potential"], base, err_msg=str(opt))


def test_precision_errors_are_ordered():
    single = _errors({"T_pos": "float", "T_q": "float", "T_pot": "float"})
    half = _errors({"T_pos": "half", "T_q": "half", "T_pot": "half"})
    bf16 = _errors({"T_pos": "bfloat16", "T_q": "bfloat16", "T_pot": "bfloat16"})
    assert 1e-8 < single["mre"] < 1e-6
    assert 1e-4 < half["mre"] < 1e-2
    assert half["mre"] < bf16["mre"] < 1e-1


def test_sixteen_bit_potentials_cost_more_than_sixteen_bit_charges():
    """Summing 64 terms in FP16 (T_pot) loses more than storing the charges in FP16 (T_q) or computing 1/r in FP16."""
    potentials = _errors({**DOUBLE, "T_pot": "half"})["mre"]
    charges = _errors({**DOUBLE, "T_q": "half"})["mre"]
    positions = _errors({**DOUBLE, "T_pos": "half"})["mre"]
    assert charges < potentials < 1e-2
    assert positions < potentials
    assert 1e-5 < charges and 1e-5 < positions  # each type parameter acts on its own


def test_exec_policy_changes_1_over_r_and_stays_close():
    """1/r follows the policy (precision.h): on the CPU fast is two Newton steps from a bit-level guess, approx one;
    on the GPU rsqrtf / hrsqrt. Each changes the result but stays near the accurate one; all stay finite."""
    for t, policies, bound in (("float", (1,), 1e-4), ("half", (2,), 1e-2), ("bfloat16", (2,), 5e-2)):
        types = {"T_pos": t, "T_q": "float", "T_pot": "float"}
        accurate = _run({**types, "exec_policy": 0})
        for p in policies:
            out = _run({**types, "exec_policy": p})
            assert np.all(np.isfinite(out)) and not np.array_equal(out, accurate), (t, p)
            assert np.max(np.abs(out - accurate) / np.abs(accurate)) < bound, (t, p)


def test_space_sizes():
    spec = harness.load_spec(K)
    assert spec.precision_combinations("cpu") == spec.precision_combinations("cuda") == 144  # Table II: 144
    # 144 precision combinations x (one thread: 5 points_per_iter; two: 5 x 2 schedules)
    assert len(spec.valid_configs("cpu")) == 144 * (5 + 2 * 5) == 2160
    assert all(c["dynamic_schedule"] == 0 for c in spec.valid_configs("cpu") if c["threads"] == 1)
    assert len(spec.valid_configs("cuda")) == 19008  # Table II: 20,736


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH")
def test_nvcc_compiles_a_mixed_configuration():
    for policy, t_pos in ((2, "half"), (1, "float"), (2, "bfloat16")):
        harness.nvcc_compile(K, {"block_size_x": 32, "block_size_y": 8, "points_per_thread": 4, "atom_unroll": 8,
                                 "exec_policy": policy, "T_pos": t_pos, "T_q": "bfloat16", "T_pot": "half"})
