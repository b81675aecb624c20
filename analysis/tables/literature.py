"""The papers' numbers the suite sets its results beside, read from data/literature/*.csv.

Each file holds one table or passage of one paper, a row per number, and a `citation` column saying where it
is from (paper, table or section); none of these numbers is typed into the code. The files and their sources
are in data/MANIFEST.csv. A missing column, an empty or non-numeric value or an empty citation is refused with
the file, row and field.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from analysis import paths
from analysis.errors import InputError

# the thesis's (seed 000's) two algorithms, in the order of its tables' columns and of `thesis` pairs
THESIS_SETTINGS = ("nsga2", "nsga3")
# file stem -> (key columns, value columns); every file also has `citation`
FILES = {
    "thesis_table2": (("setting", "budget"), ("mean_pct", "sd_pct")),  # median IGD+ improvement over RS, %
    "thesis_table4": (("setting", "kernel"), ("mean_pct", "sd_pct")),  # speedup over RS to RS's budget-200 quality, %
    "thesis_table5": (("setting", "budget"), ("mean_pct", "sd_pct")),  # median evaluation-time improvement over RS, %
    "seed001_gains": (("algorithm",), ("gain",)),  # score gained by constraint awareness over seed 001's 24 spaces
    "seed001_density": (("application",), ("density_pct",)),  # valid share of the Cartesian product, %
}


def path(name: str, folder: str | Path = paths.LITERATURE) -> Path:
    """The file of literature table `name` (a key of FILES)."""
    return Path(folder) / f"{name}.csv"


def read(file: str | Path) -> pd.DataFrame:
    """One literature file, checked: its key and value columns (by the file's stem, FILES), each key once, and
    a citation on every row; values as float, budgets as int, other keys as written."""
    file = Path(file)
    if file.stem not in FILES:
        raise InputError(file, f"no literature table of this name; known: {sorted(FILES)}")
    keys, values = FILES[file.stem]
    try:
        frame = pd.read_csv(file, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(file, f"cannot be read as CSV: {exc}") from exc
    for column in (*keys, *values, "citation"):
        if column not in frame.columns:
            raise InputError(file, "missing column", column)
    for i, row in frame.iterrows():
        for column in (*keys, *values, "citation"):
            if not row[column].strip():
                raise InputError(file, f"row {i + 2}: empty", column)
        for column in (*values, *(["budget"] if "budget" in keys else [])):
            try:
                number = float(row[column])
            except ValueError:
                raise InputError(file, f"row {i + 2}: {row[column]!r} is not a number", column) from None
            if column == "budget" and not number.is_integer():
                raise InputError(file, f"row {i + 2}: {row[column]!r} is not a whole number", column)
    twice = frame.duplicated(list(keys))
    if twice.any():
        raise InputError(file, f"row {int(twice.idxmax()) + 2}: its {'/'.join(keys)} is given twice", keys[-1])
    out = frame.astype({column: float for column in values})
    if "budget" in keys:
        out["budget"] = out["budget"].astype(float).astype(int)
    return out


@functools.cache
def thesis(table: int, folder: str | Path = paths.LITERATURE) -> dict:
    """The thesis's Table 2, 4 or 5: key (budget or kernel) -> ((mean, sd) of NSGA-II, (mean, sd) of NSGA-III),
    in %, keys in the file's order."""
    file = path(f"thesis_table{table}", folder)
    frame = read(file)
    key = FILES[file.stem][0][1]
    out: dict = {}
    for k, rows in frame.groupby(key, sort=False):
        by_setting = rows.set_index("setting")
        if sorted(by_setting.index) != sorted(THESIS_SETTINGS):
            raise InputError(file, f"{key} {k}: needs one row for each of {list(THESIS_SETTINGS)}", "setting")
        out[k] = tuple((float(by_setting.loc[s, "mean_pct"]), float(by_setting.loc[s, "sd_pct"]))
                       for s in THESIS_SETTINGS)
    return out


@functools.cache
def values(name: str, folder: str | Path = paths.LITERATURE) -> dict[str, float]:
    """A table of one key and one value (seed001_gains, seed001_density) as key -> value, in the file's order."""
    return values_of(path(name, folder))


def values_of(file: str | Path) -> dict[str, float]:
    """`values` of the literature file `file` (its stem names its table)."""
    frame = read(file)
    (key,), (value,) = FILES[Path(file).stem]
    return {k: float(v) for k, v in zip(frame[key], frame[value])}
