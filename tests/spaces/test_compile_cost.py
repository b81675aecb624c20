"""A host-CPU configuration's compile cost: Kernel Tuner compiling it alone, measured or imputed, charged once."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from analysis.errors import SpaceError
from analysis.spaces.compile_cost import compile_costs, cross_validate, design
from analysis.spaces.importers import import_space
from analysis.sweep import compile_cost as measuring
from analysis.sweep.spec import load_spec
from helpers import REPO

SWEEP = REPO / "data/sweeps/cpu/amd-epyc-vm"


def _configs(kernel: str) -> tuple[dict, dict, list]:
    doc = json.load(gzip.open(SWEEP / f"{kernel}.json.gz"))
    keys = doc["tune_params_keys"]
    return doc, {k: {p: e[p] for p in keys} for k, e in doc["cache"].items()}, keys


def _write_cache(path: Path, doc: dict, entries: dict) -> Path:
    header = {k: v for k, v in doc.items() if k != "cache"}
    path.write_text(json.dumps({**header, "cache": entries}))
    return path


def test_measurement_order_is_a_stratified_permutation():
    spec = load_spec("convolution2d")
    order = measuring.measurement_order(spec)
    valid = spec.valid_configs("cpu")
    key = lambda c: tuple(c.values())  # noqa: E731
    assert sorted(map(key, order)) == sorted(map(key, valid))
    assert measuring.measurement_order(spec) == order  # fixed by the seed
    prec = [p for p in spec.tune_params("cpu") if p in spec.precision]
    combos = {tuple(c[p] for p in prec) for c in valid}
    # the first len(combos) configurations hold every precision combination once
    assert len({tuple(c[p] for p in prec) for c in order[:len(combos)]}) == len(combos)
    assert measuring.measurement_order(spec, seed=1) != order
    # workers split a prefix without overlap
    a, b = measuring.worker_share(order, 9, (0, 2)), measuring.worker_share(order, 9, (1, 2))
    assert len(a) == 5 and len(b) == 4 and not {key(c) for c in a} & {key(c) for c in b}


def test_measure_resume_publish_and_import(tmp_path):
    """Kernel Tuner compiles each configuration alone; the space charges exactly that compile time, once."""
    out = tmp_path / "work"
    first = measuring.measure("bessel", measuring.cache_path(out, "bessel", (0, 2)), count=4, worker=(0, 2))
    assert first["measured_now"] == 2
    again = measuring.measure("bessel", measuring.cache_path(out, "bessel", (0, 2)), count=6, worker=(0, 2))
    assert again["measured_now"] == 1 and again["in_cache"] == 3  # resumed: only the new one
    measuring.measure("bessel", measuring.cache_path(out, "bessel", (1, 2)), count=6, worker=(1, 2))
    data = tmp_path / "data"
    (data / "sweeps").mkdir(parents=True)
    (data / "MANIFEST.csv").write_text("path,sha256,bytes,source,licence,citation\n")
    merged = measuring.publish("bessel", sorted(out.glob("bessel.w*.json")), data / "sweeps/compile/bessel.json.gz",
                               data / "sweeps/compile/bessel.provenance.json", data_dir=data)
    assert oct(merged.stat().st_mode & 0o777) == "0o644"
    prov = json.loads((data / "sweeps/compile/bessel.provenance.json").read_text())
    assert prov["configurations"] == 6 and prov["sample"]["is_prefix_of_order"] is True
    assert all("/work" not in f and "<" in f for f in prov["compiler"]["flags"] if f.startswith("-I"))
    assert "sweeps/compile/bessel.json.gz" in (data / "MANIFEST.csv").read_text()
    # published again from the same caches: the same bytes (no temporary file's name in the gzip header)
    first_bytes = merged.read_bytes()
    measuring.publish("bessel", sorted(out.glob("bessel.w*.json")), data / "sweeps/compile/bessel.json.gz",
                      data / "sweeps/compile/bessel.provenance.json", data_dir=data)
    assert merged.read_bytes() == first_bytes and first_bytes[3] & 0x08 == 0  # FLG.FNAME unset
    # the merged file is Kernel Tuner's format, in measurement order
    alone = json.load(gzip.open(merged))["cache"]
    spec = load_spec("bessel")
    names = list(spec.tune_params("cpu"))
    assert list(alone) == [",".join(str(c[p]) for p in names) for c in measuring.measurement_order(spec)[:6]]
    assert all(e["compile_time"] > 50 for e in alone.values())  # g++ -O3 of a whole translation unit

    doc, configs, _ = _configs("bessel")
    space = import_space(SWEEP / "bessel.json.gz", kernel="bessel", device="amd-epyc-vm",
                         definition=SWEEP / "bessel.yaml", compile_times=[merged])
    table = space.table.set_index(names)
    for key, entry in alone.items():
        row = table.loc[tuple(entry[p] for p in names)]
        # the measured configurations are charged Kernel Tuner's own compile_time of that configuration, read
        # here from the measurement file itself; verification and benchmark stay the sweep's; nothing else added
        assert row["compile_time_ms"] == entry["compile_time"]
        assert row["verification_time_ms"] == doc["cache"][key]["verification_time"]
        assert row["benchmark_time_ms"] == doc["cache"][key]["benchmark_time"]
    others = table.drop(index=[tuple(e[p] for p in names) for e in alone.values()])
    assert len(others) == len(configs) - 6 and (others["compile_time_ms"] > 0).all()
    summary = space.meta["compile_cost"]
    assert summary["measured"] == 6 and summary["imputed"] == len(configs) - 6
    assert summary["files"][0]["sha256"] and "threads=1" in json.dumps(summary)
    # the published table reads it back from the stored space
    from analysis.spaces.compile_cost import table as compile_table

    space.save(tmp_path / "space.parquet", tmp_path / "space.json")
    row = compile_table([tmp_path / "space.json"]).iloc[0]
    assert row["space"] == "amd-epyc-vm/bessel" and row["measured"] == 6 and row["imputed"] == len(configs) - 6
    assert row["compile_ms_mean_measured"] == pytest.approx(np.mean([e["compile_time"] for e in alone.values()]))


def test_grouped_cache_without_compile_times_is_refused():
    with pytest.raises(SpaceError, match="library_build_time.*grouped sweep.*compile_times"):
        import_space(SWEEP / "kmeans.json.gz", kernel="kmeans", device="amd-epyc-vm", definition=SWEEP / "kmeans.yaml")


def test_no_double_charge(tmp_path):
    """A configuration whose grouped compile_time held its library's build is charged its own compile only."""
    doc, configs, keys = _configs("newton_raphson")
    heavy = [k for k, e in doc["cache"].items() if e["compile_time"] > 0.5 * e["library_build_time"]]
    assert heavy  # the grouped sweep's timed compile built the library for these (the double charge)
    picked = heavy[:3] + [k for k in doc["cache"] if k not in heavy][:3]
    entries = {k: {**{p: doc["cache"][k][p] for p in keys}, "compile_time": 300.0 + i, "verification_time": 1.0,
                   "benchmark_time": 2.0, "time": 0.1} for i, k in enumerate(picked)}
    path = _write_cache(tmp_path / "alone.json", doc, entries)
    space = import_space(SWEEP / "newton_raphson.json.gz", kernel="newton_raphson", device="amd-epyc-vm",
                         definition=SWEEP / "newton_raphson.yaml", compile_times=[path])
    table = space.table.set_index(keys)
    for i, k in enumerate(picked):
        assert table.loc[tuple(doc["cache"][k][p] for p in keys), "compile_time_ms"] == 300.0 + i


