"""The search-space store: importers, validation, true fronts, the spaces table."""

from __future__ import annotations

import gzip
import itertools
import json

import numpy as np
import pytest
from kernel_tuner.file_utils import get_t4_results
from kernel_tuner.util import CompilationFailedConfig, RuntimeFailedConfig

from analysis.errors import SpaceError
from analysis.spaces.fronts import compute_fronts
from analysis.spaces.importers import import_space
from analysis.spaces.pareto import true_front
from analysis.spaces.space import Space
from helpers import HUB, kt_cache, write

TP = {"a": [1, 2, 3], "b": [0, 1]}
SPEC = "tune_params:\n  a: [1, 2, 3]\n  b: [0, 1]\nconstraints:\n  - 'a > 1 or b == 0'\n"


def rows_for(values):
    """Rows for the 5 valid configurations of TP (a > 1 or b == 0) with the given objective dicts."""
    configs = [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1)]
    return [{"a": a, "b": b, **v} for (a, b), v in zip(configs, values)]


def make(tmp, values, tp=TP, spec=SPEC, gz=False, **kw):
    src = write(tmp / ("c.json.gz" if gz else "c.json"), kt_cache(tp, rows_for(values)), gz=gz)
    (tmp / "spec.yaml").write_text(spec)
    return import_space(src, kernel="k", device="d", definition=tmp / "spec.yaml", **kw)


# --- benchmark_hub facts ------------------------------------------------------------------

def test_benchmark_hub_convolution_a100():
    s = import_space(HUB / "cachefiles/convolution_milo/A100.json.gz", kernel="convolution", device="A100",
                     definition=HUB / "kernels/convolution_milo.json")
    c = s.meta["counts"]
    assert c["rows"] == c["constrained"] == 4362 and c["missing"] == 0
    assert c["failed"] == {"runtime": 155, "compile": 6}
    assert c["cartesian"] == 10240
    f = true_front(s, "time", ["time"])
    assert f.excluded_failed == 161 and len(f.points) == 1


def test_benchmark_hub_dedispersion_a100():
    s = import_space(HUB / "cachefiles/dedispersion_milo/A100.json.gz", kernel="dedispersion", device="A100",
                     definition=HUB / "kernels/dedispersion_milo.json")
    assert s.meta["counts"]["rows"] == s.meta["counts"]["constrained"] == 11130
    assert s.meta["counts"]["failed"] == {}
    assert s.meta["counts"]["cartesian"] == 22272


# --- fronts on hand-made spaces -----------------------------------------------------------

def test_front_with_ties_duplicates_nan_and_flat_objective(tmp):
    values = [
        {"time": 1.0, "mre": 5.0, "memory": 8},
        {"time": 1.0, "mre": 5.0, "memory": 8},   # duplicate objective vector: counts once in Z
        {"time": 2.0, "mre": 1.0, "memory": 8},
        {"time": 2.0, "mre": 6.0, "memory": 8},   # dominated
        {"time": float("nan"), "mre": 0.1, "memory": 8},  # NaN: excluded and counted
    ]
    s = make(tmp, values)
    assert s.meta["counts"]["nonfinite"] == {"time": 1, "memory": 0, "mre": 0}
    f = true_front(s, "O3", ["time", "memory", "mre"])
    assert len(f.points) == 2 and len(f.rows) == 3
    assert f.excluded_nonfinite == 1
    assert f.ideal.tolist() == [1.0, 8.0, 1.0] and f.nadir.tolist() == [2.0, 8.0, 5.0]
    assert f.summary()["range_set_to_1"] == ["memory"]  # nadir == ideal: range taken as 1
    norm = f.normalise(f.points)
    assert np.allclose(np.sort(norm, axis=0), [[0, 0, 0], [1, 0, 1]])


