"""Benchmark: the true-front filter of the space store against pymoo's non-dominated sorting.

Prints seconds per call and the ratio, both measured in this run on the same data:
random 72,000 x 5 objective vectors (the size named in the issue) and a real space.
Run: python benchmarks/bench_fronts.py
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
from pymoo.util.nds.non_dominated_sorting import find_non_dominated

from analysis.objectives import OBJECTIVES
from analysis.spaces.importers import import_space
from analysis.spaces.pareto import true_front
from analysis.spaces.space import Space

HUB = Path(__file__).resolve().parents[1] / "data" / "benchmark_hub"


def best_of(fn, repeat: int = 3) -> float:
    """Fastest of `repeat` wall-clock timings of fn()."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    for n, m, kind in [(72_000, 5, "uniform"), (72_000, 5, "correlated")]:
        x = rng.random((n, m))
        if kind == "correlated":  # few non-dominated points, as in measured spaces
            x = x[:, :1] + 0.1 * x
        objs = [OBJECTIVES[o] for o in ("time", "memory", "mre", "nrmse", "nmae")]
        table = pd.DataFrame({o.column: x[:, i] for i, o in enumerate(objs)})
        table.insert(0, "p", np.arange(n))
        table["status"] = "ok"
        space = Space("synthetic", "random", {"p": list(range(n))}, [], objs, table)
        names = [o.name for o in objs]
        ours = best_of(lambda space=space, names=names: true_front(space, "O5", names))
        base = best_of(lambda x=x: find_non_dominated(x), repeat=1)
        same = set(true_front(space, "O5", names).rows.tolist()) == set(find_non_dominated(x).tolist())
        print(f"{n}x{m} {kind:10s} true_front (moocore) {ours*1e3:7.1f} ms  baseline pymoo "
              f"find_non_dominated {base*1e3:7.1f} ms  ratio {base/ours:5.2f}x  same front: {same}")
    space = import_space(HUB / "cachefiles/dedispersion_milo/A100.json.gz", kernel="dedispersion", device="A100",
                         definition=HUB / "kernels/dedispersion_milo.json")
    t = best_of(lambda: true_front(space, "time", ["time"]))
    print(f"true_front on A100/dedispersion (11,130 rows, time): {t*1e3:.1f} ms")


if __name__ == "__main__":
    main()
