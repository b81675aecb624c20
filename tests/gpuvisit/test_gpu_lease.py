"""The GPU lease without a GPU: device metrics (on NumPy), plan, resume, deadline, packing, merge, and one
lease through Kernel Tuner's real tune_kernel over a fake CuPy (gpuvisit).

What needs a GPU (CuPy's RawModule loading the cubins, CUDA events, NVML, the correctness gate on the
device) is not run here: `benchmarks/bench_gpu_lease.py` runs it where a GPU is lent.
"""

from __future__ import annotations

import gzip
import json
import re
import tarfile
import types
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from analysis.errors import SpaceError, SweepError
from analysis.sweep import cachefile, harness
from analysis.sweep import device_metrics as dm
from analysis.sweep.metrics import error_metrics
from gpuvisit import cache as cache_mod
from gpuvisit import cli, cuda_modules, measure, merge
from gpuvisit import guard as guard_mod
from gpuvisit import lease as lease_mod
from gpuvisit import pack as pack_mod
from gpuvisit import plan as plan_mod
from gpuvisit import resume as resume_mod
from helpers import REPO

# ---- device metrics ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("type_name", ["double", "float", "half", "bfloat16"])
def test_device_metrics_equal_host_metrics(type_name):
    rng = np.random.default_rng(3)
    ref = rng.uniform(-3, 5, 5000)
    ref[:7] = 0.0  # the MRE floor
    values = ref * (1 + rng.normal(0, 1e-2, ref.size))
    stored = dm.storage(values, type_name)
    host = error_metrics(stored.view(ml_dtypes.bfloat16) if type_name == "bfloat16" else stored, ref)
    got, nonfinite = dm.DeviceReference(np, ref).metrics(stored)
    assert nonfinite == 0
    for m in ("mre", "nrmse", "nmae"):
        assert got[m] == pytest.approx(host[m], rel=1e-12), m
    assert dm.type_of(stored) == type_name
    assert np.array_equal(dm.decode(np, stored), stored.view(ml_dtypes.bfloat16).astype(np.float64)
                          if type_name == "bfloat16" else stored.astype(np.float64))


def test_device_metrics_nonfinite_and_worst_output():
    ref = np.linspace(1, 2, 100)
    y = dm.storage(ref.copy(), "half")
    y[:3] = np.inf
    y[3] = np.nan
    z = dm.storage(ref * 1.5, "float")
    out = dm.output_metrics({0: dm.DeviceReference(np, ref), 2: dm.DeviceReference(np, ref)}, [y, None, z])
    assert out[dm.NONFINITE_FIELD] == 4
    assert np.isnan(out["mre"]) and np.isnan(out["nmae"])  # NaN wins, as analysis.sweep.metrics.worst
    good = dm.output_metrics({0: dm.DeviceReference(np, ref)}, [z])
    assert good["nmae"] == pytest.approx(0.5, rel=1e-7)


def test_poison_is_nan_in_every_storage():
    arrays = [np.zeros(8, dtype=dm.STORAGE[t]) for t in dm.STORAGE]
    dm.poison(np, arrays)
    assert all(np.isnan(dm.decode(np, a)).all() for a in arrays)


# ---- plan --------------------------------------------------------------------------------------------------

def test_plan_orders_smallest_space_first_and_totals():
    plans = plan_mod.plan()
    sizes = [p.total for p in plans]
    assert sizes == sorted(sizes)
    assert [p.total for p in plans] == [len(harness.load_spec(p.kernel).valid_configs("cuda")) for p in plans]
    assert all(p.measure_rate == plan_mod.ASSUMED_MEASURE_RATE and "assumed" in p.measure_source for p in plans)
    assert plans[0].seconds == pytest.approx(plans[0].total / plan_mod.ASSUMED_MEASURE_RATE)
    text = plan_mod.format_plan(plans)
    assert f"{sum(sizes):,}" in text and "kmeans" in text
    firsts = [p.visits[0] for p in plans]
    assert firsts == sorted(firsts) and firsts[0] == 1
    # a slow compile rate is the pipeline's rate
    slow = plan_mod.plan(["bessel"], compile={"bessel": (2.0, "x")})[0]
    assert slow.rate == 2.0


def test_plan_counts_what_was_resumed():
    spec = harness.load_spec("kmeans")
    names = cache_mod.cache_names(spec)
    res = resume_mod.Resumed()
    res.entries["kmeans"] = {cache_mod.config_key(c, names): {} for c in spec.valid_configs("cuda")[:100]}
    p = plan_mod.plan(["kmeans"], res, rates={"kmeans": (50.0, "measured")})[0]
    assert (p.done, p.pending, p.measure_rate) == (100, p.total - 100, 50.0)