def test_higher_is_better_objective(tmp):
    values = [{"time": 1.0, "gf": 10.0}, {"time": 2.0, "gf": 30.0}, {"time": 3.0, "gf": 20.0},
              {"time": 0.5, "gf": 5.0}, {"time": 4.0, "gf": 30.0}]
    s = make(tmp, values, objectives={"time": "time", "gf": {"name": "gflops", "unit": "GFLOPs", "direction": "max"}})
    assert s.objective("gflops").column == "gflops_GFLOPs"
    f = true_front(s, "tg", ["time", "gflops"])
    assert sorted(map(tuple, f.points.tolist())) == [(0.5, 5.0), (1.0, 10.0), (2.0, 30.0)]
    assert f.ideal.tolist() == [0.5, 30.0] and f.nadir.tolist() == [2.0, 5.0]
    assert np.allclose(f.normalise([[2.0, 5.0]]), [[1.0, 1.0]])


def test_front_equals_brute_force_dominance():
    rng = np.random.default_rng(1)
    import pandas as pd

    from analysis.objectives import OBJECTIVES
    objs = [OBJECTIVES[n] for n in ("time", "memory", "mre")]
    vals = rng.integers(0, 6, size=(300, 3)).astype(float)
    table = pd.DataFrame({"p": np.arange(300)})
    for o, col in zip(objs, vals.T):
        table[o.column] = col
    table["status"] = "ok"
    s = Space("k", "d", {"p": list(range(300))}, [], objs, table)
    f = true_front(s, "O3", ["time", "memory", "mre"])
    dominated = [any((vals[j] <= vals[i]).all() and (vals[j] < vals[i]).any() for j in range(300))
                 for i in range(300)]
    assert sorted(f.rows.tolist()) == [i for i in range(300) if not dominated[i]]
    assert len(f.points) == len({tuple(v) for v in vals[~np.array(dominated)]})


def test_compute_fronts_skips_sets_the_space_lacks(tmp):
    s = make(tmp, [{"time": t} for t in (3.0, 1.0, 2.0, 5.0, 4.0)])
    table, summary = compute_fronts(s, {"O3": ["time", "memory", "mre"], "time": ["time"]})
    assert list(summary["sets"]) == ["time"]
    assert summary["optimum"]["time"]["configuration"] == {"a": 2, "b": 0}
    assert table["objective_set"].tolist() == ["time"]


def test_save_and_load_round_trip(tmp):
    s = make(tmp, [{"time": t, "mre": 0.5} for t in (3.0, 1.0, 2.0, 5.0, 4.0)], gz=True)
    s.save(tmp / "s.parquet", tmp / "s.json")
    back = Space.load(tmp / "s.parquet", tmp / "s.json")
    assert back.parameters == s.parameters and back.objectives == s.objectives
    assert back.table.equals(s.table)
    assert back.meta["source"]["sha256"] == s.meta["source"]["sha256"]


# --- failed entries and T4 ----------------------------------------------------------------

def test_failed_entries_are_kept_and_counted(tmp):
    values = [{"time": "CompilationFailedConfig"}, {"time": "RuntimeFailedConfig"}, {"time": 1.0},
              {"time": 2.0}, {"time": "InvalidConfig"}]
    s = make(tmp, values)
    c = s.meta["counts"]
    assert c["failed"] == {"compile": 1, "runtime": 1}
    assert c["removed"] == {"marked InvalidConfig in source": 1}
    assert c["rows"] == 4 and c["missing"] == 1


