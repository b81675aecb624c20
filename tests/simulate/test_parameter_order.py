"""A space keeps its source's parameter order, and the suite's runs are Kernel Tuner's on the kernel as written.

Kernel Tuner's two-point crossover cuts at gene positions and its neighbour lists and sampled
configurations follow the order of `tune_params`, so a run depends on that order. For each kind
of source (a Kernel Tuner cache with its restrictions, a T1 file with its cache, a kernel-spec
sweep), the suite's simulate stage, run on the space as imported and stored, must give exactly
the runs of `tune_kernel(simulation_mode=True)` on the ORIGINAL file, with `tune_params` built
here, independently of the suite's readers, in that file's own order (issue #32).
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.errors import SpaceError
from analysis.simulate import KernelTunerSpace
from analysis.simulate.reference import tune_kernel_trace
from analysis.spaces.importers import import_space
from analysis.spaces.space import Space
from helpers import REPO

HUB = REPO / "data" / "benchmark_hub"
HUB_MORE = REPO / "data" / "benchmark_hub_more"
SWEEP = REPO / "data" / "sweeps" / "cpu" / "intel-xeon-vm"

# The order A100/convolution's cache (and its T1 file) give; sorted, filter_height would come third.
A100_CONVOLUTION_ORDER = ["block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "read_only", "use_padding",
                          "use_shmem", "use_cmem", "filter_height", "filter_width"]


def _original_cache(source: Path, tmp_path: Path) -> tuple[Path, dict]:
    """The source cache as the plain .json file tune_kernel opens (the same bytes, decompressed), and its document."""
    raw = source.read_bytes()
    if source.suffix == ".gz":
        raw = gzip.decompress(raw)
    plain = tmp_path / source.name.removesuffix(".gz")
    plain.write_bytes(raw)
    return plain, json.loads(raw)


def _from_kt_cache(doc: dict, definition: Path) -> tuple[dict[str, list], list[str]]:
    """tune_params in the cache's `tune_params_keys` order; restrictions from the YAML that states them."""
    return ({name: doc["tune_params"][name] for name in doc["tune_params_keys"]},
            list(yaml.safe_load(definition.read_text())["constraints"]))


def _from_t1(doc: dict, definition: Path) -> tuple[dict[str, list], list[str]]:
    """tune_params in the T1 file's TuningParameters order; restrictions from its Conditions."""
    space = json.loads(definition.read_text())["ConfigurationSpace"]
    return ({p["Name"]: list(ast.literal_eval(p["Values"])) for p in space["TuningParameters"]},
            [c["Expression"] for c in space["Conditions"]])


def _from_spec(doc: dict, definition: Path) -> tuple[dict[str, list], list[str]]:
    """tune_params and constraints in the kernel spec's own order."""
    spec = yaml.safe_load(definition.read_text())
    return dict(spec["tune_params"]), list(spec["constraints"])


# kind -> (source, definition, kernel, device, objective set, tune_params/restrictions as the user writes them)
SOURCES = {
    "kt_cache": (HUB_MORE / "cachefiles" / "convolution_milo" / "a4000.json.gz",
                 HUB_MORE / "kernels" / "convolution_milo_old.yaml", "convolution_milo_old", "A4000",
                 ("time", ["time"]), _from_kt_cache),
    "t1_and_cache": (HUB / "cachefiles" / "convolution_milo" / "A100.json.gz",
                     HUB / "kernels" / "convolution_milo.json", "convolution", "A100", ("time", ["time"]), _from_t1),
    "kernel_spec_sweep": (SWEEP / "mriq.json.gz", SWEEP / "mriq.yaml", "mriq", "intel-xeon-vm",
                          ("O3", ["time", "memory", "mre"]), _from_spec),
}
CASES = [("rs", {}, 20), ("nsga2", {"popsize": 10}, 30)]


