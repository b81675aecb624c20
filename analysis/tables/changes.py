"""Before/after tables of published results across a change of the study's inputs (docs/results.md).

A release that changes what the study simulates (not only how fast) moves published numbers.
Readers of the earlier numbers need to see what moved and why: `docs/history/<commit>/` keeps
the tables as published at `<commit>`, and this module renders, for the headline rows of
Tables 2-5 and the constraint-aware gains, the old value, the new one (from `tables/`), and
which of the release's changes can have moved it, decided by what each row depends on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.names import display_name

# tables as published before a release that moved them: docs/history/<commit>/
HISTORY = Path(__file__).resolve().parents[2] / "docs" / "history"
# Issue 32's changes, by number
CHANGES = {
    1: "parameter order",
    2: "evaluation cost",
    3: "selection runs apart",
    4: "minimum CA budget",
}
ALGORITHMS = {"nsga2": "NSGA-II", "nsga3": "NSGA-III"}


@dataclass(frozen=True)
class Release:
    """A change that moved published numbers: the commit whose tables it replaced, and what it changed."""

    before: str  # commit of the tables in docs/history/<before>/
    title: str
    changes: dict[int, str]


ISSUE_32 = Release("e85862f", "Review fixes of the simulated inputs (issue 32)", CHANGES)


def _moved_by(table: str, scope: str) -> list[int]:
    """Which changes a row can depend on, by construction.

    1 (parameter order) changes every run of a Kernel Tuner strategy (its crossover, neighbours and
    sampling follow the parameter order); 3 (selection runs seeded apart) changes the hyperparameters
    picked on the training kernels, and so every tuned NSGA-II/III run; 2 (evaluation cost) changes
    the clock of host-CPU runs only (time-axis tables: 4, 5 and the constraint-aware scores), not the
    IGD+ at a budget of evaluations; 4 (minimum budget) changes only which spaces the
    constraint-aware aggregates count.
    """
    host_cpu = scope in ("O3", "O5", "multi-objective", "all", "speedup", "accuracy threshold")
    if table in ("Table 2", "Table 3"):
        return [1, 3]
    if table in ("Table 4", "Table 5"):
        return [1, 2, 3] if host_cpu else [1, 3]
    return [1, 2, 4] if scope in ("all", "accuracy threshold") else [1, 4]


def _fmt(v: float, digits: int = 1) -> str:
    if pd.isna(v):
        return "–"
    v = round(float(v), digits) or 0.0  # no "−0.0"
    return f"{v:.{digits}f}".replace("-", "−")


def rows(before: Path, after: Path) -> list[list[str]]:
    """[table, row, old, new, change, moved by] for the headline rows present in both folders."""
    out: list[list[str]] = []

    def read(folder: Path, name: str) -> pd.DataFrame | None:
        path = folder / f"{name}.csv"
        return pd.read_csv(path) if path.is_file() else None

    for label, name, col in (("Table 2", "improvement_over_rs", "thesis_mean_pct"),
                             ("Table 3", "nsga3_over_nsga2", "thesis_mean_pct"),
                             ("Table 5", "eval_time", "thesis_mean_pct")):
        old, new = read(before, name), read(after, name)
        if old is None or new is None:
            continue
        keys = ["scope", "setting", "budget"]
        merged = old.merge(new, on=keys, suffixes=("_old", "_new"))
        merged = merged[merged["setting"].isin(ALGORITHMS) & merged["scope"].isin(["multi-objective", "time"])]
        for _, r in merged.iterrows():
            scope = "O3 + O5" if r["scope"] == "multi-objective" else r["scope"]
            what = f"{ALGORITHMS[r['setting']]}" + (" vs NSGA-II" if label == "Table 3" else " vs RS")
            out.append([label, f"{scope}, {what}, budget {int(r['budget'])}", _fmt(r[f"{col}_old"]),
                        _fmt(r[f"{col}_new"]), _fmt(r[f"{col}_new"] - r[f"{col}_old"]),
                        _changes(_moved_by(label, r["scope"]))])
    old, new = read(before, "speedup_to_rs"), read(after, "speedup_to_rs")
    if old is not None and new is not None:
        merged = old.merge(new, on=["kernel", "setting"], suffixes=("_old", "_new"))
        for _, r in merged[merged["setting"].isin(ALGORITHMS)].iterrows():
            out.append(["Table 4", f"{r['kernel']}, {ALGORITHMS[r['setting']]}", _fmt(r["reached_time_mean_pct_old"]),
                        _fmt(r["reached_time_mean_pct_new"]),
                        _fmt(r["reached_time_mean_pct_new"] - r["reached_time_mean_pct_old"]),
                        _changes(_moved_by("Table 4", "speedup"))])
    old, new = read(before, "constraint_aware_gains"), read(after, "constraint_aware_gains")
    if old is not None and new is not None:
        merged = old.merge(new, on=["group", "algorithm"], suffixes=("_old", "_new"))
        for _, r in merged[merged["algorithm"] != "rs"].iterrows():
            out.append(["CA gain", f"{r['group']}, {display_name(r['algorithm'])} "
                                   f"({int(r['spaces_old'])} → {int(r['spaces_new'])} spaces)",
                        _fmt(r["gain_old"], 3), _fmt(r["gain_new"], 3), _fmt(r["gain_new"] - r["gain_old"], 3),
                        _changes(_moved_by("CA", r["group"]))])
    return out


def _changes(numbers: list[int]) -> str:
    return ", ".join(f"{n} ({CHANGES[n]})" for n in numbers)


def render(history: Path, tables: Path, release: Release = ISSUE_32) -> str:
    """The Markdown section comparing `history/<release.before>/` with `tables`; empty if there is no history."""
    before = history / release.before
    if not before.is_dir():
        return ""
    body = rows(before, tables)
    if not body:
        return ""
    head = ["table", "row", "before", "after", "after − before", "changes that can move it"]
    lines = [f"## What moved: {release.title}", "",
             f"Values published at commit {release.before} (`docs/history/{release.before}/`) against the current "
             "`tables/`: Tables 2, 3 and 5 as the thesis's mean in %, Table 4 as the mean time to RS's budget-200 "
             "quality in % (reached pairs), and the constraint-aware gain (aware − unaware score). The changes: "
             + "; ".join(f"{n}. {d}" for n, d in release.changes.items()) + ". The last column says which of them "
             "a row depends on (decided by what the row is computed from: 2 reaches only time axes of host-CPU "
             "spaces, 4 only the constraint-aware aggregates); the rerun applied them all at once.", "",
             "| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines) + "\n"
