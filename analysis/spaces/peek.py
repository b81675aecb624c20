"""The objectives of a space's source file, read from its head: cheap enough for every config check.

`check-config` (and so every Snakemake start) checks that each space has the objectives of the
sets it runs on. Loading a whole source to learn its fields costs time that grows with the space,
at every start and for every space, so this module reads a source only up to its first measured
configuration: the fields of a Kernel Tuner cache entry, or the measurement names of a T4 result.
The importer takes by default every field named like a study objective in any measured
configuration and requires each of them in every measured configuration, so the first measured
one names them all for any source that imports.

Anything unexpected (unreadable file, truncated gzip, another layout) gives None: the check is
then left to the import job, whose error names the file and the field.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from analysis.objectives import OBJECTIVES

# Kernel Tuner's markers of a configuration that was not measured (analysis.spaces.space.KT_ERRORS;
# repeated here so that a config check does not import pandas).
_KT_MARKERS = frozenset({"CompilationFailedConfig", "RuntimeFailedConfig", "ErrorConfig", "InvalidConfig"})
_WHITESPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


class _Unreadable(Exception):
    """The head of the file is not laid out as expected."""


class _Stream:
    """A JSON text read piece by piece: tokens of the outer structure, whole values where asked."""

    def __init__(self, fh: io.TextIOBase, chunk: int = 1 << 16):
        self.fh, self.chunk, self.buf, self.pos = fh, chunk, "", 0
        self.values = 0  # whole values read so far

    def _more(self) -> bool:
        data = self.fh.read(self.chunk)
        if not data:
            return False
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character after white space ("" at the end)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise _Unreadable(char)
        self.pos += 1

    def value(self) -> Any:
        """The next whole JSON value."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                end = None
            # a value that reaches the end of what was read (a number) may go on in the next piece
            if end is not None and end < len(self.buf):
                self.pos = end
                self.values += 1
                return value
            if not self._more():
                if end is None:
                    raise _Unreadable("value")
                self.pos = end
                self.values += 1
                return value
            self.chunk *= 2  # a large value: read it in fewer, larger pieces

    def members(self, close: str, keyed: bool) -> Iterator[Any]:
        """The key (None in an array) of each member of the object or array just opened; the caller reads the
        member's value (`value()`, or `expect` and `members` for a nested one), or it is skipped."""
        if self.peek() == close:
            self.pos += 1
            return
        while True:
            key = None
            if keyed:
                key = self.value()
                self.expect(":")
            before = self.values
            yield key
            if self.values == before:  # the caller did not read the value
                self.value()
            nxt = self.peek()
            self.pos += 1
            if nxt == close:
                return
            if nxt != ",":
                raise _Unreadable(nxt)


def _open(path: Path) -> io.TextIOBase:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    raw = gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")
    return io.TextIOWrapper(raw, encoding="utf-8")


def _measured_kt(entry: Any) -> bool:
    return isinstance(entry, dict) and not (isinstance(entry.get("time"), str) and entry["time"] in _KT_MARKERS)


def _measured_t4(result: Any) -> bool:
    return isinstance(result, dict) and result.get("invalidity", "correct") == "correct"


def _first_measured(stream: _Stream, fmt: str) -> tuple[str, set[str]] | None:
    stream.expect("{")
    for key in stream.members("}", keyed=True):
        if key == "cache" and fmt in ("auto", "kt_cache"):
            stream.expect("{")
            for _ in stream.members("}", keyed=True):
                entry = stream.value()
                if _measured_kt(entry):
                    return "kt_cache", set(entry)
            return None
        if key == "results" and fmt in ("auto", "t4"):
            stream.expect("[")
            for _ in stream.members("]", keyed=False):
                result = stream.value()
                if _measured_t4(result):
                    names = {m.get("name") for m in result.get("measurements") or [] if isinstance(m, dict)}
                    return "t4", {n for n in names if isinstance(n, str)}
            return None
    return None


def source_fields(path: str | Path, fmt: str = "auto") -> tuple[str, set[str]] | None:
    """(format, field names) of the first measured configuration of a cache or T4 file; None if unknown."""
    try:
        with _open(Path(path)) as fh:
            return _first_measured(_Stream(fh), fmt)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, _Unreadable):
        return None


def default_objectives(path: str | Path, fmt: str = "auto") -> set[str] | None:
    """The objectives the importer takes from a source without an `objectives:` mapping (every field named
    like a study objective); None when the head of the file does not say."""
    found = source_fields(path, fmt)
    if found is None:
        return None
    return {name for name in OBJECTIVES if name in found[1]}
