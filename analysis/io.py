"""Atomic file output: a result is either complete on disk or absent, never half-written."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pandas as pd


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; move it onto `path` only if the block succeeds."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(obj: Any, path: str | Path) -> None:
    """Write `obj` as indented, key-sorted JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n")


def write_parquet(df: pd.DataFrame, path: str | Path) -> None:
    """Write `df` to Parquet (zstd), atomically."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False, compression="zstd")


def write_text(text: str, path: str | Path) -> None:
    """Write text, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_csv(df: pd.DataFrame, path: str | Path) -> None:
    """Write a table as CSV with a header row, atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
