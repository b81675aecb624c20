"""Crash-safe handling of Kernel Tuner 1.5.0 cache files.

Kernel Tuner writes a cache as a JSON header ending in `"cache": {` and then appends one
line `\\n"<key>": {...},` per measured configuration (util.store_cache, open(..., "a")).
A process killed mid-append leaves a partial last line; `repair` drops it (and a partial
header) so Kernel Tuner can continue. Kernel Tuner also rewrites the whole file in place
when it opens a closed cache and when it closes one (open(..., "w")); `atomic_rewrites`
replaces those two functions by versions that write a temporary file and rename it, so
a kill at any moment leaves the previous complete content.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from analysis.io import write_text

log = logging.getLogger(__name__)
MARK = '"cache": {'


def _closed(text: str) -> bool:
    return text[-3:] in ("}\n}", "}}}")


def parse(text: str) -> dict[str, Any]:
    """Parse a cache file's text, closed or open (KT's own tolerance)."""
    text = text.strip()
    if not _closed(text):
        text = text.rstrip(",") + "}\n}"
    return json.loads(text)


def read(path: str | Path) -> dict[str, Any]:
    """The cache document of a (possibly still open) cache file."""
    return parse(Path(path).read_text())


def repair(path: str | Path) -> int:
    """Make `path` a valid open cache holding every complete entry; return how many entries it keeps.

    Removes the file if even its header is incomplete (nothing had been measured then).
    """
    path = Path(path)
    if not path.exists():
        return 0
    text = path.read_text()
    try:
        return len(parse(text)["cache"])
    except (json.JSONDecodeError, KeyError):
        pass
    at = text.find(MARK)
    header = text[: at + len(MARK)] if at >= 0 else ""
    try:
        json.loads(header + "}\n}")
    except json.JSONDecodeError:
        log.warning("%s: header incomplete (killed while creating it); starting afresh", path)
        path.unlink()
        return 0
    kept = []
    lines = text[len(header):].split("\n")
    for line in lines[1:]:
        body = line.rstrip(",")
        try:
            entry = json.loads("{" + body + "}")
        except json.JSONDecodeError:
            break
        if len(entry) != 1 or not isinstance(next(iter(entry.values())), dict):
            break
        kept.append(body)
    dropped = len([ln for ln in lines[1:] if ln.strip()]) - len(kept)
    log.warning("%s: dropped %d incomplete entry line(s) left by an interrupted write; %d kept", path, dropped,
                len(kept))
    write_text(header + "".join("\n" + body + "," for body in kept), path)
    return len(kept)


def _atomic_correct_open_cache(cachefile: str, open_cache: bool = True) -> str:
    with open(cachefile) as f:
        filestr = f.read().strip()
    if filestr and not _closed(filestr):
        if filestr[-1] == ",":
            filestr = filestr[:-1]
        filestr = filestr + "}\n}"
    elif open_cache:
        write_text(filestr[:-3] + ",", cachefile)
    return filestr


def _atomic_close_cache(cachefile: str) -> None:
    contents = Path(cachefile).read_text()
    if contents and contents[-1] == ",":
        write_text(contents[:-1] + "}\n}", cachefile)


@contextlib.contextmanager
def atomic_rewrites() -> Iterator[None]:
    """While active, Kernel Tuner's in-place cache rewrites are atomic (temporary file + rename)."""
    from kernel_tuner import util

    saved = util.correct_open_cache, util.close_cache
    util.correct_open_cache, util.close_cache = _atomic_correct_open_cache, _atomic_close_cache
    try:
        yield
    finally:
        util.correct_open_cache, util.close_cache = saved