def test_cli_defaults_are_the_modules_constants():
    d = cli.DEFAULTS
    assert d["size"] == cache_mod.SIZE and d["chunk"] == cuda_modules.DEFAULT_CHUNK
    assert d["batch"] == measure.BATCH_MIN and d["energy_window"] == measure.ENERGY_WINDOW_S
    assert d["reserve_s"] == guard_mod.RESERVE_S and d["visit_minutes"] == plan_mod.VISIT_MINUTES
    assert REPO / d["doc"] == plan_mod.DOC and REPO / d["report"] == plan_mod.REPORT


def test_docs_plan_section_is_current():
    assert plan_mod.render_doc(check=True) == 0, "run `python -m gpuvisit gpu-plan-doc`"


# ---- packing ------------------------------------------------------------------------------------------------

def _synthetic(kernel: str, n: int, seed: int = 0):
    spec = harness.load_spec(kernel)
    names = cache_mod.cache_names(spec)
    rng = np.random.default_rng(seed)
    entries = {}
    for c in spec.valid_configs("cuda")[:n]:
        times = rng.random(7).tolist()  # random digits: hardly compressible
        entries[cache_mod.config_key(c, names)] = {**c, "time": float(np.mean(times)), "times": times,
                                                   "compile_time": rng.random(), "mre": rng.random()}
    return cache_mod.cache_header(spec, "Fake GPU", "gpu"), entries


def test_pack_respects_file_count_and_size_and_round_trips(tmp_path):
    caches = {k: _synthetic(k, n, i) for i, (k, n) in enumerate([("kmeans", 1500), ("bessel", 700), ("invk", 300)])}
    limit = 96 * 1024
    prov = {"size": "gpu", "kernels": {}, "gpu": {"name": "Fake GPU"}, "visit": {"id": "v1"}}
    files = pack_mod.pack(tmp_path, "v1", caches, prov, files=8, limit=limit, extra={"lease.log": b"x" * 100})
    assert 1 < len(files) <= 8
    assert all(f.stat().st_size <= limit for f in files)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f.name for f in files)
    got: dict[str, dict] = {}
    for f in files:
        p, docs = pack_mod.read_pack(f)
        assert p["pack"]["files"] == [x.name for x in files]
        for kernel, kdocs in docs.items():
            for d in kdocs:
                assert d["tune_params_keys"] == caches[kernel][0]["tune_params_keys"]
                assert not set(d["cache"]) & set(got.get(kernel, {}))
                got.setdefault(kernel, {}).update(d["cache"])
    assert got == {k: v[1] for k, v in caches.items()}
    with pytest.raises(cache_mod.LeaseError, match="at most 2"):
        pack_mod.pack(tmp_path / "small", "v1", caches, prov, files=2, limit=limit)
    assert not (tmp_path / "small").exists() or not list((tmp_path / "small").iterdir())


def test_pack_replaces_its_own_earlier_files(tmp_path):
    prov = {"size": "gpu", "kernels": {}, "visit": {"id": "v"}}
    big = pack_mod.pack(tmp_path, "v", {"kmeans": _synthetic("kmeans", 3000)}, prov, limit=96 * 1024)
    small = pack_mod.pack(tmp_path, "v", {"kmeans": _synthetic("kmeans", 10)}, prov, limit=96 * 1024)
    assert len(big) > 1 and len(small) == 1
    assert sorted(tmp_path.iterdir()) == small


def test_shard_writer_survives_a_partial_line(tmp_path):
    spec = harness.load_spec("bessel")
    header = cache_mod.cache_header(spec, "Fake GPU", "gpu")
    _, entries = _synthetic("bessel", 5)
    w = cache_mod.ShardWriter(tmp_path / "bessel.json", header)
    assert w.append(dict(list(entries.items())[:3])) == 3
    with open(tmp_path / "bessel.json", "a") as f:
        f.write('\n"32,1,dou')  # killed mid-write
    w = cache_mod.ShardWriter(tmp_path / "bessel.json", header)
    assert len(w.keys) == 3
    assert w.append(entries) == 2
    assert cachefile.read(tmp_path / "bessel.json")["cache"] == entries


# ---- the lease loop with a fake measurer: deadline, resume, restart, merge -----------------------------------------

