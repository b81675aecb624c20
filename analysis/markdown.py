"""Markdown renderings of the published tables (every `tables/*.md`)."""

from __future__ import annotations

import re

import pandas as pd

from analysis.errors import InputError


def to_markdown(df: pd.DataFrame, title: str, docs: dict[str, str]) -> str:
    """A Markdown rendering of a table with its column documentation."""
    lines = [f"# {title}", "", df.to_markdown(index=False, floatfmt=".4g"), "", "Columns:", ""]
    lines += [f"- `{k}`: {v}" for k, v in docs.items()]
    return "\n".join(lines) + "\n"


def splice(text: str, block: str, where: str, begin: str, end: str, what: str) -> str:
    """`text` with the part from the `begin` marker to the `end` marker replaced by `block` (which carries the
    markers itself); `where` (the file) and `what` (the block's name) go into the error when a marker is missing."""
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise InputError(where, f"no {what} markers ('{begin}' ... '{end}') to write between")
    return text[:start] + block + text[stop + len(end):]


# an inline link's or image's target: `](target)` or `](target#anchor)`
_TARGET = re.compile(r"\]\(([^)\s]+)\)")


def relink(text: str, folder: str) -> str:
    """Markdown written for the repository's root, with its relative link targets rewritten for a file in `folder`
    (one level down, e.g. "docs"): a target in that folder loses the folder, any other gains `../` (`tables/y.csv`
    becomes `../tables/y.csv`); absolute URLs and in-page anchors are left as they are."""
    prefix = folder.rstrip("/") + "/"

    def move(m: re.Match) -> str:
        target = m.group(1)
        if "://" in target or target.startswith(("#", "/", "mailto:")):
            return m.group(0)
        return f"]({target[len(prefix):] if target.startswith(prefix) else '../' + target})"

    return _TARGET.sub(move, text)
