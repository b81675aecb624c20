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


ALL = ("T_x", "T_q", "T_term", "T_sum", "T_y")


def _run(**types):
    config = {"threads": 1, "elems_per_iter": 4, **{p: "double" for p in ALL}, **types}
    return harness.error_metrics(harness.run_cpu("bessel", config)["y"], harness.reference_outputs("bessel")["y"])


def test_cpu_all_double_matches_reference():
    assert _run()["mre"] < 1e-15


def test_precision_errors_are_ordered():
    single = _run(**{p: "float" for p in ALL})
    half = _run(**{p: "half" for p in ALL})
    bf16 = _run(**{p: "bfloat16" for p in ALL})
    assert 1e-9 < single["mre"] < 1e-6
    assert 1e-5 < half["mre"] < 1e-2
    assert half["mre"] < bf16["mre"] < 1e-1
    # the sum carries the accuracy: a 16-bit term under a float sum loses less than a 16-bit sum
    assert _run(T_term="half", T_q="half", T_sum="float")["mre"] < half["mre"]


def test_16bit_inputs_travel_as_uint16():
    spec = harness.load_spec("bessel")
    config = harness.all_double_config("bessel", "cpu") | {"T_x": "half", "T_y": "bfloat16"}
    args = harness.kernel_arguments(spec, config, harness.make_inputs("bessel"), "tiny", for_c=True)
    assert [a.dtype for a in args] == [np.uint16, np.uint16, np.int32]
