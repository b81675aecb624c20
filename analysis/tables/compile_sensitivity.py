"""tables/compile_sensitivity.csv: how Tables 4 and 5 move if the spaces whose compile costs were measured on
another machine than the space paid another compile cost.

A space's charged compile times may come from a machine other than the one that measured the space (the H200
space's nvcc times were measured on the 2-core VM; `analysis.spaces.compile_cost.where_measured` tells from the
provenance beside the data). Two kinds of scenario rescale the compile part of such a space's evaluation times
(`analysis.tables.comparison.scale_compile`): its compile measurement's own outside check (the ratio of the
space's machine's compile speed to the measuring machine's, where the data has one), and each factor of the
config's `tables.compile_sensitivity_factors`. `analysis.tables.comparison.compile_sensitivity` recomputes the
tables under each.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from analysis.io import write_csv, write_text
from analysis.markdown import to_markdown
from analysis.spaces.compile_cost import where_measured
from analysis.statistics import Bootstrap
from analysis.tables.comparison import compile_sensitivity

log = logging.getLogger(__name__)

OUTSIDE_CHECK = "outside check"
TITLE = "Tables 4 and 5 with the compile cost of spaces compiled elsewhere rescaled"
DOCS = {
    "table": "the table a row recomputes: eval_time (Table 5, every row), speedup_to_rs (Table 4, the kernels with "
             "a rescaled space), speedup_to_rs_spaces (Table 4 per space, the rescaled spaces)",
    "scenario": f"'{OUTSIDE_CHECK}': each space's compile part times its compile measurement's outside-check ratio "
                "(how much slower or faster the space's own machine compiled); 'compile xF': times F, a factor of "
                "the config's tables.compile_sensitivity_factors",
    "spaces_scaled": "the spaces whose compile costs were measured on another machine than the space (provenance "
                     "beside the data), each with its factor; 'none' where there is no such space",
    "scope / device / kernel / objective_set / setting / budget": "the row of the recomputed table (its key "
                                                                  "columns; the others empty)",
    "column": "the column of that table compared",
    "published": "its value as published (compile charged as measured)",
    "scaled": "its value with the compile part of the rescaled spaces' evaluation times multiplied by the factor",
    "change": "scaled - published, in the column's unit (points of %); empty where either is not finite "
              "(Table 4 'not reached')",
}


def scenarios(meta_paths: Sequence[str | Path], factors: Sequence[float]) -> list[tuple[str, dict[str, float]]]:
    """The scenarios over the spaces of `meta_paths` (their space.json) compiled elsewhere: the outside check's
    ratio where the data has one, then each of `factors`."""
    elsewhere = [w for w in map(where_measured, meta_paths) if w and w["elsewhere"]]
    for w in elsewhere:
        log.info("%s: compile times measured on %s, the space on %s (outside-check ratio %s)", w["space"],
                 w["compile_machine"], w["space_machine"], w["outside_check_ratio"])
    out = [(OUTSIDE_CHECK, {w["space"]: w["outside_check_ratio"] for w in elsewhere
                            if w["outside_check_ratio"] is not None})]
    return out + [(f"compile x{float(f):g}", {w["space"]: float(f) for w in elsewhere}) for f in factors]


def run(final_parquet: str | Path, runs_parquet: str | Path, settings: Mapping[str, str], boot: Bootstrap,
        meta_paths: Sequence[str | Path], factors: Sequence[float], csv: str | Path, md: str | Path,
        objective_sets: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Write the table (CSV and Markdown, atomically) and return it."""
    chosen = scenarios(meta_paths, factors)
    frame = compile_sensitivity(pd.read_parquet(final_parquet), pd.read_parquet(runs_parquet), settings, boot,
                                chosen, objective_sets)
    write_csv(frame, csv)
    write_text(to_markdown(frame, TITLE, {**DOCS, "note": f"bootstrap: {boot.resamples} resamples, seed "
                                                         f"{boot.seed} (Table 5's intervals are not compared)"}), md)
    for name, _ in chosen:
        part = frame[frame["scenario"] == name]
        log.info("%s: %d rows, largest |change| %s", name, len(part), part["change"].abs().max())
    return frame
