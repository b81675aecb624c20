"""The before/after section of docs/results.md, "What moved" (analysis.tables.changes): one entry per release."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from analysis.tables import changes
from helpers import REPO

HISTORY = REPO / "docs" / "history"
TABLES, CONFIG = REPO / "tables", REPO / "config" / "config.yaml"
COMMITS = [changes.BASE] + [r.commit for r in changes.RELEASES if r.commit]


def entry(text: str, before: str, steps: bool = False) -> list[str]:
    """The lines of the entry of the release after commit `before`: up to its table of the changes one at a time,
    or (`steps`) that table's part."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith(f"### {before} → "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("### ")), len(lines))
    split = next((i for i in range(start, end) if lines[i].startswith("#### ")), end)
    return lines[split:end] if steps else lines[start:split]


def row(lines: list[str], table: str, label: str) -> list[str]:
    """A table row's cells: [table, row, before, after, after − before, changes]."""
    hits = [x for x in lines if x.startswith(f"| {table} | {label} |")]
    assert len(hits) == 1, (table, label, hits)
    return [c.strip() for c in hits[0].strip("|").split(" | ")]


def unexplained(body: list[changes.Row], release: changes.Release, among=None) -> list[str]:
    """The labels of the rows that moved although none of the release's changes (of those numbered `among`)
    reaches them."""
    return [r.label for r in body if changes._moved(r.old, r.new) and not changes.reaching(release, r, among)]


def published(commit: str, name: str, **keys) -> pd.Series:
    frame = pd.read_csv(HISTORY / commit / f"{name}.csv")
    hit = pd.Series(True, index=frame.index)
    for k, v in keys.items():
        hit &= frame[k] == v
    assert hit.sum() == 1, (commit, name, keys)
    return frame[hit].iloc[0]


@pytest.fixture(scope="module")
def text():
    return changes.render(HISTORY, TABLES, CONFIG)


def test_history_holds_the_tables_as_published():
    """Every history folder holds the same files, each byte-identical to the commit's tables/ (where git has it)."""
    names = {p.name for p in (HISTORY / changes.BASE).glob("*.csv")}
    assert "speedup_to_rs.csv" in names
    for commit in COMMITS:
        assert {p.name for p in (HISTORY / commit).glob("*.csv")} == names, commit
    git = ["git", "-C", str(REPO)]
    if shutil.which("git") is None or any(subprocess.run([*git, "cat-file", "-e", f"{c}^{{commit}}"],
                                                         capture_output=True).returncode for c in COMMITS):
        pytest.skip("the repository's history is not at hand (a shallow clone)")
    for commit in COMMITS:
        for name in sorted(names):
            shown = subprocess.run([*git, "show", f"{commit}:tables/{name}"], capture_output=True,
                                   check=True).stdout
            assert (HISTORY / commit / name).read_bytes() == shown, (commit, name)


def test_each_release_is_its_own_entry_between_its_commits(text):
    """Each entry compares the tables of the commit before the release with its own: issue 32's fixes end at
    2978a63 and the H200 space's entry starts there (the rows the issue found mixed)."""
    assert [x for x in text.splitlines() if x.startswith("### ")] == [
        f"### {b} → {a or 'current tables'}: {r.title}" for b, a, r, _, _ in changes.entries(HISTORY, TABLES)]
    for before, after, _, _, _ in changes.entries(HISTORY, TABLES):
        lines = entry(text, before)
        folder = HISTORY / after if after else TABLES
        for setting, name in (("nsga2", "NSGA-II"), ("nsga3", "NSGA-III")):
            if before != COMMITS[-1]:  # the last entry lists only rows that moved
                cells = row(lines, "Table 4", f"kmeans, {name}")
                was = published(before, "speedup_to_rs", kernel="kmeans", setting=setting)["reached_time_mean_pct"]
                now = pd.read_csv(folder / "speedup_to_rs.csv").set_index(["kernel", "setting"]).loc[
                    ("kmeans", setting), "reached_time_mean_pct"]
                assert cells[2:4] == [changes._fmt(was), changes._fmt(now)]
    # the rows, read from the history files: Table 5 NSGA-III and Table 2 NSGA-II on O3 + O5
    first, second = entry(text, COMMITS[0]), entry(text, COMMITS[1])
    for name, label, setting, budget in (("eval_time", "Table 5", "nsga3", 200),
                                         ("improvement_over_rs", "Table 2", "nsga2", 100)):
        at = {c: published(c, name, scope="multi-objective", setting=setting, budget=budget)["thesis_mean_pct"]
              for c in COMMITS[:3]}
        what = "NSGA-III" if setting == "nsga3" else "NSGA-II"
        assert row(first, label, f"O3 + O5, {what} vs RS, budget {budget}")[2:4] == [
            changes._fmt(at[COMMITS[0]]), changes._fmt(at[COMMITS[1]])]
        assert row(second, label, f"O3 + O5, {what} vs RS, budget {budget}")[2:4] == [
            changes._fmt(at[COMMITS[1]]), changes._fmt(at[COMMITS[2]])]
    # the constraint-aware row sets count the spaces of each side's own tables
    for group in ("accuracy threshold", "all"):
        n = [int(published(c, "constraint_aware_gains", group=group, algorithm="pso")["spaces"]) for c in COMMITS[:3]]
        assert any(x.startswith(f"| CA gain | {group}, PSO ({n[0]} → {n[1]} spaces) |") for x in first)
        assert any(x.startswith(f"| CA gain | {group}, PSO ({n[1]} → {n[2]} spaces) |") for x in second)


