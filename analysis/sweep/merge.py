"""Merge the shard caches of one sweep into one Kernel Tuner cache, a definition and a provenance.

`merge` checks that the shards hold every valid configuration exactly once and writes one cache
(gzipped JSON where its name ends in .gz, Kernel Tuner's format, configurations in Kernel
Tuner's order), a definition file (tune_params + constraints, the importer's `definition`) and a
provenance JSON joining the shards' records (analysis.sweep.provenance).
"""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from analysis.errors import SweepError
from analysis.io import atomic_path, write_json, write_text
from analysis.sweep import cachefile, harness
from analysis.sweep.configs import config_key, resolve_tune_params

log = logging.getLogger(__name__)
# cache field -> study objective, for the importer's `objectives` mapping
OBJECTIVE_FIELDS = {"time": "time", "memory": "memory", "mre": "mre", "nrmse": "nrmse", "nmae": "nmae"}


def read_disjoint_caches(paths: Sequence[str | Path], names: Sequence[str]
                         ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(header of the first, every entry) of Kernel Tuner caches (open or closed) that hold disjoint sets of
    configurations with the tune_params_keys `names`; a SweepError names the file otherwise."""
    merged: dict[str, Any] = {}
    header: dict[str, Any] | None = None
    for path in paths:
        try:
            doc = cachefile.read(path)
        except (OSError, json.JSONDecodeError) as exc:
            raise SweepError(path, f"not a readable Kernel Tuner cache ({exc})") from None
        if doc.get("tune_params_keys") != list(names):
            raise SweepError(path, f"parameters {doc.get('tune_params_keys')} differ from {list(names)}",
                             field="tune_params_keys")
        for key, entry in doc["cache"].items():
            if key in merged:
                raise SweepError(path, f"configuration '{key}' is also in another of the files", field=f"cache.{key}")
            merged[key] = entry
        header = header or doc
    return header, merged


def write_definition(kernel: str, target: str, size_name: str, path: str | Path,
                     tune_params: Mapping[str, list] | None = None) -> None:
    """A sweep's definition file (the importer's `definition`): its tune_params and the spec's constraints."""
    spec = harness.load_spec(kernel)
    params = resolve_tune_params(spec, target, tune_params)
    write_text(yaml.safe_dump({"kernel": kernel, "target": target, "size": size_name, "tune_params": params,
                               "constraints": spec.constraints(target)}, sort_keys=False), path)


def merge(kernel: str, target: str, size_name: str, shard_caches: Sequence[str | Path], out_cache: str | Path,
          definition: str | Path, provenance: str | Path, *, tune_params: Mapping[str, list] | None = None,
          shard_provenance: Sequence[str | Path] = (), notes: Sequence[str] = ()) -> dict[str, Any]:
    """Merge shard caches into one cache (every valid configuration exactly once), definition and provenance
    (with `notes`, when given, on what the merge changed)."""
    spec = harness.load_spec(kernel)
    params = resolve_tune_params(spec, target, tune_params)
    names = list(params)
    expected = [config_key(c, names) for c in spec.valid_configs(target, params)]
    header, merged = read_disjoint_caches(shard_caches, names)
    missing = [k for k in expected if k not in merged]
    extra = [k for k in merged if k not in set(expected)]
    if missing or extra or header is None:
        raise SweepError(shard_caches[0] if shard_caches else out_cache,
                         f"shards hold {len(merged)} configurations: {len(missing)} missing (e.g. "
                         f"{missing[:1]}), {len(extra)} not valid (e.g. {extra[:1]})", field="cache")
    doc: dict[str, Any] = {k: header[k] for k in ("device_name", "kernel_name", "problem_size", "tune_params_keys",
                                                  "objective") if k in header}
    doc["tune_params"] = params
    doc["cache"] = {k: merged[k] for k in expected}
    with atomic_path(out_cache) as tmp:
        data = json.dumps(doc, indent=0).encode()
        tmp.write_bytes(gzip.compress(data, mtime=0) if str(out_cache).endswith(".gz") else data)
    write_definition(kernel, target, size_name, definition, params)
    shards = [json.loads(Path(p).read_text()) for p in shard_provenance]
    ok = sum(1 for e in doc["cache"].values() if not isinstance(e.get("time"), str))
    prov = {"kernel": kernel, "target": target, "size": size_name, "configurations": len(expected),
            "failed": len(expected) - ok, "objective_fields": OBJECTIVE_FIELDS,
            "evaluation_time_fields": ["compile_time", "verification_time", "benchmark_time"],
            "shards": shards}
    for k in ("iterations", "date", "host", "software", "compiler", "gpu"):
        if shards and k in shards[0]:
            prov[k] = shards[0][k]
    if len({json.dumps(s.get("host", {}).get("cpu_model")) for s in shards}) > 1:
        log.warning("shards were measured on different CPU models: %s", [s["host"]["cpu_model"] for s in shards])
    if notes:
        prov["notes"] = list(notes)
    write_json(prov, provenance)
    return {"configurations": len(expected), "failed": len(expected) - ok}
