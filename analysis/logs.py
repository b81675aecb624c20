"""Logging set-up shared by the command-line entry points."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(log_file: str | Path | None = None, level: int = logging.INFO) -> None:
    """Send library logging to `log_file` (created with its folder) when given, else to stderr."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file is not None:
        path = Path(log_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        handlers = [logging.FileHandler(path, mode="w")]
    logging.basicConfig(level=level, format=FORMAT, handlers=handlers, force=True)
