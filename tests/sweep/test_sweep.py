"""Sweep driver: crash-safe caches, resuming a killed sweep, shards + merge, import as a space, config checks."""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from analysis import config as study_config
from analysis.errors import ConfigError, SpaceError, SweepError
from analysis.spaces.definition import read_definition
from analysis.spaces.importers import import_space
from analysis.sweep import cachefile, harness
from analysis.sweep.configs import config_key, parse_shard, resolve_tune_params, shard_cores
from analysis.sweep.kt_setup import scratch_dir
from analysis.sweep.merge import OBJECTIVE_FIELDS, merge
from analysis.sweep.observers import make_error_observer, make_nonfinite_observer
from analysis.sweep.precision import encode
from analysis.sweep.shard import _tunable_arguments, sweep_shard
from helpers import REPO

# 12 configurations in 2 argument-type groups (T_y double / half); every bessel cpu parameter is named
# (one thread has a single schedule, dyn_chunk 0), so the keys are the spec's
SLICE = {"threads": [1], "elems_per_iter": [1, 4], "dyn_chunk": [0], "T_x": ["double"], "T_q": ["double", "float"],
         "T_term": ["double", "float"], "T_sum": ["double"], "T_y": ["double", "half"]}
# 4 configurations in 2 argument-type groups (T_y half / float)
SMALL = {"threads": [1], "elems_per_iter": [1], "dyn_chunk": [0], "T_x": ["float"], "T_q": ["half"],
         "T_term": ["float", "half"], "T_sum": ["float"], "T_y": ["float", "half"]}


def entry_lines(path: Path) -> list[str]:
    """Raw keys of every entry line in a cache file (duplicates kept)."""
    text = path.read_text()
    body = text[text.index(cachefile.MARK) + len(cachefile.MARK):]
    keys = []
    for line in body.split("\n")[1:]:
        line = line.rstrip(",")
        if line.strip() in ("", "}"):
            continue
        try:
            keys.append(next(iter(json.loads("{" + line + "}"))))
        except json.JSONDecodeError:  # the last entry of a closed cache ends in "}}"
            keys.append(next(iter(json.loads("{" + line[:-1] + "}"))))
    return keys


def shard_cmd(cache: Path, prov: Path, tune_params: dict, shard: str = "0/1") -> list[str]:
    return [sys.executable, "-W", "ignore", "-m", "analysis.cli", "sweep-shard", "--kernel", "bessel", "--target",
            "cpu", "--size", "tiny", "--shard", shard, "--iterations", "2", "--tune-params", json.dumps(tune_params),
            "--cache", str(cache), "--provenance", str(prov)]


def test_repair_drops_an_interrupted_last_write(tmp_path):
    header = json.dumps({"device_name": "d", "kernel_name": "k", "problem_size": [1], "tune_params_keys": ["a"],
                         "tune_params": {"a": [1, 2, 3]}, "objective": "time", "cache": {}}, indent="")[:-3]
    good = '\n"1": {"a": 1, "time": 0.5},\n"2": {"a": 2, "time": 0.25},'
    path = tmp_path / "c.json"
    path.write_text(header + good + '\n"3": {"a": 3, "ti')
    assert cachefile.repair(path) == 2
    assert path.read_text() == header + good
    assert cachefile.repair(path) == 2  # idempotent
    path.write_text(header + good[:-1] + "}\n}")  # closed by Kernel Tuner: left as it is
    assert cachefile.repair(path) == 2 and path.read_text().endswith("}\n}")
    path.write_text(header[:25])  # killed while writing the header: nothing measured yet
    assert cachefile.repair(path) == 0 and not path.exists()


