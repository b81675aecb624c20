"""data/benchmark_hub_more: GEMM, convolution_bat, pnpoly and convolution_milo_old caches import as real spaces.

The full-file counts are checked on one file per kernel plus the incomplete GEMM (about 3 s); set
BENCHMARK_HUB_MORE_ALL=1 to check all 14 files (about 7 s more: each GEMM file takes over a second).
"""

from __future__ import annotations

import functools
import gzip
import itertools
import json
import math
import os

import numpy as np
import pytest
import yaml

from analysis import config as cfg
from analysis.errors import SpaceError
from analysis.spaces.definition import read_definition
from analysis.spaces.importers import import_space
from analysis.sweep import cachefile
from helpers import REPO

MORE = REPO / "data" / "benchmark_hub_more"
# source folder -> (kernel name in the study, definition)
KERNELS = {
    "gemm": ("gemm", "gemm.yaml"),
    "convolution": ("convolution_bat", "convolution_bat.yaml"),
    "pnpoly": ("pnpoly", "pnpoly.yaml"),
    "convolution_milo": ("convolution_milo_old", "convolution_milo_old.yaml"),
}
DEVICES = {"a4000": "A4000", "mi50": "MI50"}
# (folder, file stem) -> rows, failed, Cartesian, constrained (data/benchmark_hub_more/README.md)
FULL = {
    ("gemm", "RTX_2080_Ti"): (17956, {}, 82944, 17956),
    ("gemm", "RTX_3090"): (17956, {}, 82944, 17956),
    ("gemm", "RTX_Titan"): (17956, {}, 82944, 17956),
    ("gemm", "RTX_3060_laptop"): (10000, {}, 82944, 17956),  # incomplete sweep
    ("convolution", "RTX_2080_Ti"): (6768, {"compile": 1426, "runtime": 86}, 16896, 6768),
    ("convolution", "RTX_3060_laptop"): (6768, {"compile": 1426, "runtime": 122}, 16896, 6768),
    ("convolution", "RTX_3090"): (6768, {"compile": 1426, "runtime": 122}, 16896, 6768),
    ("convolution", "RTX_Titan"): (6768, {"compile": 1426, "runtime": 86}, 16896, 6768),
    ("pnpoly", "RTX_2080_Ti"): (4092, {"runtime": 358}, 4092, 4092),
    ("pnpoly", "RTX_3060_laptop"): (4092, {"runtime": 318}, 4092, 4092),
    ("pnpoly", "RTX_3090"): (4092, {"runtime": 318}, 4092, 4092),
    ("pnpoly", "RTX_Titan"): (4092, {"runtime": 342}, 4092, 4092),
    ("convolution_milo", "a4000"): (2442, {"compile": 104, "runtime": 72}, 5120, 2442),
    ("convolution_milo", "mi50"): (2442, {}, 5120, 2442),
}
# checked by default: one file per kernel, and the incomplete GEMM
DEFAULT = {("gemm", "RTX_2080_Ti"), ("gemm", "RTX_3060_laptop"), ("convolution", "RTX_3090"), ("pnpoly", "RTX_Titan"),
           ("convolution_milo", "a4000")}
ALL = os.environ.get("BENCHMARK_HUB_MORE_ALL") == "1"
STATUS = {"CompilationFailedConfig": "compile", "RuntimeFailedConfig": "runtime"}


def definition(folder):
    return MORE / "kernels" / KERNELS[folder][1]


@functools.cache
def full_space(folder, stem):
    """A full file imported once per test session (the largest takes about a second)."""
    return import_space(MORE / "cachefiles" / folder / f"{stem}.json.gz", kernel=KERNELS[folder][0],
                        device=DEVICES.get(stem, stem), definition=definition(folder), objectives={"time": "time"})


@functools.cache
def raw(folder, stem):
    return json.loads(gzip.decompress((MORE / "cachefiles" / folder / f"{stem}.json.gz").read_bytes()))


def slice_doc(doc, n=200, failed_per_marker=40, reverse=False):
    """The header of `doc` with its first `n` entries plus up to `failed_per_marker` entries per failure marker."""
    items = list(doc["cache"].items())
    keep = dict(items[:n])
    for marker in STATUS:
        keep.update(itertools.islice(((k, e) for k, e in items if e["time"] == marker), failed_per_marker))
    cache = dict(reversed(list(keep.items()))) if reverse else keep
    return {**{k: v for k, v in doc.items() if k != "cache"}, "cache": cache}


