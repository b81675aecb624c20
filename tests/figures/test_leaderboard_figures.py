"""The leaderboard's three figures are drawn from the tables lb-tables writes (hand-made here: several spaces, a
missing score, an excluded space)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.figures.leaderboard import figures
from analysis.statistics import Bootstrap
from analysis.tables.leaderboard import aggregate_curves, leaderboard, pairwise, space_table
from helpers import LB_ENTRIES as ENTRIES
from helpers import LB_SPACES as SPACES
from helpers import LB_VALUES as VALUES
from helpers import lb_scores as _scores


def test_figures_are_written_from_the_tables(tmp_path: Path) -> None:
    values = {k: list(v) for k, v in VALUES.items()}
    values["b"][2] = math.nan
    spaces = space_table(_scores(values, [100] * 7 + [5]), ENTRIES, 20)
    board = leaderboard(spaces, ENTRIES, Bootstrap(500, 0), {})
    pairs, _ = pairwise(spaces, list(board["entry"]))
    fractions = np.linspace(0, 1, 11)
    curves = pd.DataFrame([{"entry": e, "space": s, "time_fraction": f, "time_s": f, "score": v * f}
                           for e, scores in values.items() for s, v in zip(SPACES, scores, strict=True)
                           if not math.isnan(v) for f in fractions])
    paths = {"curves": tmp_path / "curves.parquet", "board": tmp_path / "board.csv", "spaces": tmp_path / "s.csv",
             "pairs": tmp_path / "pairs.csv"}
    aggregate_curves(curves, spaces).to_parquet(paths["curves"])
    board.to_csv(paths["board"], index=False)
    spaces.to_csv(paths["spaces"], index=False)
    pairs.to_csv(paths["pairs"], index=False)
    outputs = [tmp_path / f"{name}.{ext}" for name in ("time", "heat", "cd") for ext in ("pdf", "png")]
    figures(pd.read_parquet(paths["curves"]), pd.read_csv(paths["board"]), pd.read_csv(paths["spaces"]),
            pd.read_csv(paths["pairs"]), outputs)
    for path in outputs:
        assert path.stat().st_size > 1000, path
