"""What earlier visits measured: their packs (or a work folder's Kernel Tuner caches) read back for the
current sources, size and GPU, and the measure rates their provenance recorded."""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.sweep import cachefile, harness
from analysis.sweep.spec import list_kernels
from gpuvisit.cache import SIZE, LeaseError, cache_names, source_hash
from gpuvisit.pack import read_pack

log = logging.getLogger(__name__)


@dataclass
class Resumed:
    """What earlier visits (or this visit before a restart) measured, per kernel."""

    entries: dict[str, dict[str, dict]] = field(default_factory=dict)  # kernel -> key -> cache entry
    headers: dict[str, dict] = field(default_factory=dict)  # kernel -> cache header (without entries)
    provenance: list[dict] = field(default_factory=list)  # one per pack set (visit)
    refused: list[str] = field(default_factory=list)

    def done(self, kernel: str) -> set[str]:
        return set(self.entries.get(kernel, {}))

    def add(self, kernel: str, doc: Mapping[str, Any], where: str) -> None:
        spec = harness.load_spec(kernel)
        if doc.get("tune_params_keys") != cache_names(spec):
            raise LeaseError(where, f"{kernel}: parameters {doc.get('tune_params_keys')} differ from the spec's "
                                    f"{cache_names(spec)}", field="tune_params_keys")
        have = self.entries.setdefault(kernel, {})
        for key, entry in doc["cache"].items():
            if key in have and have[key] != entry:
                raise LeaseError(where, f"{kernel}: configuration '{key}' was measured twice, with different results",
                                 field=f"cache.{key}")
            have[key] = entry
        self.headers.setdefault(kernel, {k: v for k, v in doc.items() if k != "cache"})


def _kernel_of_function(function: str) -> str | None:
    for k in list_kernels():
        if harness.load_spec(k).function == function:
            return k
    return None


def _pack_files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.tar"))
        elif p.exists():
            out.append(p)
        else:
            raise LeaseError(p, "does not exist", field="--resume")
    return out


def _add_pack(res: Resumed, f: Path, *, size_name: str, gpu: str | None, hashes: Mapping[str, str],
              seen_runs: set[str]) -> None:
    """One pack file's entries of the wanted kernels (`hashes`' keys) into `res`, and its run's provenance once."""
    prov, docs = read_pack(f)
    if prov.get("size") != size_name:
        raise LeaseError(f, f"was measured at size '{prov.get('size')}', this lease's is '{size_name}'")
    device = (prov.get("gpu") or {}).get("name")
    if gpu is not None and device != gpu:
        res.refused.append(f"{f.name}: GPU {device!r}, not {gpu!r}")
        return
    for kernel, kdocs in docs.items():
        if kernel not in hashes:
            continue
        old = (prov.get("kernels") or {}).get(kernel, {}).get("source_sha256")
        if old != hashes[kernel]:
            raise LeaseError(f, f"{kernel} was measured with other sources (sha256 {old}); the kernel's "
                                f"current sources hash to {hashes[kernel]}; its measurements cannot be "
                                "continued", field=f"kernels.{kernel}.source_sha256")
        for doc in kdocs:
            res.add(kernel, doc, str(f))
    run = run_key(prov)
    if run not in seen_runs:
        seen_runs.add(run)
        res.provenance.append(prov)
        missing = [n for n in (prov.get("pack") or {}).get("files", []) if not (f.parent / n).exists()]
        if missing:  # what they held is measured again
            log.warning("resume: visit %s's pack file(s) %s are not beside %s",
                        prov.get("visit", {}).get("id"), missing, f.name)


def _add_cache(res: Resumed, f: Path, *, gpu: str | None, wanted: set[str]) -> None:
    """A plain Kernel Tuner cache (.json, .json.gz, e.g. a work folder's shard) into `res` where its kernel is
    wanted."""
    raw = f.read_bytes()
    text = gzip.decompress(raw).decode() if f.name.endswith(".gz") else raw.decode()
    try:
        doc = cachefile.parse(text)
    except (json.JSONDecodeError, KeyError) as exc:
        raise LeaseError(f, f"not a readable Kernel Tuner cache ({exc})") from None
    kernel = _kernel_of_function(doc.get("kernel_name", ""))
    if kernel is None:
        raise LeaseError(f, f"kernel_name '{doc.get('kernel_name')}' is no kernel's function")
    if kernel in wanted:
        if gpu is not None and doc.get("device_name") != gpu:
            res.refused.append(f"{f.name}: GPU {doc.get('device_name')!r}, not {gpu!r}")
            return
        res.add(kernel, doc, str(f))


def resume(paths: Iterable[str | Path], *, size_name: str = SIZE, gpu: str | None = None,
           kernels: Iterable[str] | None = None) -> Resumed:
    """Everything the packs (or Kernel Tuner caches) at `paths` hold for the current sources, size and GPU.

    A pack of another size or of other kernel sources (source_hash) is an error; one of another GPU
    (when `gpu` is given) is left out with a note in `refused`.
    """
    res = Resumed()
    wanted = set(kernels or list_kernels())
    hashes = {k: source_hash(k) for k in wanted}
    seen_runs: set[str] = set()
    for f in _pack_files(paths):
        if f.suffix == ".tar":
            _add_pack(res, f, size_name=size_name, gpu=gpu, hashes=hashes, seen_runs=seen_runs)
        else:
            _add_cache(res, f, gpu=gpu, wanted=wanted)
    return res


def run_key(prov: Mapping[str, Any]) -> str:
    """A lease run is known by its whole visit record: a run that continues a visit's work folder keeps the
    visit's id but has its own start, length and stop, and its pack repeats the earlier run's entries."""
    return json.dumps(prov.get("visit") or {}, sort_keys=True)


def measured_kernels(prov: Mapping[str, Any]) -> list[str]:
    """The kernels a lease run measured at least one configuration of."""
    return sorted(k for k, rec in (prov.get("kernels") or {}).items() if rec.get("measured_now", 0) > 0)


def measured_rates(provenance: Sequence[Mapping[str, Any]]) -> dict[str, tuple[float, str]]:
    """Per kernel, the measure rate (configurations/s) the lease runs recorded, with where it came from.

    A kernel's runs are pooled: the configurations they measured over their measuring seconds. Runs with
    energy on (Kernel Tuner's NVML observer benchmarks each configuration for at least a second) are left
    out where the kernel has runs without it.
    """
    runs: dict[str, list[tuple[bool, int, float, str]]] = {}
    for prov in provenance:
        energy = bool((prov.get("energy") or {}).get("recorded"))
        for kernel in measured_kernels(prov):
            rec = prov["kernels"][kernel]
            seconds = (rec.get("throughput") or {}).get("measure_s")
            if isinstance(seconds, (int, float)) and seconds > 0:
                runs.setdefault(kernel, []).append((energy, rec["measured_now"], float(seconds),
                                                    str((prov.get("gpu") or {}).get("name"))))
    rates: dict[str, tuple[float, str]] = {}
    for kernel, every in runs.items():
        rs = [r for r in every if not r[0]] or every
        n, seconds = sum(r[1] for r in rs), sum(r[2] for r in rs)
        if n >= 50:
            gpus = ", ".join(sorted({r[3] for r in rs}))
            note = ("; energy on" if rs[0][0] else
                    f"; {len(every) - len(rs)} with energy on left out" if len(rs) < len(every) else "")
            rates[kernel] = (n / seconds, f"measured on {gpus} ({n:,} configurations in {len(rs)} lease "
                                          f"run{'s' if len(rs) > 1 else ''}{note})")
    return rates
