"""Figures of the single-objective hyperparameter tuning (seed 003 Figs. 2-5; docs/hyperparameters-so.md).

Each draws from what rule so_tables writes: `tables/hyperparameters_so.csv` (every configuration's training
score), `tables/hyperparameters_so_summary.csv`, `results/hyperparameters_so/spaces.parquet` (the final runs'
score per algorithm, role and space) and `curves.parquet` (mean score curves per algorithm, role and scope).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm

from analysis.figures import style

ROLE_STYLE = {"best": ("tuned (grid's best)", "tab:blue", "o"), "worst": ("untuned (grid's worst)", "tab:red", "v"),
              "default": ("Kernel Tuner's default", "0.35", "D")}
# the grid's training score, then the final runs' mean over each scope (hyperparameters_so.repetitions and
# final_repetitions runs per space)
STAGES = [("training_score", "tuning\n(grid runs)"), ("final_training", "training\n(final runs)"),
          ("final_test", "test\n(final runs)"), ("final_wider", "wider test\n(final runs)")]


def has_role(roles: pd.Series, role: str) -> pd.Series:
    """Which rows of the grid table's `role` column ("best", "worst/default", ...; empty for a configuration with
    none, which a CSV reads back as NaN) hold `role`."""
    return roles.fillna("").astype(str).str.split("/").apply(lambda held: role in held)


def grid_scores(grid: pd.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """Seed 003 Fig. 2: per algorithm, the distribution of its grid configurations' training scores (violin and
    points), the default configuration's score marked apart."""
    algorithms = list(dict.fromkeys(grid["algorithm"]))
    with style.context():
        fig, ax = style.figure(width=max(5.0, 1.6 * len(algorithms) + 1.5), height=4.0)
        for i, algorithm in enumerate(algorithms):
            mine = grid[grid["algorithm"] == algorithm]
            values = mine.loc[mine["in_grid"] & mine["training_score"].notna(), "training_score"].to_numpy()
            if len(values) > 1:
                parts = ax.violinplot(values, positions=[i], widths=0.8, showextrema=False)
                for body in parts["bodies"]:
                    body.set_facecolor("tab:blue")
                    body.set_alpha(0.25)
            jitter = np.linspace(-0.12, 0.12, len(values)) if len(values) > 1 else np.zeros(len(values))
            ax.scatter(i + jitter, values, s=9, color="tab:blue", alpha=0.7, linewidths=0,
                       label="grid configuration" if i == 0 else None)
            default = mine.loc[~mine["in_grid"], "training_score"]
            if len(default) and np.isfinite(default.iloc[0]):
                ax.scatter([i], [default.iloc[0]], marker="D", s=36, color="0.2", zorder=3,
                           label="Kernel Tuner's default" if i == 0 else None)
            ax.text(i, 1.0, f"{len(values)} configurations", ha="center", va="top", fontsize=8,
                    transform=ax.get_xaxis_transform())
        ax.axhline(0.0, color="0.6", linewidth=0.8, linestyle=":")
        ax.set_xticks(range(len(algorithms)), [grid.loc[grid["algorithm"] == a, "display"].iloc[0]
                                                for a in algorithms])
        ax.set_ylabel("training score (mean over training spaces)")
        ax.set_title("Every grid configuration's score on the training spaces")
        ax.legend(loc="lower right", fontsize=8)
        style.save(fig, pdf, png)