@pytest.mark.parametrize("kind", list(SOURCES))
def test_suite_runs_are_tune_kernels_on_the_original_file(kind: str, tmp_path: Path) -> None:
    """import -> store -> simulate stage (run files) equals tune_kernel on the original source, run for run."""
    from analysis.simulate import jobs as runs

    source, definition, kernel, device, (set_name, objectives), as_written = SOURCES[kind]
    cache_json, doc = _original_cache(source, tmp_path)
    tune_params, restrictions = as_written(doc, definition)
    assert list(tune_params) != sorted(tune_params)  # else the order could not matter here

    space = import_space(source, definition=definition, kernel=kernel, device=device)
    space.save(tmp_path / "space.parquet", tmp_path / "space.json")
    reference = KernelTunerSpace(tune_params, restrictions, doc, objectives, ["min"] * len(objectives),
                                 source=str(definition))
    for algorithm, options, budget in CASES:
        out = tmp_path / f"{algorithm}.parquet"
        runs.run(tmp_path / "space.parquet", tmp_path / "space.json", set_name, objectives, algorithm, [options],
                 [budget], 2, [out])
        frame = pd.read_parquet(out)
        assert [c for c in frame.columns if c.startswith("param.")] == [f"param.{p}" for p in tune_params]
        assert sorted(frame["repetition"].unique()) == [0, 1]
        for rep, run in frame.groupby("repetition"):
            seed = int(run["seed"].iloc[0])
            kt = tune_kernel_trace(reference, cache_json, algorithm, options, budget, seed).to_frame()
            suite = run.drop(columns=["repetition", "seed", "stopped_early"]).reset_index(drop=True)
            assert len(suite) >= budget, (kind, algorithm, rep)
            pd.testing.assert_frame_equal(suite, kt, check_dtype=False, obj=f"{kind} {algorithm} repetition {rep}")


def _stored(tmp_path: Path, *args, **kwargs) -> Space:
    space = import_space(*args, **kwargs)
    space.save(tmp_path / "space.parquet", tmp_path / "space.json")
    return Space.load(tmp_path / "space.parquet", tmp_path / "space.json")


def test_stored_space_keeps_the_sources_parameter_order(tmp_path: Path) -> None:
    """Regression: A100/convolution came back alphabetical (filter_height third) from space.json."""
    stored = _stored(tmp_path, HUB / "cachefiles" / "convolution_milo" / "A100.json.gz", kernel="convolution",
                     device="A100", definition=HUB / "kernels" / "convolution_milo.json")
    assert list(stored.parameters) == A100_CONVOLUTION_ORDER
    assert list(json.loads((tmp_path / "space.json").read_text())["parameters"]) == A100_CONVOLUTION_ORDER
    assert list(stored.table.columns[:len(A100_CONVOLUTION_ORDER)]) == A100_CONVOLUTION_ORDER


def test_stored_space_keeps_the_specs_value_order(tmp_path: Path) -> None:
    """Value lists keep their order too (Kernel Tuner's parameter indices and neighbours follow it)."""
    spec = yaml.safe_load((SWEEP / "mriq.yaml").read_text())
    stored = _stored(tmp_path, SWEEP / "mriq.json.gz", kernel="mriq", device="intel-xeon-vm",
                     definition=SWEEP / "mriq.yaml")
    assert stored.parameters == spec["tune_params"]
    assert list(stored.parameters) == list(spec["tune_params"])
    assert stored.parameters["T_k"] == ["double", "float", "half", "bfloat16"]  # not sorted


def test_t4_without_definition_keeps_the_files_first_naming_order(tmp_path: Path) -> None:
    """A T4 file names the parameters in each configuration: the space keeps the order they first appear in."""
    results = []
    for z in (1, 2):
        for a in (3, 1):
            results.append({"configuration": {"zeta": z, "alpha": a, "mid": 0}, "invalidity": "correct",
                            "times": {"compilation": 1.0, "validation": 0.0, "benchmark": 2.0},
                            "measurements": [{"name": "time", "value": float(z + a), "unit": "ms"}]})
    (tmp_path / "t4.json").write_text(json.dumps({"schema_version": "1.0.0", "results": results}))
    stored = _stored(tmp_path, tmp_path / "t4.json", kernel="k", device="d")
    assert list(stored.parameters) == ["zeta", "alpha", "mid"]
    assert stored.parameters["alpha"] == [1, 3]  # values a T4 file does not list: sorted


