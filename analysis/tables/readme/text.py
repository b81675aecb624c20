"""How numbers, lists and tables read in the generated text, and its prose: the templates every block fills in."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from importlib import resources
from string import Template

import pandas as pd

from analysis.names import DISPLAY

LINE_WIDTH = 120  # README.md's lines are at most this long
# a template file's snippets: each runs from its `@@ name` line to the next (the lines before the first are comments)
SNIPPET = re.compile(r"^@@ (\w+)\n", re.MULTILINE)


@functools.cache
def snippets(group: str) -> dict[str, Template]:
    """The snippets of templates/<group>.tmpl, each a `string.Template` (`$name`, `${name}`), without the blank lines
    around it."""
    text = resources.files(__package__).joinpath("templates", f"{group}.tmpl").read_text(encoding="utf-8")
    parts = SNIPPET.split(text)
    return {key: Template(body.strip("\n")) for key, body in zip(parts[1::2], parts[2::2], strict=True)}


class Prose:
    """The prose of one module: `prose(key, **values)` is snippet `key` of templates/<group>.tmpl filled in."""

    def __init__(self, group: str):
        self.group = group

    def __call__(self, key: str, **values: object) -> str:
        return snippets(self.group)[key].substitute(values)


def num(x: float, digits: int = 1) -> str:
    """A number rounded to `digits` decimals, with a true minus sign; NaN as an en dash."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    text = f"{x:,.{digits}f}"
    if float(text.replace(",", "")) == 0:
        text = text.lstrip("-")
    return text.replace("-", "−")


def interval(mean: float, low: float, high: float, digits: int = 1) -> str:
    return f"{num(mean, digits)} [{num(low, digits)}, {num(high, digits)}]"


def verdict(low: float, high: float, above: str = "better", below: str = "worse", neither: str = "not apart") -> str:
    """What a 95 % interval of a difference says: `above` 0, `below` 0, or `neither` (it holds 0)."""
    return above if low > 0 else below if high < 0 else neither


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def name(label: str) -> str:
    """How a setting is named in the text: its algorithm's display name (analysis.names) where the label is a
    registered algorithm's name, as in the full study, else the label."""
    return DISPLAY.get(label, label)


def listing(items: Sequence[object]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    words = [str(i) for i in items]
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def at_budgets(chosen: Sequence[int], every: Sequence[int]) -> str:
    """'at every budget', 'at no budget', 'at budget 50', 'at budgets 100, 150 and 200'."""
    chosen = sorted(int(b) for b in chosen)
    if not chosen:
        return "at no budget"
    if len(every) > 1 and chosen == sorted(int(b) for b in every):
        return "at every budget"
    return f"at budget{'s' if len(chosen) > 1 else ''} {listing(chosen)}"


def span(values: Sequence[float], digits: int = 1) -> str:
    """'a–b' as displayed, or 'a' when both ends display the same."""
    low, high = num(min(values), digits), num(max(values), digits)
    return low if low == high else f"{low}–{high}"


def compare(ours: float, theirs: float, digits: int = 1) -> str:
    """'larger', 'smaller' or 'equal', on the two values as displayed (rounded to `digits`)."""
    a, b = round(float(ours), digits), round(float(theirs), digits)
    return "larger" if a > b else "smaller" if a < b else "equal"


def pairs_of(frame: pd.DataFrame) -> str:
    """'20 pairs of 10 spaces' over the rows of a relative-difference table (a range where the budgets differ)."""
    n, k = frame["n_pairs"].astype(int), frame["n_spaces"].astype(int)
    return f"{span(n, 0)} pair{plural(int(n.max()))} of {span(k, 0)} space{plural(int(k.max()))}"


def plural(n: int) -> str:
    return "" if n == 1 else "s"
