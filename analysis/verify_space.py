"""Check one space's published rows: rerun its comparison from the committed data and compare.

`python -m analysis.cli verify-space --space amd-epyc-vm/lavamd` imports the space from its
source under `data/`, computes its true fronts, runs every comparison setting of the config at
every budget (a tuned setting takes the options picked in the published
`tables/hyperparameters.csv`, so the hyperparameter grid is not rerun), computes the
indicators and builds the study tables from them, all with the functions the Snakemake rules
call. The rows of the per-space tables (those with `device` and `kernel` columns:
indicators, significance, speedup_to_rs_spaces, aware_over_unaware_tests) are then compared
with the published ones of that space, cell by cell after the same CSV writer: a row matches
only when every cell is equal as written. Everything is written under a work folder, never
into the published tables.
"""

from __future__ import annotations

import io
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import config as study_config
from analysis.errors import InputError
from analysis.hyperparams import selection as hyperparams
from analysis.indicators import jobs as indicator_runs
from analysis.indicators.gather import gather
from analysis.io import round_floats, write_csv
from analysis.simulate import jobs as runs
from analysis.spaces import fronts
from analysis.spaces.importers import import_space
from analysis.statistics import Bootstrap
from analysis.tables import comparison as tables
from analysis.tables import registry

log = logging.getLogger(__name__)

# Columns that identify a row in a per-space table (those present are used).
KEY = ["device", "kernel", "objective_set", "budget", "setting", "baseline", "algorithm"]
# Tables whose rows do not depend on the other settings of the comparison: the ones compared
# when only some settings are rerun (`settings`).
PER_SETTING = ["indicators", "speedup_to_rs_spaces"]


@dataclass
class TableCheck:
    """The outcome for one table: every compared row with its status and differing cells."""

    name: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mismatches(self) -> int:
        return sum(r["status"] != "match" for r in self.rows)


