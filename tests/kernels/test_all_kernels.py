"""Every kernel folder against the contract of workflow/kernels/README.md.

Per kernel: the spec validates; the C++ port at the tiny size gives finite outputs for a
covering sample of its cpu space and, with every type double, matches the float64
reference within 1e-9 relative; nvcc compiles the CUDA version for a covering sample of
its cuda space (sm_80 and sm_90 in one call per configuration).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from analysis.sweep import harness

KERNELS = harness.list_kernels()


def test_there_are_kernels():
    assert "bessel" in KERNELS


@pytest.mark.parametrize("kernel", KERNELS)
def test_spec_validates(kernel):
    spec = harness.load_spec(kernel)
    assert spec.name == kernel
    for f in ("reference.py", "kernel.cu", "kernel.cpp"):
        assert (spec.folder / f).is_file(), f"{kernel}: {f} missing"
    for size_name in spec.sizes:
        assert spec.memory_bytes(harness.all_double_config(kernel, "cpu"), size_name) > 0


@pytest.mark.parametrize("kernel", KERNELS)
def test_reference_is_deterministic_and_finite(kernel):
    spec = harness.load_spec(kernel)
    ref = harness.load_reference(kernel)
    a = ref.make_inputs(spec.size("tiny"), spec.seed)
    b = ref.make_inputs(spec.size("tiny"), spec.seed)
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    for name, out in harness.reference_outputs(kernel, "tiny").items():
        assert np.all(np.isfinite(out)), f"{kernel}: reference output {name} not finite"


@pytest.mark.parametrize("kernel", KERNELS)
def test_cpu_port_all_double_matches_reference(kernel):
    config = harness.all_double_config(kernel, "cpu")
    out = harness.run_cpu(kernel, config, "tiny")
    ref = harness.reference_outputs(kernel, "tiny")
    assert out.keys() == ref.keys()
    for name in ref:
        np.testing.assert_allclose(out[name], ref[name], rtol=1e-9, atol=1e-12 * np.max(np.abs(ref[name])),
                                   err_msg=f"{kernel} {name} with {config}")


@pytest.mark.parametrize("kernel", KERNELS)
def test_cpu_port_covering_sample_is_finite(kernel):
    ref = harness.reference_outputs(kernel, "tiny")
    for config in harness.covering_sample(kernel, "cpu"):
        out = harness.run_cpu(kernel, config, "tiny")
        for name, values in out.items():
            assert values.shape == ref[name].shape
            assert np.all(np.isfinite(values)), f"{kernel} {name} not finite with {config}"


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: CUDA versions not compiled")
@pytest.mark.parametrize("kernel", KERNELS)
def test_cuda_covering_sample_compiles(kernel):
    configs = harness.covering_sample(kernel, "cuda")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # one nvcc call per configuration
        list(pool.map(lambda c: harness.nvcc_compile(kernel, c), configs))
