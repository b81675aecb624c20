"""Before/after tables of published results across each release that moved them (docs/results.md, "What moved").

A release that changes what the study simulates (not only how fast) moves published numbers. Readers of the
earlier numbers need to see what moved and why: `docs/history/<commit>/` keeps the tables as published at
`<commit>` (`git show <commit>:tables/<name>.csv`, docs/history/README.md), and `RELEASES` declares, in order,
every release since `BASE` with the commit that republished it, its title and its changes. For each release
this module renders the headline rows of Tables 2-5 and the constraint-aware gains as published at the commit
before it and at its own commit (the last release, whose commit is None, against the current `tables/`), and
which of the release's changes can have moved each row.

Which changes can move a row is decided by what the row is computed from: the spaces it pools (read from the
study's config: a scope's objective sets, Table 4's kernel, a constraint-aware row set) and its axis (IGD+ at a
budget of evaluations for Tables 2 and 3; time for Tables 4, 5 and the constraint-aware scores). Each change
declares which rows it reaches (`Change.reaches`). A row that no change of its release reaches and that did not
move is left out of the entry (and counted); a row that moved although no declared change reaches it is shown
with "none declared": the declaration is then incomplete (tests/tables/test_changes.py fails on it).

A release whose changes were also applied one at a time declares its `steps`: each a folder of
`docs/history/` holding the tables of the study recomputed from nothing with that step's changes added to the
step before it (with the patch of its code and its provenance), rendered as one table with a column per step.

The next republication that moves a number: add `docs/history/<commit>/` for the commit of the release now
last (it then has a commit of its own) and a new last `Release(None, ...)` with that republication's changes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from analysis import paths
from analysis.errors import InputError
from analysis.indicators.constraint_aware import space_group
from analysis.names import display_name
from analysis.tables.comparison import HELD_OUT
from analysis.tables.constraint_aware import ALL_GROUP, GPU_GROUP

# tables as published at each release that moved them: docs/history/<commit>/
HISTORY = paths.HISTORY
ALGORITHMS = {"nsga2": "NSGA-II", "nsga3": "NSGA-III"}
# the scopes of Tables 2, 3 and 5 whose rows are headline rows, and their labels
SCOPES = {"multi-objective": "O3 + O5", "time": "time"}
# the row's table label: Tables 2 and 3 are on the IGD+ axis (a budget of evaluations), the others on time
TABLE_2, TABLE_3, TABLE_4, TABLE_5, CA = "Table 2", "Table 3", "Table 4", "Table 5", "CA gain"
TIME_AXIS = (TABLE_4, TABLE_5, CA)
TUNED = (TABLE_2, TABLE_3, TABLE_4, TABLE_5)  # the tables of tuned NSGA-II/III runs
# a space measured on the host CPU (its sweep under data/sweeps/cpu/; analysis.tables.readme.data.space_kinds's rule)
HOST_CPU_SOURCE = "/sweeps/cpu/"
# a value that differs by less than this (relative) did not move: the tables are written at 12 significant digits
SAME = 1e-9


@dataclass(frozen=True)
class Space:
    """A space of the study's config, with what decides which rows pool it and which changes reach it."""

    name: str  # device/kernel
    kernel: str
    objective_sets: frozenset[str]
    host_cpu: bool
    group: str  # its constraint-aware group
    threshold: bool  # tuned on time with an accuracy threshold (not on time alone)


@dataclass(frozen=True)
class Change:
    """One change of a release: its title and which rows it can move (table label, spaces the row pools)."""

    title: str
    reaches: Callable[[str, Sequence[Space]], bool]


@dataclass(frozen=True)
class Step:
    """The study recomputed with some more of a release's changes than the step before it (docs/history/<folder>/):
    the release's changes taken one at a time. `changes` are the numbers (from 1) of the release's changes this
    step adds; the step after the last one, to the release's own tables, adds the changes no step took."""

    folder: str
    changes: tuple[int, ...]


