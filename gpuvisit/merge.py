"""Merging every visit's packs of one GPU into data/sweeps/: a complete space into the merged cache,
definition and provenance of analysis.sweep.merge.merge, a partial one into `<kernel>.partial.*`."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from analysis import manifest
from analysis.io import write_json
from analysis.sweep import harness
from analysis.sweep.merge import merge, write_definition
from gpuvisit.cache import SIZE, LeaseError, cache_names, closed_cache, config_key
from gpuvisit.pack import gzipped
from gpuvisit.resume import measured_kernels, resume

# data/MANIFEST.csv's source of the published packs and merged files, worded as it was when they were measured
# (the module and command are now gpuvisit.lease and `python -m gpuvisit gpu-lease`), so that merging the packs
# again leaves the manifest unchanged
MANIFEST_SOURCE = ("measured by this suite (analysis.sweep.gpu_lease, `python -m analysis.cli gpu-lease` / "
                   "`gpu-lease-merge`)")
PARTIAL_OBJECTIVES = ("energy",)  # optional objectives a visit may record and another not (--energy-window)


def _without_partial_objectives(entries: Mapping[str, dict]) -> tuple[dict[str, dict], list[str]]:
    """Entries without an optional objective field that only some of them hold, and a note saying so.

    A space's objective must be measured for every configuration (analysis.spaces.importers refuses an
    entry that lacks it), so a merged cache keeps `energy` only where every visit recorded it; Kernel
    Tuner's own `nvml_energy` stays in the entries that have it, and the packs keep everything.
    """
    notes = []
    out = dict(entries)
    for name in PARTIAL_OBJECTIVES:
        have = sum(1 for e in entries.values() if name in e)
        if 0 < have < len(entries):
            out = {k: {f: v for f, v in e.items() if f != name} for k, e in out.items()}
            notes.append(f"'{name}' was recorded for {have} of {len(entries)} configurations only (not every visit "
                         f"measured it); it is left out of this cache, so the space has no '{name}' objective "
                         "(Kernel Tuner's nvml_energy stays in the entries that have it; the packs hold everything)")
    return out, notes


def merge_packs(paths: Iterable[str | Path], out: str | Path, *, gpu: str | None = None,
                size_name: str = SIZE, data_dir: str | Path = "data") -> dict[str, Any]:
    """Join all visits' packs (of one GPU): per kernel a merged cache, definition and provenance in `out`.

    A complete space goes through analysis.sweep.merge.merge (`<kernel>.json.gz`, `.yaml`,
    `.provenance.json`); a partial one is written as `<kernel>.partial.json.gz`, its definition
    `<kernel>.partial.yaml` (so that it imports as a space listed with its coverage) and a provenance
    saying how many of its configurations it holds.
    """
    res = resume(paths, size_name=size_name, gpu=gpu)
    gpus = {(p.get("gpu") or {}).get("name") for p in res.provenance}
    if len(gpus) > 1:
        raise LeaseError(None, f"packs of several GPUs {sorted(map(str, gpus))}: name one with --gpu", field="--gpu")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[str, list[Path]] = {}  # kernel -> records of the runs that measured it, by start (stable)
        for i, prov in enumerate(sorted(res.provenance, key=lambda p: p["visit"]["started"])):
            rec = {k: prov.get(k) for k in ("size", "iterations", "gpu", "energy", "host", "software", "compile")}
            rec["date"] = prov["visit"]["started"]
            rec["visit"] = prov["visit"]
            path = Path(tmp) / f"run{i}.json"
            path.write_text(json.dumps(rec))
            for kernel in measured_kernels(prov):
                runs.setdefault(kernel, []).append(path)
        for kernel, entries in sorted(res.entries.items()):
            visits = runs.get(kernel, [])
            spec = harness.load_spec(kernel)
            header = res.headers[kernel]
            names = cache_names(spec)
            valid = [config_key(c, names) for c in spec.valid_configs("cuda")]
            if set(valid) <= set(entries):
                entries, notes = _without_partial_objectives(entries)
                shard = Path(tmp) / f"{kernel}.json"
                shard.write_text(json.dumps(closed_cache(header, entries)))
                merge(kernel, "cuda", size_name, [shard], out / f"{kernel}.json.gz", out / f"{kernel}.yaml",
                          out / f"{kernel}.provenance.json", shard_provenance=visits, notes=notes)
                summary[kernel] = {"complete": True, "configurations": len(valid)}
            else:
                ordered = {k: entries[k] for k in valid if k in entries}
                (out / f"{kernel}.partial.json.gz").write_bytes(gzipped(closed_cache(header, ordered)))
                write_definition(kernel, "cuda", size_name, out / f"{kernel}.partial.yaml")
                write_json({"kernel": kernel, "target": "cuda", "size": size_name, "partial": True,
                            "configurations": len(valid), "measured": len(ordered),
                            "note": "partial sweep: a space of these configurations is not the kernel's space",
                            "visits": [json.loads(v.read_text()) for v in visits]},
                           out / f"{kernel}.partial.provenance.json")
                summary[kernel] = {"complete": False, "configurations": len(valid), "measured": len(ordered)}

    # published under data/: refresh the manifest for the packs and the merged files (compile/ has its own)
    manifest.record_measured(data_dir, out, MANIFEST_SOURCE, keep=("compile",))
    return summary
