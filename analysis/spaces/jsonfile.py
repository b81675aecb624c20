"""Reading JSON data files (plain or gzip) with errors that name the file and the place."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from analysis.errors import SpaceError


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _unclosed(text: str) -> bool:
    """Whether the text ends inside a string or with brackets left open (a cut-off file)."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return in_string or depth > 0


def read_json(path: str | Path) -> Any:
    """Load a .json or .json.gz file; corrupt gzip, truncation, bad JSON and duplicate keys are errors."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SpaceError(path, f"cannot be read ({exc.strerror})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise SpaceError(path, f"corrupt or truncated gzip data ({exc})") from None
    elif path.suffix == ".gz":
        raise SpaceError(path, "named .gz but is not gzip data")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpaceError(path, f"not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        raise SpaceError(path, "duplicate key (a configuration or field appears twice)", field=exc.key) from None
    except json.JSONDecodeError as exc:
        what = "truncated JSON (ends inside a value)" if _unclosed(text) else "malformed JSON"
        raise SpaceError(path, f"{what}: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None


def require(obj: Any, key: str, kind: type | tuple[type, ...], path: str | Path, where: str = "") -> Any:
    """Return obj[key], raising a SpaceError naming the field when it is absent or of the wrong type."""
    field = f"{where}{key}"
    if not isinstance(obj, dict) or key not in obj:
        raise SpaceError(path, "missing", field=field)
    value = obj[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SpaceError(path, f"expected {names}, found {type(value).__name__}", field=field)
    return value
