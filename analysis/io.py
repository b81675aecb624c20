"""Atomic file output: a result is either complete on disk or absent, never half-written."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; move it onto `path` only if the block succeeds.

    The file gets mode 0644 (readable by everyone), not the 0600 that mkstemp gives a temporary file;
    a block that replaces the temporary file (writes a new one at its path) sets its own mode.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.fchmod(fd, 0o644)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(obj: Any, path: str | Path, *, sort_keys: bool = True, indent: int | None = 2) -> None:
    """Write `obj` as indented JSON, atomically: keys sorted, or with `sort_keys=False` in the dicts' own order
    (where that order means something, as a space's parameter order does). `indent=None` writes it on one line,
    with the json module's C encoder (several times faster: for large files that only a program reads)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=indent, sort_keys=sort_keys, allow_nan=False) + "\n")


def write_gzip(data: bytes, path: str | Path) -> None:
    """Write `data` gzip-compressed, atomically and reproducibly: no file name and no time in the gzip header
    (a GzipFile on the temporary file would record that file's random name, so the same data would give other
    bytes at each publication)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(gzip.compress(data, mtime=0))


def write_parquet(df: pd.DataFrame, path: str | Path) -> None:
    """Write `df` to Parquet (zstd), atomically."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False, compression="zstd")


def write_text(text: str, path: str | Path) -> None:
    """Write text, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


# Significant digits of every float in a CSV written by `write_csv` (all of tables/*.csv): enough for any
# quantity the study reports, few enough that last-bit differences of floating-point library code between
# processors (about 1e-16 relative, e.g. 0.04576177306301446 against 0.045761773063014446) do not show.
PUBLISHED_FLOAT_DIGITS = 12


def _round_float(x: Any, digits: int) -> Any:
    """`x` rounded to `digits` significant digits if it is a float (NaN and infinities unchanged), else `x`."""
    if isinstance(x, (float, np.floating)) and math.isfinite(x):
        return float(f"{x:.{digits}g}")
    return x


def round_floats(df: pd.DataFrame, digits: int = PUBLISHED_FLOAT_DIGITS) -> pd.DataFrame:
    """A copy of `df` with every float rounded to `digits` significant digits, so that its CSV text is the
    shortest decimal that reads back as the rounded value (0.04576177306301446 -> 0.045761773063).

    Float64 columns (NumPy's and pandas' nullable one) are rounded, and float elements of object columns;
    integer, boolean and text cells, NaN and +-inf are left as they are, so integer columns stay integers,
    a float with no fraction keeps its ".0" and NaN is still an empty cell. Narrower floats (float32) hold
    fewer than 12 significant digits and are left alone.

    This makes a table's text independent of last-bit differences only away from a rounding boundary: a
    value whose decimal digits after the `digits`-th are within a few ulps of 5000... can still round either
    way. The chance is the difference over the spacing of `digits`-digit decimals: for a value that differs
    by one ulp (about 2e-16 relative) and 12 digits (spacing 1e-12 to 1e-11 relative), 2e-5 to 2e-4 per
    differing value. Rare, not impossible.
    """
    out = df.copy()
    for name in out.columns:
        column = out[name]
        if column.dtype == np.float64:
            values = column.to_numpy(copy=True)
            finite = np.isfinite(values)
            values[finite] = [float(f"{x:.{digits}g}") for x in values[finite]]
            out[name] = values
        elif column.dtype == object or isinstance(column.dtype, pd.Float64Dtype):  # Float64: nullable floats
            out[name] = column.map(lambda x: _round_float(x, digits), na_action="ignore")
    return out


def write_csv(df: pd.DataFrame, path: str | Path, float_digits: int | None = PUBLISHED_FLOAT_DIGITS) -> None:
    """Write a table as CSV with a header row, atomically, its floats rounded to `float_digits` significant
    digits (`round_floats`; None: written as they are, the shortest text that reads back exactly)."""
    if float_digits is not None:
        df = round_floats(df, float_digits)
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
