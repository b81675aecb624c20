"""K-Means distance step: the reference against SciPy and brute force, the C++ port against the reference,
nvcc builds."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import scipy.spatial.distance

from analysis.sweep import harness

K = "kmeans"
DOUBLE = {"T_points": "double", "T_centers": "double", "T_dist": "double"}


def test_inputs_are_scaled_against_half_overflow():
    spec = harness.load_spec(K)
    inputs = harness.make_inputs(K, "cpu")
    assert inputs["features"].shape == (15, spec.size("cpu")["n"]) and inputs["centers"].shape == (40, 15)
    for a in inputs.values():
        assert 0 <= a.min() and a.max() < 1
    dist = harness.reference_outputs(K, "cpu")["dist"]
    # no distance near zero (MRE stays meaningful) and all far below the half maximum 65504
    assert 0.1 < dist.min() and dist.max() < 15


@pytest.mark.parametrize("size_name", ["tiny", "cpu"])
def test_reference_matches_scipy_cdist(size_name):
    inputs = harness.make_inputs(K, size_name)
    expected = scipy.spatial.distance.cdist(inputs["centers"], inputs["features"].T, "sqeuclidean")
    out = harness.reference_outputs(K, size_name)["dist"]
    assert out.shape == expected.shape == (40, harness.load_spec(K).size(size_name)["n"])
    np.testing.assert_allclose(out, expected, rtol=1e-13)


def test_reference_matches_brute_force_loops():
    inputs = harness.make_inputs(K, "tiny")
    out = harness.reference_outputs(K, "tiny")["dist"]
    for c, i in [(0, 0), (39, 1023), (17, 500), (3, 999)]:
        s = 0.0
        for j in range(15):
            s += (inputs["features"][j, i] - inputs["centers"][c, j]) ** 2
        assert out[c, i] == pytest.approx(s, rel=1e-14)
    # the argmin of the distances is the nearest center by the norm of the differences
    points = inputs["features"].T
    nearest = [int(np.argmin([np.linalg.norm(p - c) for c in inputs["centers"]])) for p in points[:50]]
    assert nearest == list(np.argmin(out[:, :50], axis=0))


@pytest.mark.parametrize("opt", [{"threads": 1, "block_points": 1, "loop_order": 0, "unroll_jam": 1},
                                 {"threads": 2, "block_points": 64, "loop_order": 0, "unroll_jam": 4},
                                 {"threads": 2, "block_points": 16, "loop_order": 1, "unroll_jam": 2}])
def test_cpu_all_double_matches_reference(opt):
    out = harness.run_cpu(K, {**opt, **DOUBLE})["dist"]
    np.testing.assert_allclose(out, harness.reference_outputs(K)["dist"], rtol=1e-12)


@pytest.mark.parametrize("loop_order,unroll_jam", [(0, 4), (1, 1), (1, 4)])
def test_cpu_partial_last_block(loop_order, unroll_jam):
    """An n that 64 does not divide exercises the remainder of the point blocks (and, in loop order 1, of the jam:
    the last block's 11 points are two groups of 4 and 3 single points)."""
    ref_mod = harness.load_reference(K)
    size = {"n": 203}
    inputs = ref_mod.make_inputs(size, 7)
    expected = ref_mod.reference(inputs, size)["dist"]
    opt = {"threads": 2, "block_points": 64, "loop_order": loop_order, "unroll_jam": unroll_jam}
    lib = ctypes.CDLL(str(harness.compile_cpu(K, {**opt, **DOUBLE})))
    features = np.ascontiguousarray(inputs["features"])
    centers = np.ascontiguousarray(inputs["centers"])
    out = np.full((40, size["n"]), np.nan)
    lib.kmeans_distance.restype = None
    lib.kmeans_distance(features.ctypes.data_as(ctypes.c_void_p), centers.ctypes.data_as(ctypes.c_void_p),
                        out.ctypes.data_as(ctypes.c_void_p), ctypes.c_int(size["n"]))
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def _errors(types: dict[str, str]) -> dict[str, float]:
    out = harness.run_cpu(K, {"threads": 1, "block_points": 16, "loop_order": 0, "unroll_jam": 1, **types})["dist"]
    assert np.all(np.isfinite(out))
    return harness.error_metrics(out, harness.reference_outputs(K)["dist"])


def test_precision_errors_are_ordered_and_plausible():
    single = _errors({"T_points": "float", "T_centers": "float", "T_dist": "float"})
    half_storage = _errors({"T_points": "half", "T_centers": "half", "T_dist": "float"})
    half = _errors({"T_points": "half", "T_centers": "half", "T_dist": "half"})
    bf16_storage = _errors({"T_points": "bfloat16", "T_centers": "bfloat16", "T_dist": "float"})
    bf16 = _errors({"T_points": "bfloat16", "T_centers": "bfloat16", "T_dist": "bfloat16"})
    assert 1e-9 < single["mre"] < 1e-6
    assert 1e-5 < half_storage["mre"] < half["mre"] < 1e-2
    assert half["mre"] < bf16_storage["mre"] < bf16["mre"] < 5e-2
    for e in (single, half_storage, half, bf16_storage, bf16):
        assert e["nrmse"] > 0 and e["nmae"] > 0


def test_each_precision_parameter_acts_alone():
    """Narrowing only the points, only the centers or only the distance each costs accuracy, the distance most."""
    base = _errors(DOUBLE)["mre"]
    points = _errors(DOUBLE | {"T_points": "half"})["mre"]
    centers = _errors(DOUBLE | {"T_centers": "half"})["mre"]
    distance = _errors(DOUBLE | {"T_dist": "half"})["mre"]
    assert base < 1e-14
    for e in (points, centers):
        assert 1e-5 < e < 1e-3
    # a half distance rounds every difference, square and partial sum, beyond the storage's input rounding
    assert distance > max(points, centers)


def test_space_sizes():
    spec = harness.load_spec(K)
    # no type constraints: 4^3 type combinations (seed 002 Table II: 64)
    assert spec.precision_combinations("cpu") == spec.precision_combinations("cuda") == 64
    # cpu: 2 threads x (order 0: 3 blocks x 3 jams + order 1: jams no wider than the block, 1 + 3 + 3)
    assert spec.optimisation_combinations("cpu") == 2 * (9 + 7)
    assert len(spec.valid_configs("cpu")) == 32 * 64
    assert len(spec.valid_configs("cuda")) == 48 * 64


@pytest.mark.slow  # over 20 s in a clean-clone .ci/run (benchmarks/reports/ci_suite.csv, ebb2563)
@pytest.mark.parametrize("types", [DOUBLE, {"T_points": "half", "T_centers": "bfloat16", "T_dist": "float"},
                                   # this one takes more than 20 s: marked slow
                                   pytest.param({"T_points": "float", "T_centers": "half", "T_dist": "bfloat16"},
                                                marks=pytest.mark.slow)])
def test_optimisation_variants_give_identical_results(types):
    """Block size, loop order and unroll-and-jam leave every distance's sum (and its order) as it is: same bits."""
    spec = harness.load_spec(K)
    variants = [c for c in spec.valid_configs("cpu") if all(c[p] == v for p, v in types.items())]
    assert len(variants) == 32
    base = harness.run_cpu(K, {"threads": 1, "block_points": 1, "loop_order": 0, "unroll_jam": 1, **types})["dist"]
    for c in variants:
        np.testing.assert_array_equal(harness.run_cpu(K, c)["dist"], base, err_msg=str(c))


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: CUDA version not compiled")
def test_nvcc_compiles_extremes_and_mixed_16bit_types():
    spec = harness.load_spec(K)
    cuda = spec.valid_configs("cuda")
    configs = [
        {"block_size_x": 1024, "points_per_thread": 8, "centers_in_shmem": 1, **DOUBLE},
        {"block_size_x": 32, "points_per_thread": 2, "centers_in_shmem": 0, "T_points": "half",
         "T_centers": "bfloat16", "T_dist": "bfloat16"},
    ]
    for config in configs:
        assert config in cuda
        harness.nvcc_compile(K, config)