@dataclass(frozen=True)
class Release:
    """A republication that moved published numbers: its commit (None: the current `tables/`, not yet
    republished at a commit of its own), its title, its changes, a note, the row names it renamed, and the steps
    that recomputed the study with its changes one at a time (none: only their combined effect is known)."""

    commit: str | None
    title: str
    changes: tuple[Change, ...]
    note: str = ""
    renamed: Mapping[str, str] = field(default_factory=dict)  # a row set's name before -> after
    steps: tuple[Step, ...] = ()


def _every(table: str, spaces: Sequence[Space]) -> bool:
    return True


def _host_cpu_time(table: str, spaces: Sequence[Space]) -> bool:
    return table in TIME_AXIS and any(s.host_cpu for s in spaces)


def _tuned(table: str, spaces: Sequence[Space]) -> bool:
    return table in TUNED


def _constraint_aware(table: str, spaces: Sequence[Space]) -> bool:
    return table == CA


def _pooling(name: str) -> Callable[[str, Sequence[Space]], bool]:
    def reaches(table: str, spaces: Sequence[Space]) -> bool:
        return any(s.name == name for s in spaces)
    return reaches


def _no_value(table: str, spaces: Sequence[Space]) -> bool:
    return False


# the tables as published before the first release below
BASE = "e85862f"
RELEASES = (
    Release("2978a63", "Review fixes of the simulated inputs (issue 32)", (
        Change("parameter order", _every),
        Change("evaluation cost", _host_cpu_time),
        Change("selection runs apart", _tuned),
        Change("minimum CA budget", _constraint_aware),
    ), note="1 changes every run of a Kernel Tuner strategy; 2 (the compile cost charged to a host-CPU "
             "evaluation) only the time axes (Tables 4, 5, the constraint-aware scores) of rows that pool a "
             "host-CPU space; 3 every tuned NSGA-II/III run (Tables 2-5); 4 only the constraint-aware aggregates. "
             "The four were applied at once, in one rerun of the whole study: the first table is their combined "
             "effect. The second takes them one at a time: e85862f's study was recomputed from nothing with fix 3 "
             "added, then 2, then 1; the last step, to the tables 2978a63 published, adds fix 4 (with the release's "
             "commits that declare no change of a number: README, figures, linters, GPU tooling). A change's move "
             "is measured after those before it: where two interact (1 and 3 both change the tuned runs), another "
             "order would split a move between them otherwise. Fix 1 could not come before fix 2: with the "
             "parameter order but the old evaluation cost, the constraint-aware study stops on the host-CPU K-Means "
             "space, whose budget is a few evaluations (no unaware PSO run of 20 attempts evaluated two valid "
             "configurations in the scored time).",
       steps=(Step("e85862f+fix3", (3,)), Step("e85862f+fix3+fix2", (2,)), Step("e85862f+fix3+fix2+fix1", (1,)))),
    Release("1c2ba34", "K-Means' CUDA space on an H200 joins both studies (issue 35)", (
        Change("nvidia-h200/kmeans joins", _pooling("nvidia-h200/kmeans")),
    ), note="The new space moves only the rows that pool it: the multi-objective scopes, Table 4's K-Means row "
            "and the constraint-aware row sets that hold it."),
    Release(None, "The referee's review (issue 44): intervals and row sets", (
        Change("intervals resample spaces (cluster bootstrap), held-out scopes, n_spaces", _no_value),
        Change("constraint-aware intervals over resamples of runs", _no_value),
        Change("the GPU row set named for what it holds", _no_value),
    ), note="These change intervals, add columns and rows, and rename the constraint-aware row set of the spaces "
            f"tuned on time ('GPU' → '{GPU_GROUP}'): none moves a headline value.",
       renamed={"GPU": GPU_GROUP}),
)


def _fmt(v: float, digits: int = 1) -> str:
    if pd.isna(v):
        return "–"
    v = round(float(v), digits) or 0.0  # no "−0.0"
    return f"{v:.{digits}f}".replace("-", "−")


def _moved(old: float, new: float) -> bool:
    if pd.isna(old) or pd.isna(new):
        return pd.isna(old) != pd.isna(new)
    if math.isinf(old) or math.isinf(new):
        return old != new
    return abs(new - old) > SAME * max(1.0, abs(old))