def test_evaluation_cost_is_no_cause_of_a_gpu_only_row(text):
    """Fix 2 (evaluation cost) reaches only time axes of host-CPU spaces: Table 4's rows of kernels measured only
    on GPUs do not list it, those of a host-CPU kernel do; Tables 2 and 3 (evaluations) never."""
    lines = entry(text, changes.BASE)
    host = {s.kernel for s in changes.config_spaces(CONFIG) if s.host_cpu}
    kernels = set(pd.read_csv(HISTORY / COMMITS[1] / "speedup_to_rs.csv")["kernel"])
    assert host and kernels - host  # both kinds are present
    for kernel in kernels:
        cause = row(lines, "Table 4", f"{kernel}, NSGA-II")[5]
        assert ("2 (evaluation cost)" in cause) == (kernel in host), kernel
    assert "2 (evaluation cost)" not in row(lines, "Table 4", "gemm, NSGA-II")[5]
    assert not any("evaluation cost" in x for x in lines if x.startswith(("| Table 2", "| Table 3")))
    t5 = [x for x in lines if x.startswith("| Table 5 |")]
    assert t5 and all("2 (evaluation cost)" in x for x in t5 if "O3 + O5" in x)
    assert not any("2 (evaluation cost)" in x for x in t5 if "| time," in x)


def test_every_row_that_moved_has_a_declared_cause():
    """A row that moved is reached by one of its release's declared changes; the H200 space's release reaches
    exactly the rows that pool it, and only they moved."""
    pools = changes.Pools(CONFIG)
    for before, after, release, old, new in changes.entries(HISTORY, TABLES):
        body = changes.rows(old, new, pools, release.renamed)
        assert body, (before, after)
        moved = unexplained(body, release)
        assert not moved, f"{before} → {after}: moved without a declared change: {moved}"
    h200 = changes.entries(HISTORY, TABLES)[1]
    body = changes.rows(h200[3], h200[4], pools)
    reached = [r for r in body if changes.reaching(h200[2], r)]
    assert reached and len(reached) < len(body)
    assert all(changes._moved(r.old, r.new) == bool(changes.reaching(h200[2], r)) for r in body)


def test_before_after_rows_follow_both_tables(tmp_path):
    history = tmp_path / "history"
    base = history / changes.BASE
    shutil.copytree(HISTORY / changes.BASE, base)
    after = history / COMMITS[1]
    after.mkdir()
    for f in base.glob("*.csv"):
        shutil.copy(f, after / f.name)
    tables = tmp_path / "tables"
    shutil.copytree(after, tables)
    same = changes.render(history, tables, CONFIG)
    lines = entry(same, changes.BASE)
    assert "| Table 2 | O3 + O5, NSGA-II vs RS, budget 50 |" in same
    # unchanged tables: every difference is 0.0, never "−0.0"
    rows = [x.split(" | ") for x in lines if x.startswith(("| Table", "| CA"))]
    assert rows and all(r[4] in ("0.0", "0.000") for r in rows)
    # a release whose tables are not at hand has no entry; no history at all, no section
    assert not any(x.startswith(f"### {COMMITS[1]} → ") for x in same.splitlines())
    assert changes.render(tmp_path / "nowhere", tables, CONFIG) == ""
    # move one value: only its row changes, by the amount moved, with the changes that can move it
    t2 = pd.read_csv(after / "improvement_over_rs.csv")
    hit = (t2.scope == "multi-objective") & (t2.setting == "nsga2") & (t2.budget == 50)
    t2.loc[hit, "thesis_mean_pct"] -= 5
    t2.to_csv(after / "improvement_over_rs.csv", index=False)
    lines = entry(changes.render(history, tables, CONFIG), changes.BASE)
    line = next(x for x in lines if "O3 + O5, NSGA-II vs RS, budget 50 |" in x)
    assert line.endswith("| −5.0 | 1 (parameter order), 3 (selection runs apart) |")
    assert sum(1 for x in lines if "| −5.0 |" in x) == 1