class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class FakeBuilder:
    jobs = 0

    def __init__(self):
        self.chunks: dict = {}
        self.results: dict = {}

    def submit(self, spec, chunk):
        self.chunks[(chunk.kernel, chunk.index)] = chunk

    def result(self, chunk, timeout=None):
        r = {"ok": True, "seconds": 0.25, "path": f"{chunk.kernel}:{chunk.index}"}
        self.results[(chunk.kernel, chunk.index)] = r
        return r

    def discard(self, chunk):
        pass

    def close(self):
        pass


class FakeMeasurer:
    """Writes one Kernel Tuner cache line per configuration, `per_config` fake seconds each."""

    device = {"name": "Fake GPU", "arch": "sm_90"}
    energy = {"recorded": False, "reason": "fake device"}
    arch = "sm_90"

    def __init__(self, clock: FakeClock, per_config: float = 0.1, fail_gate: set[str] = frozenset(),
                 kernel_setup: float = 0.0, batch_setup: float = 0.0, batch_tail: float = 0.0):
        self.clock = clock
        self.per_config = per_config
        self.fail_gate = fail_gate
        self.kernel_setup, self.batch_setup, self.batch_tail = kernel_setup, batch_setup, batch_tail
        self.measured: list[str] = []

    def environment(self):
        return dict(self.device)

    def prepare(self, spec, configs, chunks, builder, reference, guard):
        if spec.name in self.fail_gate:
            raise SweepError(spec.path, "correctness gate failed (fake)")
        assert set(reference) == {a.name for a in spec.arguments if a.role == "output"}
        self.clock.t += self.kernel_setup
        return {"mre": 0.0, "nrmse": 0.0, "nmae": 0.0}

    def measure(self, spec, batch, cache, guard, tracker=None):
        names = cache_mod.cache_names(spec)
        cache.write_text(cache_mod.open_cache_text(cache_mod.cache_header(spec, "Fake GPU", "tiny")))
        self.clock.t += self.batch_setup
        for c in batch.configs:
            guard.check()
            self.clock.t += self.per_config
            key = cache_mod.config_key(c, names)
            self.measured.append(key)
            with open(cache, "a") as f:
                f.write(cache_mod.entry_line(key, {**c, "time": 1.0, "times": [1.0] * 7, "compile_time": 0.1,
                                                   "verification_time": 0.1, "benchmark_time": 1.0, "mre": 0.0,
                                                   "nrmse": 0.0, "nmae": 0.0, "nonfinite_values": 0}))
        self.clock.t += self.batch_tail

    def metrics_seconds(self):
        return 0.0, 0, 0

    def finish(self, spec, chunks):
        pass


def _lease(out, work, clock, measurer, minutes, **kw):
    return lease_mod.lease(out, minutes, kernels=kw.pop("kernels", ["kmeans"]), work=work, size_name="tiny",
                           clock=clock, measurer=measurer, builder_factory=lambda folder, arch: FakeBuilder(),
                           reference_workers=0, reserve_s=kw.pop("reserve_s", 10.0), **kw)


def test_lease_stops_before_the_deadline_resumes_and_merges(tmp_path):
    clock = FakeClock()
    m1 = FakeMeasurer(clock)
    start = clock.t
    prov = _lease(tmp_path / "out1", tmp_path / "work1", clock, m1, 1.0)
    assert clock.t <= start + 60 - 10  # a clean stop: the reserve is left for packing
    assert prov["visit"]["stop"].startswith("deadline")
    n1 = prov["kernels"]["kmeans"]["measured_now"]
    assert 400 < n1 < 500 and n1 == len(m1.measured) == len(set(m1.measured))
    files1 = sorted((tmp_path / "out1").iterdir())
    assert 1 <= len(files1) <= pack_mod.PACK_FILES

    # a restart within the same visit (same work folder) after a crash mid-write: nothing measured twice
    with open(tmp_path / "work1" / "shards" / "kmeans.json", "a") as f:
        f.write('\n"32,1,0,dou')
    m1b = FakeMeasurer(clock)
    prov = _lease(tmp_path / "out1", tmp_path / "work1", clock, m1b, 0.5)
    assert not set(m1b.measured) & set(m1.measured)
    assert prov["kernels"]["kmeans"]["done_before"] == n1
    n1 += len(m1b.measured)
    assert sorted(p.name for p in (tmp_path / "out1").iterdir()) == sorted(Path(p).name for p in prov["written"])

    # the next visit resumes from the packs and completes the space
    m2 = FakeMeasurer(clock)
    prov = _lease(tmp_path / "out2", tmp_path / "work2", clock, m2, 30.0, resume_paths=[tmp_path / "out1"])
    total = len(harness.load_spec("kmeans").valid_configs("cuda"))
    assert prov["kernels"]["kmeans"]["done_before"] == n1
    assert len(m2.measured) == total - n1 and not set(m2.measured) & set(m1.measured + m1b.measured)
    assert prov["kernels"]["kmeans"]["complete"] and prov["visit"]["stop"] == "every requested space is complete"
    assert prov["resumed_from"] == [json.loads((tmp_path / "work1" / "visit.json").read_text())["id"]]

    merged = merge.merge_packs([tmp_path / "out1", tmp_path / "out2"], tmp_path / "merged", size_name="tiny")
    assert merged == {"kmeans": {"complete": True, "configurations": total}}
    doc = json.loads(gzip.decompress((tmp_path / "merged" / "kmeans.json.gz").read_bytes()))
    assert len(doc["cache"]) == total
    assert json.loads((tmp_path / "merged" / "kmeans.provenance.json").read_text())["configurations"] == total


