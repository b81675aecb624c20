"""Errors raised on bad input; each names the file and the field at fault.

`python -m analysis.cli` turns any InputError into a one-line message and exit status 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


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


class SweepError(InputError):
    """A sweep's inputs or shard files are inconsistent."""


class ArgumentError(InputError):
    """A command-line argument is malformed or does not fit another one: `field` is the option (path None).

    Its message reads "argument --option: ...", as argparse words the errors it finds itself.
    """

    def __init__(self, option: str, message: str):
        super().__init__(None, message, field=option)
        self.args = (f"argument {option}: {message}",)


def json_argument(option: str, text: str | None, valid: Callable[[Any], bool] | None = None,
                  what: str = "") -> Any:
    """The JSON value of a command-line option; None where `text` is empty or None.

    A value that is not JSON, or that `valid` refuses (then the message says it is not `what`),
    is an ArgumentError naming the option.
    """
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArgumentError(option, f"not JSON: {exc}") from None
    if valid is not None and not valid(value):
        raise ArgumentError(option, f"not {what}: {text}")
    return value
