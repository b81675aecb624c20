"""A visit's pack files: its shard caches and provenance in at most 8 tar files of at most 16 MiB each
(`pack`), and reading one back (`read_pack`)."""

from __future__ import annotations

import gzip
import io
import json
import logging
import math
import os
import tarfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gpuvisit.cache import LeaseError, closed_cache

log = logging.getLogger(__name__)

PACK_FILES = 8
PACK_BYTES = 16 * 2**20
PACK_FORMAT = "tsb-gpu-lease/1"


def read_pack(path: str | Path) -> tuple[dict[str, Any], dict[str, list[dict]]]:
    """(provenance, kernel -> cache documents) of one pack file."""
    path = Path(path)
    docs: dict[str, list[dict]] = {}
    prov: dict[str, Any] | None = None
    try:
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                if not member.isfile():
                    continue
                fh = tar.extractfile(member)
                if fh is None:  # none for a regular file; the check is for the type checker
                    continue
                data = fh.read()
                if member.name == "provenance.json":
                    prov = json.loads(data)
                elif member.name.endswith(".json.gz"):
                    kernel = member.name.split(".", 1)[0]
                    docs.setdefault(kernel, []).append(json.loads(gzip.decompress(data)))
    except (tarfile.TarError, OSError, json.JSONDecodeError) as exc:
        raise LeaseError(path, f"not a readable lease pack ({exc})") from None
    if prov is None or prov.get("format") != PACK_FORMAT:
        raise LeaseError(path, f"has no provenance.json of format {PACK_FORMAT}")
    return prov, docs


def _tar_size(member_sizes: Iterable[int]) -> int:
    """Bytes of an uncompressed ustar archive holding members of these sizes (512-byte blocks, 10240-byte records)."""
    blocks = sum(512 + -(-s // 512) * 512 for s in member_sizes) + 1024
    return -(-blocks // tarfile.RECORDSIZE) * tarfile.RECORDSIZE


def gzipped(doc: Mapping[str, Any]) -> bytes:
    """A document as compact JSON, gzipped reproducibly (no time stamp): a pack member or a partial cache."""
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=6, mtime=0)


def _parts(kernel: str, header: Mapping[str, Any], entries: Mapping[str, Any], limit: int) -> list[bytes]:
    """A kernel's entries as gzipped caches of at most `limit` bytes each (split in equal parts where needed)."""
    keys = list(entries)
    n = 1
    while True:
        size = -(-len(keys) // n)
        blobs = [gzipped(closed_cache(header, {k: entries[k] for k in keys[i:i + size]}))
                 for i in range(0, len(keys), size)]
        if all(len(b) <= limit for b in blobs):
            return blobs
        if size <= 1:
            raise LeaseError(None, f"{kernel}: one configuration's entry compresses to over {limit} bytes")
        n = max(n + 1, math.ceil(n * max(len(b) for b in blobs) / limit))


Member = tuple[str, bytes]  # a pack file's member: name and contents


def _items(caches: Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]], item_limit: int) -> list[Member]:
    """Every kernel's entries as gzipped cache parts of at most `item_limit` bytes, kernels by name."""
    items: list[Member] = []
    for kernel in sorted(caches):
        header, entries = caches[kernel]
        if not entries:
            continue
        for i, blob in enumerate(_parts(kernel, header, entries, item_limit)):
            items.append((f"{kernel}.part{i:02d}.json.gz", blob))
    return items


def _bins(items: Sequence[Member], extra: Mapping[str, bytes], prov_room: int, limit: int) -> list[list[Member]]:
    """The members of each pack file: the items first fit, largest first, then `extra` in the first file where
    they fit (left out with a warning where not); one empty file where there is nothing."""
    bins: list[list[Member]] = []
    for name, blob in sorted(items, key=lambda it: -len(it[1])):  # first fit, largest first
        for b in bins:
            if _tar_size([prov_room, *(len(x) for _, x in b), len(blob)]) <= limit:
                b.append((name, blob))
                break
        else:
            bins.append([(name, blob)])
    if not bins:
        bins.append([])
    for name, blob in extra.items():
        if _tar_size([prov_room, *(len(x) for _, x in bins[0]), len(blob)]) <= limit:
            bins[0].append((name, blob))
        else:
            log.warning("pack: %s (%d bytes) left out: no room in the first file", name, len(blob))
    return bins


def _write_tar(path: Path, members: Sequence[Member], limit: int) -> None:
    """An uncompressed ustar file of `members` (in that order, mtime 0, mode 0644), written atomically; an
    AssertionError (and nothing written) where it is over `limit` bytes."""
    tmp = path.parent / f".{path.name}.tmp"
    with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as tar:
        for member, blob in members:
            info = tarfile.TarInfo(member)
            info.size = len(blob)
            info.mtime = 0
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(blob))
    size = tmp.stat().st_size
    if size > limit:
        tmp.unlink()
        raise AssertionError(f"{path.name}: {size} bytes, over {limit}")
    os.replace(tmp, path)


def pack(out: str | Path, stamp: str, caches: Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]],
         provenance: Mapping[str, Any], *, files: int = PACK_FILES, limit: int = PACK_BYTES,
         extra: Mapping[str, bytes] | None = None) -> list[Path]:
    """Write `caches` (kernel -> (header, entries)) and `provenance` into at most `files` tar files of at most
    `limit` bytes each, named `lease-<stamp>-<i>of<n>.tar`; earlier packs of the same stamp are replaced.

    Members: `<kernel>.part<NN>.json.gz` (a gzipped, closed Kernel Tuner cache), `provenance.json` in every
    file (with the list of all files and members), and `extra` members in the first file where they fit.
    A LeaseError (and nothing written) when they cannot fit.
    """
    out = Path(out)
    base = len(json.dumps({**provenance, "format": PACK_FORMAT}, indent=1, sort_keys=True, allow_nan=False))
    # room for provenance.json: itself plus the list of files and members (at most 99 parts per kernel)
    prov_room = base + 2048 + len(caches) * 99 * 48 + files * 64
    item_limit = limit - _tar_size([prov_room, 0]) - 512
    if item_limit <= 0:
        raise LeaseError(out, f"a pack file of {limit} bytes cannot hold the provenance ({prov_room} bytes)")
    bins = _bins(_items(caches, item_limit), dict(extra or {}), prov_room, limit)
    if len(bins) > files:
        raise LeaseError(out, f"the measurements need {len(bins)} files of {limit} bytes; at most {files} may "
                              "come back")
    n = len(bins)
    names = [f"lease-{stamp}-{i + 1}of{n}.tar" for i in range(n)]
    prov = {**provenance, "format": PACK_FORMAT,
            "pack": {"files": names, "members": {nm: sorted(x for x, _ in b) for nm, b in zip(names, bins)}}}
    prov_bytes = (json.dumps(prov, indent=1, sort_keys=True, allow_nan=False) + "\n").encode()
    if len(prov_bytes) > prov_room:
        raise LeaseError(out, f"provenance.json has {len(prov_bytes)} bytes, more than the {prov_room} kept for it")
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(f"lease-{stamp}-*of*.tar"):
        if old.name not in names:
            old.unlink()
    written = []
    for name, b in zip(names, bins):
        _write_tar(out / name, [("provenance.json", prov_bytes), *sorted(b)], limit)
        written.append(out / name)
    return written