def test_t4_file_written_by_kernel_tuner(tmp):
    results = []
    for (a, b), t in zip([(1, 0), (2, 0), (2, 1), (3, 0), (3, 1)], [1.0, 2.0, 0.5, 3.0, 4.0]):
        r = {"a": a, "b": b, "time": t, "times": [t], "compile_time": 10.0, "benchmark_time": 3.0,
             "framework_time": 0.1, "strategy_time": 0.0, "verification_time": 0.0, "timestamp": "x"}
        if a == 3 and b == 1:
            r["time"] = r["__error__"] = RuntimeFailedConfig()
        if a == 3 and b == 0:
            r["time"] = r["__error__"] = CompilationFailedConfig()
        results.append(r)
    doc = get_t4_results(results, TP, objective="time")
    src = write(tmp / "t4.json", json.loads(json.dumps(doc, default=str)))
    (tmp / "spec.yaml").write_text(SPEC)
    s = import_space(src, kernel="k", device="d", definition=tmp / "spec.yaml")
    assert s.meta["source"]["format"] == "t4"
    assert s.meta["counts"]["failed"] == {"runtime": 1, "compile": 1}
    ok = s.table[s.table.status == "ok"]
    assert sorted(ok["time_ms"].tolist()) == [0.5, 1.0, 2.0]
    assert (s.table["compile_time_ms"] == 10.0).all()


# --- bad input: errors name the file and the field ----------------------------------------