def republished(folder):
    """The committed tables in `folder` as the next republication brings them (where they are not so already):
    new columns in the middle, held-out scopes, the constraint-aware GPU row set renamed, columns reordered."""
    t2 = pd.read_csv(folder / "improvement_over_rs.csv")
    if "n_spaces" not in t2:
        t2.insert(3, "n_spaces", (t2["n_pairs"] + 1) // 2)
    if not t2["scope"].str.endswith("held-out").any():
        held = t2[t2["scope"] == "multi-objective"].assign(scope="multi-objective held-out")
        held["thesis_mean_pct"] -= 1.0
        t2 = pd.concat([held, t2], ignore_index=True)
    t2.to_csv(folder / "improvement_over_rs.csv", index=False)
    t4 = pd.read_csv(folder / "speedup_to_rs.csv")
    if "n" not in t4:
        t4.insert(1, "n", t4["n_reached"])
    t4[t4.columns[::-1]].to_csv(folder / "speedup_to_rs.csv", index=False)
    ca = pd.read_csv(folder / "constraint_aware_gains.csv")
    ca["group"] = ca["group"].replace({"GPU": changes.GPU_GROUP})
    ca.insert(2, "gain_resampled", ca["gain"])
    ca.to_csv(folder / "constraint_aware_gains.csv", index=False)


def test_the_last_release_reads_the_republished_tables(tmp_path):
    """The entry of the release now last renders from tables of the next republication's shape: rows chosen by
    name (not position), held-out scopes left out, the renamed row set matched; a value that moves without a
    declared change is shown with "none declared"."""
    last = COMMITS[-1]
    tables = tmp_path / "tables"
    shutil.copytree(TABLES, tables)
    republished(tables)
    lines = entry(changes.render(HISTORY, tables, CONFIG), last)
    body = changes.rows(HISTORY / last, tables, changes.Pools(CONFIG), changes.RELEASES[-1].renamed)
    old = changes.rows(HISTORY / COMMITS[-2], HISTORY / last, changes.Pools(CONFIG))
    assert len(body) == len(old)  # every headline row found again, the GPU row set under its new name
    assert any(changes.GPU_GROUP in r.label for r in body)
    if not any(changes._moved(r.old, r.new) for r in changes.rows(HISTORY / last, TABLES, changes.Pools(CONFIG),
                                                                   changes.RELEASES[-1].renamed)):
        assert lines[-1].startswith("No headline row moved")
    t4 = pd.read_csv(tables / "speedup_to_rs.csv")
    t4.loc[(t4.kernel == "gemm") & (t4.setting == "nsga2"), "reached_time_mean_pct"] += 7
    t4.to_csv(tables / "speedup_to_rs.csv", index=False)
    lines = entry(changes.render(HISTORY, tables, CONFIG), last)
    assert row(lines, "Table 4", "gemm, NSGA-II")[4:] == ["7.0", "none declared"]


def test_a_table_without_a_needed_column_is_named(tmp_path):
    tables = tmp_path / "tables"
    shutil.copytree(TABLES, tables)
    pd.read_csv(tables / "eval_time.csv").drop(columns="thesis_mean_pct").to_csv(tables / "eval_time.csv",
                                                                                 index=False)
    with pytest.raises(ValueError, match=r"eval_time\.csv: field 'thesis_mean_pct'"):
        changes.render(HISTORY, tables, CONFIG)


STEPPED = [(b, a, r, old, new) for b, a, r, old, new in changes.entries(HISTORY, TABLES) if r.steps]


def test_a_release_with_steps_recomputed_each_step():
    """Issue 32's fixes taken one at a time: each step's folder holds the tables the history keeps and the patch
    that made its code, the steps add every change of the release once, and they lead from the tables before the
    release to its own."""
    assert STEPPED, "issue 32's release declares its steps"
    names = {p.name for p in (HISTORY / changes.BASE).glob("*.csv")}
    for _, _, release, old, new in STEPPED:
        for step in release.steps:
            folder = HISTORY / step.folder
            assert {p.name for p in folder.glob("*.csv")} == names, step.folder
            patch = (folder / "step.patch").read_text()
            assert patch.startswith("From ") and "Subject: " in patch, step.folder
        steps = changes.transitions(release, old, new, HISTORY)
        assert steps[0][1] == old and steps[-1][2] == new
        assert all(a == b for (_, _, a), (_, b, _) in zip(steps, steps[1:]))
        taken = [n for nums, _, _ in steps for n in nums]
        assert sorted(taken) == list(range(1, len(release.changes) + 1))


def test_each_step_moves_only_what_its_changes_reach():
    """In every step, a headline row that moved is reached by a change that step adds: the seeds of the selection
    move no constraint-aware row, the minimum CA budget only constraint-aware rows, the evaluation cost no row of
    Tables 2 and 3 and none of a GPU-only kernel."""
    pools = changes.Pools(CONFIG)
    for _, _, release, old, new in STEPPED:
        for nums, b, a in changes.transitions(release, old, new, HISTORY):
            body = changes.rows(b, a, pools, release.renamed)
            assert body, (b.name, a.name)
            moved = unexplained(body, release, nums)
            assert not moved, f"{b.name} → {a.name}: moved without a change of the step: {moved}"
            assert any(changes._moved(r.old, r.new) for r in body), f"{b.name} → {a.name}: nothing moved"


def test_the_steps_table_shows_each_steps_move(text, tmp_path):
    """One row per headline row and one column per step; the steps' moves add up to the release's; a cell of a
    step that cannot reach its row is "·", and a move there is shown with "none declared"."""
    before, _, release, _, _ = STEPPED[0]
    lines, steps = entry(text, before), entry(text, before, steps=True)
    assert steps[0] == "#### One change at a time"
    table = [x for x in steps if x.startswith("| ")]
    head = [c.strip() for c in table[0].strip("|").split(" | ")]
    assert len(head) == 4 + len(release.steps) + 1
    combined = {tuple(r[:2]): r for r in (
        [c.strip() for c in x.strip("|").split(" | ")] for x in lines if x.startswith(("| Table", "| CA")))}
    for x in table[2:]:
        cells = [c.strip() for c in x.strip("|").split(" | ")]
        moves = [float(c.replace("−", "-")) for c in cells[3:-1] if c != "·"]
        before_v, after_v = (float(c.replace("−", "-")) for c in (cells[2], cells[-1]))
        assert abs(sum(moves) - (after_v - before_v)) <= 0.051 * len(cells), cells
        if tuple(cells[:2]) in combined:
            assert combined[tuple(cells[:2])][2:4] == [cells[2], cells[-1]]
    assert any("·" in x for x in table[2:])
    # a step that moves a row its changes cannot reach says so
    history = tmp_path / "history"
    shutil.copytree(HISTORY, history)
    first = history / release.steps[0].folder
    ca = pd.read_csv(first / "constraint_aware_gains.csv")
    ca.loc[(ca.group == "all") & (ca.algorithm == "pso"), "gain"] += 0.5
    ca.to_csv(first / "constraint_aware_gains.csv", index=False)
    steps = entry(changes.render(history, TABLES, CONFIG), before, steps=True)
    hit = [x for x in steps if x.startswith("| CA gain | all, PSO")]
    assert len(hit) == 1 and "(none declared)" in hit[0].split(" | ")[3]


def test_the_last_step_leaves_only_the_untaken_changes():
    """Issue 32's last step adds only fix 4 (the minimum CA budget, which reaches only constraint-aware
    aggregates): the recomputed tables of the step before equal those 2978a63 published, byte for byte, but for
    the constraint-aware gains."""
    _, after, release, _, new = STEPPED[0]
    last = HISTORY / release.steps[-1].folder
    assert after == "2978a63" and changes.transitions(release, HISTORY / changes.BASE, new, HISTORY)[-1][0] == (4,)
    for table in sorted(p.name for p in new.glob("*.csv")):
        assert ((last / table).read_bytes() == (new / table).read_bytes()) == (table != "constraint_aware_gains.csv"), \
            table


def test_the_base_recomputed_gives_the_tables_the_steps_start_from():
    """e85862f recomputed from nothing (docs/history/e85862f/recomputed.json): what differed from its published
    outputs is none of the tables the history keeps, so the steps' moves are their changes'."""
    record = json.loads((HISTORY / changes.BASE / "recomputed.json").read_text())
    assert record["base"] == changes.BASE and record["adds"] == []
    kept = {p.name for p in (HISTORY / changes.BASE).glob("*.csv")}
    assert kept and not kept & {Path(name).name for name in record["differs"]}