def config_spaces(config: str | Path) -> list[Space]:
    """The spaces of the study's config, each with its objective sets, whether it was measured on the host CPU,
    and its constraint-aware group."""
    cfg = yaml.safe_load(Path(config).read_text()) or {}
    entries = cfg.get("spaces")
    if not isinstance(entries, list):
        raise InputError(config, "a list of spaces is required", "spaces")
    default_sets = (cfg.get("simulation") or {}).get("objective_sets") or []
    thresholds = (cfg.get("constraint_aware") or {}).get("thresholds") or {}
    out = []
    for i, s in enumerate(entries):
        for key in ("kernel", "device"):
            if key not in s:
                raise InputError(config, "missing", f"spaces[{i}].{key}")
        threshold = thresholds.get(s["kernel"])
        out.append(Space(f"{s['device']}/{s['kernel']}", s["kernel"],
                         frozenset(s.get("objective_sets") or default_sets),
                         HOST_CPU_SOURCE in str(s.get("source", "")).replace("\\", "/"),
                         space_group(s.get("group"), threshold), bool(threshold)))
    return out


def _multi_sets(config: str | Path) -> set[str]:
    sets = (yaml.safe_load(Path(config).read_text()) or {}).get("objective_sets") or {}
    return {name for name, objectives in sets.items() if len(objectives) > 1}


class Pools:
    """The spaces of the config that a row pools: a scope's, a kernel's, a constraint-aware row set's."""

    def __init__(self, config: str | Path):
        self.spaces = config_spaces(config)
        self.multi = _multi_sets(config)

    def scope(self, scope: str) -> list[Space]:
        base = scope.removesuffix(f" {HELD_OUT}")  # a held-out scope pools some of its scope's spaces
        if base == "all":
            return self.spaces
        if base == "multi-objective":
            return [s for s in self.spaces if s.objective_sets & self.multi]
        return [s for s in self.spaces if base in s.objective_sets]

    def kernel(self, kernel: str) -> list[Space]:
        return [s for s in self.spaces if s.kernel == kernel]

    def group(self, group: str) -> list[Space]:
        if group == ALL_GROUP:
            return self.spaces
        if group == GPU_GROUP:  # every space tuned on time, whatever its group
            return [s for s in self.spaces if not s.threshold]
        return [s for s in self.spaces if s.group == group]


@dataclass(frozen=True)
class Row:
    table: str
    label: str
    old: float
    new: float
    spaces: tuple[Space, ...]
    digits: int = 1
    key: str = ""  # the row's name without what can change between tables (a row set's spaces); default: label
    counts: tuple[int, int] | None = None  # a constraint-aware row set's spaces before and after

    @property
    def name(self) -> str:
        return self.key or self.label


def _read(folder: Path, name: str, columns: Sequence[str]) -> pd.DataFrame | None:
    """The named columns of `folder/name.csv` (None if there is no such file); a missing column is an error."""
    path = folder / f"{name}.csv"
    if not path.is_file():
        return None
    frame = pd.read_csv(path)
    for c in columns:
        if c not in frame.columns:
            raise InputError(path, "missing (needed for docs/results.md, \"What moved\")", c)
    return frame[list(columns)]


def current_name(name: str) -> str:
    """A row set's name after every rename declared by the releases (what `Pools.group` knows it by)."""
    for release in RELEASES:
        name = release.renamed.get(name, name)
    return name