def test_killed_sweep_resumes_without_losing_or_remeasuring(tmp_path):
    cache, prov = tmp_path / "shard.json", tmp_path / "prov.json"
    spec = harness.load_spec("bessel")
    keys = [config_key(c, list(SLICE)) for c in spec.valid_configs("cpu", SLICE)]
    assert len(keys) == 12
    proc = subprocess.Popen(shard_cmd(cache, prov, SLICE), cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if cache.exists() and len(entry_lines(cache)) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # as if the kill had also cut a write short
    with open(cache, "a") as fh:
        fh.write('\n"1,4,0,double,float,float,double,half": {"threads": 1, "elems_per')
    before = cachefile.read(cachefile.repair(cache) and cache)["cache"]
    assert 3 <= len(before) < 12
    out = subprocess.run(shard_cmd(cache, prov, SLICE), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = entry_lines(cache)
    assert sorted(lines) == sorted(keys)  # every configuration, each exactly once
    after = cachefile.read(cache)["cache"]
    for key, entry in before.items():  # nothing measured before the kill was measured again
        assert after[key]["timestamp"] == entry["timestamp"]
    summary = json.loads(prov.read_text())
    assert summary["resumed_with"] == len(before) and summary["measured_now"] == 12 - len(before)
    for entry in after.values():
        assert entry["time"] > 0 and entry["memory"] == 2048 * (8 + (8 if entry["T_y"] == "double" else 2))
        assert all(np.isfinite(entry[m]) for m in ("mre", "nrmse", "nmae"))
    exact = after["1,1,0,double,double,double,double,double"]
    assert exact["mre"] < 1e-15 and after["1,1,0,double,double,double,double,half"]["mre"] > 1e-5


def test_shards_merge_to_the_unsharded_set_and_import_as_a_space(tmp_path):
    spec = harness.load_spec("bessel")
    keys = [config_key(c, list(SMALL)) for c in spec.valid_configs("cpu", SMALL)]
    assert len(keys) == 4
    shards, provs = [], []
    for i in range(3):
        shards.append(tmp_path / f"{i}.json")
        provs.append(tmp_path / f"{i}.prov.json")
        sweep_shard("bessel", "cpu", "tiny", shards[-1], shard=(i, 3), iterations=2, tune_params=SMALL,
                        provenance=provs[-1])
    assert sorted(k for s in shards for k in entry_lines(s)) == sorted(keys)
    assert [len(entry_lines(s)) for s in shards] == [1, 1, 2]
    out = tmp_path / "merged.json.gz"
    defn, prov = tmp_path / "definition.yaml", tmp_path / "provenance.json"
    merge("bessel", "cpu", "tiny", shards, out, defn, prov, tune_params=SMALL, shard_provenance=provs)
    doc = json.loads(gzip.decompress(out.read_bytes()))
    assert list(doc["cache"]) == keys and doc["tune_params"] == SMALL
    p = json.loads(prov.read_text())
    assert p["configurations"] == 4 and p["size"] == "tiny" and p["iterations"] == 2
    assert p["host"]["cpu_count"] == os.cpu_count() and p["software"]["kernel_tuner"] == "1.5.0"
    assert "g++" in p["compiler"]["version"] and "-O3" in p["compiler"]["flags"] and len(p["shards"]) == 3
    definition = read_definition(defn)
    assert definition.parameters == SMALL and definition.constraints == spec.constraints("cpu")
    space = import_space(out, kernel="bessel", device="host-cpu", fmt="kt_cache", definition=defn,
                         objectives=OBJECTIVE_FIELDS)
    assert [o.name for o in space.objectives] == ["time", "memory", "mre", "nrmse", "nmae"]
    assert len(space.table) == 4
    # a missing or a duplicated shard is an error naming the file
    with pytest.raises(SweepError, match="2 missing"):
        merge("bessel", "cpu", "tiny", shards[:2], out, defn, prov, tune_params=SMALL)
    with pytest.raises(SweepError, match="also in another of the files"):
        merge("bessel", "cpu", "tiny", [*shards, shards[0]], out, defn, prov, tune_params=SMALL)


def test_shard_refuses_a_cache_of_another_shard(tmp_path):
    cache = tmp_path / "c.json"
    sweep_shard("bessel", "cpu", "tiny", cache, shard=(0, 3), iterations=1, tune_params=SMALL)
    with pytest.raises(SweepError, match="outside shard"):
        sweep_shard("bessel", "cpu", "tiny", cache, shard=(1, 3), iterations=1, tune_params=SMALL)
    with pytest.raises(SweepError, match="sub-list"):
        resolve_tune_params(harness.load_spec("bessel"), "cpu", {"elems_per_iter": [3]})
    with pytest.raises(SweepError, match="i/n"):
        parse_shard("1-3")


def test_kernel_tuner_temp_files_stay_in_the_results_tree(tmp_path, monkeypatch):
    import kernel_tuner.backends.compiler as kt_compiler
    import kernel_tuner.util as kt_util

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    made = []
    original = kt_util.get_temp_filename

    def recording(suffix=None):
        name = original(suffix=suffix)
        made.append(Path(name))
        return name

    monkeypatch.setattr(kt_util, "get_temp_filename", recording)
    monkeypatch.setattr(kt_compiler, "get_temp_filename", recording)
    cache = Path("../results/sweeps/shards/0-of-3.json")  # relative, as the workflow passes it
    sweep_shard("bessel", "cpu", "tiny", cache, shard=(0, 3), iterations=1, tune_params=SMALL,
                    compile_mode="per-configuration")  # Kernel Tuner's own compiles write temp_* files
    scratch = scratch_dir(cache)
    assert scratch.parent == (tmp_path / "results/sweeps/shards").resolve()
    assert made and all(p.parent == scratch for p in made)  # every temp_* file was made in the scratch folder
    assert Path.cwd() == checkout and list(checkout.iterdir()) == []  # nothing left in the "checkout"
    assert not scratch.exists()  # removed once empty
    assert len(cachefile.read(cache)["cache"]) == 1


def test_cuda_arguments_and_observer_without_a_gpu():
    spec = harness.load_spec("bessel")
    args = _tunable_arguments(spec, harness.make_inputs("bessel"), "tiny")
    assert args[0]["bfloat16"].dtype.name == "bfloat16" and args[0]["half"].dtype == np.float16
    assert args[2] == np.int32(2048)
    ref = harness.reference_outputs("bessel")["y"]
    observers = {m: make_error_observer(None, m) for m in ("mre", "nrmse", "nmae")}
    out16 = ref.astype(np.float16)
    for m, obs in observers.items():
        obs.process_output([None, ref, None], [None, out16, None])
        assert obs.get_results()[m] == pytest.approx(harness.error_metrics(out16.astype(float), ref)[m])
    c_obs = make_error_observer(["bfloat16"], "mre")
    c_obs.process_output([ref], [encode(ref, "bfloat16", for_c=True)])
    assert 1e-4 < c_obs.get_results()["mre"] < 4e-3
    defines = harness.cuda_defines(spec, {"block_size_x": 128, "elems_per_thread": 4, "T_x": "half", "T_q": "half",
                                          "T_y": "half", "T_sum": "half", "T_term": "half"})
    assert defines["grid_size_x"] == 16777216 // 512 and defines["block_size_y"] == 1


def _config(tmp_path, sweeps):
    doc = yaml.safe_load((REPO / "config/test.yaml").read_text())
    doc["sweeps"] = sweeps
    doc.pop("constraint_aware")  # it names the swept space host-cpu/bessel, replaced here
    return doc


@pytest.mark.parametrize("sweep,field,words", [
    ({"kernel": "nosuch", "target": "cpu", "device": "h"}, "sweeps[0].kernel", "unknown kernel"),
    ({"kernel": "bessel", "target": "cpu", "device": "h", "size": "huge"}, "sweeps[0].size", "unknown size"),
    ({"kernel": "bessel", "target": "cpu", "device": "h", "tune_params": {"elems_per_iter": [3]}},
     "sweeps[0].tune_params", "sub-list"),
    ({"kernel": "bessel", "target": "gpu", "device": "h"}, "sweeps[0].target", "is not one of"),
    ({"kernel": "bessel", "target": "cpu", "device": "A100"}, None, None),
])
def test_config_checks_sweeps(tmp_path, sweep, field, words):
    doc = _config(tmp_path, [sweep])
    if field is None:  # kernel "bessel" on device A100 is not yet a space: accepted, size defaulted
        study_config.validate(doc)
        assert doc["sweeps"][0]["size"] == "cpu" and doc["sweeps"][0]["shards"] == 1
        return
    with pytest.raises(ConfigError) as info:
        study_config.validate(doc)
    assert info.value.field == field and words in info.value.detail


def test_sweep_space_entry():
    entry = study_config.sweep_space({"kernel": "bessel", "device": "host"}, "out/results/sweeps/cpu/host/bessel")
    assert entry["source"] == "out/results/sweeps/cpu/host/bessel/cache.json.gz"
    assert entry["definition"].endswith("definition.yaml") and entry["format"] == "kt_cache"
    assert entry["objectives"] == OBJECTIVE_FIELDS and entry["from_sweep"]


def test_slurm_profile_names_the_executor_and_real_rules():
    profile = yaml.safe_load((REPO / "workflow/profiles/slurm/config.yaml").read_text())
    assert profile["executor"] == "slurm" and profile["retries"] >= 1
    rules = "".join(p.read_text() for p in (REPO / "workflow/rules").glob("*.smk"))
    for rule in profile["set-resources"]:  # defined, or derived with `use rule ... as <rule> with:`
        assert f"rule {rule}:" in rules or f" as {rule} with:" in rules, rule


def test_cuda_sweep_hands_kernel_tuner_the_cuda_setup(tmp_path, monkeypatch):
    import kernel_tuner

    calls = []

    def fake_tune_kernel(name, source, problem_size, args, params, **opts):
        calls.append((name, source, problem_size, args, params, opts))
        return [], {"device_name": "fake"}

    gate = []

    def fake_run_kernel(name, source, problem_size, args, params, **opts):  # the reference configuration
        gate.append((name, params, opts))
        return [args[0], harness.reference_outputs("bessel")["y"], args[2]]

    monkeypatch.setattr(kernel_tuner, "tune_kernel", fake_tune_kernel)
    monkeypatch.setattr(kernel_tuner, "run_kernel", fake_run_kernel)
    tp = {"block_size_x": [128], "elems_per_thread": [2], "T_x": ["half"], "T_q": ["float"], "T_term": ["float"],
          "T_sum": ["float"], "T_y": ["bfloat16"]}
    with pytest.raises(SweepError, match="1 configuration"):  # nothing measured: the fake ran nothing
        sweep_shard("bessel", "cuda", "tiny", tmp_path / "c.json", tune_params=tp)
    (name, source, problem_size, args, params, opts), = calls
    assert name == "bessel_i0" and source.endswith("kernel.cu") and problem_size == [2048]
    assert opts["lang"] == "CUDA" and opts["grid_div_x"] == ["block_size_x", "elems_per_thread"]
    assert "-std=c++17" in opts["compiler_options"] and opts["cache"].endswith("c.json")
    assert {type(o).__name__ for o in opts["observers"]} >= {"ErrorObserver"}
    assert opts["metrics"]["memory"]({"T_x": "half", "T_y": "bfloat16"}) == 2048 * 4
    assert args[0].param_key == "T_x" and args[1]["bfloat16"].dtype.name == "bfloat16"
    assert opts["restrictions"][0](dict(zip(params, [128, 2, "half", "float", "float", "float", "bfloat16"])))
    # the correctness gate ran the all-double configuration first, through Kernel Tuner, with the same set-up
    (gname, gparams, gopts), = gate
    assert gname == "bessel_i0" and all(gparams[p] == "double" for p in ("T_x", "T_q", "T_term", "T_sum", "T_y"))
    assert gopts["compiler_options"] == opts["compiler_options"] and gopts["lang"] == "CUDA"
    assert {type(o).__name__ for o in opts["observers"]} >= {"NonfiniteObserver"}


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_correctness_gate_stops_a_sweep_that_misses_the_reference(tmp_path, monkeypatch, target):
    import kernel_tuner

    ref = harness.reference_outputs("bessel")["y"]
    wrong = ref * (1 + 1e-6)
    monkeypatch.setattr(harness, "run_cpu", lambda kernel, config, size: {"y": wrong})
    monkeypatch.setattr(kernel_tuner, "run_kernel", lambda name, src, ps, args, params, **o: [args[0], wrong, args[2]])
    monkeypatch.setattr(kernel_tuner, "tune_kernel", lambda *a, **k: pytest.fail("measured despite the gate"))
    cache = tmp_path / "c.json"
    with pytest.raises(SweepError) as info:
        sweep_shard("bessel", target, "tiny", cache, iterations=1, tune_params=SMALL if target == "cpu" else None)
    msg = str(info.value)
    assert f"kernel bessel, target {target}, output 'y'" in msg and "tolerance 1e-12" in msg
    assert re.search(r"has (mre|nrmse|nmae) [0-9.]+e-06 against", msg) and info.value.field == "tolerance"
    assert not cache.exists()


def test_nonfinite_outputs_are_counted_and_marked_invalid_on_import(tmp_path):
    observer = make_nonfinite_observer(["half"])
    out = encode(np.array([1.0, np.inf, 2.0, np.nan]), "half", for_c=True)
    observer.process_output([np.ones(4)], [out])
    assert observer.get_results() == {"nonfinite_values": 2}
    tp = {"a": [1, 2, 3]}
    rows = [{"a": 1, "time": 1.0, "mre": 0.1, "nonfinite_values": 0},
            {"a": 2, "time": 1.0, "mre": float("nan"), "nonfinite_values": 3},
            {"a": 3, "time": 2.0, "mre": 0.2}]
    from helpers import kt_cache, write
    space = import_space(write(tmp_path / "c.json", kt_cache(tp, rows)), kernel="k", device="d", fmt="kt_cache",
                         objectives={"time": "time", "mre": "mre"})
    assert space.table["status"].tolist() == ["ok", "invalid_output", "ok"]
    assert space.meta["counts"]["failed"] == {"invalid_output": 1}


def test_shard_logs_progress_with_rate_and_time_left(tmp_path, monkeypatch, caplog):
    from analysis.sweep import progress

    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)  # a line per configuration instead of one a minute
    cache = tmp_path / "c.json"
    with caplog.at_level(logging.INFO, logger="analysis.sweep.progress"):
        sweep_shard("bessel", "cpu", "tiny", cache, iterations=1, tune_params=SMALL)
    lines = [r.getMessage() for r in caplog.records if r.name == "analysis.sweep.progress"]
    assert [line.split(": ")[1].split(" ")[0] for line in lines] == ["1/4", "2/4", "3/4", "4/4"]
    assert all(re.search(r"[0-9.]+ configurations/s, about \d+ min \d\d s left$", line) for line in lines)
    # a resumed shard counts what its cache holds as done
    p = progress.Progress("k/cpu shard 0/1", total=10, done=6)
    p.tick()
    assert p.line().startswith("k/cpu shard 0/1: 7/10 configurations (70.0 %)")


def test_progress_is_logged_at_least_once_a_minute(monkeypatch):
    from analysis.sweep import progress

    clock = iter([0.0, 0.0, 30.0, 61.0, 62.0])  # started, last, then one reading per tick
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    p = progress.Progress("k", total=100)  # started = last = 0
    logged = []
    monkeypatch.setattr(progress.log, "info", lambda fmt, line: logged.append(line))
    p.tick()  # t = 30: not yet
    p.tick()  # t = 61: a minute has passed
    p.tick()  # t = 62: not again
    assert len(logged) == 1 and logged[0].startswith("k: 2/100 configurations")


def test_timing_noise_is_summarised_on_import_and_in_the_spaces_table(tmp_path):
    from analysis.spaces.table import space_row
    from helpers import kt_cache, write

    tp = {"a": [1, 2, 3, 4]}
    rows = [{"a": 1, "time": 2.0, "times": [1.0, 2.0, 3.0]},      # CV 0.5
            {"a": 2, "time": 4.0, "times": [4.0, 4.0, 4.0, 4.0]},  # CV 0
            {"a": 3, "time": 2.0, "times": [1.5, 2.5, 2.0]},       # CV 0.25
            {"a": 4, "time": 1.0, "times": [1.0]}]                 # one run: no spread
    space = import_space(write(tmp_path / "c.json", kt_cache(tp, rows)), kernel="k", device="d", fmt="kt_cache",
                         objectives={"time": "time"})
    noise = space.meta["timing_noise"]
    assert noise["configurations"] == 3 and noise["iterations_median"] == 3.0
    assert noise["cv_median"] == pytest.approx(0.25)
    fronts = {"sets": {}, "ranges": {}}
    row = space_row({**space.meta, "parameters": tp, "constraints": [], "kernel": "k", "device": "d",
                     "objectives": []}, fronts, largest_budget=2)
    assert row["time_cv_median"] == pytest.approx(0.25) and row["iterations"] == 3.0
    assert row["budget_share_pct"] == 50.0
    rows[0]["times"] = "fast"
    with pytest.raises(SpaceError) as info:
        import_space(write(tmp_path / "d.json", kt_cache(tp, rows)), kernel="k", device="d", fmt="kt_cache",
                     objectives={"time": "time"})
    assert info.value.field == "cache.1.times" and "not a list of numbers" in str(info.value)


def test_a_shard_takes_as_many_cores_as_its_largest_threads_value():
    assert shard_cores("bessel", "cpu", SLICE, (0, 1)) == 1  # the slice has threads [1]
    assert shard_cores("bessel", "cpu", None, (0, 4)) == 1  # Kernel Tuner order: threads varies slowest
    assert shard_cores("bessel", "cpu", None, (3, 4)) == 2
    assert shard_cores("bessel", "cuda", None, (0, 4)) == 1


def test_a_grouped_cache_is_charged_each_configurations_own_compile_not_a_share_of_the_build(tmp_path):
    """A grouped sweep's build is shared; what a configuration costs is its compile alone (compile_times)."""
    from helpers import kt_cache, write

    tp = {"a": [1, 2, 3]}
    rows = [{"a": 1, "time": 1.0, "library_build_time": 600.0, "library_variants": 3},
            {"a": 2, "time": 1.0, "library_build_time": 600.0, "library_variants": 3},
            {"a": 3, "time": 1.0, "library_build_time": 600.0, "library_variants": 3}]
    grouped = write(tmp_path / "c.json", kt_cache(tp, rows))
    with pytest.raises(SpaceError) as info:
        import_space(grouped, kernel="k", device="d", fmt="kt_cache", objectives={"time": "time"})
    assert info.value.field == "library_build_time" and "compile_times" in str(info.value)
    alone = [{**r, "compile_time": 300.0 + r["a"]} for r in rows[:2]]
    for r in alone:
        del r["library_build_time"], r["library_variants"]
    measured = write(tmp_path / "alone.json", kt_cache(tp, alone))
    space = import_space(grouped, kernel="k", device="d", fmt="kt_cache", objectives={"time": "time"},
                         compile_times=[measured])
    charged = space.table["compile_time_ms"].tolist()
    assert charged[:2] == [301.0, 302.0]  # measured alone: exactly that, no share of the 600 ms build
    assert 300.0 < charged[2] < 303.0  # imputed from the measured ones
