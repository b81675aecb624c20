"""Re-measure published per-configuration compile times alone on a quiet machine, and check the imputation.

The published compile times (data/sweeps/cpu/<device>/compile/) were measured by two processes
side by side, while other work ran on the machine at times. This script measures the first
`--per-kernel` configurations of every kernel's measurement order again, in one process, with
nothing else running (check the load average it prints), and compares:

- remeasured / published compile time of the same configurations (load bias of the published
  measurements; 1.0 means none), and
- remeasured / imputed compile time of configurations the publication did NOT measure (the
  imputation checked against an outside measurement), when `--unmeasured` > 0.

Prints one line per kernel and the overall medians; `--report` appends them as Markdown.

    python benchmarks/bench_compile_cost.py --per-kernel 10 --unmeasured 10 --report benchmarks/reports/compile_cost.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from analysis.spaces.compile_cost import compile_costs  # noqa: E402
from analysis.sweep import cachefile, harness  # noqa: E402
from analysis.sweep import compile_cost as measuring  # noqa: E402
from analysis.sweep.configs import config_key  # noqa: E402
from analysis.sweep.provenance import cpu_model  # noqa: E402
from analysis.sweep.shard import measure_configs  # noqa: E402


def published(data: Path, kernel: str) -> dict:
    return json.load(gzip.open(data / "compile" / f"{kernel}.json.gz"))["cache"]


def remeasure(kernel: str, configs: list[dict], work: Path) -> dict:
    spec = harness.load_spec(kernel)
    params = spec.tune_params(measuring.TARGET)
    cache = work / f"{kernel}.json"
    measure_configs(spec, measuring.TARGET, measuring.SIZE, cache, params, configs, set(),
                    compile_mode="per-configuration")
    return cachefile.read(cache)["cache"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(REPO / "data/sweeps/cpu/amd-epyc-vm"))
    ap.add_argument("--kernels", nargs="*", default=[])
    ap.add_argument("--per-kernel", type=int, default=10, help="published configurations to measure again")
    ap.add_argument("--unmeasured", type=int, default=10, help="configurations the publication imputes, to measure")
    ap.add_argument("--report", default="")
    a = ap.parse_args()
    data = Path(a.data)
    kernels = a.kernels or sorted(p.name.split(".")[0] for p in (data / "compile").glob("*.json.gz"))
    load_before = os.getloadavg()
    lines, same_all, imputed_all = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in kernels:
            spec = harness.load_spec(kernel)
            names = list(spec.tune_params(measuring.TARGET))
            order = measuring.measurement_order(spec)
            pub = published(data, kernel)
            again = [c for c in order if config_key(c, names) in pub][: a.per_kernel]
            fresh = [c for c in order if config_key(c, names) not in pub][: a.unmeasured]
            got = remeasure(kernel, again + fresh, Path(tmp))
            same = [got[config_key(c, names)]["compile_time"] / pub[config_key(c, names)]["compile_time"]
                    for c in again]
            doc = json.load(gzip.open(data / f"{kernel}.json.gz"))
            configs = {k: {p: e[p] for p in names} for k, e in doc["cache"].items()}
            costs = compile_costs(configs, doc["tune_params"], [data / "compile" / f"{kernel}.json.gz"])
            imp = [got[config_key(c, names)]["compile_time"] / costs.ms[config_key(c, names)] for c in fresh]
            same_all += same
            imputed_all += imp
            line = (f"| {kernel} | {len(same)} | {np.median(same):.3f} | {len(imp)} | "
                    f"{np.median(imp) if imp else float('nan'):.3f} |")
            print(line, flush=True)
            lines.append(line)
    load_after = os.getloadavg()
    total = (f"| all | {len(same_all)} | {np.median(same_all):.3f} | {len(imputed_all)} | "
             f"{np.median(imputed_all) if imputed_all else float('nan'):.3f} |")
    print(total)
    head = ("| kernel | published, measured again | median again / published | imputed, measured | "
            "median measured / imputed |\n| --- | --- | --- | --- | --- |")
    text = (f"\n## {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {cpu_model()} ({os.cpu_count()} CPUs)\n\n"
            f"One process; load average before {' '.join(f'{x:.2f}' for x in load_before)}, after "
            f"{' '.join(f'{x:.2f}' for x in load_after)}.\n\n{head}\n" + "\n".join([*lines, total]) + "\n")
    if a.report:
        with open(a.report, "a") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
