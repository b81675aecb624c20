"""Figures of seed 003's tuning drawn from the tables as a CSV reads them back (tables/hyperparameters_so*.csv)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.figures import hyperparameters_so


def grid_table(tmp_path):
    """A grid table as rule so_tables writes it and the figure rule reads it: most configurations have no role."""
    rows = []
    for algorithm, display in (("pso", "PSO"), ("diff_evo", "DE")):
        for i, role in enumerate(["best", "", "", "worst", "default"]):
            rows.append({"algorithm": algorithm, "display": display, "configuration": f"{algorithm}-{i}",
                         "in_grid": role != "default", "role": role, "training_score": 0.1 * i,
                         "final_training": 0.1 * i + 0.01, "final_test": 0.1 * i - 0.02,
                         "final_wider": np.nan if role == "" else 0.05 * i})
    path = tmp_path / "hyperparameters_so.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return pd.read_csv(path)


def test_has_role_reads_empty_roles_from_csv(tmp_path):
    grid = grid_table(tmp_path)
    assert grid["role"].isna().sum() == 4, "the CSV round trip turns an empty role into NaN"
    assert hyperparameters_so.has_role(grid["role"], "best").sum() == 2
    assert not hyperparameters_so.has_role(pd.Series(["best/worst", np.nan]), "worst").iloc[1]
    assert hyperparameters_so.has_role(pd.Series(["best/worst", np.nan]), "worst").iloc[0]


def test_best_and_worst_draws_a_grid_with_configurations_without_a_role(tmp_path):
    grid = grid_table(tmp_path)
    pdf, png = tmp_path / "best_worst.pdf", tmp_path / "best_worst.png"
    hyperparameters_so.best_and_worst(grid, pdf, png)
    assert pdf.read_bytes()[:5] == b"%PDF-" and png.stat().st_size > 10_000
