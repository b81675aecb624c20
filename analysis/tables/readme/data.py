"""The published tables the generated text reads, and what it reads off them: the scopes, budgets and settings of a
table, the spaces that count and the kinds of spaces."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import yaml

from analysis.tables.comparison import HELD_OUT, held_out_scope
from analysis.tables.readme.text import listing, plural

ALPHA = 0.05  # significance level of the Holm-corrected tests


class Tables:
    """The published tables of one folder, read once, and the objective sets of the config."""

    def __init__(self, folder: str | Path, config: str | Path | Mapping):
        """`config`: the config file, or the config itself (its objective_sets, hyperparameters.kernels, spaces and
        leaderboard.seed_001 are read)."""
        self.folder = Path(folder)
        self._cache: dict[str, pd.DataFrame] = {}
        cfg = config if isinstance(config, Mapping) else yaml.safe_load(Path(config).read_text())
        self.objective_sets: dict[str, list[str]] = cfg["objective_sets"]
        # the kernels whose spaces the hyperparameters were selected on (the held-out scopes leave them out)
        self.selection_kernels: list[str] = list((cfg.get("hyperparameters") or {}).get("kernels") or [])
        # space name (device/kernel) -> its source file, which says where it was measured
        self.sources: dict[str, str] = {f"{s['device']}/{s['kernel']}": str(s.get("source", ""))
                                        for s in cfg.get("spaces") or []}
        # seed 001's comparison with pyATF (its spaces, its values), the leaderboard's reference
        self.seed_001: dict = dict((cfg.get("leaderboard") or {}).get("seed_001") or {})

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._cache:
            self._cache[name] = pd.read_csv(self.folder / f"{name}.csv")
        return self._cache[name]

    def multi_sets(self) -> list[str]:
        """The multi-objective sets that have rows in the comparison, in config order."""
        present = set(self["indicators"]["objective_set"])
        return [s for s, objs in self.objective_sets.items() if len(objs) > 1 and s in present]

    def scope_sets(self, scope: str) -> list[str]:
        """The objective sets a scope of the means pools (a held-out scope: those of the scope it restricts)."""
        scope = base_scope(scope)
        if scope == "multi-objective":
            return self.multi_sets()
        if scope == "all":
            return sorted(set(self["indicators"]["objective_set"]))
        return [scope]

    def scope_label(self, scope: str) -> str:
        base = base_scope(scope)
        label = " + ".join(self.scope_sets(base)) if base == "multi-objective" else base
        return f"{label}, {HELD_OUT}" if base != scope else label

    def with_held_out(self, name: str, scopes: Sequence[str]) -> list[str]:
        """`scopes`, each followed by its held-out twin where table `name` has one (tables from before the
        held-out scopes have none)."""
        present = set(self[name]["scope"])
        return [x for scope in scopes for x in (scope, held_out_scope(scope)) if x == scope or x in present]

    def selection(self) -> str:
        """The kernels the hyperparameters were selected on, as text ('bessel, convolution2d and mriq')."""
        return listing(self.selection_kernels)


def base_scope(scope: str) -> str:
    """The scope a held-out scope restricts (itself for any other scope)."""
    suffix = f" {HELD_OUT}"
    return scope[: -len(suffix)] if scope.endswith(suffix) else scope


def counts(row: pd.Series | pd.DataFrame, pairs: str = "n_pairs", spaces: str = "n_spaces") -> str:
    """'20 pairs, 10 spaces' from a table row (or rows: the largest counts), or '20' for a table from before
    the spaces were counted."""
    n = int(row[pairs].max()) if isinstance(row, pd.DataFrame) else int(row[pairs])
    if spaces not in row:
        return f"{n}"
    k = int(row[spaces].max()) if isinstance(row, pd.DataFrame) else int(row[spaces])
    return f"{n} pair{plural(n)}, {k} space{plural(k)}"


def budgets(t: Tables) -> list[int]:
    return sorted(int(b) for b in t["indicators"]["budget"].unique())


def settings(frame: pd.DataFrame, only: Sequence[str] | None = None) -> list[str]:
    """The settings of a table in a stable order (aware ones first)."""
    labels = list(dict.fromkeys(frame["setting"]))
    labels.sort(key=lambda s: (s != "rs", s.endswith("_unaware"), s))
    return [s for s in labels if only is None or s in only]


def budget_header(t: Tables, first: Sequence[str]) -> list[str]:
    b = budgets(t)
    return [*first, f"budget {b[0]}", *(str(x) for x in b[1:])]


def verdicts(t: Tables, name_: str = "significance") -> pd.DataFrame:
    """Per test row: better / worse / no difference (Holm p < ALPHA, A12 above or below 0.5)."""
    df = t[name_].copy()
    sig = df["p_holm"] < ALPHA
    df["verdict"] = "no difference"
    df.loc[sig & (df["a12"] > 0.5), "verdict"] = "better"
    df.loc[sig & (df["a12"] < 0.5), "verdict"] = "worse"
    return df


def kept_out(frame: pd.DataFrame) -> pd.Series:
    """Per row of a constraint-aware runs or scores table, whether its space is kept out of the aggregates (a
    reason in `excluded`; an empty cell reads back as NaN). Tables written before spaces could be kept out have
    no such column: every space counts."""
    if "excluded" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["excluded"].notna() & (frame["excluded"].astype(str) != "")


def counted(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a constraint-aware runs or scores table whose space counts in the aggregates (`kept_out`)."""
    return frame[~kept_out(frame)]