def best_and_worst(grid: pd.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """Seed 003 Fig. 3: the best and the worst configuration (and the default) on tuning (the grid's runs), and
    again with the final runs on the training, test and wider test spaces; one panel per algorithm."""
    algorithms = list(dict.fromkeys(grid["algorithm"]))
    with style.context():
        fig, axes = style.figure(width=3.0 * len(algorithms) + 0.5, height=3.6, nrows=1, ncols=len(algorithms),
                                 sharey=True, squeeze=False)
        for ax, algorithm in zip(axes[0], algorithms, strict=True):
            mine = grid[grid["algorithm"] == algorithm]
            for role, (label, colour, marker) in ROLE_STYLE.items():
                row = mine[has_role(mine["role"], role)]
                if row.empty:
                    continue
                values = [float(row[column].iloc[0]) for column, _ in STAGES]
                ax.plot(range(len(STAGES)), values, color=colour, marker=marker, label=label)
            ax.set_xticks(range(len(STAGES)), [name for _, name in STAGES], fontsize=8)
            ax.set_title(mine["display"].iloc[0])
            ax.axhline(0.0, color="0.6", linewidth=0.8, linestyle=":")
        axes[0, 0].set_ylabel("mean score over the spaces")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        style.fitted_legend(fig, handles, labels, ncols=3)
        style.save(fig, pdf, png)


def impact_per_space(spaces: pd.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """Seed 003 Fig. 4: per space (grouped by scope) and algorithm, the tuned minus the untuned configuration's
    score; spaces that count in no aggregate (budget too small) are marked."""
    wide = spaces.pivot_table(index=["scope", "space", "counted"], columns=["algorithm", "role"], values="score",
                              aggfunc="first", sort=False)
    algorithms = list(dict.fromkeys(spaces["algorithm"]))
    order = {"training": 0, "test": 1, "wider": 2}
    rows = sorted(wide.index, key=lambda key: (order.get(key[0], 3), key[1]))
    diff = np.array([[wide.loc[key, (a, "best")] - wide.loc[key, (a, "worst")]
                      if (a, "best") in wide.columns and (a, "worst") in wide.columns else np.nan
                      for a in algorithms] for key in rows], dtype=float)
    with style.context():
        fig, ax = style.figure(width=2.0 + 1.3 * len(algorithms), height=1.2 + 0.28 * len(rows))
        limit = float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else 1.0
        norm = TwoSlopeNorm(vcenter=0.0, vmin=-limit or -1.0, vmax=limit or 1.0)
        image = ax.imshow(diff, cmap="RdBu", norm=norm, aspect="auto")
        ax.grid(False)
        for (i, j), value in np.ndenumerate(diff):
            if np.isfinite(value):
                ax.text(j, i, f"{value:+.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(value) > 0.6 * limit else "black")
        display = spaces.drop_duplicates("algorithm").set_index("algorithm")
        ax.set_xticks(range(len(algorithms)), [a for a in algorithms] if "display" not in display else
                      [display.loc[a, "display"] for a in algorithms])
        labels = [f"{space} ({scope})" + ("" if counted else " *") for scope, space, counted in rows]
        ax.set_yticks(range(len(rows)), labels, fontsize=7)
        ax.set_title("Tuned minus untuned score per space\n(* budget too small: in no aggregate)", fontsize=10)
        fig.colorbar(image, ax=ax, label="score difference")
        style.save(fig, pdf, png)


def over_time(curves: pd.DataFrame, summary: pd.DataFrame, pdf: str | Path, png: str | Path,
              scope: str = "all") -> None:
    """Seed 003 Fig. 5: per algorithm, the mean score over the time fraction of the tuned, untuned and default
    configuration over the scope's counted spaces (seed 003's 'all': training and test)."""
    algorithms = list(dict.fromkeys(summary["algorithm"]))
    display = summary.drop_duplicates("algorithm").set_index("algorithm")["display"]
    mine = curves[curves["scope"] == scope]
    with style.context():
        fig, axes = style.figure(width=3.0 * len(algorithms) + 0.5, height=3.4, nrows=1, ncols=len(algorithms),
                                 sharey=True, squeeze=False)
        for ax, algorithm in zip(axes[0], algorithms, strict=True):
            for role, (label, colour, _) in ROLE_STYLE.items():
                line = mine[(mine["algorithm"] == algorithm) & (mine["role"] == role)]
                if len(line):
                    ax.plot(line["time_fraction"], line["score"], color=colour, label=label)
            counts = mine.loc[mine["algorithm"] == algorithm, "n_spaces"]
            n = int(counts.max()) if len(counts) else 0
            ax.set_title(f"{display[algorithm]}" + (f" ({n} space{'s' if n != 1 else ''})" if n else ""))
            ax.set_xlabel("fraction of the time budget")
            ax.axhline(0.0, color="0.6", linewidth=0.8, linestyle=":")
        axes[0, 0].set_ylabel("mean score")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        style.fitted_legend(fig, handles, labels, ncols=3)
        style.save(fig, pdf, png)


def figures(grid: pd.DataFrame, summary: pd.DataFrame, spaces: pd.DataFrame, curves: pd.DataFrame,
            outputs: Sequence[str | Path]) -> None:
    """The four figures; `outputs`: their PDF and PNG, in the order grid scores, best and worst, impact per space,
    score over time."""
    scores, extremes, impact, time = (outputs[i:i + 2] for i in range(0, 8, 2))
    grid_scores(grid, *scores)
    best_and_worst(grid, *extremes)
    spaces = spaces.merge(summary.drop_duplicates("algorithm")[["algorithm", "display"]], on="algorithm")
    impact_per_space(spaces, *impact)
    over_time(curves, summary, time[0], time[1])
