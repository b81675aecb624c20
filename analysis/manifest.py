"""data/MANIFEST.csv: source, licence, citation and sha256 of every file under data/."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.errors import InputError
from analysis.io import sha256, write_csv

COLUMNS = ["path", "sha256", "bytes", "source", "licence", "citation"]
MANIFEST = "MANIFEST.csv"


def scan(data_dir: str | Path) -> list[Path]:
    """Every data file under `data_dir` except the manifest itself, sorted."""
    root = Path(data_dir)
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != MANIFEST)


def check(data_dir: str | Path) -> list[str]:
    """Problems: files missing from the manifest, listed files absent, or sha256/size mismatches."""
    root = Path(data_dir)
    manifest = pd.read_csv(root / MANIFEST, dtype=str, keep_default_na=False)
    missing_cols = set(COLUMNS) - set(manifest.columns)
    if missing_cols:
        return [f"{root / MANIFEST}: missing columns {sorted(missing_cols)}"]
    listed = dict(zip(manifest["path"], manifest.to_dict("records")))
    problems = []
    for p in scan(root):
        rel = p.relative_to(root).as_posix()
        problem = entry_problem(p, rel, listed.pop(rel, None))
        if problem:
            problems.append(problem)
    problems += [f"{rel}: in {MANIFEST} but absent" for rel in listed]
    return problems


def entry_problem(path: Path, rel: str, entry: dict | None) -> str | None:
    """What is wrong with one data file against its manifest entry (None: nothing)."""
    if entry is None:
        return f"{rel}: not in {MANIFEST}"
    if entry["sha256"] != sha256(path) or int(entry["bytes"]) != path.stat().st_size:
        return f"{rel}: sha256 or size differs from {MANIFEST}"
    if not all(entry[c] for c in ("source", "licence", "citation")):
        return f"{rel}: source, licence or citation empty in {MANIFEST}"
    return None


def check_file(data_dir: str | Path, path: str | Path) -> str | None:
    """`check` for one file under `data_dir`: its problem, or None."""
    root = Path(data_dir)
    manifest = pd.read_csv(root / MANIFEST, dtype=str, keep_default_na=False)
    rel = Path(path).relative_to(root).as_posix()
    rows = manifest[manifest["path"] == rel].to_dict("records")
    return entry_problem(Path(path), rel, rows[0] if rows else None)


def update(data_dir: str | Path, prefix: str, source: str, licence: str, citation: str,
           keep: tuple[str, ...] = ()) -> None:
    """Add or refresh the entries of every file under `data_dir/prefix` with the given provenance.

    Files under the subfolders `keep` of `prefix` are left as they are (they have provenance of their own).
    """
    root = Path(data_dir)
    path = root / MANIFEST
    old = pd.read_csv(path, dtype=str, keep_default_na=False) if path.exists() else pd.DataFrame(columns=COLUMNS)
    base = prefix.rstrip("/") + "/"
    kept = [base + k.strip("/") + "/" for k in keep]

    def is_kept(rel: str) -> bool:
        return any(rel.startswith(k) for k in kept)

    old = old[[not rel.startswith(base) or is_kept(rel) for rel in old["path"]]]
    new = [
        {"path": p.relative_to(root).as_posix(), "sha256": sha256(p), "bytes": str(p.stat().st_size),
         "source": source, "licence": licence, "citation": citation}
        for p in scan(root / prefix) if not is_kept(p.relative_to(root).as_posix())
    ]
    df = pd.concat([old, pd.DataFrame(new, columns=COLUMNS)], ignore_index=True).sort_values("path")
    write_csv(df, path)


def add_data(data_dir: str | Path, folder: str | Path, source: str, licence: str, citation: str) -> list[str]:
    """Record a dataset copied into `data_dir` (`python -m analysis.cli add-data`): every file under `folder` (a
    path inside `data_dir`, or relative to it) enters the manifest with its sha256, size and the given provenance,
    replacing earlier entries of that folder. Returns the recorded paths (relative to `data_dir`).

    Nothing is written when the folder is not under `data_dir`, holds no file, or a provenance field is empty."""
    root = Path(data_dir).resolve()
    path = Path(folder)
    path = (path if path.is_absolute() or path.resolve().is_relative_to(root) else root / path).resolve()
    if not path.is_relative_to(root) or path == root:
        raise InputError(folder, f"not a folder inside {data_dir}/: copy the dataset there first", field="folder")
    if not path.is_dir():
        raise InputError(folder, "no such folder", field="folder")
    for name, value in (("source", source), ("licence", licence), ("citation", citation)):
        if not value.strip():
            raise InputError(folder, f"the {name} is empty: every data file needs its {name}", field=name)
    files = scan(path)
    if not files:
        raise InputError(folder, "holds no file", field="folder")
    prefix = path.relative_to(root).as_posix()
    update(root, prefix, source.strip(), licence.strip(), citation.strip())
    return [f.relative_to(root).as_posix() for f in files]


def record_measured(data_dir: str | Path, folder: str | Path, source: str, keep: tuple[str, ...] = ()) -> bool:
    """Refresh the manifest entries of `folder` when it lies under `data_dir`: files this suite measured,
    under the repository's licence and citation. False (nothing done) for a folder outside `data_dir`."""
    root = Path(data_dir).resolve()
    folder = Path(folder).resolve()
    if root not in folder.parents:
        return False
    update(data_dir, folder.relative_to(root).as_posix(), source=source, licence="same as this repository",
           citation="this repository (see README, Citation)", keep=keep)
    return True
