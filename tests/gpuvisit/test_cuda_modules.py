"""Compile-ahead modules of the CUDA sweep (gpuvisit.cuda_modules): generation for every kernel, and nvcc
for sm_90 of a sample of every kernel's grouping, each variant's machine code compared with the configuration
compiled alone from Kernel Tuner's own kernel string."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from analysis.sweep import harness
from analysis.sweep.spec import list_kernels
from gpuvisit import cuda_modules as cm
from helpers import REPO

needs_nvcc = pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: modules not compiled")


def _sixteen_bit_group(kernel: str, n: int) -> list[dict]:
    """`n` optimisation variants of the valid precision combination with the most 16-bit types."""
    spec = harness.load_spec(kernel)
    valid = spec.valid_configs("cuda")
    best = max(harness.covering_sample(kernel, "cuda"),
               key=lambda c: sum(c[p] in ("half", "bfloat16") for p in spec.precision))
    group = [c for c in valid if cm.precision_key(spec, c) == cm.precision_key(spec, best)]
    step = max(1, len(group) // n)
    return group[::step][:n]  # spread over the optimisation parameters


@pytest.mark.parametrize("kernel", list_kernels())
def test_chunks_cover_each_configuration_once_with_its_own_defines(kernel):
    spec = harness.load_spec(kernel)
    valid = spec.valid_configs("cuda")
    configs = valid[:: max(1, len(valid) // 300)]
    strings = cm.KernelStrings(spec, "gpu")
    chunks = cm.make_chunks(spec, configs, "gpu", chunk=7, strings=strings)
    seen = [c for ch in chunks for c in ch.configs]
    assert sorted(map(str, seen)) == sorted(map(str, configs))
    for ch in chunks:
        assert 1 <= len(ch.configs) <= 7
        assert len({cm.precision_key(spec, c) for c in ch.configs}) == 1
        for c, own, h in zip(ch.configs, ch.own, ch.hashes):
            text = strings(c)[1]
            assert cm.string_hash(text) == h
            assert {**ch.common, **own} == cm.prefix_defines(text)
            assert not set(ch.common) & set(own)
        src = ch.source(spec)
        assert src.count('#include "kernel.cu"') == len(ch.configs)
        assert all(f"tsb_v{i}_{spec.function}" in src for i in range(len(ch.configs)))


def test_kernel_string_is_kernel_tuners_own_prefix():
    spec = harness.load_spec("bessel")
    c = spec.valid_configs("cuda")[123]
    name, text = cm.KernelStrings(spec, "gpu")(c)
    d = cm.prefix_defines(text)
    assert name == spec.function
    assert d["block_size_x"] == str(c["block_size_x"]) and d["kernel_tuner"] == "1"
    assert int(d["grid_size_x"]) == -(-spec.problem_size("gpu")[0] // (c["block_size_x"] * c["elems_per_thread"]))
    assert text.split("#line 1\n", 1)[1] == (spec.folder / "kernel.cu").read_text()
    with pytest.raises(ValueError):
        cm.prefix_defines("constexpr int loop_unroll_factor_0 = 2;\n#line 1\nx")


def test_precompiled_modules_refuse_another_kernel_string():
    spec = harness.load_spec("kmeans")
    configs = spec.valid_configs("cuda")[:3]
    chunks = cm.make_chunks(spec, configs, "gpu")

    class Builder:
        results = {}

        def result(self, chunk, timeout=None):
            return {"ok": True, "seconds": 0.5, "path": "p"}

    loaded = []
    modules = cm.PrecompiledModules(spec, chunks, Builder(), lambda path: loaded.append(path) or
                                    type("M", (), {"get_function": staticmethod(lambda name: name)})(),
                                    names=list(spec.tune_params("cuda")))
    strings = cm.KernelStrings(spec, "gpu")
    text = strings(configs[1])[1]
    ch, i = modules.where[modules.key(configs[1])]
    assert modules.function(configs[1], text) == ch.functions[i]
    with pytest.raises(ValueError, match="differs"):
        modules.function(configs[1], text.replace("#define kernel_tuner 1", "#define kernel_tuner 2"))
    with pytest.raises(KeyError):
        modules.function(spec.valid_configs("cuda")[-1], text)
    assert loaded == ["p"]


@needs_nvcc
@pytest.mark.parametrize("kernel", list_kernels())
def test_each_variant_of_a_module_is_the_configuration_compiled_alone(kernel, tmp_path):
    """nvcc for sm_90: three variants of a 16-bit precision combination in one module, and each compiled
    alone from Kernel Tuner's kernel string; machine code, shared memory, constant bank and registers agree."""
    spec = harness.load_spec(kernel)
    configs = _sixteen_bit_group(kernel, 3)
    strings = cm.KernelStrings(spec, "gpu")
    (chunk,) = cm.make_chunks(spec, configs, "gpu", chunk=len(configs), strings=strings)
    builder = cm.ModuleBuilder(tmp_path / "modules", "sm_90", jobs=0)
    builder.submit(spec, chunk)
    with ThreadPoolExecutor(max_workers=2) as pool:
        module = pool.submit(builder.result, chunk)
        alone = list(pool.map(lambda ic: cm.compile_alone(spec, strings(ic[1])[1], tmp_path / f"alone{ic[0]}.cubin",
                                                          "sm_90"), enumerate(configs)))
        result = module.result()
    assert result["ok"], result.get("error")
    grouped = cm.cubin_functions(result["path"])
    assert sorted(grouped) == sorted(chunk.functions)
    for i, path in enumerate(alone):
        own = cm.cubin_functions(path)[spec.function]
        mine = grouped[chunk.functions[i]]
        assert own["registers"] and own["registers"] == mine["registers"]
        assert own["shared_bytes"] == mine["shared_bytes"]
        assert own["constant0"] == mine["constant0"]
        assert own["text"] == mine["text"], f"{kernel} variant {configs[i]}: machine code differs"
    # and the comparison can fail: two different variants do not share their code
    texts = {grouped[f]["text"] for f in chunk.functions}
    assert len(texts) > 1


@needs_nvcc
def test_compile_only_command(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gpuvisit", "gpu-lease", "--compile-only", "--kernels", "invk",
                          "--max-configs", "6", "--chunk", "4", "--jobs", "2", "--arch", "sm_90", "--out",
                          str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["configurations"] == 6 and summary["failed"] == [] and summary["jobs"] == 2
    cubins = sorted((tmp_path / "invk").rglob("*.cubin"))
    assert len(cubins) == summary["modules"]
    assert sum(len(cm.cubin_functions(p)) for p in cubins) == 6


@needs_nvcc
def test_a_failing_module_reports_nvccs_message(tmp_path):
    spec = harness.load_spec("bessel")
    (chunk,) = cm.make_chunks(spec, spec.valid_configs("cuda")[:1], "gpu")
    chunk.own[0]["T_x"] = "no_such_type"
    chunk.common.pop("T_x", None)
    res = cm.build_module({"kernel": "bessel", "index": 0, "source": chunk.source(spec),
                           "out": str(tmp_path / "m.cubin"), "arch": "sm_90", "nvcc": cm.nvcc_path()})
    assert not res["ok"] and "no_such_type" in res["error"]
