"""Host-CPU sweep throughput: grouped compilation against Kernel Tuner compiling every configuration.

    python benchmarks/bench_sweep.py [--kernels kmeans mriq ...] [--iterations 7] [--baseline-rev REV]

For each kernel, one slice of its cpu space (every optimisation variant of four precision
combinations: the first array type double, float, half and bfloat16, every other precision
parameter at its reference value) is swept at the `cpu` size, one shard in one process, by

* `per-configuration`: Kernel Tuner's C backend compiles every configuration on its own
  (the route of every sweep before grouped compilation);
* `grouped`: one library per precision combination (analysis.sweep.variants);
* with `--baseline-rev REV`, also the sweep code (analysis/) of git revision REV, e.g. the
  commit before grouped compilation, exported and run on the same kernel sources and slice.

Each mode runs in a fresh Python process, timed around `sweep_shard` (the correctness gate
included, interpreter start-up not), into a fresh cache. The script prints configurations per
second per mode, each mode's speed-up over the first (the baseline, or per-configuration), and
checks that both caches hold the same configurations with identical error metrics. Run it with
nothing else heavy running; a shard is one process, so configurations per second of one shard is
per core (the sweep runs one shard per core; configurations with threads=2 briefly use the second
core).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DEFAULT_KERNELS = ["kmeans", "convolution2d", "mriq"]

CHILD = """
import json, sys, time, logging
from analysis.sweep.shard import sweep_shard
kernel, cache, iterations, tune_params, mode = sys.argv[1:6]
kw = {} if mode == "baseline" else {"compile_mode": mode}
start = time.perf_counter()
sweep_shard(kernel, "cpu", "cpu", cache, iterations=int(iterations), tune_params=json.loads(tune_params), **kw)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def slice_of(kernel: str) -> dict[str, list]:
    """Every optimisation value; the first array type in all four types; the other precision parameters at reference."""
    from analysis.sweep import harness

    spec = harness.load_spec(kernel)
    first = spec.argument_precision_params()[0]
    out = {p: list(v) for p, v in spec.target("cpu").own_params.items()}
    for p, values in spec.precision.items():
        out[p] = list(values) if p == first else [spec.reference_value(p)]
    return out


def _sweep(kernel: str, mode: str, tune_params: dict, iterations: int, folder: Path, root: Path) -> dict:
    cache = folder / f"{kernel}-{mode}.json"
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, "-c", CHILD, kernel, str(cache), str(iterations), json.dumps(tune_params),
                           mode], cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{kernel} {mode} failed:\n{proc.stderr[-3000:]}")
    seconds = json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]
    return {"seconds": seconds, "cache": json.loads(cache.read_text())["cache"]}


def _export(rev: str, folder: Path) -> Path:
    dest = folder / f"rev-{rev}"
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "analysis"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    (dest / "workflow").symlink_to(REPO / "workflow")  # the same kernel sources and specs as the other modes
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", nargs="+", default=DEFAULT_KERNELS)
    ap.add_argument("--iterations", type=int, default=7)
    ap.add_argument("--baseline-rev", help="also time the sweep code of this git revision on the same slice")
    ap.add_argument("--out", help="also write the printed report to this file (e.g. benchmarks/reports/...)")
    a = ap.parse_args(argv)
    lines: list[str] = []

    def emit(text: str) -> None:  # the report goes to stdout and, with --out, to a file
        lines.append(text)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    from analysis.sweep.provenance import cpu_model

    emit(f"# bench_sweep.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    emit(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {cpu_model()}, {os.cpu_count()} cores; "
          f"iterations {a.iterations}; load average before: {os.getloadavg()[0]:.2f}")
    first = f"baseline ({a.baseline_rev})" if a.baseline_rev else "per-configuration"
    emit(f"| kernel | configurations | mode | seconds | configurations/s | speed-up over {first} |")
    emit("|---|---|---|---|---|---|")
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        folder = Path(tmp)
        baseline_root = _export(a.baseline_rev, folder) if a.baseline_rev else None
        for kernel in a.kernels:
            tp = slice_of(kernel)
            modes = [("per-configuration", REPO), ("grouped", REPO)]
            if baseline_root:
                modes.insert(0, ("baseline", baseline_root))
            res = {m: _sweep(kernel, m, tp, a.iterations, folder, root) for m, root in modes}
            n = len(res["grouped"]["cache"])
            base = res[modes[0][0]]["seconds"]
            for m, r in res.items():
                label = f"{m} ({a.baseline_rev})" if m == "baseline" else m
                emit(f"| {kernel} | {len(r['cache'])} | {label} | {r['seconds']:.1f} "
                     f"| {len(r['cache']) / r['seconds']:.2f} | {base / r['seconds']:.2f} |")
            g, p = res["grouped"]["cache"], res["per-configuration"]["cache"]
            same = list(g) == list(p) and all(g[k][f] == p[k][f] for k in g for f in ("mre", "nrmse", "nmae", "memory"))
            if not same or n == 0:
                emit(f"MISMATCH: {kernel}: the grouped and per-configuration caches differ")
                ok = False
    emit(f"# load average after: {os.getloadavg()[0]:.2f}")
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text("\n".join(lines) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
