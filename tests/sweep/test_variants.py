"""Grouped compilation (analysis.sweep.variants): one library per precision combination, each variant its own code.

The proof that a grouped sweep measures the same code as Kernel Tuner compiling every
configuration alone: for every kernel, each optimisation variant of a 16-bit precision
combination gives bit-identical outputs from the grouped library and from kernel.cpp
compiled on its own; a grouped and a per-configuration sweep of one slice write the same
configurations with identical error metrics.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from test_sweep import SMALL

from analysis.errors import SweepError
from analysis.sweep import harness, metrics, variants
from analysis.sweep.observers import OutputMemo, make_error_observer, make_nonfinite_observer
from analysis.sweep.shard import COMPILE_MODES, sweep_shard
from analysis.sweep.spec import SpecError

KERNELS = harness.list_kernels()


def _sixteen_bit_combination(kernel: str) -> list[dict]:
    """Every valid cpu configuration of the first precision combination whose first array type is 16-bit."""
    spec = harness.load_spec(kernel)
    own = list(spec.target("cpu").own_params)
    first = spec.argument_precision_params()[0]
    valid = spec.valid_configs("cpu")
    pick = next(c for c in valid if c[first] in ("half", "bfloat16"))
    return [c for c in valid if all(c[p] == pick[p] for p in c if p not in own)]


@pytest.mark.slow  # over 20 s in a clean-clone .ci/run (benchmarks/reports/ci_suite.csv, ebb2563)
@pytest.mark.parametrize("kernel", KERNELS)
def test_every_variant_is_bit_identical_to_its_own_compile(kernel):
    spec = harness.load_spec(kernel)
    configs = _sixteen_bit_combination(kernel)
    assert len(configs) == spec.optimisation_combinations("cpu") > 1
    libraries = variants.GroupedLibraries(spec, "cpu", configs)
    prefix = "".join(f"#define {k} {v}\n" for k, v in {**configs[0], "kernel_tuner": 1}.items()) + "#line 1\n"
    try:
        for config in configs:
            grouped = harness.call_port(spec, libraries.function(config, prefix), config, "tiny")
            alone = harness.run_cpu(kernel, config, "tiny")
            for name, values in alone.items():
                assert np.array_equal(grouped[name], values, equal_nan=True), (kernel, config, name)
        assert libraries.builds == 1 and libraries.variant_count(configs[0]) == len(configs)
        assert libraries.build_time_ms(configs[0]) > 0
    finally:
        libraries.close()


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_sources_keep_the_grouping_contract(kernel):
    spec = harness.load_spec(kernel)
    text = (spec.folder / "kernel.cpp").read_text()
    assert text.count('extern "C"') == 1 and f" {spec.function}(" in text
    assert variants.header_guard(spec).startswith("TSB_")
    header = (spec.folder / f"{kernel}.h").read_text()
    for p in spec.target("cpu").own_params:  # every optimisation parameter is a macro with a default
        assert f"#ifndef {p}\n#define {p} " in text + header, p


def test_a_header_without_guard_is_an_error(tmp_path):
    spec = harness.load_spec("kmeans")
    header = tmp_path / "kmeans.h"
    header.write_text("inline int f() { return 1; }\n")
    with pytest.raises(SpecError, match="include guard") as info:
        variants.header_guard(dataclasses.replace(spec, path=tmp_path / "spec.yaml"))
    assert str(header) in str(info.value)


def test_unknown_configuration_is_refused():
    spec = harness.load_spec("kmeans")
    configs = _sixteen_bit_combination("kmeans")
    libraries = variants.GroupedLibraries(spec, "cpu", configs[:2])
    with pytest.raises(KeyError, match="not among"):
        libraries.function(configs[-1], "")


def test_grouped_and_per_configuration_sweeps_agree(tmp_path):
    tune_params = {**SMALL, "elems_per_iter": [1, 4]}  # 4 precision combinations x 2 variants
    caches = {}
    for mode in COMPILE_MODES:
        cache = tmp_path / f"{mode}.json"
        summary = sweep_shard("bessel", "cpu", "tiny", cache, iterations=2, tune_params=tune_params,
                                  compile_mode=mode)
        caches[mode] = json.loads(cache.read_text())["cache"]
        assert summary["compile_mode"] == mode
        assert summary["libraries_built"] == (4 if mode == "grouped" else 0)
    grouped, alone = caches["grouped"], caches["per-configuration"]
    assert list(grouped) == list(alone) and len(grouped) == 8
    for key in grouped:
        for field in (*metrics.METRICS, "nonfinite_values", "memory"):
            assert grouped[key][field] == alone[key][field], (key, field)
        for field in ("compile_time", "verification_time", "benchmark_time"):
            assert grouped[key][field] >= 0 and alone[key][field] >= 0
        assert grouped[key]["library_variants"] == 2 and grouped[key]["library_build_time"] > 0
        assert "library_build_time" not in alone[key] and len(grouped[key]["times"]) == 2


def test_unknown_compile_mode_is_an_error(tmp_path):
    with pytest.raises(SweepError, match="unknown compile mode 'fast'") as info:
        sweep_shard("bessel", "cpu", "tiny", tmp_path / "c.json", tune_params=SMALL, compile_mode="fast")
    assert info.value.field == "compile_mode"


def test_error_metrics_equal_the_three_functions_and_are_computed_once():
    rng = np.random.default_rng(5)
    ref = rng.normal(size=1000)
    out = ref * (1 + rng.normal(scale=1e-3, size=1000))
    out[[3, 7]] = [np.inf, np.nan]
    for y in (out, ref * (1 + 1e-4)):
        m = metrics.error_metrics(y, ref)
        assert json.dumps(m) == json.dumps({"mre": metrics.mre(y, ref), "nrmse": metrics.nrmse(y, ref),
                                            "nmae": metrics.nmae(y, ref)})
    memo = OutputMemo(None)
    observers = [make_error_observer(None, m, memo) for m in metrics.METRICS]
    nonfinite = make_nonfinite_observer(None, memo)
    outputs = [out]
    for o in (*observers, nonfinite):
        o.process_output([ref], outputs)
    assert memo.outputs is outputs and nonfinite.get_results() == {"nonfinite_values": 2}
    fine = [ref * (1 + 1e-4)]
    observers[0].process_output([ref], fine)  # a new output list is decoded anew
    assert observers[0].get_results()["mre"] == pytest.approx(1e-4) and memo.nonfinite == 0
