"""Convolution2D: the reference against SciPy and brute force, the C++ port against the reference, nvcc builds."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import scipy.signal

from analysis.sweep import harness

K = "convolution2d"
DOUBLE = {"T_in": "double", "T_filter": "double", "T_acc": "double", "T_out": "double"}


def test_inputs_are_scaled_against_half_overflow():
    spec = harness.load_spec(K)
    inputs = harness.make_inputs(K, "cpu")
    size = spec.size("cpu")
    assert inputs["image"].shape == (size["h"] + 16, size["w"] + 16)
    assert 0 <= inputs["image"].min() and inputs["image"].max() < 1
    assert inputs["filter"].min() > 0 and abs(inputs["filter"].sum() - 1) < 1e-14


@pytest.mark.parametrize("size_name", ["tiny", "cpu"])
def test_reference_matches_scipy_correlate2d(size_name):
    inputs = harness.make_inputs(K, size_name)
    expected = scipy.signal.correlate2d(inputs["image"], inputs["filter"], mode="valid")
    out = harness.reference_outputs(K, size_name)["output"]
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-13)


def test_reference_matches_brute_force_at_a_few_pixels():
    inputs = harness.make_inputs(K, "tiny")
    out = harness.reference_outputs(K, "tiny")["output"]
    h, w = out.shape
    for y, x in [(0, 0), (h - 1, w - 1), (7, 40), (h // 2, 3)]:
        s = 0.0
        for i in range(17):
            for j in range(17):
                s += inputs["image"][y + i, x + j] * inputs["filter"][i, j]
        assert out[y, x] == pytest.approx(s, rel=1e-14)


@pytest.mark.parametrize("opt", [{"threads": 1, "tile_x": 1, "tile_y": 1}, {"threads": 2, "tile_x": 8, "tile_y": 2},
                                 {"threads": 2, "tile_x": 16, "tile_y": 4}, {"threads": 1, "tile_x": 1, "tile_y": 4}])
def test_cpu_all_double_matches_reference(opt):
    out = harness.run_cpu(K, {**opt, **DOUBLE})["output"]
    np.testing.assert_allclose(out, harness.reference_outputs(K)["output"], rtol=1e-12)


@pytest.mark.parametrize("tile", [(8, 2), (16, 4), (4, 4), (1, 2)])
def test_cpu_edge_tiles_when_the_size_is_not_a_tile_multiple(tile):
    """w and h that the tile does not divide (61 = 3 * 16 + 13, 29 = 7 * 4 + 1) exercise the remainder path."""
    ref_mod = harness.load_reference(K)
    size = {"w": 61, "h": 29}
    inputs = ref_mod.make_inputs(size, 5)
    expected = ref_mod.reference(inputs, size)["output"]
    lib = ctypes.CDLL(str(harness.compile_cpu(K, {"threads": 2, "tile_x": tile[0], "tile_y": tile[1], **DOUBLE})))
    image = np.ascontiguousarray(inputs["image"])
    weights = np.ascontiguousarray(inputs["filter"])
    out = np.full((size["h"], size["w"]), np.nan)
    lib.convolution2d.restype = None
    lib.convolution2d(image.ctypes.data_as(ctypes.c_void_p), weights.ctypes.data_as(ctypes.c_void_p),
                      out.ctypes.data_as(ctypes.c_void_p), ctypes.c_int(size["w"]), ctypes.c_int(size["h"]))
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.slow  # over 20 s in a clean-clone .ci/run (benchmarks/reports/ci_suite.csv, ebb2563)
@pytest.mark.parametrize("types", [
    {"T_in": "half", "T_filter": "float", "T_acc": "float", "T_out": "bfloat16"},
    {"T_in": "bfloat16", "T_filter": "half", "T_acc": "half", "T_out": "half"},
])
def test_every_tile_shape_is_bit_identical_to_one_output_at_a_time(types):
    """Tiles change which outputs share a tap, never the order of an output's taps: results equal the 1 x 1 tile's."""
    spec = harness.load_spec(K)
    own = spec.target("cpu").own_params
    base = harness.run_cpu(K, {"threads": 1, "tile_x": 1, "tile_y": 1, **types})["output"]
    assert np.all(np.isfinite(base))
    for i, (tx, ty) in enumerate((tx, ty) for tx in own["tile_x"] for ty in own["tile_y"]):
        opt = {"threads": 1 + i % 2, "tile_x": tx, "tile_y": ty}
        np.testing.assert_array_equal(harness.run_cpu(K, {**opt, **types})["output"], base, err_msg=str(opt))


def _errors(types: dict[str, str]) -> dict[str, float]:
    out = harness.run_cpu(K, {"threads": 1, "tile_x": 8, "tile_y": 1, **types})["output"]
    assert np.all(np.isfinite(out))
    return harness.error_metrics(out, harness.reference_outputs(K)["output"])


def test_precision_errors_are_ordered_and_plausible():
    single = _errors({"T_in": "float", "T_filter": "float", "T_acc": "float", "T_out": "float"})
    half_storage = _errors({"T_in": "half", "T_filter": "half", "T_acc": "float", "T_out": "half"})
    half = _errors({"T_in": "half", "T_filter": "half", "T_acc": "half", "T_out": "half"})
    bf16 = _errors({"T_in": "bfloat16", "T_filter": "bfloat16", "T_acc": "bfloat16", "T_out": "bfloat16"})
    assert 1e-9 < single["nrmse"] < 1e-6
    # half storage with a float sum: input and output rounding only (half ulp near 0.5 is 2^-11)
    assert 1e-5 < half_storage["nrmse"] < 1e-3
    # a half sum accumulates 289 roundings; a bfloat16 sum stagnates (its ulp near 0.5 exceeds most terms)
    assert half_storage["nrmse"] < half["nrmse"] < 1e-2
    assert half["nrmse"] < bf16["nrmse"] < 1e-1
    for e in (single, half_storage, half, bf16):
        assert e["mre"] > 0 and e["nmae"] > 0


@pytest.mark.slow  # over 20 s in a clean-clone .ci/run (benchmarks/reports/ci_suite.csv, ebb2563)
def test_each_precision_parameter_has_its_own_effect():
    """Narrowing one of image, weights, accumulator, output alone (the others double) raises the error."""
    double = _errors(DOUBLE)
    for name in ("T_in", "T_filter", "T_acc", "T_out"):
        single = _errors({**DOUBLE, name: "float"})
        half = _errors({**DOUBLE, name: "half"})
        bf16 = _errors({**DOUBLE, name: "bfloat16"})
        assert double["nrmse"] < 1e-13 < single["nrmse"] < half["nrmse"] < bf16["nrmse"] < 1e-1, name
    # rounding the weights (about 1/289 each) costs less than rounding the image or the sum
    assert _errors({**DOUBLE, "T_filter": "half"})["nrmse"] < _errors({**DOUBLE, "T_acc": "half"})["nrmse"]


def test_space_sizes():
    spec = harness.load_spec(K)
    # 107 precision combinations x threads (2) x tile_x (4) x tile_y (3)
    assert len(spec.valid_configs("cpu")) == 107 * 2 * 4 * 3 == 2568
    assert spec.optimisation_combinations("cpu") == 24
    # 107 precision combinations on both targets (seed 002 Table II: 112); CUDA within 25 % of 72,112
    assert spec.precision_combinations("cpu") == spec.precision_combinations("cuda") == 107
    cuda = spec.valid_configs("cuda")
    assert 0.75 * 72_112 <= len(cuda) <= 1.25 * 72_112
    # the shared-memory constraint removes large double tiles but keeps them for 16-bit images
    big = {"block_size_x": 64, "block_size_y": 8, "tile_size_x": 4, "tile_size_y": 4, "use_shmem": 1}
    types = {(c["T_in"]) for c in cuda if all(c[k] == v for k, v in big.items())}
    assert types == {"half", "bfloat16"}


def _shared_bytes(c: dict) -> int:
    item = {"double": 8, "float": 4, "half": 2, "bfloat16": 2}
    return ((c["block_size_y"] * c["tile_size_y"] + 16) * (c["block_size_x"] * c["tile_size_x"] + 16 + c["use_padding"])
            * item[c["T_in"]] + 289 * item[c["T_filter"]]) if c["use_shmem"] else 0


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: CUDA version not compiled")
def test_nvcc_compiles_the_largest_staged_tiles_and_mixed_16bit_types():
    spec = harness.load_spec(K)
    cuda = spec.valid_configs("cuda")
    largest_double = max((c for c in cuda if c["T_in"] == "double"), key=_shared_bytes)
    largest_half = max((c for c in cuda if c["T_in"] == "half" and c["min_blocks_per_sm"] == 2), key=_shared_bytes)
    assert 40_000 < _shared_bytes(largest_double) <= 49152 and 40_000 < _shared_bytes(largest_half) <= 49152
    mixed = {"block_size_x": 16, "block_size_y": 4, "tile_size_x": 4, "tile_size_y": 1, "use_shmem": 0,
             "use_padding": 0, "min_blocks_per_sm": 1, "T_in": "half", "T_filter": "bfloat16", "T_acc": "bfloat16",
             "T_out": "half"}
    assert mixed in cuda
    for config in (largest_double, largest_half, mixed):
        harness.nvcc_compile(K, config)