@pytest.mark.parametrize("slow", ["kernel_setup", "batch_setup", "batch_tail"])
def test_stop_rule_keeps_room_for_set_ups_and_tails(tmp_path, slow):
    """What surrounds the configurations (a kernel's set-up, a batch's set-up, its tail) is timed too: the lease
    ends before its deadline where one of them is slow. With no room kept for them (longest() = 0) each case
    overruns, which this test was checked to catch."""
    for i, minutes in enumerate((0.9, 1.0, 1.1, 1.2, 1.3)):  # deadlines that fall in different steps
        clock = FakeClock()
        m = FakeMeasurer(clock, per_config=0.01, **{slow: 7.0})
        start = clock.t
        prov = _lease(tmp_path / f"out{i}", tmp_path / f"work{i}", clock, m, minutes, kernels=["kmeans", "bessel"])
        assert prov["visit"]["stop"].startswith("deadline")
        assert clock.t <= start + 60 * minutes - 10, minutes
        rule = prov["visit"]["stop_rule"]
        assert rule[{"kernel_setup": "kernel_setup_s", "batch_setup": "batch_setup_s",
                     "batch_tail": "batch_tail_s"}[slow]] >= 7.0


def test_lease_skips_a_kernel_that_fails_its_gate_and_merges_partial(tmp_path):
    clock = FakeClock()
    m = FakeMeasurer(clock, fail_gate={"kmeans"})
    prov = _lease(tmp_path / "out", tmp_path / "work", clock, m, 2.0, kernels=["kmeans", "bessel"])
    assert "failed" in prov["kernels"]["kmeans"]["gate"]
    assert prov["kernels"]["kmeans"]["measured_now"] == 0
    assert prov["kernels"]["bessel"]["measured_now"] > 0
    merged = merge.merge_packs([tmp_path / "out"], tmp_path / "merged", size_name="tiny")
    assert merged["bessel"]["complete"] is False
    part = json.loads((tmp_path / "merged" / "bessel.partial.provenance.json").read_text())
    assert part["partial"] and part["measured"] == prov["kernels"]["bessel"]["measured_now"]