def test_corrupt_gzip(tmp):
    good = gzip.compress(json.dumps(kt_cache(TP, rows_for([{"time": 1.0}] * 5))).encode())
    src = tmp / "c.json.gz"
    src.write_bytes(good[: len(good) // 2])
    with pytest.raises(SpaceError, match="corrupt or truncated gzip") as exc:
        import_space(src, kernel="k", device="d")
    assert exc.value.path == str(src)


def test_truncated_json(tmp):
    src = tmp / "c.json"
    src.write_text(json.dumps(kt_cache(TP, rows_for([{"time": 1.0}] * 5)))[:-40])
    with pytest.raises(SpaceError, match="truncated JSON") as exc:
        import_space(src, kernel="k", device="d")
    assert str(src) in str(exc.value)


def test_malformed_json(tmp):
    src = tmp / "c.json"
    src.write_text('{"cache": {,}}')
    with pytest.raises(SpaceError, match="malformed JSON: .* at line 1"):
        import_space(src, kernel="k", device="d")


def test_cache_key_disagrees_with_entry(tmp):
    doc = kt_cache(TP, rows_for([{"time": 1.0}] * 5))
    doc["cache"]["9,9"] = doc["cache"].pop("2,1")
    with pytest.raises(SpaceError, match="cache key '9,9' disagrees") as exc:
        import_space(write(tmp / "c.json", doc), kernel="k", device="d")
    assert exc.value.field == "cache.9,9"


def test_keys_disagree_with_tune_params(tmp):
    doc = kt_cache(TP, rows_for([{"time": 1.0}] * 5))
    doc["tune_params_keys"] = ["b", "a"]
    with pytest.raises(SpaceError) as exc:
        import_space(write(tmp / "c.json", doc), kernel="k", device="d")
    assert exc.value.field == "tune_params_keys"


def test_value_not_in_declared_list(tmp):
    doc = kt_cache({"a": [1, 2], "b": [0, 1]}, rows_for([{"time": 1.0}] * 5))
    with pytest.raises(SpaceError, match="not in the declared list") as exc:
        import_space(write(tmp / "c.json", doc), kernel="k", device="d")
    assert exc.value.field == "a"


def test_definition_disagrees_with_cache(tmp):
    with pytest.raises(SpaceError, match="differ from") as exc:
        make(tmp, [{"time": 1.0}] * 5, spec=SPEC.replace("[0, 1]", "[0, 1, 2]"))
    assert exc.value.field == "tune_params.b"


def test_duplicate_configuration(tmp):
    src = tmp / "c.json"
    doc = kt_cache(TP, rows_for([{"time": 1.0}] * 5))
    text = json.dumps(doc).replace('"cache": {', '"cache": {"1,0": ' + json.dumps(doc["cache"]["1,0"]) + ", ")
    src.write_text(text)
    with pytest.raises(SpaceError, match="duplicate key") as exc:
        import_space(src, kernel="k", device="d")
    assert exc.value.field == "1,0"


def test_configuration_violating_constraints(tmp):
    with pytest.raises(SpaceError, match="violate the constraints") as exc:
        make(tmp, [{"time": 1.0}] * 5, spec=SPEC.replace("a > 1 or b == 0", "a > 1"))
    assert exc.value.field == "constraints" and "'1,0'" in str(exc.value)


def test_non_numeric_objective(tmp):
    with pytest.raises(SpaceError, match="non-numeric value 'fast'") as exc:
        make(tmp, [{"time": 1.0}, {"time": "fast"}, {"time": 1.0}, {"time": 1.0}, {"time": 1.0}])
    assert exc.value.field == "time"


def test_objective_without_any_finite_value(tmp):
    with pytest.raises(SpaceError, match="no finite value") as exc:
        make(tmp, [{"time": 1.0, "mre": float("nan")}] * 5)
    assert exc.value.field == "mre"


def test_unsafe_constraint_in_definition(tmp):
    with pytest.raises(SpaceError, match="not allowed") as exc:
        make(tmp, [{"time": 1.0}] * 5, spec=SPEC.replace("a > 1 or b == 0", "__import__(\"os\") or a"))
    assert exc.value.path == str(tmp / "spec.yaml") and exc.value.field == "constraints[0]"


def test_unsafe_condition_in_t1_definition(tmp):
    t1 = json.loads((HUB / "kernels/convolution_milo.json").read_text())
    t1["ConfigurationSpace"]["Conditions"][1]["Expression"] = "block_size_x.__class__ is int"
    bad = write(tmp / "t1.json", t1)
    with pytest.raises(SpaceError, match="'Attribute' not allowed") as exc:
        import_space(HUB / "cachefiles/convolution_milo/A100.json.gz", kernel="c", device="d", definition=bad)
    assert exc.value.path == str(bad) and exc.value.field == "ConfigurationSpace.Conditions[1].Expression"


def test_t1_definition_with_bad_values(tmp):
    t1 = json.loads((HUB / "kernels/convolution_milo.json").read_text())
    t1["ConfigurationSpace"]["TuningParameters"][1]["Values"] = "[1, 2,"
    bad = write(tmp / "t1.json", t1)
    with pytest.raises(SpaceError, match="not a literal list") as exc:
        import_space(HUB / "cachefiles/convolution_milo/A100.json.gz", kernel="c", device="d", definition=bad)
    assert exc.value.field == "ConfigurationSpace.TuningParameters[1].Values"


def test_count_constrained_by_enumeration():
    from analysis.spaces.constraints import parse_all
    from analysis.spaces.space import count_constrained
    params = {"x": list(range(7)), "y": list(range(5)), "z": [1, 2, 3]}
    exprs = ["x * y <= 6", "z != 2 or x % 2 == 0"]
    want = sum(1 for x, y, z in itertools.product(*params.values()) if x * y <= 6 and (z != 2 or x % 2 == 0))
    assert count_constrained(params, parse_all(exprs, list(params)), chunk=4) == want


def test_export_to_kt_cache_round_trips_benchmark_hub(tmp):
    from analysis.spaces.export import to_kt_cache
    from analysis.spaces.jsonfile import read_json

    src = HUB / "cachefiles/convolution_milo/A100.json.gz"
    s = import_space(src, kernel="convolution", device="A100", definition=HUB / "kernels/convolution_milo.json")
    doc = to_kt_cache(s)
    original = read_json(src)
    assert doc["tune_params"] == original["tune_params"] and set(doc["cache"]) == set(original["cache"])
    for key, entry in original["cache"].items():
        mine = doc["cache"][key]
        for field in ("time", "compile_time", "verification_time", "benchmark_time"):
            assert mine[field] == entry[field], (key, field)
    again = import_space(write(tmp / "again.json", doc), kernel="convolution", device="A100",
                         definition=HUB / "kernels/convolution_milo.json")
    assert again.table.equals(s.table)


# --- bad values: negative, NaN, infinite or missing times and objectives (issue #21) -----------

def make_doc(tmp, doc, spec=SPEC):
    (tmp / "spec.yaml").write_text(spec)
    return import_space(write(tmp / "c.json", doc), kernel="k", device="d", definition=tmp / "spec.yaml")


@pytest.mark.parametrize("name", ["time", "memory", "mre", "nrmse", "nmae", "energy"])
def test_negative_objective_is_an_error_naming_file_entry_and_field(tmp, name):
    values = [{name: 1.0}, {name: 2.0}, {name: -1.0}, {name: 3.0}, {name: 4.0}]
    with pytest.raises(SpaceError, match=f"configuration '2,1' has negative {name} -1.0") as exc:
        make(tmp, values)
    assert exc.value.path == str(tmp / "c.json") and exc.value.field == name


def test_negative_time_never_becomes_the_optimum(tmp):
    # the issue's case: time -1.0 used to be accepted and became the optimum
    with pytest.raises(SpaceError, match="negative time"):
        make(tmp, [{"time": t} for t in (3.0, 1.0, -1.0, 5.0, 4.0)])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_objective_is_excluded_and_counted(tmp, bad):
    s = make(tmp, [{"time": t} for t in (3.0, 1.0, bad, 5.0, 4.0)])
    assert s.meta["counts"]["nonfinite"] == {"time": 1}
    f = true_front(s, "time", ["time"])
    assert f.excluded_nonfinite == 1 and f.points.tolist() == [[1.0]]


def test_custom_objective_may_be_negative(tmp):
    values = [{"time": 1.0, "gain": -2.0}, {"time": 2.0, "gain": 1.0}, {"time": 3.0, "gain": 0.5},
              {"time": 4.0, "gain": 0.1}, {"time": 5.0, "gain": 0.2}]
    s = make(tmp, values, objectives={"time": "time", "gain": {"name": "gain", "direction": "max"}})
    assert s.table["gain"].min() == -2.0


@pytest.mark.parametrize("field,value,words", [
    ("compile_time", float("nan"), "evaluation time nan"),
    ("compile_time", float("inf"), "evaluation time inf"),
    ("benchmark_time", -1e6, "evaluation time -1000000.0"),
    ("verification_time", -0.5, "evaluation time -0.5"),
    ("compile_time", "fast", "non-numeric value 'fast'"),
    ("benchmark_time", None, "non-numeric value None"),
    ("compile_time", None, "lacks its evaluation time"),  # None here: the field is deleted
])
def test_bad_evaluation_time_is_an_error_naming_file_entry_and_field(tmp, field, value, words):
    doc = kt_cache(TP, rows_for([{"time": 1.0}] * 5))
    entry = doc["cache"]["2,0"]
    if words.startswith("lacks"):
        del entry[field]
    else:
        entry[field] = value
    with pytest.raises(SpaceError, match=f"configuration '2,0' .*{words}") as exc:
        make_doc(tmp, doc)
    assert exc.value.path == str(tmp / "c.json") and exc.value.field == field


def test_failed_entry_needs_its_evaluation_times_too(tmp):
    # Kernel Tuner records them for failed configurations as well; simulated runs charge them
    doc = kt_cache(TP, rows_for([{"time": 1.0}, {"time": "CompilationFailedConfig"}, {"time": 2.0},
                                 {"time": 3.0}, {"time": 4.0}]))
    s = make_doc(tmp, doc)
    assert s.table[s.table.status == "compile"]["compile_time_ms"].tolist() == [1.0]
    del doc["cache"]["2,0"]["benchmark_time"]
    with pytest.raises(SpaceError, match="configuration '2,0' lacks its evaluation time") as exc:
        make_doc(tmp, doc)
    assert exc.value.field == "benchmark_time"
    doc["cache"]["2,0"]["benchmark_time"] = float("nan")
    with pytest.raises(SpaceError, match="configuration '2,0' has evaluation time nan") as exc:
        make_doc(tmp, doc)
    assert exc.value.field == "benchmark_time"


def test_objective_missing_from_the_first_entry_is_not_dropped(tmp):
    # the default objective fields come from every measured entry, not only the first
    doc = kt_cache(TP, rows_for([{"time": 1.0, "mre": 0.1}] * 5))
    del doc["cache"]["1,0"]["mre"]
    with pytest.raises(SpaceError, match="entry '1,0' lacks objective") as exc:
        make_doc(tmp, doc)
    assert exc.value.field == "mre"


def t4_doc(time_value=1.0, times=None):
    results = []
    for i, (a, b) in enumerate([(1, 0), (2, 0), (2, 1), (3, 0), (3, 1)]):
        results.append({"configuration": {"a": a, "b": b}, "invalidity": "correct",
                        "measurements": [{"name": "time", "value": time_value if i == 2 else 1.0 + i, "unit": "ms"}],
                        "times": dict(times if (times is not None and i == 2) else
                                      {"compilation": 1.0, "validation": 0.0, "benchmark": 2.0})})
    return {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"}, "results": results}


@pytest.mark.parametrize("doc,field,words", [
    (t4_doc(time_value=-2.0), "time", "results\\[2\\]' has negative time -2.0"),
    (t4_doc(times={"compilation": float("nan"), "validation": 0.0, "benchmark": 1.0}),
     "results[2].times.compilation", "evaluation time nan"),
    (t4_doc(times={"compilation": 1.0, "validation": 0.0}), "results[2].times.benchmark", "lacks its evaluation"),
])
def test_t4_bad_values(tmp, doc, field, words):
    with pytest.raises(SpaceError, match=words) as exc:
        (tmp / "spec.yaml").write_text(SPEC)
        import_space(write(tmp / "t4.json", doc), kernel="k", device="d", definition=tmp / "spec.yaml")
    assert exc.value.path == str(tmp / "t4.json") and exc.value.field == field


# --- constraints: exact integers, evaluation errors name the definition ------------------------

def test_constraint_beyond_int64_is_exact_on_import(tmp):
    # `block_size_x * 2**62 > 0` wrapped around int64 and the import blamed the data
    tp = {"block_size_x": [1, 2, 4, 16], "b": [0, 1]}
    rows = [{"block_size_x": x, "b": b, "time": 1.0 + x + b} for x in tp["block_size_x"] for b in tp["b"]]
    spec = "tune_params:\n  block_size_x: [1, 2, 4, 16]\n  b: [0, 1]\nconstraints:\n  - 'block_size_x * 2**62 > 0'\n"
    s = make_doc(tmp, kt_cache(tp, rows), spec=spec)
    assert s.meta["counts"]["rows"] == s.meta["counts"]["constrained"] == 8


def test_unevaluable_constraint_names_the_definition(tmp):
    with pytest.raises(SpaceError, match="cannot be evaluated|too large") as exc:
        make(tmp, [{"time": 1.0}] * 5, spec=SPEC.replace("a > 1 or b == 0", "a ** 100000 > 0 or b == 0"))
    assert exc.value.path == str(tmp / "spec.yaml") and exc.value.field == "constraints"


# --- constraints of a stored space pass the restricted parser before Kernel Tuner sees them -----

TAMPERED = ["__import__('os').system('touch {marker}')", "a.__class__.__name__ == 'int'", "a.real > 0",
            "(lambda: 1)() == 1", "open('{marker}', 'w') is None"]


@pytest.mark.parametrize("bad", TAMPERED)
def test_tampered_space_json_constraint_is_refused_before_kernel_tuner(tmp, bad, monkeypatch, capfd):
    import kernel_tuner.searchspace

    from analysis.cli import main

    s = make(tmp, [{"time": t} for t in (3.0, 1.0, 2.0, 5.0, 4.0)])
    s.save(tmp / "s.parquet", tmp / "s.json")
    meta = json.loads((tmp / "s.json").read_text())
    marker = tmp / "pwned"
    meta["constraints"].append(bad.format(marker=marker))
    (tmp / "s.json").write_text(json.dumps(meta))

    def trap(*args, **kwargs):
        raise AssertionError("a tampered constraint reached Kernel Tuner's Searchspace")

    monkeypatch.setattr(kernel_tuner.searchspace.Searchspace, "__init__", trap)
    out = tmp / "runs.parquet"
    rc = main(["simulate", "--space-parquet", str(tmp / "s.parquet"), "--space-meta", str(tmp / "s.json"),
               "--objective-set", "time", "--objectives", '["time"]', "--algorithm", "rs", "--budget", "3",
               "--repetitions", "1", "--out", str(out)])
    assert rc == 2 and not marker.exists() and not out.exists()
    assert f"{tmp / 's.json'}: field 'constraints[1]'" in capfd.readouterr().err
    with pytest.raises(SpaceError, match="not allowed|unknown name") as exc:
        Space.load(tmp / "s.parquet", tmp / "s.json")
    assert exc.value.path == str(tmp / "s.json") and exc.value.field == "constraints[1]"


def test_restrictions_reaching_kernel_tuner_are_checked_however_built(tmp):
    from analysis.errors import InputError
    from analysis.kt.space import KernelTunerSpace
    from analysis.simulate.jobs import space_data
    from analysis.simulate.setup import fresh_searchspace

    s = make(tmp, [{"time": t} for t in (3.0, 1.0, 2.0, 5.0, 4.0)])
    data = space_data(s, ["time"])
    with pytest.raises(InputError, match="not allowed") as exc:
        KernelTunerSpace(dict(TP), ["a.real > 0"], data.cache, ["time"], ["min"], source="x.json")
    assert exc.value.path == "x.json" and exc.value.field == "restrictions[0]"
    with pytest.raises(InputError, match="expected an expression string"):
        KernelTunerSpace(dict(TP), [lambda p: True], data.cache, ["time"], ["min"])
    data.restrictions.append("__import__('os').getcwd() != ''")  # changed after construction
    with pytest.raises(InputError, match="not allowed"):
        fresh_searchspace(data)


def test_spaces_table_shows_why_a_space_is_excluded_and_what_its_sweep_lacks(tmp, capfd):
    import pandas as pd

    from analysis.cli import main
    from analysis.spaces import fronts
    from analysis.spaces.table import COLUMN_DOCS

    args = []
    for device, values in (("d", (3.0, 1.0, 2.0, 5.0, 4.0)), ("e", (3.0, 1.0, 2.0))):  # e: 2 configurations missing
        s = make(tmp, [{"time": t} for t in values])
        s.meta["device"] = device
        s.save(tmp / f"{device}.parquet", tmp / f"{device}.json")
        fronts.run(tmp / f"{device}.parquet", tmp / f"{device}.json", {"time": ["time"]}, tmp / f"{device}.f.parquet",
                   tmp / f"{device}.f.json")
        args.append((str(tmp / f"{device}.json"), str(tmp / f"{device}.f.json")))
    files = ["--meta", *(m for m, _ in args), "--fronts", *(f for _, f in args)]
    reason = "incomplete sweep: 3 of the 5 configurations measured"
    out = ["--csv", str(tmp / "spaces.csv"), "--md", str(tmp / "spaces.md")]
    assert main(["spaces-table", *files, "--excluded", json.dumps({"e/k": reason}), *out]) == 0
    table = pd.read_csv(tmp / "spaces.csv", keep_default_na=False).set_index("space")
    assert table.loc["e/k", "excluded"] == reason and table.loc["d/k", "excluded"] == ""
    assert (table.loc["e/k", "missing"], table.loc["d/k", "missing"]) == (2, 0)
    md = (tmp / "spaces.md").read_text()
    assert reason in md and f"- `excluded`: {COLUMN_DOCS['excluded']}" in md
    # a reason for a space the table lacks is an error naming the option
    assert main(["spaces-table", *files, "--excluded", json.dumps({"x/k": reason}), *out]) == 2
    assert "field '--excluded': reasons given for spaces not in the table: x/k" in capfd.readouterr().err