def rows(before: Path, after: Path, pools: Pools, renamed: Mapping[str, str] | None = None) -> list[Row]:
    """The headline rows present in both folders (a row set renamed by the release matched under its new name)."""
    renamed = dict(renamed or {})
    out: list[Row] = []
    scope_keys = ["scope", "setting", "budget"]
    for label, name in ((TABLE_2, "improvement_over_rs"), (TABLE_3, "nsga3_over_nsga2"), (TABLE_5, "eval_time")):
        old, new = (_read(f, name, [*scope_keys, "thesis_mean_pct"]) for f in (before, after))
        if old is None or new is None:
            continue
        merged = old.merge(new, on=scope_keys, suffixes=("_old", "_new"))
        merged = merged[merged["setting"].isin(ALGORITHMS) & merged["scope"].isin(SCOPES)]
        for _, r in merged.iterrows():
            what = ALGORITHMS[r["setting"]] + (" vs NSGA-II" if label == TABLE_3 else " vs RS")
            out.append(Row(label, f"{SCOPES[r['scope']]}, {what}, budget {int(r['budget'])}",
                           r["thesis_mean_pct_old"], r["thesis_mean_pct_new"], tuple(pools.scope(r["scope"]))))
    old, new = (_read(f, "speedup_to_rs", ["kernel", "setting", "reached_time_mean_pct"]) for f in (before, after))
    if old is not None and new is not None:
        merged = old.merge(new, on=["kernel", "setting"], suffixes=("_old", "_new"))
        for _, r in merged[merged["setting"].isin(ALGORITHMS)].iterrows():
            out.append(Row(TABLE_4, f"{r['kernel']}, {ALGORITHMS[r['setting']]}", r["reached_time_mean_pct_old"],
                           r["reached_time_mean_pct_new"], tuple(pools.kernel(r["kernel"]))))
    columns = ["group", "algorithm", "spaces", "gain"]
    old, new = (_read(f, "constraint_aware_gains", columns) for f in (before, after))
    if old is not None and new is not None:
        # a row set the release renamed is matched under its new name where the tables after it have that name
        names = set(new["group"])
        old = old.assign(was=old["group"], group=old["group"].map(
            lambda g: renamed[g] if renamed.get(g) in names else g))
        merged = old.merge(new, on=["group", "algorithm"], suffixes=("_old", "_new"))
        for _, r in merged[merged["algorithm"] != "rs"].iterrows():
            group = r["group"] + (f" (before: {r['was']})" if r["was"] != r["group"] else "")
            key = f"{group}, {display_name(r['algorithm'])}"
            counts = (int(r["spaces_old"]), int(r["spaces_new"]))
            out.append(Row(CA, f"{key} ({counts[0]} → {counts[1]} spaces)", r["gain_old"], r["gain_new"],
                           tuple(pools.group(current_name(r["group"]))), 3, key, counts))
    return out


def reaching(release: Release, row: Row, among: Sequence[int] | None = None) -> list[int]:
    """The numbers (from 1) of the release's changes (of those numbered `among`, if given) that can move the row."""
    return [i for i, c in enumerate(release.changes, 1)
            if (among is None or i in among) and c.reaches(row.table, row.spaces)]


def _cause(release: Release, row: Row) -> str:
    numbers = reaching(release, row)
    return ", ".join(f"{n} ({release.changes[n - 1].title})" for n in numbers) or "none declared"


def _folder(history: Path, tables: Path, commit: str | None) -> Path:
    return tables if commit is None else history / commit


def entries(history: Path, tables: Path) -> list[tuple[str, str | None, Release, Path, Path]]:
    """(commit before, commit after, release, folder before, folder after) of every release, in order."""
    out = []
    before = BASE
    for release in RELEASES:
        out.append((before, release.commit, release, history / before, _folder(history, tables, release.commit)))
        before = release.commit  # type: ignore[assignment]  # only the last release has no commit
    return out


def render_release(before: str, after: str | None, release: Release, old: Path, new: Path, pools: Pools,
                   history: Path) -> str:
    """One release's entry: its heading, changes, note and the rows its changes reach or that moved; then, if the
    release has steps and their tables are in `history`, its changes one at a time (`render_steps`)."""
    body = rows(old, new, pools, release.renamed)
    if not body:
        return ""
    shown = [r for r in body if reaching(release, r) or _moved(r.old, r.new)]
    where = f"`docs/history/{after}/`" if after else "the current `tables/`"
    lines = [f"### {before} → {after or 'current tables'}: {release.title}", "",
             f"Published at {before} (`docs/history/{before}/`) against {where}. The changes: "
             + "; ".join(f"{n}. {c.title}" for n, c in enumerate(release.changes, 1)) + "."
             + (f" {release.note}" if release.note else ""), ""]
    if shown:
        head = ["table", "row", "before", "after", "after − before", "changes that can move it"]
        lines += ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
        lines += ["| " + " | ".join([r.table, r.label, _fmt(r.old, r.digits), _fmt(r.new, r.digits),
                                     _fmt(r.new - r.old, r.digits), _cause(release, r)]) + " |" for r in shown]
        lines.append("")
    rest = len(body) - len(shown)
    if not shown:
        lines.append(f"No headline row moved: the {rest} rows present before and after are equal.")
    elif rest:
        lines.append(f"The other {rest} headline rows pool nothing these changes reach, and did not move.")
    steps = render_steps(release, old, new, history, pools)
    if steps:
        lines += ["", *steps]
    return "\n".join(lines) + "\n"


