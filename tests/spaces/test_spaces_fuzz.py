"""Property: a corrupted real cache never imports silently with altered data (issue #21).

A slice of a real benchmark_hub cache (measured and failed entries) is corrupted at random:
wrong types, NaN/inf/negative values, deleted fields, error markers, flipped parameter
values, entries of the wrong type, duplicated keys, truncated JSON, broken top-level
fields. The importer must either raise the suite's error naming the file, or succeed with
every untouched configuration exactly as in the clean import and each touched one either
unchanged, or removed / failed / non-finite: excluded from the objective sets and counted.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from analysis.errors import InputError
from analysis.spaces.importers import import_space
from analysis.spaces.jsonfile import read_json
from helpers import HUB

SOURCE = HUB / "cachefiles" / "convolution_milo" / "A100.json.gz"
DEFINITION = HUB / "kernels" / "convolution_milo.json"
N_OK, N_FAILED = 9, 3
BAD_VALUES = [math.nan, math.inf, -math.inf, -1.0, -1e6, -1, "x", "1.0", None, True, False, [], {}, [1.0],
              "RuntimeFailedConfig", "CompilationFailedConfig", "ErrorConfig", "InvalidConfig"]
TOP_LEVEL = ["tune_params_keys", "tune_params", "cache"]


@lru_cache(maxsize=1)
def clean_doc_text() -> str:
    """The slice: the first measured and the first failed entries of the real cache, in file order."""
    doc = read_json(SOURCE)
    entries = doc["cache"]
    ok = [k for k, e in entries.items() if not isinstance(e["time"], str)][:N_OK]
    failed = [k for k, e in entries.items() if isinstance(e["time"], str)][:N_FAILED]
    keep = set(ok + failed)
    doc["cache"] = {k: e for k, e in entries.items() if k in keep}
    return json.dumps(doc)


@lru_cache(maxsize=1)
def clean_space() -> tuple:
    """(table indexed by configuration, counts) of the clean slice, imported once."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "clean.json"
        path.write_text(clean_doc_text())
        space = import_space(path, kernel="convolution", device="A100", definition=DEFINITION)
    return _indexed(space), space.meta["counts"]


def _indexed(space) -> pd.DataFrame:
    return space.table.set_index(list(space.parameters))


@st.composite
def corruptions(draw, doc: dict) -> list[tuple]:
    """One or two corruptions of the document (applied in order)."""
    keys = list(doc["cache"])
    params = doc["tune_params_keys"]
    out = []
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["set", "set", "set", "delete", "flip", "entry_type", "duplicate",
                                     "truncate", "top_level", "rename"]))
        key = draw(st.sampled_from(keys))
        fields = sorted(doc["cache"][key])
        if kind == "set":  # mostly the fields the importer reads
            group = draw(st.sampled_from(["objective", "evaluation time", "parameter", "other"]))
            if group == "objective":
                field = "time"
            elif group == "evaluation time":
                field = draw(st.sampled_from(["compile_time", "verification_time", "benchmark_time"]))
            elif group == "parameter":
                field = draw(st.sampled_from(params))
            else:
                field = draw(st.sampled_from([f for f in fields if f not in params]))
            out.append(("set", key, field, draw(st.sampled_from(BAD_VALUES))))
        elif kind == "delete":
            out.append(("delete", key, draw(st.sampled_from(fields))))
        elif kind == "flip":
            p = draw(st.sampled_from(params))
            current = doc["cache"][key][p]
            others = [v for v in doc["tune_params"][p] if v != current] + [str(current), float(current)
                                                                            if isinstance(current, int) else 0]
            out.append(("set", key, p, draw(st.sampled_from(others))))
        elif kind == "entry_type":
            out.append(("entry_type", key, draw(st.sampled_from([[], "x", 1, None]))))
        elif kind == "duplicate":
            out.append(("duplicate", key))
        elif kind == "truncate":
            out.append(("truncate", draw(st.floats(0.0, 0.999))))
        elif kind == "top_level":
            out.append(("top_level", draw(st.sampled_from(TOP_LEVEL)), draw(st.sampled_from([None, [], {}, "x", 1,
                                                                                              "<delete>"]))))
        else:
            out.append(("rename", key, draw(st.sampled_from(["", "x", key + ",1", key.replace(",", ";")]))))
    return out