def resampled(frame: pd.DataFrame, column: str) -> bool:
    """Whether a constraint-aware table has per-space intervals (rule ca_resample): the column is there and
    filled somewhere (tables written before, or with constraint_aware.score_resamples 0, have none)."""
    return column in frame.columns and bool(frame[column].notna().any())


def has(t: Tables, name_: str) -> bool:
    """Whether the folder has table `name_` (the leaderboard's are absent where its study did not run)."""
    return (t.folder / f"{name_}.csv").is_file()


def excluded_text(sp: pd.DataFrame) -> pd.Series:
    """The spaces table's `excluded` column as text ("" for a space in the studies)."""
    if "excluded" not in sp:
        return pd.Series("", index=sp.index)
    return sp["excluded"].astype(object).fillna("").astype(str)


GPU_MIXED = "mixed-precision GPU"  # a mixed-precision kernel's CUDA space (data/sweeps/cuda/)


def space_kinds(t: Tables) -> dict[str, pd.DataFrame]:
    """The studied spaces of tables/spaces.csv by where they were measured: `host-CPU` (the mixed-precision
    kernels swept on the host CPU, data/sweeps/cpu/), `mixed-precision GPU` (their CUDA sweeps,
    data/sweeps/cuda/) and `GPU` (every other space: the imported GPU spaces). A space the config does not
    name (tables of another config) counts as host-CPU when it is multi-objective, as GPU otherwise."""
    sp = t["spaces"]
    multi = t.multi_sets()
    excluded = excluded_text(sp)
    studied = sp[excluded == ""]
    is_multi = studied[[f"Z_{s}" for s in multi]].notna().all(axis=1) if multi else studied["space"].isna()
    source = studied["space"].map(lambda name: t.sources.get(name, "")).str.replace("\\", "/")
    cpu = source.str.contains("/sweeps/cpu/") | ((source == "") & is_multi)
    cuda = source.str.contains("/sweeps/cuda/")
    return {"host-CPU": studied[cpu], GPU_MIXED: studied[cuda & ~cpu], "GPU": studied[~cpu & ~cuda]}


def published(t: Tables, name: str) -> pd.DataFrame | None:
    """A table of the folder, None where the folder has none (tables from before it was published)."""
    return t[name] if (t.folder / f"{name}.csv").is_file() else None
