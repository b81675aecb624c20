"""The before/after section of docs/results.md (analysis.tables.changes)."""

from __future__ import annotations

import shutil

import pandas as pd

from analysis.tables import changes
from helpers import REPO


def test_before_after_rows_follow_both_tables(tmp_path):
    history = tmp_path / "history"
    before = history / changes.ISSUE_32.before
    shutil.copytree(REPO / "docs/history" / changes.ISSUE_32.before, before)
    after = tmp_path / "tables"
    after.mkdir()
    for f in before.glob("*.csv"):
        shutil.copy(f, after / f.name)
    same = changes.render(history, after)
    assert "| Table 2 | O3 + O5, NSGA-II vs RS, budget 50 |" in same
    # unchanged tables: every difference is 0.0, never "−0.0"
    rows = [line.split(" | ") for line in same.splitlines() if line.startswith("| Table") or line.startswith("| CA")]
    assert rows and all(r[4] in ("0.0", "0.000") for r in rows)
    # move one value: only its row changes, by the amount moved, with the changes that can move it
    t2 = pd.read_csv(after / "improvement_over_rs.csv")
    hit = (t2.scope == "multi-objective") & (t2.setting == "nsga2") & (t2.budget == 50)
    old = float(t2.loc[hit, "thesis_mean_pct"].iloc[0])
    t2.loc[hit, "thesis_mean_pct"] = old - 5
    t2.to_csv(after / "improvement_over_rs.csv", index=False)
    moved = changes.render(history, after)
    line = next(x for x in moved.splitlines() if "O3 + O5, NSGA-II vs RS, budget 50 |" in x)
    assert line.endswith("| −5.0 | 1 (parameter order), 3 (selection runs apart) |")
    assert sum(1 for x in moved.splitlines() if "| −5.0 |" in x) == 1
    # the evaluation cost can move Table 5's host-CPU rows, not its GPU (time) rows
    t5 = [x for x in moved.splitlines() if x.startswith("| Table 5 |")]
    assert all("2 (evaluation cost)" in x for x in t5 if "O3 + O5" in x)
    assert not any("2 (evaluation cost)" in x for x in t5 if "| time," in x)
    assert changes.render(tmp_path / "nowhere", after) == ""