def test_imputation_recovers_an_additive_model_and_cross_validation_measures_its_error():
    rng = np.random.default_rng(3)
    parameters = {"a": [1, 2, 4, 8], "b": ["x", "y", "z"], "c": [0, 1]}
    effects = {("a", 1): 0, ("a", 2): 0.1, ("a", 4): 0.3, ("a", 8): 0.7, ("b", "x"): 0, ("b", "y"): 0.2,
               ("b", "z"): -0.1, ("c", 0): 0, ("c", 1): 0.4}
    configs = {f"{a},{b},{c}": {"a": a, "b": b, "c": c} for a in parameters["a"] for b in parameters["b"]
               for c in parameters["c"]}
    truth = {k: 250 * math.exp(sum(effects[(p, v)] for p, v in c.items())) for k, c in configs.items()}
    x = design(list(configs.values()), parameters)
    exact = cross_validate(x, np.log(list(truth.values())))
    assert exact["median_abs_rel_error"] < 1e-9  # the model holds exactly: no error
    noisy = cross_validate(x, np.log(list(truth.values())) + rng.normal(0, 0.1, len(truth)))
    assert 0.02 < noisy["median_abs_rel_error"] < 0.2  # noise of 10 % shows up as error


def test_imputed_values_follow_the_measured_ones(tmp_path):
    doc, configs, keys = _configs("coulombic")
    rng = np.random.default_rng(0)
    threads = {1: 250.0, 2: 400.0}
    sample = rng.choice(list(configs), 200, replace=False)
    entries = {k: {**configs[k], "compile_time": threads[configs[k]["threads"]] * math.exp(rng.normal(0, 0.02)),
                   "verification_time": 1.0, "benchmark_time": 1.0, "time": 1.0} for k in sample}
    costs = compile_costs(configs, doc["tune_params"], [_write_cache(tmp_path / "c.json", doc, entries)])
    for k, c in configs.items():
        if k not in entries:
            assert costs.ms[k] == pytest.approx(threads[c["threads"]], rel=0.05)
            assert costs.ms[k] == round(costs.ms[k], 3)  # imputed values are rounded to 1 us
    assert costs.summary["cross_validation"]["median_abs_rel_error"] < 0.05


@pytest.mark.parametrize("problem", ["twice", "keys", "unknown", "malformed"])
def test_bad_measurement_files_name_the_file_and_field(tmp_path, problem):
    doc, configs, keys = _configs("invk")
    k0, k1 = list(configs)[:2]
    entry = {"compile_time": 300.0, "verification_time": 1.0, "benchmark_time": 1.0, "time": 1.0}
    a = _write_cache(tmp_path / "a.json", doc, {k0: {**configs[k0], **entry}})
    paths = [a]
    if problem == "twice":
        paths.append(_write_cache(tmp_path / "b.json", doc, {k0: {**configs[k0], **entry}}))
        match = r"b\.json.*also measured in .*a\.json"
    elif problem == "keys":
        paths = [_write_cache(tmp_path / "b.json", {**doc, "tune_params_keys": keys[::-1]}, {})]
        match = r"b\.json: field 'tune_params_keys'"
    elif problem == "unknown":
        paths = [_write_cache(tmp_path / "b.json", doc, {"9,9": {**configs[k1], **entry}})]
        match = r"b\.json: field 'compile_times'.*not in the space"
    else:
        (tmp_path / "b.json").write_text('{"cache": {')
        paths = [tmp_path / "b.json"]
        match = r"b\.json: field 'compile_times'.*not a readable Kernel Tuner cache"
    with pytest.raises(SpaceError, match=match):
        compile_costs(configs, doc["tune_params"], paths)
