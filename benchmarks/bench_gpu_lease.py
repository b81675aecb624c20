"""Throughput of the GPU lease per stage: compile (here or anywhere with nvcc), measure and metrics (on a GPU).

    python benchmarks/bench_gpu_lease.py [--kernels ...] [--chunk 16] [--write-report]
    python benchmarks/bench_gpu_lease.py --gpu [--max-configs 300] [--deadline-min 8]   # where a GPU is lent
    python benchmarks/bench_gpu_lease.py --metrics-only [--metrics-kernel bessel] [--json F]   # after a visit's lease
    python benchmarks/bench_gpu_lease.py --packs data/sweeps/cuda/nvidia-h200/packs   # what the visits recorded

Compile stage (needs nvcc only): for each kernel, `--groups` precision combinations of its CUDA
space drawn at random (seeded), and `--chunk` of each one's optimisation variants drawn at random,
are compiled both as one module per combination (gpuvisit.cuda_modules, nvcc -cubin for
`--arch`) and one by one from Kernel Tuner's kernel strings, as Kernel Tuner's CUDA backends
compile (one nvcc each). `--jobs` processes work side by side, one per core, each timing its own
nvcc calls, so the rates printed are configurations per nvcc-second of one core, grouped and alone,
with the slowest single configuration (compile times have a long tail: a 16-bit Convolution2D
variant with 4x4 tiles read from global memory takes about 24 s where most take 0.4 s).

Measure and metrics stages (need CuPy and a CUDA device; skipped otherwise, and the script says
so): a lease (gpuvisit.lease.lease) over the first `--max-configs` pending configurations
of each kernel at the `gpu` size, compile-ahead pool and all, then per kernel its measure rate
(configurations per second of tune_kernel wall time, Kernel Tuner's benchmarking and the device
metrics included) and the device metrics' milliseconds per configuration; and, for one output,
the device metrics against copying the output to the host and computing them there (Kernel
Tuner's default path).

`--write-report` writes the compile stage's figures to benchmarks/reports/bench_gpu_lease.json,
from which `python -m gpuvisit gpu-plan-doc` renders the plan in docs/kernels.md. Run it with
nothing else heavy on the machine; the load average before and after is printed and recorded.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

REPORT = REPO / "benchmarks" / "reports" / "bench_gpu_lease.json"


def sample_groups(kernel: str, groups: int, chunk: int, seed: int = 7) -> list[list[dict]]:
    """`groups` precision combinations drawn at random (seeded), each with `chunk` of its variants drawn at random."""
    import random

    from analysis.sweep import harness
    from gpuvisit import cuda_modules as cm

    spec = harness.load_spec(kernel)
    by_key: dict[tuple, list[dict]] = {}
    for c in spec.valid_configs("cuda"):
        by_key.setdefault(cm.precision_key(spec, c), []).append(c)
    rng = random.Random(f"{seed}-{kernel}")
    keys = rng.sample(sorted(by_key, key=str), min(groups, len(by_key)))
    return [rng.sample(by_key[k], min(chunk, len(by_key[k]))) for k in keys]


def _alone_job(kernel: str, text: str, out: str, arch: str) -> float:
    from analysis.sweep import harness
    from gpuvisit import cuda_modules as cm

    start = time.perf_counter()
    cm.compile_alone(harness.load_spec(kernel), text, Path(out), arch)
    return time.perf_counter() - start


def modules_in_space(kernel: str, chunk: int) -> int:
    from analysis.sweep import harness
    from gpuvisit import cuda_modules as cm

    spec = harness.load_spec(kernel)
    counts: dict[tuple, int] = {}
    for c in spec.valid_configs("cuda"):
        k = cm.precision_key(spec, c)
        counts[k] = counts.get(k, 0) + 1
    return sum(math.ceil(n / chunk) for n in counts.values())


def compile_stage(kernel: str, *, groups: int, chunk: int, arch: str, jobs: int) -> dict:
    """nvcc seconds of the sampled configurations, grouped into modules and each alone (process seconds:
    `jobs` processes side by side, one per core, each timing its own nvcc calls)."""
    from concurrent.futures import ProcessPoolExecutor

    from analysis.sweep import harness
    from gpuvisit import cuda_modules as cm

    spec = harness.load_spec(kernel)
    strings = cm.KernelStrings(spec, "gpu")
    folder = Path(tempfile.mkdtemp(prefix=f"bench-gpu-lease-{kernel}-"))
    samples = sample_groups(kernel, groups, chunk)
    configs = [c for g in samples for c in g]
    module_jobs = []
    for i, g in enumerate(samples):
        (ch,) = cm.make_chunks(spec, g, "gpu", chunk=len(g), strings=strings)
        module_jobs.append({"kernel": kernel, "index": i, "source": ch.source(spec), "out": str(folder / f"m{i}.cubin"),
                            "arch": arch, "nvcc": cm.nvcc_path()})
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        built = list(pool.map(cm.build_module, module_jobs))
        alone = list(pool.map(_alone_job, [kernel] * len(configs), [strings(c)[1] for c in configs],
                              [str(folder / f"a{i}.cubin") for i in range(len(configs))], [arch] * len(configs)))
    failed = [b["error"] for b in built if not b["ok"]]
    if failed:
        raise RuntimeError(f"{kernel}: module failed:\n{failed[0]}")
    grouped_s = sum(b["seconds"] for b in built)
    alone_s = sum(alone)
    return {"sampled_configurations": len(configs), "sampled_precision_combinations": len(samples),
            "grouped_nvcc_s": round(grouped_s, 3), "alone_nvcc_s": round(alone_s, 3),
            "alone_nvcc_s_max": round(max(alone), 3),
            "grouped_configurations_per_s_per_core": round(len(configs) / grouped_s, 3),
            "alone_configurations_per_s_per_core": round(len(configs) / alone_s, 3),
            "modules_in_space": modules_in_space(kernel, chunk),
            "configurations_in_space": len(spec.valid_configs("cuda"))}


def gpu_available() -> tuple[bool, str]:
    try:
        import cupy
    except Exception as exc:
        return False, f"CuPy is not importable ({type(exc).__name__})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return False, f"no CUDA device ({type(exc).__name__}: {exc})"
    return (n > 0, f"{n} CUDA device(s)") if n else (False, "no CUDA device")


def visits_table(folder: Path) -> str:
    """Per visit (pack) and kernel, the stage rates the lease recorded on the GPU machine."""
    from gpuvisit.pack import read_pack

    lines = [f"{'pack':<48}{'kernel':<15}{'measured':>9}{'measure cfg/s':>15}{'metrics ms/cfg':>16}"
             f"{'nvcc s/cfg':>12}{'to host':>9}  energy"]
    for pack in sorted(folder.rglob("*.tar")):
        prov, _ = read_pack(pack)
        energy = "on" if prov["energy"].get("recorded") else "off"
        for kernel, rec in prov["kernels"].items():
            t = rec.get("throughput")
            if not t:
                continue
            per_cfg = t["compile_nvcc_s"] / t["compiled_configurations"] if t.get("compiled_configurations") else None
            lines.append(f"{str(pack.relative_to(folder)):<48}{kernel:<15}{rec['measured_now']:>9}"
                         f"{t.get('measure_configurations_per_s') or float('nan'):>15.2f}"
                         f"{t.get('metrics_ms_per_check') or float('nan'):>16.2f}{per_cfg or float('nan'):>12.3f}"
                         f"{t.get('outputs_copied_to_host', 0):>9}  {energy}")
        lines.append(f"  GPU {prov['gpu']['name']}, host {prov['host']['cpu_model']} ({prov['host']['cpu_count']} "
                     f"cores, load {prov['host']['load_average'][0]} at the end), {prov['compile']['jobs']} nvcc "
                     f"workers, visit {prov['visit']['id']}: {prov['visit']['stop']}")
    return "\n".join(lines)


def gpu_name() -> str:
    import cupy

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def metrics_comparison(kernel: str = "blackscholes") -> dict:
    """Device metrics of one `gpu`-size output against copying it to the host and computing them there."""
    import cupy
    import numpy as np

    from analysis.sweep import device_metrics as dm
    from analysis.sweep import harness
    from analysis.sweep.metrics import error_metrics

    spec = harness.load_spec(kernel)
    out = next(a for a in spec.arguments if a.role == "output")
    ref = harness.reference_outputs(kernel, "gpu")[out.name].ravel()
    y = cupy.asarray(dm.storage(ref * (1 + 1e-4), "float"))
    dref = dm.DeviceReference(cupy, ref)
    timings = {}
    for name, fn in (("device", lambda: dref.metrics(y)),
                     ("host_copy", lambda: error_metrics(cupy.asnumpy(y).astype(np.float64), ref))):
        fn()
        cupy.cuda.runtime.deviceSynchronize()
        start = time.perf_counter()
        for _ in range(5):
            fn()
        cupy.cuda.runtime.deviceSynchronize()
        timings[name] = (time.perf_counter() - start) / 5 * 1000
    return {"kernel": kernel, "values": int(ref.size), "device_ms": round(timings["device"], 3),
            "host_copy_ms": round(timings["host_copy"], 3)}


def main(argv=None) -> int:
    from analysis.sweep.provenance import cpu_model
    from analysis.sweep.spec import list_kernels
    from gpuvisit import cuda_modules as cm
    from gpuvisit import lease as gpu_lease
    from gpuvisit.cache import ordered_kernels

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", nargs="*", default=None)
    ap.add_argument("--chunk", type=int, default=cm.DEFAULT_CHUNK)
    ap.add_argument("--groups", type=int, default=2, help="precision combinations drawn per kernel")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="nvcc processes side by side (one per core)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--write-report", action="store_true")
    ap.add_argument("--gpu", action="store_true", help="also the measure and metrics stages (needs a GPU)")
    ap.add_argument("--max-configs", type=int, default=300)
    ap.add_argument("--deadline-min", type=float, default=8.0)
    ap.add_argument("--out", default=None, help="--gpu: folder of the lease's packs (default: temporary)")
    ap.add_argument("--metrics-only", action="store_true",
                    help="only the metrics stage: device metrics against a host copy of one output (needs a GPU; "
                         "what a visit runs after its lease)")
    ap.add_argument("--metrics-kernel", default="blackscholes", help="--metrics-only: the kernel whose output is used")
    ap.add_argument("--json", default=None, help="--metrics-only: also write the result to this file")
    ap.add_argument("--packs", default=None, help="print the stage rates the visits' packs under this folder "
                    "recorded on their GPU (e.g. data/sweeps/cuda/nvidia-h200/packs) and stop")
    a = ap.parse_args(argv)
    if a.packs:
        print(visits_table(Path(a.packs)))
        return 0
    if a.metrics_only:
        ok, why = gpu_available()
        if not ok:
            print(f"metrics stage: skipped ({why})")
            return 0
        rec = {**metrics_comparison(a.metrics_kernel),
               "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), "gpu": gpu_name(),
               "cpu_model": cpu_model(), "load_average_before": [round(x, 2) for x in os.getloadavg()]}
        print("metrics of one output (ms per configuration: device metrics, copy to the host and metrics there):",
              json.dumps(rec))
        if a.json:
            Path(a.json).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
        return 0
    kernels = ordered_kernels(a.kernels or list_kernels())
    load_before = os.getloadavg()
    machine = {"cpu_model": cpu_model(), "cpu_count": os.cpu_count(), "load_average_before": [round(x, 2) for x in
                                                                                               load_before]}
    print(f"machine: {machine['cpu_model']}, {machine['cpu_count']} cores, load average {load_before[0]:.2f} "
          f"{load_before[1]:.2f} {load_before[2]:.2f}; {cm.nvcc_version()}")
    print(f"compile stage (nvcc -cubin -arch={a.arch}; configurations per nvcc-second of one process, {a.jobs} "
          f"side by side): {a.groups} random precision combinations x {a.chunk} random variants per kernel, as "
          f"modules of {a.chunk} (grouped) and one by one (alone)")
    print(f"{'kernel':<15}{'grouped cfg/s':>14}{'alone cfg/s':>12}{'speed-up':>9}{'slowest alone s':>16}"
          f"{'modules in space':>18}")
    report = {}
    for k in kernels:
        rec = compile_stage(k, groups=a.groups, chunk=a.chunk, arch=a.arch, jobs=a.jobs)
        report[k] = rec
        g, s = rec["grouped_configurations_per_s_per_core"], rec["alone_configurations_per_s_per_core"]
        print(f"{k:<15}{g:>14.2f}{s:>12.2f}{g / s:>9.1f}{rec['alone_nvcc_s_max']:>16.1f}"
              f"{rec['modules_in_space']:>18,}", flush=True)
    total = sum(r["configurations_in_space"] for r in report.values())
    hours = sum(r["configurations_in_space"] / r["grouped_configurations_per_s_per_core"] for r in report.values())
    alone_h = sum(r["configurations_in_space"] / r["alone_configurations_per_s_per_core"] for r in report.values())
    print(f"whole CUDA spaces ({total:,} configurations): {hours / 3600:.1f} core-hours of nvcc grouped, "
          f"{alone_h / 3600:.1f} alone")
    load_after = os.getloadavg()
    machine["load_average_after"] = [round(x, 2) for x in load_after]
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")

    ok, why = gpu_available()
    if not (a.gpu and ok):
        print(f"measure and metrics stages: skipped ({why if not ok else 'not asked for: --gpu'})")
    else:
        out = Path(a.out or tempfile.mkdtemp(prefix="bench-gpu-lease-out-"))
        prov = gpu_lease.lease(out, a.deadline_min, kernels=kernels, max_configs=a.max_configs,
                               work=Path(tempfile.mkdtemp(prefix="bench-gpu-lease-work-")))
        print(f"GPU: {prov['gpu'].get('name')}; energy: {prov['energy']}; stop: {prov['visit']['stop']}")
        print(f"{'kernel':<15}{'measured':>9}{'measure cfg/s':>15}{'metrics ms/cfg':>16}{'compile cfg/nvcc-s':>20}")
        for k, r in prov["kernels"].items():
            t = r.get("throughput") or {}
            print(f"{k:<15}{r['measured_now']:>9}{t.get('measure_configurations_per_s') or float('nan'):>15.2f}"
                  f"{t.get('metrics_ms_per_check') or float('nan'):>16.3f}"
                  f"{t.get('compile_configurations_per_nvcc_s') or float('nan'):>20.2f}")
        print("metrics of one output:", json.dumps(metrics_comparison()))
        print(f"packs: {prov['written']}")
    if a.write_report:
        doc = {"date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), "machine": machine,
               "nvcc": cm.nvcc_version(), "arch": a.arch, "chunk": a.chunk, "groups": a.groups, "jobs": a.jobs,
               "compile": report,
               "note": "compile stage only: configurations per nvcc-second of one process (jobs processes side "
                       "by side, one per core); measure and metrics stages need a GPU"}
        REPORT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(f"wrote {REPORT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
