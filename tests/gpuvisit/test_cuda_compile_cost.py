"""The CUDA sweep's per-configuration compile cost (gpuvisit.compile_cost) and the published H200
sweep: its packs merge into the published cache, and a space is built from it only with compile times."""

from __future__ import annotations

import gzip
import json

import pytest

from analysis.errors import InputError, SpaceError
from analysis.spaces.importers import import_space
from analysis.sweep import cachefile, harness
from analysis.sweep.compile_cost import measurement_order
from analysis.sweep.configs import config_key
from gpuvisit import compile_cost, merge
from gpuvisit import pack as pack_mod
from helpers import REPO

H200 = REPO / "data" / "sweeps" / "cuda" / "nvidia-h200"
needs_nvcc = pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: nothing compiled")


@needs_nvcc
def test_measure_resumes_in_the_stratified_order_and_publishes(tmp_path):
    spec = harness.load_spec("bessel")
    names = list(spec.tune_params("cuda"))
    order = [config_key(c, names) for c in measurement_order(spec, target="cuda")]
    cache = tmp_path / "work" / "bessel.json"
    assert compile_cost.measure("bessel", cache, count=2)["measured_now"] == 2
    assert compile_cost.measure("bessel", cache, count=3) == {"measured_now": 1, "measured": 3, "order": 3}
    doc = cachefile.read(cache)
    assert list(doc["cache"]) == order[:3] and doc["tune_params_keys"] == names
    assert all(e["compile_time"] > 1.0 for e in doc["cache"].values())  # nvcc takes more than a millisecond
    out = compile_cost.publish("bessel", cache, tmp_path / "pub" / "bessel.json.gz", tmp_path / "pub" / "p.json",
                                    data_dir=tmp_path / "nodata")
    with gzip.open(out, "rt") as fh:
        assert list(json.load(fh)["cache"]) == order[:3]
    prov = json.loads((tmp_path / "pub" / "p.json").read_text())
    assert prov["configurations"] == 3 and prov["sample"]["is_prefix_of_order"] and prov["target"] == "cuda"


def test_a_published_measurement_reopens_and_publishes_again_byte_for_byte(tmp_path):
    """--reopen writes a published compile measurement back into an open cache (to continue it, or publish it
    again once the kernel's GPU sweep gives its outside check); published again it is the same file."""
    import shutil

    here = tmp_path / "nvidia-h200"
    (here / "compile").mkdir(parents=True)
    shutil.copy(H200 / "kmeans.json.gz", here / "kmeans.json.gz")  # the lease's cache, for the outside check
    assert compile_cost.reopen("kmeans", H200 / "compile" / "kmeans.json.gz", tmp_path / "open.json") == 3072
    old = json.loads((H200 / "compile" / "kmeans.provenance.json").read_text())
    out = compile_cost.publish("kmeans", tmp_path / "open.json", here / "compile" / "kmeans.json.gz",
                                    here / "compile" / "kmeans.provenance.json", note=old["note"],
                                    data_dir=tmp_path / "nodata")
    assert out.read_bytes() == (H200 / "compile" / "kmeans.json.gz").read_bytes()
    new = json.loads((here / "compile" / "kmeans.provenance.json").read_text())
    assert {k: v for k, v in new.items() if k != "nvcc"} == {k: v for k, v in old.items() if k != "nvcc"}
    with pytest.raises(InputError, match="open.json: field '--cache': exists already"):
        compile_cost.reopen("kmeans", H200 / "compile" / "kmeans.json.gz", tmp_path / "open.json")
    with pytest.raises(InputError, match=r"kmeans\.json\.gz: field 'tune_params_keys': holds no cache of bessel"):
        compile_cost.reopen("bessel", H200 / "compile" / "kmeans.json.gz", tmp_path / "other.json")


def test_the_published_h200_packs_merge_into_the_published_cache(tmp_path):
    """The three lease runs (run 3 continued run 2's visit on the same machine) give the whole kmeans space;
    merged again they give the published files byte for byte."""
    summary = merge.merge_packs([H200 / "packs"], tmp_path, data_dir=tmp_path / "nodata")
    assert summary == {"kmeans": {"complete": True, "configurations": 3072}}
    for name in ("kmeans.json.gz", "kmeans.yaml"):
        assert (tmp_path / name).read_bytes() == (H200 / name).read_bytes(), name
    assert json.loads((tmp_path / "kmeans.provenance.json").read_text()) == json.loads(
        (H200 / "kmeans.provenance.json").read_text())


def test_a_space_from_the_grouped_cuda_sweep_needs_compile_times():
    with pytest.raises(SpaceError, match="library_build_time"):
        import_space(H200 / "kmeans.json.gz", kernel="kmeans", device="nvidia-h200", definition=H200 / "kmeans.yaml")


def test_the_docs_quote_the_published_measurements():
    """docs/kernels.md quotes the visits' rates and the compile cost's outside check; they must be the data's."""
    text = (REPO / "docs" / "kernels.md").read_text()
    rates = {}
    for n in (1, 2):
        prov, _ = pack_mod.read_pack(next((H200 / "packs" / str(n)).glob("*.tar")))
        rates[n] = prov["kernels"]["kmeans"]["throughput"]["measure_configurations_per_s"]
    assert f"measured {rates[1]:.2f} configurations/s on K-Means, the second, without, {rates[2]:.1f}" in text
    prov3, _ = pack_mod.read_pack(next((H200 / "packs" / "3").glob("*.tar")))
    assert f"(run 3, before this, computed K-Means' again for {prov3['kernels']['kmeans']['reference_s']:.0f} s)" in \
        " ".join(text.split())
    check = json.loads((H200 / "compile" / "kmeans.provenance.json").read_text())["outside_check"]
    assert f"nvcc took {check['ratio']:.2f} times as long per variant" in text
