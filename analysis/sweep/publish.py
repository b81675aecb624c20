"""Publish a merged sweep: copy its cache, definition and provenance into data/sweeps/<target>/<label>/
and refresh data/MANIFEST.csv for that folder."""

from __future__ import annotations

from pathlib import Path

from analysis import manifest
from analysis.errors import SweepError
from analysis.io import atomic_path


def publish(cache: str | Path, definition: str | Path, provenance: str | Path, *, kernel: str, target: str,
            label: str, data_dir: str | Path = "data") -> Path:
    """Copy a merged sweep into data/sweeps/<target>/<label>/ and refresh data/MANIFEST.csv for it."""
    if not label or "/" in label or label.startswith("."):
        raise SweepError(None, f"bad device label '{label}'", field="label")
    dest = Path(data_dir) / "sweeps" / target / label
    for src, name in ((cache, f"{kernel}.json.gz"), (definition, f"{kernel}.yaml"),
                      (provenance, f"{kernel}.provenance.json")):
        with atomic_path(dest / name) as tmp:
            tmp.write_bytes(Path(src).read_bytes())
    manifest.update(data_dir, f"sweeps/{target}/{label}",
                    source="measured by this suite (analysis.sweep, `python -m analysis.cli sweep-publish`)",
                    licence="same as this repository", citation="this repository (see README, Citation)")
    return dest
