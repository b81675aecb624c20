"""Bessel I0: the reference against SciPy, the C++ port against the reference."""

from __future__ import annotations

import numpy as np
import scipy.special

from analysis.sweep import harness


def test_reference_matches_scipy_i0():
    spec = harness.load_spec("bessel")
    for size_name in ("tiny", "cpu"):
        x = harness.make_inputs("bessel", size_name)["x"]
        assert x.shape == (spec.size(size_name)["n"],) and 0 <= x.min() and x.max() < 10
        y = harness.reference_outputs("bessel", size_name)["y"]
        np.testing.assert_allclose(y, scipy.special.i0(x), rtol=1e-14)


def test_cpu_all_double_matches_reference():
    config = {"kmax": 24, "elems_per_iter": 4, "T_x": "double", "T_y": "double", "T_sum": "double",
              "T_term": "double"}
    out = harness.run_cpu("bessel", config)["y"]
    np.testing.assert_allclose(out, harness.reference_outputs("bessel")["y"], rtol=1e-13)


def test_truncation_and_precision_errors_are_ordered():
    ref = harness.reference_outputs("bessel")["y"]
    base = {"elems_per_iter": 1, "T_x": "double", "T_y": "double", "T_sum": "double", "T_term": "double"}
    short = harness.error_metrics(harness.run_cpu("bessel", {**base, "kmax": 8})["y"], ref)
    # 8 terms truncate the series badly near x = 10 (the first omitted term is ~3% of I0(10))
    assert 1e-4 < short["mre"] < 1e-1
    single = harness.error_metrics(harness.run_cpu("bessel", {**base, "kmax": 24, "T_x": "float", "T_y": "float",
                                                              "T_sum": "float", "T_term": "float"})["y"], ref)
    half = harness.error_metrics(harness.run_cpu("bessel", {**base, "kmax": 24, "T_x": "half", "T_y": "half",
                                                            "T_sum": "half", "T_term": "half"})["y"], ref)
    bf16 = harness.error_metrics(harness.run_cpu("bessel", {**base, "kmax": 24, "T_x": "bfloat16",
                                                            "T_y": "bfloat16", "T_sum": "bfloat16",
                                                            "T_term": "bfloat16"})["y"], ref)
    assert 1e-9 < single["mre"] < 1e-6
    assert 1e-5 < half["mre"] < 1e-2
    assert half["mre"] < bf16["mre"] < 1e-1


def test_16bit_inputs_travel_as_uint16():
    spec = harness.load_spec("bessel")
    config = harness.all_double_config("bessel", "cpu") | {"T_x": "half", "T_y": "bfloat16"}
    args = harness.kernel_arguments(spec, config, harness.make_inputs("bessel"), "tiny", for_c=True)
    assert [a.dtype for a in args] == [np.uint16, np.uint16, np.int32]