def test_metadata_in_another_order_than_the_table_is_refused(tmp_path: Path) -> None:
    """A space.json with sorted parameters (as written before the order was kept) is an error, not other runs."""
    stored = _stored(tmp_path, SWEEP / "mriq.json.gz", kernel="mriq", device="intel-xeon-vm",
                     definition=SWEEP / "mriq.yaml")
    meta = json.loads((tmp_path / "space.json").read_text())
    meta["parameters"] = {p: meta["parameters"][p] for p in sorted(meta["parameters"])}
    (tmp_path / "space.json").write_text(json.dumps(meta))
    with pytest.raises(SpaceError, match=r"space\.json: field 'parameters'.*imported again"):
        Space.load(tmp_path / "space.parquet", tmp_path / "space.json")
    assert list(stored.parameters) != sorted(stored.parameters)


def test_exported_cache_is_in_the_sources_order(tmp_path: Path) -> None:
    """The engine's cache (to_kt_cache) has the source's tune_params_keys, value lists and entry keys."""
    from analysis.simulate.jobs import space_data

    source = HUB_MORE / "cachefiles" / "convolution_milo" / "a4000.json.gz"
    original = json.loads(gzip.decompress(source.read_bytes()))
    stored = _stored(tmp_path, source, kernel="convolution_milo_old", device="A4000",
                     definition=HUB_MORE / "kernels" / "convolution_milo_old.yaml")
    data = space_data(stored, ["time"])
    assert list(data.tune_params) == data.cache["tune_params_keys"] == original["tune_params_keys"]
    assert data.cache["tune_params"] == original["tune_params"]
    assert set(data.cache["cache"]) == set(original["cache"])
    for key in list(original["cache"])[:50]:
        ours, theirs = data.cache["cache"][key], original["cache"][key]
        assert [ours[p] for p in original["tune_params_keys"]] == [theirs[p] for p in original["tune_params_keys"]]
        assert ours["time"] == theirs["time"]


def test_definition_in_another_order_than_the_cache_is_an_error(tmp_path: Path) -> None:
    """Kernel Tuner looks a configuration up by the cache's key order: a definition may not reorder it."""
    from helpers import kt_cache, write

    tune_params = {"zeta": [1, 2], "alpha": [3, 4]}
    rows = [{"zeta": z, "alpha": a, "time": float(z * a)} for z in (1, 2) for a in (3, 4)]
    cache = write(tmp_path / "c.json", kt_cache(tune_params, rows))
    (tmp_path / "same.yaml").write_text("tune_params:\n  zeta: [1, 2]\n  alpha: [3, 4]\nconstraints: []\n")
    assert list(import_space(cache, kernel="k", device="d", definition=tmp_path / "same.yaml").parameters) == \
        ["zeta", "alpha"]
    (tmp_path / "sorted.yaml").write_text("tune_params:\n  alpha: [3, 4]\n  zeta: [1, 2]\nconstraints: []\n")
    with pytest.raises(SpaceError, match=r"c\.json: field 'tune_params'.*differ from"):
        import_space(cache, kernel="k", device="d", definition=tmp_path / "sorted.yaml")
    (tmp_path / "values.yaml").write_text("tune_params:\n  zeta: [2, 1]\n  alpha: [3, 4]\nconstraints: []\n")
    with pytest.raises(SpaceError, match=r"c\.json: field 'tune_params\.zeta'.*differ from"):
        import_space(cache, kernel="k", device="d", definition=tmp_path / "values.yaml")