# --- slices of the real files: every entry shape these older caches hold -------------------------------------

@pytest.mark.parametrize("folder,stem", [("gemm", "RTX_3060_laptop"), ("convolution", "RTX_2080_Ti"),
                                         ("pnpoly", "RTX_Titan"), ("convolution_milo", "a4000")])
def test_slice_of_a_real_file_imports_with_its_counts(tmp_path, folder, stem):
    doc = slice_doc(raw(folder, stem))
    src = tmp_path / f"{stem}.json.gz"
    src.write_bytes(gzip.compress(json.dumps(doc).encode()))
    s = import_space(src, kernel=KERNELS[folder][0], device=stem, definition=definition(folder),
                     objectives={"time": "time"})
    c = s.meta["counts"]
    entries = doc["cache"].values()
    failed = {STATUS[e["time"]]: sum(1 for x in entries if x["time"] == e["time"])
              for e in entries if isinstance(e["time"], str)}
    assert c["rows"] == len(doc["cache"]) and c["failed"] == failed and c["removed"] == {}
    assert c["nonfinite"] == {"time": 0}
    assert c["cartesian"] == FULL[folder, stem][2] and c["constrained"] == FULL[folder, stem][3]
    assert c["missing"] == c["constrained"] - c["rows"] > 0
    # values as measured: time of a measured entry, Kernel Tuner's evaluation times of every entry
    names = list(doc["tune_params"])
    table = s.table.set_index(names)
    for _key, e in itertools.islice(doc["cache"].items(), 0, None, 37):
        row = table.loc[tuple(e[p] for p in names)]
        assert row["status"] == STATUS.get(e["time"], "ok")
        assert row["compile_time_ms"] == e["compile_time"] and row["benchmark_time_ms"] == e["benchmark_time"]
        assert row["verification_time_ms"] == e["verification_time"]
        if row["status"] == "ok":
            assert row["time_ms"] == e["time"]
        else:
            assert math.isnan(row["time_ms"])


def test_entries_out_of_sorted_order_count_no_nonfinite_time(tmp_path):
    """pnpoly/RTX_Titan's cache is not in sorted key order; its failures once shifted onto measured rows."""
    doc = slice_doc(raw("pnpoly", "RTX_Titan"), reverse=True)
    src = tmp_path / "c.json"
    src.write_text(json.dumps(doc))
    s = import_space(src, kernel="pnpoly", device="RTX_Titan", definition=definition("pnpoly"),
                     objectives={"time": "time"})
    ok = s.table["status"] == "ok"
    assert s.meta["counts"]["nonfinite"] == {"time": 0}
    assert np.isfinite(s.table.loc[ok, "time_ms"]).all() and s.table.loc[~ok, "time_ms"].isna().all()
    assert s.meta["counts"]["failed"] == {"runtime": int((~ok).sum())} and (~ok).sum() > 0


def open_cache_text(doc, n):
    """Kernel Tuner's own incremental form: the header up to `"cache": {`, then one `\\n"key": {...},` per entry."""
    header = json.dumps({**{k: v for k, v in doc.items() if k != "cache"}, "cache": {}}, indent=0)[:-3]
    assert header.endswith(cachefile.MARK)
    lines = [f"\n{json.dumps(k)}: {json.dumps(e)}," for k, e in itertools.islice(doc["cache"].items(), n)]
    return header + "".join(lines)