def transitions(release: Release, old: Path, new: Path, history: Path) -> list[tuple[tuple[int, ...], Path, Path]]:
    """The release's steps as (changes added, folder before, folder after), from the tables before the release to
    its own: each declared step, then the changes no step took (empty if the release has no steps)."""
    if not release.steps:
        return []
    out, before = [], old
    for step in release.steps:
        out.append((step.changes, before, history / step.folder))
        before = history / step.folder
    taken = {n for step in release.steps for n in step.changes}
    out.append((tuple(n for n in range(1, len(release.changes) + 1) if n not in taken), before, new))
    return out


def render_steps(release: Release, old: Path, new: Path, history: Path, pools: Pools) -> list[str]:
    """The release's changes one at a time: one row per headline row, one column per step with the row's move
    in that step; a step whose changes cannot reach the row shows "·" where the row did not move, and its move
    with "none declared" where it did."""
    steps = transitions(release, old, new, history)
    if not steps or not all(b.is_dir() and a.is_dir() for _, b, a in steps):
        return []
    moves = [{(r.table, r.name): r for r in rows(b, a, pools, release.renamed)} for _, b, a in steps]
    keys = [k for k in moves[0] if all(k in m for m in moves)]
    head = ["table", "row", f"before ({old.name})",
            *(" + ".join(f"{n}. {release.changes[n - 1].title}" for n in nums) for nums, _, _ in steps),
            f"after ({new.name if new.parent == history else 'tables'})"]
    lines = ["#### One change at a time", "",
             "The study recomputed from nothing after each step (`docs/history/<step>/`, each with the patch that made "
             "it: docs/history/README.md), the changes added in this order. A cell is the row's move in that step; "
             "\"·\": the step's change cannot reach the row, and the row did not move.",
             "", "| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for key in keys:
        first, last = moves[0][key], moves[-1][key]
        label = (f"{first.name} ({first.counts[0]} → {last.counts[1]} spaces)" if first.counts and last.counts
                 else first.label)
        cells = [first.table, label, _fmt(first.old, first.digits)]
        for (nums, _, _), m in zip(steps, moves):
            r = m[key]
            moved, reached = _moved(r.old, r.new), reaching(release, r, nums)
            cells.append("·" if not (moved or reached) else _fmt(r.new - r.old, r.digits)
                         + ("" if reached else " (none declared)"))
        cells.append(_fmt(last.new, last.digits))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render(history: Path, tables: Path, config: str | Path) -> str:
    """The Markdown section "What moved": one entry per release of `RELEASES` whose tables are at hand;
    empty if there are none."""
    pools = Pools(config)
    parts = [render_release(b, a, release, old, new, pools, Path(history))
             for b, a, release, old, new in entries(Path(history), Path(tables))
             if old.is_dir() and new.is_dir()]
    parts = [p for p in parts if p]
    if not parts:
        return ""
    intro = ("Each release that moved published numbers, in order: its headline rows as published at the commit "
             "before it and after it (`docs/history/<commit>/`, docs/history/README.md). Tables 2, 3 and 5 as the "
             "thesis's mean in %, Table 4 as the mean time to RS's budget-200 quality in % (reached pairs), and the "
             "constraint-aware gain (aware − unaware score). The last column names the release's changes that can "
             "move the row, decided by what the row is computed from: the spaces it pools (by the study's config) "
             "and its axis (evaluations for Tables 2 and 3, time for the others). A row that none of them reaches "
             "and that did not move is left out and counted.")
    return "\n".join(["## What moved", "", intro, "", *parts])
