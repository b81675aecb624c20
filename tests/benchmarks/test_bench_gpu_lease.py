"""benchmarks/bench_gpu_lease.py --packs: the stage rates the published visits recorded on their GPU."""

from __future__ import annotations

import importlib.util

from gpuvisit.pack import read_pack
from helpers import REPO

PACKS = REPO / "data" / "sweeps" / "cuda" / "nvidia-h200" / "packs"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_gpu_lease", REPO / "benchmarks" / "bench_gpu_lease.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_visits_table_prints_every_packs_recorded_rates():
    text = _bench().visits_table(PACKS)
    packs = sorted(PACKS.rglob("*.tar"))
    assert packs
    rows = 0
    for pack in packs:  # every kernel row of every pack
        prov, _ = read_pack(pack)
        for kernel, rec in prov["kernels"].items():
            t = rec.get("throughput")
            if not t:
                continue
            rows += 1
            line = next(ln for ln in text.splitlines()
                        if ln.startswith(str(pack.relative_to(PACKS))) and f" {kernel} " in ln)
            assert f"{t['measure_configurations_per_s'] or float('nan'):.2f}" in line
            assert f"{t['metrics_ms_per_check'] or float('nan'):.2f}" in line
            assert line.endswith("on" if prov["energy"]["recorded"] else "off")
    assert rows >= len(packs)
    assert "NVIDIA H200" in text