def test_unterminated_cache_is_refused_and_closed_by_the_sweep_tools(tmp_path):
    """The importer is strict: an unterminated (still open, or cut) cache is an error naming the file.
    analysis.sweep.cachefile closes one as Kernel Tuner would; the closed cache then imports."""
    doc = raw("convolution", "RTX_2080_Ti")
    text = open_cache_text(doc, 150)
    src = tmp_path / "open.json"
    src.write_text(text)
    with pytest.raises(SpaceError, match="truncated JSON") as exc:
        import_space(src, kernel="convolution_bat", device="d", definition=definition("convolution"))
    assert str(src) in str(exc.value)
    cut = tmp_path / "cut.json"
    cut.write_text(text[:-60])  # killed mid-entry
    assert cachefile.repair(cut) == 149
    for path, n in ((src, 150), (cut, 149)):
        closed = tmp_path / f"closed_{n}.json"
        closed.write_text(json.dumps(cachefile.read(path)))
        s = import_space(closed, kernel="convolution_bat", device="d", definition=definition("convolution"),
                         objectives={"time": "time"})
        assert s.meta["counts"]["rows"] == n and s.meta["counts"]["missing"] == 6768 - n


# --- the full files ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("folder,stem", sorted(FULL if ALL else DEFAULT))
def test_full_file_counts(folder, stem):
    rows, failed, cartesian, constrained = FULL[folder, stem]
    c = full_space(folder, stem).meta["counts"]
    assert (c["rows"], c["failed"], c["cartesian"], c["constrained"]) == (rows, failed, cartesian, constrained)
    assert c["removed"] == {} and c["nonfinite"] == {"time": 0}
    assert c["missing"] == (7956 if (folder, stem) == ("gemm", "RTX_3060_laptop") else 0)


def test_gemm_3060_laptop_is_not_exhaustive():
    """missing = the configurations satisfying gemm.py's restrictions (counted here by NumPy, not the suite's
    parser) minus the 10,000 the stopped sweep holds."""
    doc = raw("gemm", "RTX_3060_laptop")
    grids = np.meshgrid(*[np.asarray(v) for v in doc["tune_params"].values()], indexing="ij")
    columns = {p: g.ravel() for p, g in zip(doc["tune_params"], grids)}
    ok = np.ones(grids[0].size, dtype=bool)
    for expr in read_definition(definition("gemm")).constraints:
        ok &= np.asarray(eval(expr, {"__builtins__": {}}, columns))  # trusted: our own definition file
    c = full_space("gemm", "RTX_3060_laptop").meta["counts"]
    assert len(doc["cache"]) == c["rows"] == 10000
    assert c["missing"] == int(ok.sum()) - 10000 == 7956


def test_definitions_describe_what_the_caches_swept():
    """Value lists in the caches' own order (GEMM's STRM/STRN fixed at 0; convolution_milo_old without use_shmem)."""
    for (folder, stem) in sorted(FULL if ALL else DEFAULT):  # a space's parameters are its cache's tune_params
        assert read_definition(definition(folder)).parameters == full_space(folder, stem).parameters
    gemm = read_definition(definition("gemm")).parameters
    assert gemm["STRM"] == gemm["STRN"] == [0]
    assert "use_shmem" not in read_definition(definition("convolution_milo")).parameters


def test_config_snippet_lists_every_space_and_excludes_the_incomplete_one():
    more = yaml.safe_load((REPO / "config" / "benchmark_hub_more.yaml").read_text())["spaces"]
    main = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["spaces"]
    listed = {(s["source"], s["kernel"], s["device"]) for s in more}
    expected = {(f"data/benchmark_hub_more/cachefiles/{folder}/{stem}.json.gz", KERNELS[folder][0],
                 DEVICES.get(stem, stem)) for folder, stem in FULL}
    assert listed == expected and len(more) == 14
    assert all(s["objective_sets"] == ["time"] and s["definition"].endswith(KERNELS[s["source"].split("/")[3]][1])
               and s["group"] == "benchmark_hub_more" for s in more)
    # config.yaml, the full study, holds the snippet's entries as they are
    assert [s for s in main if s["source"].startswith("data/benchmark_hub_more/")] == more
    merged = cfg.validate({"spaces": main})  # a (device, kernel) listed twice would be an error
    cfg.check_files(merged, REPO)
    # the stopped GEMM sweep is imported and tabulated, but kept out of both studies, with its numbers
    reason = cfg.excluded_spaces(merged)
    excluded_here = {f"{s['device']}/{s['kernel']}" for s in more if "excluded" in s}
    assert excluded_here == {"RTX_3060_laptop/gemm"} and excluded_here <= set(reason)
    assert all(n in reason["RTX_3060_laptop/gemm"] for n in ("incomplete sweep", "10,000", "17,956", "7,956"))
