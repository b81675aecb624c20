"""Every kernel folder against the contract of workflow/kernels/README.md.

Per kernel: the spec validates; its arithmetic lives once, in `<name>.h`, included by
kernel.cu and kernel.cpp, which repeat none of each other's lines; it has seed 002 Table
II's number of precision parameters and a CUDA space within 25 % of Table II's; the C++
port at the tiny size gives finite outputs for a covering sample of its cpu space and,
as the reference configuration, matches the float64 reference within the spec's
tolerance; nvcc compiles the CUDA version for a covering sample of its cuda space (sm_80
and sm_90 in one call per configuration).
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from analysis.sweep import harness, sizes
from analysis.sweep.metrics import error_metrics

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


def _code_lines(path) -> set[str]:
    """Lines of C++ that carry code (not blank, comment, brace, preprocessor or pragma lines), whitespace-normalised."""
    out = set()
    for line in path.read_text().splitlines():
        line = " ".join(line.split())
        if len(line) < 12 or line.startswith(("//", "#", "*", "/*")) or re.fullmatch(r"[{}();\s]*", line):
            continue
        out.add(line)
    return out


@pytest.mark.parametrize("kernel", KERNELS)
def test_arithmetic_is_written_once(kernel):
    folder = harness.kernel_dir(kernel)
    header = folder / f"{kernel}.h"
    assert header.is_file(), f"{kernel}: the shared arithmetic {header.name} is missing"
    for f in ("kernel.cu", "kernel.cpp"):
        assert f'#include "{kernel}.h"' in (folder / f).read_text(), f"{kernel}: {f} does not include {header.name}"
    shared = _code_lines(folder / "kernel.cu") & _code_lines(folder / "kernel.cpp")
    assert not shared, f"{kernel}: kernel.cu and kernel.cpp repeat {sorted(shared)[:3]}"
    text = header.read_text()
    assert "TSB_FN" in text and not re.search(r"#include\s*<", text), f"{kernel}: {header.name} must use TSB_FN " \
        "functions and include only precision.h"


@pytest.mark.parametrize("kernel", KERNELS)
def test_precision_structure_and_cuda_scale_of_seed_002(kernel):
    row = sizes.kernel_row(kernel)
    assert row["paper_configurations"], f"{kernel}: spec lacks seed 002 Table II's counts (paper)"
    assert row["precision_params"] == row["paper_precision_params"]
    assert abs(row["cuda_vs_paper"]) <= sizes.CUDA_SCALE_TOLERANCE, (
        f"{kernel}: {row['cuda_configurations']} CUDA configurations against Table II's {row['paper_configurations']}")


def test_kernel_sizes_table_is_current():
    assert sizes.main(check=True) == 0, "run `python -m analysis.cli kernel-sizes`"


@pytest.mark.parametrize("kernel", KERNELS)
def test_cpu_port_reference_configuration_is_within_tolerance(kernel):
    spec = harness.load_spec(kernel)
    config = harness.all_double_config(kernel, "cpu")
    out = harness.run_cpu(kernel, config, "tiny")
    ref = harness.reference_outputs(kernel, "tiny")
    assert out.keys() == ref.keys()
    for name in ref:
        worst = max(error_metrics(out[name], ref[name]).values())
        assert worst <= spec.tolerance, f"{kernel} {name} with {config}: {worst:.3e} > {spec.tolerance:g}"


@pytest.mark.parametrize("kernel", KERNELS)
def test_cpu_port_covering_sample_is_finite(kernel):
    ref = harness.reference_outputs(kernel, "tiny")
    for config in harness.covering_sample(kernel, "cpu"):
        out = harness.run_cpu(kernel, config, "tiny")
        for name, values in out.items():
            assert values.shape == ref[name].shape
            assert np.all(np.isfinite(values)), f"{kernel} {name} not finite with {config}"


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: CUDA versions not compiled")
# convolution2d's covering sample, the largest, takes nvcc more than 20 s: marked slow
@pytest.mark.parametrize("kernel", [pytest.param(k, marks=pytest.mark.slow) if k == "convolution2d" else k
                                    for k in KERNELS])
def test_cuda_covering_sample_compiles(kernel):
    configs = harness.covering_sample(kernel, "cuda")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # one nvcc call per configuration
        list(pool.map(lambda c: harness.nvcc_compile(kernel, c), configs))


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: CUDA versions not compiled")
@pytest.mark.parametrize("kernel", KERNELS)
def test_cuda_reference_configuration_compiles(kernel):
    # the configuration the correctness gate runs first on a GPU, from the same shared header as the CPU port
    harness.nvcc_compile(kernel, harness.all_double_config(kernel, "cuda"))