def test_partial_merge_imports_as_a_space_with_compile_measurements_beyond_it(tmp_path):
    """A partial sweep's merge writes its definition, so it imports as a space (listed with its coverage). A
    compile measurement, which needs no GPU, may hold configurations the partial sweep lacks: the
    definition admits them, they inform the model and are charged to no one. The charged values equal
    the library's compile_costs over the same measurements on the kernel's whole space."""
    from analysis.spaces.compile_cost import compile_costs
    from analysis.spaces.importers import import_space

    clock = FakeClock()
    _lease(tmp_path / "out", tmp_path / "work", clock, FakeMeasurer(clock), 0.5, kernels=["bessel"])
    merged = merge.merge_packs([tmp_path / "out"], tmp_path / "merged", size_name="tiny",
                                   data_dir=tmp_path / "data")
    assert merged["bessel"]["complete"] is False
    spec = harness.load_spec("bessel")
    names = cache_mod.cache_names(spec)
    every = {cache_mod.config_key(c, names): c for c in spec.valid_configs("cuda")}
    swept = json.loads(gzip.decompress((tmp_path / "merged" / "bessel.partial.json.gz").read_bytes()))["cache"]
    rng = np.random.default_rng(3)
    picked = [list(every)[i] for i in rng.choice(len(every), 300, replace=False)]
    outside = [k for k in picked if k not in swept]
    assert 0 < len(outside) < len(picked)
    header = cache_mod.cache_header(spec, "this machine", "tiny")
    measured = {k: {**every[k], "compile_time": float(200 + 3 * i % 97)} for i, k in enumerate(picked)}
    (tmp_path / "compile.json").write_text(json.dumps(cache_mod.closed_cache(header, measured)))

    space = import_space(tmp_path / "merged" / "bessel.partial.json.gz", kernel="bessel", device="fake",
                         definition=tmp_path / "merged" / "bessel.partial.yaml",
                         compile_times=[tmp_path / "compile.json"])
    summary = space.meta["compile_cost"]
    assert summary["measured_outside_sweep"] == len(outside)
    assert summary["measured"] == len(picked) - len(outside) and summary["configurations"] == len(swept)
    whole = compile_costs(every, spec.tune_params("cuda"), [tmp_path / "compile.json"])
    charged = {cache_mod.config_key(row, names): row["compile_time_ms"]
               for row in space.table[[*names, "compile_time_ms"]].to_dict("records")}
    assert set(charged) == set(swept)
    for k, ms in charged.items():
        assert ms == pytest.approx(whole.ms[k], rel=1e-9)

    # a measured configuration the definition does not admit is an error naming the file and field
    bad = dict(measured)
    key, entry = next(iter(measured.items()))
    values = key.split(",")
    values[0] = "99999"
    bad[",".join(values)] = {**entry, names[0]: 99999}
    (tmp_path / "bad.json").write_text(json.dumps(cache_mod.closed_cache(header, bad)))
    with pytest.raises(SpaceError, match=r"bad\.json: field 'compile_times': 1 measured configuration\(s\) are not "
                                         r"in the space nor admitted by its definition"):
        import_space(tmp_path / "merged" / "bessel.partial.json.gz", kernel="bessel", device="fake",
                     definition=tmp_path / "merged" / "bessel.partial.yaml", compile_times=[tmp_path / "bad.json"])