def apply(doc: dict, ops: list[tuple]) -> tuple[str, set[str]]:
    """The corrupted file text and the cache keys whose entries were touched."""
    touched: set[str] = set()
    text_ops = []
    for op in ops:
        kind = op[0]
        cache = doc.get("cache") if isinstance(doc, dict) else None
        if kind in ("set", "delete", "entry_type", "rename") and not (isinstance(cache, dict) and op[1] in cache
                                                                       and isinstance(cache[op[1]], dict)):
            continue  # the entry is already gone or broken by an earlier corruption
        if kind == "set":
            cache[op[1]][op[2]] = op[3]
            touched.add(op[1])
        elif kind == "delete":
            cache[op[1]].pop(op[2], None)
            touched.add(op[1])
        elif kind == "entry_type":
            cache[op[1]] = op[2]
            touched.add(op[1])
        elif kind == "rename":
            cache[op[2]] = cache.pop(op[1])
            touched.update({op[1], op[2]})
        elif kind == "top_level":
            if op[2] == "<delete>":
                doc.pop(op[1], None)
            else:
                doc[op[1]] = op[2]
        else:
            text_ops.append(op)
    text = json.dumps(doc)  # NaN and infinities written as JSON's NaN / Infinity extension, as Python does
    for op in text_ops:
        if op[0] == "duplicate" and isinstance(doc.get("cache"), dict) and op[1] in doc["cache"]:
            dup = json.dumps({op[1]: doc["cache"][op[1]]})[1:-1]
            text = text.replace('"cache": {', '"cache": {' + dup + ", ", 1)
        elif op[0] == "truncate":
            text = text[: int(op[1] * len(text))]
    return text, touched


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), gz=st.booleans())
def test_corrupted_cache_is_an_error_naming_the_file_or_an_exclusion_that_is_counted(tmp_path_factory, data, gz):
    doc = json.loads(clean_doc_text())
    ops = data.draw(corruptions(doc), label="corruptions")
    text, touched = apply(doc, ops)
    path = tmp_path_factory.mktemp("fuzz") / ("c.json.gz" if gz else "c.json")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    try:
        space = import_space(path, kernel="convolution", device="A100", definition=DEFINITION)
    except InputError as exc:
        # the suite's error, naming the corrupted file (the definition is untouched)
        assert exc.path == str(path), (exc.path, str(exc))
        assert str(exc).startswith(str(path)), str(exc)
        event("error: " + re.sub(r"'[^']*'|\[.*|\(.*|[-0-9.]+e?[0-9]*|nan|inf", "_", exc.detail)[:45])
        return
    base, base_counts = clean_space()
    got = _indexed(space)
    assert not (set(got.index) - set(base.index)), "a configuration appeared that the clean file lacks"
    objective_cols = [o.column for o in space.objectives]
    assert objective_cols == ["time_ms"]
    names = list(space.parameters)
    for config, row in base.iterrows():
        key = ",".join(str(v) for v in (config if isinstance(config, tuple) else (config,)))
        if config not in got.index:
            assert key in touched, f"untouched {key} vanished"
            continue
        new = got.loc[config]
        if key not in touched or new.equals(row):
            assert new.equals(row), f"untouched {key} changed"
            continue
        event(f"success, touched entry now {'failed' if new['status'] != 'ok' else 'non-finite'}")
        # a touched configuration that changed: excluded from the objective set ...
        assert new["status"] != "ok" or not np.isfinite(new["time_ms"]), (key, ops)
        # ... and nothing else about it altered
        for col in ("compile_time_ms", "verification_time_ms", "benchmark_time_ms"):
            assert new[col] == row[col], (key, col, ops)
    # ... and counted: removals in the metadata, failures and non-finite values from the table
    event("success" + (" (some entries excluded)" if touched and not got.equals(base) else ""))
    counts = space.meta["counts"]
    vanished = len(set(base.index) - set(got.index))
    assert sum(counts["removed"].values()) - sum(base_counts["removed"].values()) == vanished
    measured = space.table["status"] == "ok"
    assert counts["nonfinite"]["time"] == int((measured & ~np.isfinite(space.table["time_ms"])).sum())
    failed = space.table.loc[~measured, "status"].value_counts().to_dict()
    assert counts["failed"] == {str(k): int(v) for k, v in failed.items()}
    assert counts["rows"] == len(space.table) and names == list(base.index.names)