def _as_written(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` as the table writer puts it in a CSV (`analysis.io.write_csv`: floats at
    `PUBLISHED_FLOAT_DIGITS` significant digits), read back as text (the published form)."""
    buf = io.StringIO()
    round_floats(frame).to_csv(buf, index=False)
    buf.seek(0)
    return pd.read_csv(buf, dtype=str, keep_default_na=False)


def compare(name: str, published: pd.DataFrame, reproduced: pd.DataFrame) -> TableCheck:
    """Row-by-row comparison of two text tables of one space (keys from KEY, cells as text)."""
    check = TableCheck(name)
    key = [c for c in KEY if c in published.columns and c in reproduced.columns]
    columns = list(dict.fromkeys([*published.columns, *reproduced.columns]))
    pub = {tuple(r[c] for c in key): r for r in published.to_dict("records")}
    rep = {tuple(r[c] for c in key): r for r in reproduced.to_dict("records")}
    for k in list(pub) + [k for k in rep if k not in pub]:
        ident = dict(zip(key, k))
        if k not in rep:
            check.rows.append({**ident, "status": "missing from the rerun", "diff": {}})
        elif k not in pub:
            check.rows.append({**ident, "status": "not published", "diff": {}})
        else:
            diff = {c: (pub[k].get(c, "<absent>"), rep[k].get(c, "<absent>")) for c in columns
                    if pub[k].get(c, "<absent>") != rep[k].get(c, "<absent>")}
            check.rows.append({**ident, "status": "match" if not diff else "MISMATCH", "diff": diff})
    return check


def _space_entry(config: dict[str, Any], space: str) -> dict[str, Any]:
    device, _, kernel = space.partition("/")
    for entry in config["spaces"]:
        if (entry["device"], entry["kernel"]) == (device, kernel):
            if entry.get("excluded"):
                raise InputError(None, f"space '{space}' is excluded from the studies ({entry['excluded']}), so "
                                       "no row of it is published", field="--space")
            return entry
    known = ", ".join(f"{s['device']}/{s['kernel']}" for s in config["spaces"])
    raise InputError(None, f"space '{space}' is not a committed space of the config (they are: {known}; "
                           "a space made by a sweep has no committed data to rerun)", field="--space")


def rerun(config: dict[str, Any], space: str, tuned_table: str | Path, work: str | Path,
          settings: Sequence[str] | None = None, base: str | Path = study_config.ROOT
          ) -> dict[str, pd.DataFrame]:
    """Rerun the comparison of `space` into `work`; the per-space tables it yields, by name."""
    entry = _space_entry(config, space)
    work = Path(work)
    base = Path(base)
    sim = config["simulation"]
    chosen = dict(sim["algorithms"])
    if settings:
        unknown = sorted(set(settings) - set(chosen))
        if unknown:
            raise InputError(None, f"unknown settings {unknown} (the config's: {', '.join(chosen)})",
                             field="--settings")
        chosen = {label: spec for label, spec in chosen.items() if label in settings}
    sp, sm = work / "space.parquet", work / "space.json"
    imported = import_space(base / entry["source"], kernel=entry["kernel"], device=entry["device"],
                            fmt=entry["format"], definition=base / entry["definition"] if entry["definition"] else None,
                            objectives=entry["objectives"],
                            compile_times=[base / c for c in entry.get("compile_times") or []])
    imported.save(sp, sm)
    fp, fj = work / "fronts.parquet", work / "fronts.json"
    fronts.run(sp, sm, config["objective_sets"], fp, fj)
    curves, finals = [], []
    for objective_set in entry["objective_sets"] or sim["objective_sets"]:
        files = []
        for label, spec in chosen.items():
            options = spec.get("options", {})
            per_budget = [{**options, **hyperparams.picked_options(tuned_table, spec["tuned"], b)}
                          if spec.get("tuned") else options for b in sim["budgets"]]
            outs = [work / "runs" / objective_set / label / f"b{b}.parquet" for b in sim["budgets"]]
            log.info("%s %s %s: %s", space, objective_set, label, per_budget)
            runs.run(sp, sm, objective_set, config["objective_sets"][objective_set], spec["algorithm"], per_budget,
                     sim["budgets"], sim["repetitions"], outs, proposal_cap=sim["proposal_cap"])
            files += outs
        curve, final = work / f"{objective_set}.curve.parquet", work / f"{objective_set}.final.parquet"
        indicator_runs.run(files, {label: spec["algorithm"] for label, spec in chosen.items()}, sp, sm, fp, fj,
                           objective_set, curve, final)
        curves.append(curve)
        finals.append(final)
    boot = Bootstrap(config["tables"]["bootstrap_resamples"], config["tables"]["bootstrap_seed"])
    algorithms = {label: spec["algorithm"] for label, spec in chosen.items()}
    final, curve = gather(finals), gather(curves)
    if settings:
        built = {"indicators": tables.indicator_stats(final)}
        if "rs" in algorithms.values():
            rs = next(label for label, a in algorithms.items() if a == "rs")
            built["speedup_to_rs_spaces"] = tables.speedup(curve, final, rs, [s for s in algorithms if s != rs])
    else:
        built = {name: frame for name, (frame, _, _) in
                 registry.build(final, curve, algorithms, boot, config["objective_sets"]).items()}
    out = {name: frame for name, frame in built.items() if {"device", "kernel"} <= set(frame.columns)}
    for name, frame in out.items():
        write_csv(frame, work / f"{name}.csv")
    return out


def verify(space: str, config_path: str | Path, published: str | Path, work: str | Path | None = None,
           settings: Sequence[str] | None = None, base: str | Path = study_config.ROOT) -> list[TableCheck]:
    """Rerun `space` and compare its per-space tables with the published ones in `published` (the
    config's data paths are relative to `base`, the repository)."""
    config = study_config.load(config_path)
    published = Path(published)
    device, _, kernel = space.partition("/")
    tuned = published / "hyperparameters.csv"
    with tempfile.TemporaryDirectory(prefix="verify-") as tmp:
        folder = Path(work) if work else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        reproduced = rerun(config, space, tuned, folder, settings, base=base)
    checks = []
    for name, frame in reproduced.items():
        path = published / f"{name}.csv"
        if not path.is_file():
            raise InputError(path, "no published table to compare with")
        pub = pd.read_csv(path, dtype=str, keep_default_na=False)
        pub = pub[(pub["device"] == device) & (pub["kernel"] == kernel)]
        rep = _as_written(frame)
        if settings:
            pub = pub[pub["setting"].isin(settings)]
        checks.append(compare(name, pub, rep))
    return checks


def report(checks: Sequence[TableCheck], space: str) -> str:
    """One line per compared row, the differing cells of a mismatch, and a verdict."""
    lines = []
    for check in checks:
        for row in check.rows:
            shown = [v for k, v in row.items() if k not in ("status", "diff", "device", "kernel")
                     and not (k == "algorithm" and v == row.get("setting"))]
            ident = " ".join(str(v) for v in shown)
            lines.append(f"{check.name}: {ident}: {row['status']}")
            for col, (p, r) in row["diff"].items():
                lines.append(f"    {col}: published {p}, rerun {r}")
    total = sum(len(c.rows) for c in checks)
    bad = sum(c.mismatches for c in checks)
    per_table = ", ".join(f"{c.name} {len(c.rows) - c.mismatches}/{len(c.rows)}" for c in checks)
    verdict = "MATCH" if bad == 0 and total else "MISMATCH"
    lines.append(f"{space}: {verdict}: {total - bad} of {total} published rows reproduced exactly ({per_table})")
    return "\n".join(lines)


def main(space: str, config_path: str | Path, published: str | Path, work: str | Path | None,
         settings: Sequence[str] | None) -> int:
    """Print the report; 0 when every row matches, 1 otherwise."""
    checks = verify(space, config_path, published, work, settings)
    print(report(checks, space))
    total = sum(len(c.rows) for c in checks)
    return 0 if total and all(c.mismatches == 0 for c in checks) else 1

