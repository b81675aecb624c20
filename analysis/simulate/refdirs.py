"""NSGA-III reference directions, read from data shipped with the suite.

Kernel Tuner's nsga3 (and pymoo's) computes its reference directions with
`get_reference_directions("energy", n_obj, n_points)`: Riesz s-energy points, found by an
iterative optimisation whose matrix products go through the BLAS. OpenBLAS picks its kernels
by CPU, and they round differently: on one AMD EPYC machine the (3, 20) directions differ in the
last bits between OpenBLAS's Haswell/Zen kernels and its Nehalem/Sandybridge/Prescott ones
(`OPENBLAS_CORETYPE`), and the published runs came from an Intel Xeon. A last-bit change moves
a niche association and, from there, the whole run: the same seed then gives another NSGA-III
run on another machine.

So the engine never computes them during a run. `data/refdirs/riesz_energy.json` holds, for
every (objectives, points) the suite uses, the directions computed once (with pymoo 0.6.2, as
Kernel Tuner calls it) and written with exact float round-tripping; the file's sha256 is in
data/MANIFEST.csv and is checked on load. Every NSGA-III run, Kernel Tuner's and the
constraint-unaware variant, gets them as `ref_dirs_list` / `ref_dirs`. `python -m analysis.cli
refdirs --objectives M --points N` adds a pair (and refreshes the manifest entry).
With one objective pymoo returns the single direction [1.0] without any arithmetic; that case
needs no data.
"""

from __future__ import annotations

import functools
import json
import logging
import platform
from pathlib import Path

import numpy as np

from analysis import paths
from analysis.errors import InputError
from analysis.io import write_text
from analysis.manifest import check_file, update

logger = logging.getLogger(__name__)

REPO = paths.REPO
DATA_DIR = paths.DATA
REFDIRS_PREFIX = "refdirs"
REFDIRS_FILE = DATA_DIR / REFDIRS_PREFIX / "riesz_energy.json"
SOURCE = ("computed by `python -m analysis.cli refdirs` (pymoo 0.6.2 "
          "get_reference_directions('energy', n_obj, n_points), as Kernel Tuner 1.5.0's nsga3 calls it)")
LICENCE = "same as this repository (generated data)"
CITATION = ("J. Blank, K. Deb, Y. Dhebar, S. Bandaru, H. Seada: Generating well-spaced points on a unit "
            "simplex for evolutionary many-objective optimization, IEEE TEVC 25(1), 2021")


def _key(n_obj: int, n_points: int) -> str:
    return f"{n_obj}x{n_points}"


def compute(n_obj: int, n_points: int) -> np.ndarray:
    """What pymoo (and so Kernel Tuner) computes on this machine; depends on its BLAS kernels."""
    from pymoo.util.ref_dirs import get_reference_directions

    return np.asarray(get_reference_directions("energy", n_obj, n_points), dtype=float)


def _check_manifest(path: Path) -> None:
    """The shipped file must be the one data/MANIFEST.csv lists (sha256, size, provenance)."""
    problem = check_file(DATA_DIR, path)
    if problem:
        raise InputError(path, f"{problem}: the reference directions were changed; regenerate them with "
                               "`python -m analysis.cli refdirs`", field="sha256")


@functools.lru_cache(maxsize=4)
def _load(path: str) -> dict[str, np.ndarray]:
    p = Path(path)
    if not p.exists():
        raise InputError(p, "the NSGA-III reference directions are missing (data/refdirs is part of the "
                            "repository)")
    if p.resolve() == REFDIRS_FILE.resolve():
        _check_manifest(p)
    try:
        doc = json.loads(p.read_text())
        table = doc["directions"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputError(p, f"not a reference-direction file ({exc})", field="directions") from exc
    out = {}
    for key, rows in table.items():
        arr = np.array(rows, dtype=float)
        n_obj, n_points = (int(v) for v in key.split("x"))
        if arr.shape != (n_points, n_obj) or not np.all(np.isfinite(arr)):
            raise InputError(p, f"expected {n_points} finite rows of {n_obj} values", field=f"directions.{key}")
        arr.setflags(write=False)
        out[key] = arr
    return out


def available(path: str | Path = REFDIRS_FILE) -> list[tuple[int, int]]:
    """The (objectives, points) pairs the file holds."""
    pairs = (key.split("x") for key in _load(str(path)))  # "<objectives>x<points>", as _load checks
    return sorted((int(n_obj), int(n_points)) for n_obj, n_points in pairs)


def reference_directions(n_obj: int, n_points: int, path: str | Path = REFDIRS_FILE) -> np.ndarray:
    """A fresh copy of the shipped directions for `n_obj` objectives and `n_points` points."""
    if n_obj == 1:
        return compute(1, n_points)  # [[1.0]]: pymoo's special case, no arithmetic
    table = _load(str(path))
    key = _key(n_obj, n_points)
    if key not in table:
        pairs = ", ".join(f"{m} objectives x {n}" for m, n in available(path))
        raise InputError(path, f"no NSGA-III reference directions for {n_obj} objectives x {n_points} points "
                               f"(the population size); add them with `python -m analysis.cli refdirs "
                               f"--objectives {n_obj} --points {n_points}` (shipped: {pairs})",
                         field=f"directions.{key}")
    return np.array(table[key])


def add(pairs: list[tuple[int, int]], path: str | Path = REFDIRS_FILE, replace: bool = False) -> list[str]:
    """Compute and store the directions of `pairs` (kept as they are where present, unless `replace`);
    refresh the manifest entry when `path` is the shipped file. Returns the keys computed."""
    import pymoo

    from analysis.sweep.provenance import cpu_model  # lazy: imports pandas, which reading directions does not need

    p = Path(path)
    doc = json.loads(p.read_text()) if p.exists() else {"directions": {}}
    done = []
    for n_obj, n_points in pairs:
        key = _key(n_obj, n_points)
        if n_obj < 2 or (key in doc["directions"] and not replace):
            continue
        if n_points < n_obj:
            logger.warning("skipping %s: pymoo places no fewer energy directions than objectives", key)
            continue
        logger.info("computing %d energy reference directions for %d objectives", n_points, n_obj)
        doc["directions"][key] = compute(n_obj, n_points).tolist()
        done.append(key)
    doc["directions"] = dict(sorted(doc["directions"].items(),
                                    key=lambda kv: tuple(int(v) for v in kv[0].split("x"))))
    doc["generator"] = f"pymoo {pymoo.__version__} get_reference_directions('energy', n_obj, n_points)"
    doc.setdefault("computed_on", {})
    for key in done:
        doc["computed_on"][key] = f"{platform.machine()} {cpu_model()}"
    # json writes floats with repr, which round-trips every float64 exactly
    write_text(json.dumps(doc, indent=1) + "\n", p)
    _load.cache_clear()
    if p.resolve() == REFDIRS_FILE.resolve():
        update(DATA_DIR, REFDIRS_PREFIX, SOURCE, LICENCE, CITATION)
    return done

