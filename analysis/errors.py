"""Errors raised on bad input; each names the file and the field at fault.

`python -m analysis.cli` turns any InputError into a one-line message and exit status 2, and any other
exception into its traceback and a last line that says what was raised where (`summary`).
"""

from __future__ import annotations

import functools
import json
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ANALYSIS = Path(__file__).resolve().parent
# Inside the installed libraries, the folders whose code is a search strategy: what a strategy's error points to.
_STRATEGY_FOLDERS = ("kernel_tuner/strategies/", "pyatf/")


@functools.cache
def _libraries() -> frozenset[Path]:
    """The folders of the standard library and the installed packages."""
    return frozenset(Path(sysconfig.get_paths()[key]).resolve() for key in ("stdlib", "purelib", "platlib"))


def _is_strategy_code(filename: str) -> bool:
    """Whether a frame's file is a search strategy's code: a user's file or module (anything outside this package
    and the installed libraries), Kernel Tuner's strategies or pyATF."""
    path = Path(filename).resolve()
    if filename.startswith("<") or path.is_relative_to(_ANALYSIS):
        return False
    if any(path.is_relative_to(folder) for folder in _libraries()):
        return any(part in path.as_posix() for part in _STRATEGY_FOLDERS)
    return True


def summary(exc: BaseException) -> str:
    """One line for the console: the exception's last line as a traceback ends, and where it was raised, in the
    innermost frame of a strategy's code (a user's file, Kernel Tuner's strategies, pyATF) if one is on the
    stack, else the innermost frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    if not frames:
        return last
    frame = next((f for f in reversed(frames) if _is_strategy_code(f.filename)), frames[-1])
    return f"{last} (raised at {frame.filename}:{frame.lineno}, in {frame.name})"


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


class ArchiveError(InputError):
    """A baseline archive, or a run file being archived, is malformed or does not match its space."""