def test_resume_refuses_other_sources_and_sizes(tmp_path):
    clock = FakeClock()
    _lease(tmp_path / "out", tmp_path / "work", clock, FakeMeasurer(clock), 0.5)
    (pack,) = sorted((tmp_path / "out").iterdir())
    with pytest.raises(cache_mod.LeaseError, match="size"):
        resume_mod.resume([pack], size_name="gpu")
    with tarfile.open(pack) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    prov = json.loads(members["provenance.json"])
    prov["kernels"]["kmeans"]["source_sha256"] = "0" * 64
    members["provenance.json"] = json.dumps(prov).encode()
    forged = tmp_path / "forged.tar"
    with tarfile.open(forged, "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            import io

            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(cache_mod.LeaseError, match="other sources"):
        resume_mod.resume([forged], size_name="tiny")
    assert resume_mod.resume([pack], size_name="tiny", gpu="Other GPU").refused


# ---- one lease through Kernel Tuner's tune_kernel over a fake CuPy ------------------------------------------------

class _Event:
    def record(self, stream=None):
        pass

    done = True


class _Device:
    def __init__(self, device=0):
        self.attributes = {"MaxThreadsPerBlock": 1024}
        self.compute_capability = "90"

    def use(self):
        pass

    def synchronize(self):
        pass


FAKE_CUPY = types.SimpleNamespace(
    cuda=types.SimpleNamespace(Device=_Device, Stream=lambda: object(), Event=_Event, get_elapsed_time=lambda a, b: 0.5,
                               runtime=types.SimpleNamespace(driverGetVersion=lambda: 13000,
                                                             getDeviceProperties=lambda d: {"uuid": bytes(16)})),
    array=np.array, asarray=np.asarray, asnumpy=np.asarray, copyto=np.copyto, ndarray=np.ndarray)


class FakeKernel:
    """Writes bessel's tiny reference, perturbed by elems_per_thread, in the output's type; one
    configuration writes only half its output (its other half must come out non-finite)."""

    def __init__(self, config, clock, calls):
        self.config, self.clock, self.calls = config, clock, calls
        self.num_regs = 32

    def __call__(self, grid, threads, args, stream=None, shared_mem=0):
        c = self.config
        assert threads == (c["block_size_x"], 1, 1)
        assert grid[0] == -(-2048 // (c["block_size_x"] * c["elems_per_thread"]))
        ref = harness.reference_outputs("bessel", "tiny")["y"]
        y = args[1]
        assert dm.type_of(y) == c["T_y"] and dm.type_of(args[0]) == c["T_x"]
        values = dm.storage(ref * (1 + 1e-3 * c["elems_per_thread"]), c["T_y"])
        n = y.size // 2 if c["T_sum"] == "float" and c["T_y"] == "half" else y.size
        y[:n] = values[:n]
        self.clock.t += 0.05
        self.calls.append(c)


@pytest.mark.parametrize("energy_fails", [False, True])
def test_lease_through_kernel_tuner_with_a_fake_cupy(tmp_path, monkeypatch, energy_fails):
    """energy_fails: NVML answered the probe but Kernel Tuner's observer fails in the first batch: the batch
    is measured again without energy, the visit goes on and its provenance says why there is no energy."""
    import kernel_tuner.backends.cupy as kt_cupy
    from kernel_tuner.observers.observer import BenchmarkObserver

    class BrokenNVML(BenchmarkObserver):
        def after_finish(self):
            raise RuntimeError("NVML stopped answering")

        def get_results(self):
            return {}

    monkeypatch.setattr(measure, "energy_observer", lambda window: BrokenNVML())
    import kernel_tuner.observers.cupy as kt_cupy_obs

    monkeypatch.setattr(kt_cupy, "cp", FAKE_CUPY)
    monkeypatch.setattr(kt_cupy, "get_runtime_info",
                        lambda: "Device 0 Name : Fake GPU\nDevice 0 PCI Bus ID : 0000:00:00.0\n", raising=False)
    monkeypatch.setattr(kt_cupy_obs, "cp", FAKE_CUPY)
    clock = FakeClock()
    calls: list = []
    builders: list[FakeBuilder] = []

    def builder_factory(folder, arch):
        builders.append(FakeBuilder())
        return builders[-1]

    def loader(path):
        kernel, index = path.split(":")
        chunk = builders[-1].chunks[(kernel, int(index))]
        return types.SimpleNamespace(get_function=lambda name: FakeKernel(
            chunk.configs[int(re.match(r"tsb_v(\d+)_", name).group(1))], clock, calls))

    gates = []

    def gate(spec, target, size_name, reference):
        gates.append(spec.name)
        return {"mre": 0.0, "nrmse": 0.0, "nmae": 0.0}

    def measurer(energy=None):
        return measure.KTCupyMeasurer(size_name="tiny", iterations=3, xp=np, loader=loader, gate=gate,
                                        device={"name": "Fake GPU", "arch": "sm_90"},
                                        energy=energy or {"recorded": False, "reason": "fake device"})

    common = dict(kernels=["bessel"], size_name="tiny", clock=clock, builder_factory=builder_factory,
                  reference_workers=0, batch_min=12, reserve_s=0.0)
    # first visit: 40 configurations offered, the deadline (in fake time) stops it part way
    prov = lease_mod.lease(tmp_path / "out1", 3.0 / 60, work=tmp_path / "w1", max_configs=40,
                           measurer=measurer({"recorded": True, "window_s": 0.01} if energy_fails else None), **common)
    rec = prov["kernels"]["bessel"]
    if energy_fails:
        assert not prov["energy"]["recorded"] and "NVML stopped answering" in prov["energy"]["reason"]
        assert "error" not in rec
    assert prov["visit"]["stop"].startswith("deadline") and gates == ["bessel"]
    assert 5 < rec["measured_now"] < 40 and clock.t <= 1000.0 + 3.0
    # second visit: the rest of those 40
    prov2 = lease_mod.lease(tmp_path / "out2", 60.0, work=tmp_path / "w2", measurer=measurer(),
                            resume_paths=[tmp_path / "out1"], max_configs=40 - rec["measured_now"], **common)
    assert prov2["kernels"]["bessel"]["done_before"] == rec["measured_now"]
    res = resume_mod.resume([tmp_path / "out1", tmp_path / "out2"], size_name="tiny")
    entries = res.entries["bessel"]
    spec = harness.load_spec("bessel")
    names = cache_mod.cache_names(spec)
    first40 = spec.valid_configs("cuda")[:40]
    assert set(entries) == {cache_mod.config_key(c, names) for c in first40}
    ref = harness.reference_outputs("bessel", "tiny")["y"]
    half_written = 0
    for c in first40:
        e = entries[cache_mod.config_key(c, names)]
        assert e["time"] == 0.5 and len(e["times"]) == 3  # Kernel Tuner's own benchmarking (fake events)
        assert e["library_variants"] == 1 and e["library_build_time"] == 250.0
        assert e["memory"] == spec.memory_bytes(c, "tiny")
        if e["nonfinite_values"]:
            half_written += 1
            assert e["nonfinite_values"] == ref.size // 2 and np.isnan(e["mre"])
            continue
        values = dm.storage(ref * (1 + 1e-3 * c["elems_per_thread"]), c["T_y"])
        host = error_metrics(values.view(ml_dtypes.bfloat16) if c["T_y"] == "bfloat16" else values, ref)
        for m in ("mre", "nrmse", "nmae"):
            assert e[m] == pytest.approx(host[m], rel=1e-12)
    assert half_written == sum(1 for c in first40 if c["T_sum"] == "float" and c["T_y"] == "half") > 0
    assert prov2["kernels"]["bessel"]["throughput"]["metrics_checks"] > 0


needs_nvcc = pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH: nothing compiled")


@needs_nvcc
@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_gate_runs_kernel_tuners_string_compiled_by_nvcc_on_the_cupy_backend(tmp_path, monkeypatch, scale):
    """The lease's own gate: run_kernel with lang CUPY (no PyCUDA, no NVRTC on the GPU machine), the kernel
    string Kernel Tuner wrote compiled alone by nvcc into the work folder, the function looked up by name;
    a kernel whose output is off fails the gate (SweepError) and the lease would record it."""
    import kernel_tuner.backends.cupy as kt_cupy

    monkeypatch.setattr(kt_cupy, "cp", FAKE_CUPY)
    monkeypatch.setattr(kt_cupy, "get_runtime_info",
                        lambda: "Device 0 Name : Fake GPU\nDevice 0 PCI Bus ID : 0000:00:00.0\n", raising=False)
    spec = harness.load_spec("bessel")
    ref = harness.reference_outputs("bessel", "tiny")
    loaded: list[tuple[str, str]] = []

    class Module:
        def __init__(self, path):
            self.path = path

        def get_function(self, name):
            loaded.append((self.path, name))

            def run(grid, threads, args, stream=None, shared_mem=0):
                args[1][:] = ref["y"] * scale

            run.num_regs = 16
            return run

    measurer = measure.KTCupyMeasurer(size_name="tiny", iterations=3, xp=np, loader=Module,
                                        device={"name": "Fake GPU", "arch": "sm_90"},
                                        energy={"recorded": False, "reason": "fake device"})
    builder = types.SimpleNamespace(folder=tmp_path / "modules")
    chunks = cuda_modules.make_chunks(spec, spec.valid_configs("cuda")[:2], "tiny")
    if scale == 1.0:
        gate = measurer.prepare(spec, spec.valid_configs("cuda")[:2], chunks, builder, ref,
                                guard_mod.Guard(lambda: 0.0, 1e9))
        assert gate["mre"] == 0.0
    else:
        with pytest.raises(SweepError, match="correctness gate failed"):
            measurer.prepare(spec, spec.valid_configs("cuda")[:2], chunks, builder, ref,
                             guard_mod.Guard(lambda: 0.0, 1e9))
    ((path, name),) = loaded
    assert name == spec.function and Path(path).parent == tmp_path / "modules" / "gate" / "bessel"
    cubin = Path(path)
    assert cubin.read_bytes()[:4] == b"\x7fELF" and spec.function in cuda_modules.cubin_functions(cubin)
    defines = cuda_modules.prefix_defines(cubin.with_suffix(".cu").read_text())
    assert all(defines[p] == "double" for p in spec.precision if p in defines) and "T_x" in defines


def test_reference_pool_computes_ahead_in_a_worker_and_close_does_not_wait(tmp_path, monkeypatch):
    """References come from a spawned worker as .npy files equal to the harness's; close() terminates a
    worker still computing (at the deadline a reference of minutes must not hold up the exit)."""
    import subprocess
    import sys
    import time

    pool = measure.ReferencePool(tmp_path, "tiny", workers=1)
    try:
        pool.prefetch("bessel")
        ref, seconds = pool.get("bessel")
        np.testing.assert_array_equal(ref["y"], harness.reference_outputs("bessel", "tiny")["y"])
        assert seconds >= 0 and (tmp_path / "bessel.y.npy").is_file()
        pool.prefetch("coulombic")
        pool.prefetch("kmeans")
    finally:
        pool.close()
    assert pool.pool is None
    # a run that continues the work folder reuses the reference; one of other sources computes it again
    again = measure.ReferencePool(tmp_path, "tiny", workers=0)
    ref2, seconds2 = again.get("bessel")
    np.testing.assert_array_equal(ref2["y"], ref["y"])
    assert seconds2 == 0.0
    record = json.loads((tmp_path / "bessel.reference.json").read_text())
    (tmp_path / "bessel.reference.json").write_text(json.dumps({**record, "source_sha256": "0" * 64}))
    ref3, seconds3 = again.get("bessel")
    np.testing.assert_array_equal(ref3["y"], ref["y"])
    assert seconds3 > 0 and json.loads((tmp_path / "bessel.reference.json").read_text()) == record | {
        "seconds": pytest.approx(seconds3, abs=1e-3)}
    # a process whose worker is minutes into Coulombic's `gpu` reference exits at once after close()
    script = ("import sys, time\nfrom pathlib import Path\nfrom gpuvisit.measure import ReferencePool\n"
              "pool = ReferencePool(Path(sys.argv[1]), 'gpu', workers=1)\n"
              "pool.prefetch('coulombic')\ntime.sleep(3)\npool.close()\n")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "gpu")], check=True, timeout=60, cwd=REPO)
    assert time.perf_counter() - start < 30
    assert not (tmp_path / "gpu" / "coulombic.potential.npy").exists()


