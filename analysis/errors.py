"""Errors raised on bad input; each names the file and the field at fault."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad input: a message naming the file (and where known the field) at fault."""

    def __init__(self, path: str | Path | None, message: str, field: str | None = None):
        self.path = None if path is None else str(path)
        self.field = field
        self.detail = message
        where = self.path or "<input>"
        if field is not None:
            where = f"{where}: field '{field}'"
        super().__init__(f"{where}: {message}")


class ConfigError(InputError):
    """The study configuration is invalid."""


class SpaceError(InputError):
    """A search-space source file is malformed or inconsistent."""
