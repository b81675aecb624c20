"""Logging set-up shared by the command-line entry points."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from analysis.errors import InputError, summary

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(log_file: str | Path | None = None, level: int = logging.INFO) -> None:
    """Send library logging to `log_file` (created with its folder) when given, else to stderr."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file is not None:
        path = Path(log_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        handlers = [logging.FileHandler(path, mode="w")]
    logging.basicConfig(level=level, format=FORMAT, handlers=handlers, force=True)


def same_stream(a: Any, b: Any) -> bool:
    """Whether two streams write to the same file (a terminal, or `2>&1`), so that a line need not go to both."""
    try:
        first, second = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (AttributeError, OSError, ValueError):
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def run_command(args: argparse.Namespace, log: logging.Logger) -> int:
    """Run a parsed command (`args.func(args)`) and give its exit status: its own (0 for None); 2 after an
    InputError, logged as its one-line message; 1 after any other exception, whose traceback goes to the log
    and whose last line (`error: ...`) to stderr, which a rule sends to its log file, and to stdout too where
    that is another file, as a rule leaves it on Snakemake's console."""
    try:
        status = args.func(args)
    except InputError as exc:
        log.error("%s", exc)
        return 2
    except Exception as exc:
        log.exception("%s failed", args.command)
        line = f"error: {summary(exc)}"
        print(line, file=sys.stderr, flush=True)
        if not same_stream(sys.stdout, sys.stderr):
            print(line, flush=True)
        return 1
    return status or 0
