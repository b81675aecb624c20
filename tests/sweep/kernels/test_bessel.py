"""Bessel I0: the reference against SciPy, the C++ port against the reference."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
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
    config = {"threads": 1, "elems_per_iter": 4, "dyn_chunk": 0, **{p: "double" for p in ALL}, **types}
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


@pytest.mark.slow  # over 20 s in a clean-clone .ci/run (benchmarks/reports/ci_suite.csv, ebb2563)
@pytest.mark.parametrize("types", [
    {p: "double" for p in ALL}, {p: "bfloat16" for p in ALL},
    {"T_x": "half", "T_q": "float", "T_term": "float", "T_sum": "double", "T_y": "half"},
])
def test_optimisation_variants_give_identical_results(types):
    """Elements per iteration and the OpenMP schedule (static, or dynamic chunks) change no element's series."""
    spec = harness.load_spec("bessel")
    variants = [c for c in spec.valid_configs("cpu") if all(c[p] == v for p, v in types.items())]
    assert len(variants) == spec.optimisation_combinations("cpu") == 12
    assert {c["dyn_chunk"] for c in variants if c["threads"] == 1} == {0}  # one thread: nothing to schedule
    base = harness.run_cpu("bessel", {"threads": 1, "elems_per_iter": 1, "dyn_chunk": 0, **types}, "cpu")["y"]
    for c in variants:
        np.testing.assert_array_equal(harness.run_cpu("bessel", c, "cpu")["y"], base, err_msg=str(c))


def test_every_schedule_covers_an_uneven_n():
    """n = 2045: not a multiple of 8 elements per iteration nor of the 1024-element chunks; every element once."""
    ref_mod = harness.load_reference("bessel")
    size = {"n": 2045}
    x = ref_mod.make_inputs(size, 5)["x"]
    expected = ref_mod.reference({"x": x}, size)["y"]
    for opt in ({"threads": 2, "elems_per_iter": 8, "dyn_chunk": 1024},
                {"threads": 2, "elems_per_iter": 8, "dyn_chunk": 0}):
        lib = ctypes.CDLL(str(harness.compile_cpu("bessel", {**opt, **{p: "double" for p in ALL}})))
        y = np.full(size["n"], np.nan)
        lib.bessel_i0.restype = None
        lib.bessel_i0(np.ascontiguousarray(x).ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p),
                      ctypes.c_int(size["n"]))
        np.testing.assert_allclose(y, expected, rtol=1e-13, err_msg=str(opt))