def test_merge_gives_each_space_the_runs_that_measured_it(tmp_path):
    """A continued visit (same work folder, so the same visit id) is a run of its own, and a space's provenance
    lists only the runs that measured it, in order: K-Means by runs A and B, Bessel by B and C."""
    clock = FakeClock()
    kernels = ["kmeans", "bessel"]
    prov_a = _lease(tmp_path / "a", tmp_path / "work1", clock, FakeMeasurer(clock), 2.0, kernels=kernels)
    prov_b = _lease(tmp_path / "b", tmp_path / "work1", clock, FakeMeasurer(clock), 5.0, kernels=kernels)
    prov_c = _lease(tmp_path / "c", tmp_path / "work2", clock, FakeMeasurer(clock), 10.0, kernels=kernels,
                    resume_paths=[tmp_path / "a", tmp_path / "b"])
    assert prov_a["visit"]["id"] == prov_b["visit"]["id"] != prov_c["visit"]["id"]
    assert resume_mod.measured_kernels(prov_a) == ["kmeans"]
    assert resume_mod.measured_kernels(prov_b) == ["bessel", "kmeans"]
    assert resume_mod.measured_kernels(prov_c) == ["bessel"]

    merged = merge.merge_packs([tmp_path / "a", tmp_path / "b", tmp_path / "c"], tmp_path / "merged",
                                   size_name="tiny", data_dir=tmp_path / "data")
    assert all(m["complete"] for m in merged.values())
    for kernel, runs in {"kmeans": [prov_a, prov_b], "bessel": [prov_b, prov_c]}.items():
        shards = json.loads((tmp_path / "merged" / f"{kernel}.provenance.json").read_text())["shards"]
        assert [s["visit"] for s in shards] == [p["visit"] for p in runs]

    # the plan's rate of a kernel pools its runs: configurations over measuring seconds
    rates = resume_mod.measured_rates([prov_a, prov_b, prov_c])
    for kernel, runs in {"kmeans": [prov_a, prov_b], "bessel": [prov_b, prov_c]}.items():
        recs = [p["kernels"][kernel] for p in runs]
        want = sum(r["measured_now"] for r in recs) / sum(r["throughput"]["measure_s"] for r in recs)
        assert rates[kernel][0] == pytest.approx(want)
        assert "2 lease runs" in rates[kernel][1]

    # docs/kernels.md's table of runs: one row each, in order, with what each measured
    table = plan_mod.runs_markdown([prov_c, prov_a, prov_b])
    assert len(table) == 2 + 3
    assert [row.split(" | ")[2] for row in table[2:]] == [p["visit"]["id"] for p in (prov_a, prov_b, prov_c)]
    n_b = prov_b["kernels"]["bessel"]["measured_now"]
    assert "kmeans" in table[3] and f"bessel {n_b:,} ({n_b:,} of 3,520)" in table[3]
    assert "bessel" in table[4] and "(complete)" in table[4] and "kmeans" not in table[4]


def test_measured_rates_leave_out_energy_runs_where_others_exist():
    def run(n, seconds, energy):
        return {"gpu": {"name": "G"}, "energy": {"recorded": energy},
                "kernels": {"kmeans": {"measured_now": n, "throughput": {"measure_s": seconds}}}}

    slow, fast = run(400, 400.0, True), run(3000, 100.0, False)
    assert resume_mod.measured_rates([slow, fast])["kmeans"][0] == pytest.approx(30.0)
    only_slow = resume_mod.measured_rates([slow])["kmeans"]
    assert only_slow[0] == pytest.approx(1.0) and "energy on" in only_slow[1]
    assert resume_mod.measured_rates([run(49, 1.0, False)]) == {}  # too few to be a rate
