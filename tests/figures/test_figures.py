"""Figures: each family draws valid PDF + PNG files from small frames; the CLI checks its inputs."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.text import Text

from analysis.cli import main
from analysis.figures import anytime, constraint_aware, hyperparameters, style, tradeoff
from analysis.objectives import OBJECTIVES
from analysis.spaces.space import Space
from helpers import REPO

FIGURES = REPO / "analysis" / "figures"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height in pixels from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def assert_figure(pdf: Path, png: Path, min_width_in: float = 3.3) -> None:
    """Both files exist, are what they claim, are not trivially small, and the PNG has the style's dpi."""
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 5_000
    assert png.stat().st_size > 20_000
    width, height = png_size(png)
    assert width >= min_width_in * 200 and height > 300
    assert not list(pdf.parent.glob(".*.tmp")), "a temporary file was left behind"


def mark_fronts(df: pd.DataFrame, pick) -> pd.DataFrame:
    """Mark each (algorithm, budget)'s non-dominated settings on (y1, y2), and the one `pick` chooses from them
    in order of y1, as picked."""
    df["on_front"] = False
    df["picked"] = False
    for _, g in df.groupby(["algorithm", "budget"]):
        y = g[["y1", "y2"]].to_numpy()
        front = [i for i, v in zip(g.index, y) if not ((y <= v).all(axis=1) & (y < v).any(axis=1)).any()]
        df.loc[front, "on_front"] = True
        df.loc[pick(df.loc[front].sort_values("y1").index), "picked"] = True
    return df


def grid_frame(with_grid_column: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for algorithm, pops in (("nsga2", (20, 40)), ("nsga3", (20, 40))):
        for budget in (50, 200):
            for p in pops:
                for m in (0.05, 0.1, 0.2):
                    rows.append({"algorithm": algorithm, "budget": budget, "setting": f"{algorithm}_{p}_{m}",
                                 "popsize": p, "mutation_prob": m, "y1": rng.uniform(0.02, 0.2),
                                 "y2": rng.uniform(0.01, 0.08)})
    df = mark_fronts(pd.DataFrame(rows), pick=lambda ordered: ordered[(len(ordered) - 1) // 2])
    if with_grid_column:
        df.insert(0, "grid", "g_" + df["algorithm"])
    return df


def curves_frame() -> pd.DataFrame:
    parts = []
    rates = {"rs": 0.02, "nsga2": 0.05, "nsga3_unaware": 0.03}
    for device, kernel in (("A100", "convolution"), ("A4000", "dedispersion")):
        for setting, rate in rates.items():
            for budget in (50, 100):
                k = np.arange(1, budget + 1)
                median = 0.9 / (1 + rate * k)
                parts.append(pd.DataFrame({
                    "device": device, "kernel": kernel, "objective_set": "O3", "setting": setting,
                    "algorithm": setting, "budget": budget, "k": k, "igd_median": median,
                    "igd_q1": 0.8 * median, "igd_q3": 1.2 * median, "n_runs": 30}))
    return pd.concat(parts, ignore_index=True)


def mixed_precision_space(errors: bool = True) -> Space:
    """A small mixed-precision space: two precision parameters, one tuning parameter."""
    types = ["double", "float", "half", "bfloat16"]
    size = {"double": 8, "float": 4, "half": 2, "bfloat16": 2}
    eps = {"double": 0.0, "float": 1e-7, "half": 1e-3, "bfloat16": 8e-3}
    rows = []
    for tx in types:
        for ty in types:
            for block in (64, 128, 256):
                rows.append({"T_x": tx, "T_y": ty, "block_size_x": block,
                             "time_ms": (size[tx] + size[ty]) / 16 * (1 + block / 1024),
                             "memory_bytes": 1000.0 * (size[tx] + size[ty]),
                             "mre": eps[tx] + eps[ty] * (1 + block / 256)})
    table = pd.DataFrame(rows)
    names = ["time", "memory", "mre"] if errors else ["time", "memory"]
    if not errors:
        table = table.drop(columns="mre")
    for col in ("compile_time_ms", "verification_time_ms", "benchmark_time_ms"):
        table[col] = 1.0
    table["status"] = pd.Series(["ok"] * len(table), dtype="string")
    parameters = {"T_x": types, "T_y": types, "block_size_x": [64, 128, 256]}
    return Space("bessel", "A100", parameters, [], [OBJECTIVES[n] for n in names], table, {})


def scores_frame() -> pd.DataFrame:
    t = np.linspace(0.05, 1.0, 20)
    rows = []
    for a in ("genetic_algorithm", "pso", "diff_evo", "firefly_algorithm"):
        for aware in (True, False):
            rows.append(pd.DataFrame({"space": "A100/convolution", "algorithm": a, "constraint_aware": aware,
                                      "time_fraction": t, "score": (0.6 if aware else 0.3) * (1 - np.exp(-3 * t)),
                                      "score_lower": -0.05, "score_upper": 0.05}))
    return pd.concat(rows, ignore_index=True)


def test_palette_covers_every_registered_algorithm():
    from analysis.simulate.leaderboard import kernel_tuner_strategies
    from analysis.simulate.registry import algorithm_names

    # the studies' algorithms have fixed colours; the leaderboard's others get a slot as a user strategy does
    assert set(algorithm_names()) - set(kernel_tuner_strategies()) - {"pyatf_strategies"} <= set(style.COLOURS)
    assert all(style.colour(a) and style.marker(a) for a in algorithm_names())
    for a in style.COLOURS:
        assert style.linestyle(a) == (style.DASHED if a.endswith("_unaware") else style.SOLID)
    assert style.colour("nsga2_unaware") == style.colour("nsga2")
    with pytest.raises(KeyError, match="neither a registered one"):
        style.colour("no_such_algorithm")


def test_matplotlibrc_is_the_paper_style():
    import matplotlib

    with style.context():
        rc = matplotlib.rcParams
        assert rc["pdf.fonttype"] == 42 and rc["savefig.dpi"] == 200
        assert rc["figure.figsize"][0] == pytest.approx(3.4)
        assert min(rc["font.size"], rc["xtick.labelsize"], rc["ytick.labelsize"], rc["legend.fontsize"]) >= 7


def test_hyperparameter_fronts(tmp_path):
    hyperparameters.plot(grid_frame(), tmp_path / "hp.pdf", tmp_path / "hp.png")
    assert_figure(tmp_path / "hp.pdf", tmp_path / "hp.png")


def test_hyperparameter_legend_fits_a_one_panel_figure(tmp_path):
    """The tiny config: one grid, one budget; the legend above the panel must not be clipped."""
    grid = grid_frame()
    grid = grid[(grid["algorithm"] == "nsga2") & (grid["budget"] == 50)]
    fig = hyperparameters.plot(grid, tmp_path / "hp.pdf", tmp_path / "hp.png")
    renderer = fig.canvas.get_renderer()
    assert inside(fig.legends[0].get_window_extent(renderer), fig.bbox)
    assert_figure(tmp_path / "hp.pdf", tmp_path / "hp.png")


def test_hyperparameter_grid_needs_one_pick_per_budget():
    grid = grid_frame()
    grid["picked"] = False
    with pytest.raises(ValueError, match="0 picked"):
        hyperparameters.check_grid(grid)


def test_relative_improvement_definition():
    rs = np.array([0.5, 0.5, 0.0, 0.0, 0.4])
    a = np.array([0.5, 0.0, 0.0, 0.1, 0.6])
    got = anytime.relative_improvement(rs, a)
    assert got[:3].tolist() == [0.0, 1.0, 0.0]
    assert got[3] == -np.inf  # behind an RS that reached 0: the limit of the ratio, drawn at the floor
    assert got[4] == pytest.approx(-0.5)


def test_anytime_figures(tmp_path):
    curves = curves_frame()
    anytime.plot(curves, "A100", "convolution", "O3", tmp_path / "a.pdf", tmp_path / "a.png")
    assert_figure(tmp_path / "a.pdf", tmp_path / "a.png")
    anytime.plot_grid(curves, "O3", tmp_path / "g.pdf", tmp_path / "g.png")
    assert_figure(tmp_path / "g.pdf", tmp_path / "g.png", min_width_in=6.9)


def time_curves(budget: int = 200, zero_at: dict | None = None) -> pd.DataFrame:
    """Curves of a time-only set; each setting's median falls to 0 at its `zero_at` evaluation (if any)."""
    zero_at = {"rs": 120, "nsga2": 90, "nsga3_unaware": None, "genetic_algorithm": 150} if zero_at is None else zero_at
    parts = []
    for setting, at in zero_at.items():
        k = np.arange(1, budget + 1)
        median = 0.9 / (1 + 0.03 * k)
        if at is not None:
            median[k >= at] = 0.0
        parts.append(pd.DataFrame({"device": "A100", "kernel": "convolution", "objective_set": "time",
                                   "setting": setting, "algorithm": setting, "budget": budget, "k": k,
                                   "igd_median": median, "igd_q1": 0.8 * median, "igd_q3": 1.2 * median,
                                   "n_runs": 30}))
    return pd.concat(parts, ignore_index=True)


def test_igd_axis_states_ms_for_a_time_only_set(tmp_path):
    curves = time_curves()
    fig = anytime.plot(curves, "A100", "convolution", "time", tmp_path / "a.pdf", tmp_path / "a.png",
                       objectives=["time"])
    assert fig.axes[0].get_ylabel().endswith("(ms)")
    fig = anytime.plot_grid(curves, "time", tmp_path / "g.pdf", tmp_path / "g.png", objectives=["time"])
    assert fig.axes[0].get_ylabel().endswith("(ms)")
    # normalised sets (and unitless objectives) have no unit
    assert anytime.igd_label(["time", "memory", "mre"]) == anytime.IGD_LABEL
    assert anytime.igd_label(["mre"]) == anytime.IGD_LABEL
    assert anytime.igd_label(None) == anytime.IGD_LABEL
    # the CLI takes the set's objectives as the rule passes them
    path = tmp_path / "curves.parquet"
    curves.to_parquet(path)
    assert main(["figure-anytime", "--curves", str(path), "--device", "A100", "--kernel", "convolution",
                 "--objective-set", "time", "--objectives", '["time"]', "--pdf", str(tmp_path / "c.pdf"),
                 "--png", str(tmp_path / "c.png")]) == 0
    assert_figure(tmp_path / "c.pdf", tmp_path / "c.png")


def test_hyperparameter_axes_state_ms_for_a_time_only_grid(tmp_path):
    grid = grid_frame()
    grid["objective_set"] = "time"
    fig = hyperparameters.plot(grid, tmp_path / "h.pdf", tmp_path / "h.png", {"time": ["time"]})
    assert fig._supxlabel.get_text().endswith("(ms)") and fig._supylabel.get_text().endswith("(ms)")
    grid["objective_set"] = "O3"
    assert hyperparameters.axis_unit(grid, {"O3": ["time", "memory", "mre"]}) is None
    assert hyperparameters.axis_unit(grid, None) is None


@pytest.mark.parametrize("budget", [3, 20, 200])
def test_evaluation_axes_have_integer_ticks(tmp_path, budget):
    curves = time_curves(budget, {"rs": None, "nsga2": None})
    for fig in (anytime.plot(curves, "A100", "convolution", "time", tmp_path / "a.pdf", tmp_path / "a.png"),
                anytime.plot_grid(curves, "time", tmp_path / "g.pdf", tmp_path / "g.png")):
        ax = fig.axes[-1] if len(fig.axes) == 2 else fig.axes[0]
        lo, hi = ax.get_xlim()
        ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
        assert len(ticks) >= 3 and all(float(t).is_integer() for t in ticks), ticks


def test_lower_anytime_panel_shows_a_method_behind_an_rs_at_zero(tmp_path):
    fig = anytime.plot(time_curves(), "A100", "convolution", "time", tmp_path / "a.pdf", tmp_path / "a.png")
    bottom = fig.axes[1]
    floor = bottom.get_yticks()[bottom.get_yticks() >= bottom.get_ylim()[0]].min()
    lines = {ln.get_gid(): ln for ln in bottom.get_lines() if ln.get_gid()}
    for setting, behind in (("genetic_algorithm", range(120, 150)), ("nsga3_unaware", range(120, 201))):
        k, y = lines[setting].get_xdata(), lines[setting].get_ydata()
        at = np.isin(k, list(behind))
        assert at.sum() == len(behind) and np.isfinite(y[at]).all() and (y[at] <= floor).all()
    # settings behind at the same evaluations are drawn apart
    k = lines["genetic_algorithm"].get_xdata()
    at = (k >= 120) & (k < 150)
    assert (lines["genetic_algorithm"].get_ydata()[at] != lines["nsga3_unaware"].get_ydata()[at]).all()
    # a setting that reached 0 with RS is as good as RS there
    assert (lines["nsga2"].get_ydata()[lines["nsga2"].get_xdata() >= 120] == 0).all()
    # the range where RS's median is 0 is shaded, and the legend says what the shade means
    shade = [p for p in bottom.patches if p.get_gid() == "rs-zero"]
    assert len(shade) == 1
    x0, x1 = shade[0].get_x(), shade[0].get_x() + shade[0].get_width()
    assert x0 == pytest.approx(119.5) and x1 == pytest.approx(200.5)
    assert any("RS median 0" in t.get_text() for t in fig.legends[0].get_texts())
    fig.draw_without_rendering()
    floor_label = [t.get_text() for t in bottom.get_yticklabels() if t.get_position()[1] == floor]
    assert floor_label and floor_label[0].startswith("≤")


def inside(inner, outer, tol: float = 0.5) -> bool:
    return (inner.x0 >= outer.x0 - tol and inner.x1 <= outer.x1 + tol
            and inner.y0 >= outer.y0 - tol and inner.y1 <= outer.y1 + tol)


def overlapping(boxes) -> list:
    return [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if min(a.x1, b.x1) > max(a.x0, b.x0) and min(a.y1, b.y1) > max(a.y0, b.y0)]


def test_anytime_axis_is_symlog_only_when_igd_spans_orders_of_magnitude():
    with style.context():
        fig, ax = plt.subplots()
        anytime._igd_scale(ax, np.array([0.0, 0.02, 0.5, 150.0]))
        assert ax.get_yscale() == "symlog" and ax.get_ylim()[0] == 0
        assert ax.yaxis.get_transform().linthresh == pytest.approx(0.01)
        anytime._igd_scale(ax, np.array([0.0, 1e-9, 0.5, 150.0]))  # at most LOG_DECADES decades of log
        assert ax.yaxis.get_transform().linthresh == pytest.approx(1e-3)
        fig2, ax2 = plt.subplots()
        anytime._igd_scale(ax2, np.array([0.0, 0.2, 0.5, 15.0]))
        assert ax2.get_yscale() == "linear"
        plt.close(fig)
        plt.close(fig2)


def test_anytime_uses_the_largest_budget_and_needs_rs():
    curves = curves_frame()
    sel, budget = anytime.space_curves(curves, "A100", "convolution", "O3")
    assert budget == 100 and set(sel["budget"]) == {100}
    with pytest.raises(ValueError, match="exactly one setting of algorithm 'rs'"):
        anytime.space_curves(curves[curves["algorithm"] != "rs"], "A100", "convolution", "O3")


def test_tradeoff_frame_speedup_and_fronts():
    space = mixed_precision_space()
    assert tradeoff.precision_parameters(space.parameters) == ["T_x", "T_y"]
    frame = tradeoff.tradeoff_frame(space.table, space.parameters, "mre")
    fp64 = (frame["T_x"] == "double") & (frame["T_y"] == "double")
    assert frame.loc[fp64, "speedup"].max() == pytest.approx(1.0)
    assert frame["error_zero"].sum() == 3  # all-double has error 0, drawn one decade below the smallest
    assert frame.loc[frame["error_zero"], "log10_error"].eq(np.log10(1e-7) - 1).all()
    front = frame[frame["pareto_time"]]
    # no configuration is both faster and more accurate than a Pareto-optimal one
    for _, r in front.iterrows():
        better = (frame["time_ms"] <= r["time_ms"]) & (frame["mre"] <= r["mre"])
        strictly = (frame["time_ms"] < r["time_ms"]) | (frame["mre"] < r["mre"])
        assert not (better & strictly).any()
    assert frame.loc[frame["pareto_memory"], "memory_bytes"].min() == frame["memory_bytes"].min()


def test_tradeoff_figure_from_a_stored_space(tmp_path):
    space = mixed_precision_space()
    space.save(tmp_path / "space.parquet", tmp_path / "space.json")
    rc = main(["figure-tradeoff", "--space-parquet", str(tmp_path / "space.parquet"), "--space-meta",
               str(tmp_path / "space.json"), "--pdf", str(tmp_path / "t.pdf"), "--png", str(tmp_path / "t.png")])
    assert rc == 0
    assert_figure(tmp_path / "t.pdf", tmp_path / "t.png")


def test_tradeoff_one_type_lines_are_named_in_the_figure(tmp_path):
    space = mixed_precision_space()
    fig = tradeoff.plot(space.table, space.parameters, "mre", "A100 / bessel", tmp_path / "t.pdf", tmp_path / "t.png")
    top = fig.axes[0]
    frame = tradeoff.tradeoff_frame(space.table, space.parameters, "mre")
    lines = tradeoff.uniform_errors(frame, ["T_x", "T_y"])
    labels = {t.get_gid(): t for t in top.texts if (t.get_gid() or "").startswith("type-")}
    assert {t.get_text() for t in labels.values()} == {tradeoff.PRECISION_NAMES[t] for t in lines}
    renderer = fig.canvas.get_renderer()
    boxes = []
    for t, x in lines.items():
        text = labels[f"type-{t}"]
        assert text.get_position()[0] == pytest.approx(x)  # on its line
        box = text.get_window_extent(renderer)
        assert inside(box, top.get_window_extent(renderer))  # in the panel, not on a secondary axis
        boxes.append(box)
    assert not overlapping(boxes)
    # no label covers a point: the speedups stay below the lowest label
    lowest = min(b.y0 for b in boxes)
    assert top.transData.transform((0, frame["speedup"].max()))[1] < lowest
    # the legend explains the dashed lines
    assert any("precision" in t.get_text() and "one type" in t.get_text() for t in fig.legends[0].get_texts())
    assert inside(fig.legends[0].get_window_extent(renderer), fig.bbox)


def test_tradeoff_cli_rejects_a_space_without_error_objectives(tmp_path):
    space = mixed_precision_space(errors=False)
    space.save(tmp_path / "space.parquet", tmp_path / "space.json")
    log = tmp_path / "log.txt"
    rc = main(["--log", str(log), "figure-tradeoff", "--space-parquet", str(tmp_path / "space.parquet"),
               "--space-meta", str(tmp_path / "space.json"), "--pdf", str(tmp_path / "t.pdf"),
               "--png", str(tmp_path / "t.png")])
    assert rc == 2
    text = log.read_text()
    assert "space.json" in text and "has no error objective" in text
    assert not (tmp_path / "t.pdf").exists() and not (tmp_path / "t.png").exists()


def space_scores_frame() -> pd.DataFrame:
    rows = []
    spaces = [("A100/convolution", 0.43), ("A100/dedispersion", 0.5), ("cpu/bessel", 0.75)]
    for i, (space, density) in enumerate(spaces):
        for a in ("genetic_algorithm", "pso"):
            rows.append({"space": space, "algorithm": a, "density": density, "score_aware": 0.5 + 0.1 * i,
                         "score_unaware": 0.1 * i - 0.2, "gain": 0.7})
    return pd.DataFrame(rows)


def test_constraint_aware_figure(tmp_path):
    constraint_aware.plot(scores_frame(), tmp_path / "c.pdf", tmp_path / "c.png")
    assert_figure(tmp_path / "c.pdf", tmp_path / "c.png")


def test_constraint_aware_spaces_figure(tmp_path):
    constraint_aware.plot_spaces(space_scores_frame(), tmp_path / "s.pdf", tmp_path / "s.png")
    assert_figure(tmp_path / "s.pdf", tmp_path / "s.png")


def test_constraint_aware_figure_leaves_spaces_kept_out_of_the_mean(tmp_path):
    kept = scores_frame()
    out = kept.assign(space="W6600/convolution", score=-0.9)  # too small a budget: in no mean
    frame = pd.concat([kept.assign(excluded=""), out.assign(excluded="budget under 20 evaluations")])
    fig = constraint_aware.plot(frame, tmp_path / "c.pdf", tmp_path / "c.png")
    ga = next(ax for ax in fig.axes if ax.get_title() == style.label("genetic_algorithm"))
    aware = kept[(kept["algorithm"] == "genetic_algorithm") & kept["constraint_aware"]]
    np.testing.assert_allclose(ga.lines[0].get_ydata(), aware["score"])
    assert "1 with too small a budget left out" in fig.legends[0].get_title().get_text()
    # every space kept out: the figure still shows them, rather than nothing
    fig = constraint_aware.plot(out.assign(excluded="x"), tmp_path / "d.pdf", tmp_path / "d.png")
    assert (fig.axes[0].lines[0].get_ydata() == -0.9).all()


def test_constraint_aware_spaces_figure_marks_the_spaces_kept_out(tmp_path):
    frame = space_scores_frame()
    # as read back from the scores CSV: the reason, or NaN (an empty cell) where the space counts
    frame["excluded"] = frame["space"].map({"cpu/bessel": "budget under 20 evaluations"})
    fig = constraint_aware.plot_spaces(frame, tmp_path / "s.pdf", tmp_path / "s.png")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert [label.endswith(" †") for label in labels] == [label.startswith("cpu/bessel") for label in labels]
    assert any("†" in t.get_text() for t in fig.legends[0].get_texts())
    fig = constraint_aware.plot_spaces(space_scores_frame(), tmp_path / "t.pdf", tmp_path / "t.png")
    assert not any("†" in t.get_text() for t in fig.axes[0].get_yticklabels())


@pytest.mark.parametrize("densities", [(0.43, 0.5, 0.75), (0.16, 0.17, 0.21, 0.25, 0.42, 0.43, 0.5, 0.52, 1.0),
                                       (0.004, 0.03, 0.2, 0.9)])
def test_constraint_aware_density_axis_is_labelled_at_every_tick(tmp_path, densities):
    rows = [{"space": f"cpu/k{i}", "algorithm": a, "density": d, "score_aware": 0.5, "score_unaware": 0.1,
             "gain": 0.4} for i, d in enumerate(densities) for a in ("genetic_algorithm", "diff_evo")]
    fig = constraint_aware.plot_spaces(pd.DataFrame(rows), tmp_path / "s.pdf", tmp_path / "s.png")
    ax = fig.axes[-1]
    assert ax.get_xlabel() == "density (%)"
    renderer = fig.canvas.get_renderer()
    lo, hi = ax.get_xlim()
    assert not [t for t in ax.xaxis.get_minorticklocs() if lo <= t <= hi], "unlabelled ticks"
    shown = [t for t in ax.xaxis.get_major_ticks() if lo <= t.get_loc() <= hi]
    assert len(shown) >= 3
    assert all(t.label1.get_text() for t in shown), "a tick without a label"
    boxes = [t.label1.get_window_extent(renderer) for t in shown]
    assert not overlapping(boxes)
    assert lo <= 100 * min(densities) and 100 * max(densities) <= hi


def test_constraint_aware_spaces_rejects_a_density_outside_0_1():
    frame = space_scores_frame()
    frame.loc[0, "density"] = 43.0  # a percentage where a fraction belongs
    with pytest.raises(ValueError, match="density"):
        constraint_aware.check_space_scores(frame)


@pytest.mark.parametrize("command, flag, frame, drop, name", [
    ("figure-hyperparameters", "--grid", grid_frame, "y2", "grid.csv"),
    ("figure-constraint-aware", "--scores", scores_frame, "score_upper", "scores.csv"),
    ("figure-constraint-aware-spaces", "--scores", space_scores_frame, "density", "space_scores.csv"),
    ("figure-anytime-grid", "--curves", curves_frame, "igd_q3", "curves.parquet"),
])
def test_cli_names_the_file_and_the_missing_column(tmp_path, command, flag, frame, drop, name):
    path = tmp_path / name
    df = frame().drop(columns=drop)
    df.to_parquet(path) if name.endswith(".parquet") else df.to_csv(path, index=False)
    log = tmp_path / "log.txt"
    extra = ["--objective-set", "O3"] if command == "figure-anytime-grid" else []
    rc = main(["--log", str(log), command, flag, str(path), *extra, "--pdf", str(tmp_path / "x.pdf"),
               "--png", str(tmp_path / "x.png")])
    assert rc == 2
    text = log.read_text()
    assert str(path) in text and f"field '{drop}'" in text
    assert not (tmp_path / "x.png").exists()


def test_cli_hyperparameters_end_to_end_with_a_grid_column(tmp_path):
    path = tmp_path / "grid.csv"
    grid_frame(with_grid_column=True).to_csv(path, index=False)
    assert main(["figure-hyperparameters", "--grid", str(path), "--pdf", str(tmp_path / "h.pdf"),
                 "--png", str(tmp_path / "h.png")]) == 0
    assert_figure(tmp_path / "h.pdf", tmp_path / "h.png")


def test_figure_modules_read_no_files():
    """Only cli.py reads inputs; the figure modules take frames and write only the paths they are given."""
    reading = re.compile(r"\bopen\(|read_(csv|parquet|text|bytes|json|table)\(|\.load\(|np\.load|json\.load")
    modules = [p for p in FIGURES.glob("*.py") if p.name != "cli.py"]
    assert {p.stem for p in modules} >= {"anytime", "hyperparameters", "tradeoff", "constraint_aware", "style"}
    for p in modules:
        hits = [line for line in p.read_text().splitlines() if reading.search(line)]
        assert not hits, f"{p.name} reads files: {hits}"


# --- the figures as a reader sees them (#33, item 6) ---

GPU_SPACES = [("A100", "convolution"), ("RTX_3060_laptop", "convolution_bat"), ("RTX_Titan", "convolution_bat"),
              ("A4000", "convolution_milo_old"), ("MI50", "convolution_milo_old"), ("W6600", "dedispersion"),
              ("RTX_2080_Ti", "gemm"), ("RTX_3060_laptop", "pnpoly"), ("RTX_Titan", "pnpoly")]


def grid_curves(spaces=GPU_SPACES, objective_set: str = "time", budget: int = 60,
                steep: bool = True) -> pd.DataFrame:
    """Curves of many spaces: the first falls by five decades where `steep` (needs a log axis), the others by a
    factor 3."""
    parts = []
    for i, (device, kernel) in enumerate(spaces):
        for j, setting in enumerate(("rs", "nsga2", "nsga3_unaware")):
            k = np.arange(1, budget + 1)
            fall = 1e-5 ** (k / budget) if i == 0 and steep else 1.0 / (1.0 + 2.0 * k / budget)
            median = 2.0 * fall * (1 + 0.1 * j)
            parts.append(pd.DataFrame({
                "device": device, "kernel": kernel, "objective_set": objective_set, "setting": setting,
                "algorithm": setting, "budget": budget, "k": k, "igd_median": median, "igd_q1": 0.7 * median,
                "igd_q3": 1.4 * median, "n_runs": 30}))
    return pd.concat(parts, ignore_index=True)


def visible_axes(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]


def test_anytime_grid_uses_one_y_scale_kind(tmp_path):
    fig = anytime.plot_grid(grid_curves(), "time", tmp_path / "g.pdf", tmp_path / "g.png", objectives=["time"])
    scales = {ax.get_yscale() for ax in visible_axes(fig)}
    assert scales == {"symlog"}, "one panel spans five decades: every panel gets a symmetric-log axis"
    for ax in visible_axes(fig):
        assert ax.get_ylim()[0] == 0  # reaching the front (0) stays on the axis
    # no panel needs a log axis: all linear
    fig = anytime.plot_grid(grid_curves(steep=False), "time", tmp_path / "h.pdf", tmp_path / "h.png")
    assert {ax.get_yscale() for ax in visible_axes(fig)} == {"linear"}


def test_anytime_grid_titles_fit_their_panels(tmp_path):
    fig = anytime.plot_grid(grid_curves(), "time", tmp_path / "g.pdf", tmp_path / "g.png", objectives=["time"])
    fig.draw_without_rendering()  # extents at the screen dpi, not the saved PNG's
    renderer = fig.canvas.get_renderer()
    titles = []
    lefts = sorted({ax.get_window_extent(renderer).x0 for ax in visible_axes(fig)})
    pitch = min(b - a for a, b in zip(lefts, lefts[1:]))  # from one column's panel to the next
    for ax in visible_axes(fig):
        box = ax.title.get_window_extent(renderer)
        assert box.width < pitch, ax.get_title()
        assert inside(box, fig.bbox), f"title cut at the figure's edge: {ax.get_title()!r}"
        titles.append(box.padded(2.0))
    assert not overlapping(titles)
    for ax in visible_axes(fig):  # upright evaluation ticks whose labels do not collide
        ticks = [t for t in ax.get_xticklabels() if t.get_text()]
        assert all(t.get_rotation() == 0 for t in ticks)
        assert not overlapping([t.get_window_extent(renderer) for t in ticks])
    # the full space names are there, on two lines where one does not fit
    assert any(ax.get_title() == "RTX_3060_laptop\nconvolution_bat" for ax in visible_axes(fig))
    assert inside(fig.legends[0].get_window_extent(renderer), fig.bbox)


def test_anytime_grid_shows_the_interquartile_range(tmp_path):
    curves = grid_curves(GPU_SPACES[:3])
    fig = anytime.plot_grid(curves, "time", tmp_path / "g.pdf", tmp_path / "g.png")
    for ax in visible_axes(fig):
        bands = {c.get_gid() for c in ax.collections if (c.get_gid() or "").startswith("iqr-")}
        assert bands == {"iqr-rs", "iqr-nsga2", "iqr-nsga3_unaware"}
    band = next(c for c in visible_axes(fig)[0].collections if c.get_gid() == "iqr-rs")
    y = band.get_paths()[0].vertices[:, 1]
    rs = curves[(curves["device"] == GPU_SPACES[0][0]) & (curves["setting"] == "rs")]
    assert y.min() == pytest.approx(rs["igd_q1"].min()) and y.max() == pytest.approx(rs["igd_q3"].max())
    assert "interquartile range" in fig.legends[0].get_title().get_text()


def test_anytime_figures_explain_the_bands_and_the_objective_set(tmp_path):
    o5 = ["time", "memory", "mre", "nrmse", "nmae"]
    curves = curves_frame().assign(objective_set="O5")
    fig = anytime.plot(curves, "A100", "convolution", "O5", tmp_path / "a.pdf", tmp_path / "a.png", objectives=o5)
    fig.draw_without_rendering()  # extents at the screen dpi, not the saved PNG's
    renderer = fig.canvas.get_renderer()
    title = fig.axes[0].get_title()
    assert "O5 = {time, memory, mre, nrmse, nmae}" in title
    assert inside(fig.axes[0].title.get_window_extent(renderer), fig.bbox)
    legend = fig.legends[0]
    assert "shaded: interquartile range" in legend.get_title().get_text()
    assert "median of 30 runs" in legend.get_title().get_text()
    assert inside(legend.get_window_extent(renderer), fig.bbox)
    fig = anytime.plot_grid(curves, "O5", tmp_path / "g.pdf", tmp_path / "g.png", objectives=o5)
    assert "O5 = {time, memory, mre, nrmse, nmae}" in fig.legends[0].get_title().get_text()
    # a set named after its one objective is not spelled out twice
    assert anytime.objective_set_text("time", ["time"]) == "time"
    # a long space name: the title breaks rather than run off the figure
    long = time_curves().assign(device="RTX_3060_laptop", kernel="convolution_bat")
    fig = anytime.plot(long, "RTX_3060_laptop", "convolution_bat", "time", tmp_path / "l.pdf", tmp_path / "l.png",
                       objectives=["time"])
    fig.draw_without_rendering()
    assert inside(fig.axes[0].title.get_window_extent(fig.canvas.get_renderer()), fig.bbox, tol=0)
    assert fig.axes[0].get_title().startswith("RTX_3060_laptop / convolution_bat")


def test_anytime_clip_marker_is_an_upright_le_apart_from_rotated_text(tmp_path):
    fig = anytime.plot(time_curves(), "A100", "convolution", "time", tmp_path / "a.pdf", tmp_path / "a.png")
    bottom = fig.axes[1]
    fig.draw_without_rendering()  # extents at the screen dpi, not the saved PNG's
    renderer = fig.canvas.get_renderer()
    marks = [t for t in bottom.get_yticklabels() if t.get_text().startswith("≤")]
    assert len(marks) == 1 and marks[0].get_text() == "≤−1"
    mark = marks[0]
    assert mark.get_rotation() == 0 and mark.get_fontsize() >= 10  # at 7 pt the "≤" reads as rotated
    # no rotated text (an axis label) stands beside it: the "≤" must not read as one of its letters
    box = mark.get_window_extent(renderer)
    rotated = [t for t in fig.findobj(lambda o: hasattr(o, "get_rotation") and hasattr(o, "get_text"))
               if t.get_text() and t.get_visible() and t.get_rotation() % 180 != 0]
    near = [t.get_text() for t in rotated
            if t.get_window_extent(renderer).x1 > box.x0 - 10 and t.get_window_extent(renderer).y0 < box.y1 + 5
            and t.get_window_extent(renderer).y1 > box.y0 - 5]
    assert not near, near
    # the improvement axis says what 0 and 1 are
    assert "over RS" in bottom.get_title(loc="left")


def clustered_grid() -> pd.DataFrame:
    """A grid like the study's: at the larger budgets most settings bunch up next to the picked one."""
    rng = np.random.default_rng(5)
    rows = []
    for algorithm, pops in (("nsga2", (20, 40, 80)), ("nsga3", (20, 40))):
        for budget, scale in ((50, 0.15), (100, 0.06), (150, 0.03), (200, 0.015)):
            for p in pops:
                for m in (0.05, 0.1, 0.2):
                    bunched = p == 20 or (p == 40 and m == 0.05)
                    rows.append({"algorithm": algorithm, "budget": budget, "setting": f"{algorithm}_{p}_{m}",
                                 "popsize": p, "mutation_prob": m,
                                 "y1": scale * (0.3 + (0.06 * rng.random() if bunched else rng.uniform(0.3, 1.5))),
                                 "y2": scale * (0.2 + (0.06 * rng.random() if bunched else rng.uniform(0.3, 1.0)))})
    return mark_fronts(pd.DataFrame(rows), pick=lambda ordered: ordered[0])


def test_hyperparameter_labels_overlap_neither_each_other_nor_the_markers(tmp_path):
    grid = clustered_grid()
    fig = hyperparameters.plot(grid, tmp_path / "hp.pdf", tmp_path / "hp.png")
    fig.draw_without_rendering()  # extents at the screen dpi, not the saved PNG's
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    assert len(panels) == 8
    for ax in panels:
        labels = [t for t in ax.texts if t.get_text()]
        boxes = [Text.get_window_extent(t, renderer) for t in labels]  # the letters, without the leader line
        assert not overlapping(boxes), ax.get_title()
        frame = ax.get_window_extent(renderer)
        for box in boxes:
            assert inside(box, frame), ax.get_title()
        # no label covers a marker (radius 3 pt) or the picked ring
        points = np.vstack([ln.get_xydata() for ln in ax.get_lines()])
        for px, py in ax.transData.transform(points):
            for t, box in zip(labels, boxes):
                assert not (box.x0 < px < box.x1 and box.y0 < py < box.y1), (ax.get_title(), t.get_text())
        # every point is numbered (points on top of each other share one label, e.g. "1,2")
        numbered = sorted(int(n) for t in labels for n in t.get_text().split(","))
        assert len(numbered) == len(set(numbered))
        budget = int(ax.get_title().rsplit(" ", 1)[1])
        algorithm = "nsga2" if ax.get_title().startswith("NSGA-II,") else "nsga3"
        assert len(numbered) == len(grid[(grid["algorithm"] == algorithm) & (grid["budget"] == budget)])
        # upright x ticks whose labels do not collide
        ticks = [t for t in ax.get_xticklabels() if t.get_text()]
        assert all(t.get_rotation() == 0 for t in ticks)
        assert not overlapping([t.get_window_extent(renderer) for t in ticks])
    # the key gives every number its population size and mutation probability
    keys = [ax for ax in fig.axes if not ax.axison]
    assert len(keys) == 2
    for ax, n in zip(keys, (9, 6)):
        assert sorted(int(t.get_text()) for t in ax.texts if t.get_gid() == "key") == list(range(1, n + 1))
        assert inside(ax.texts[0].get_window_extent(renderer), fig.bbox)
    assert hyperparameters.setting_numbers(grid[grid["algorithm"] == "nsga3"])[(40.0, 0.1)] == 5


def test_hyperparameter_figure_is_the_same_on_a_rerun(tmp_path):
    grid = clustered_grid()
    hyperparameters.plot(grid, tmp_path / "a.pdf", tmp_path / "a.png")
    hyperparameters.plot(grid, tmp_path / "b.pdf", tmp_path / "b.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()


def many_space_scores(n: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rows = []
    for i in range(n):
        density = (0.43, 0.48, 0.5)[i % 3] if i < 9 else 0.2 + 0.25 * (i - 9)
        for a in ("genetic_algorithm", "pso", "diff_evo", "firefly_algorithm"):
            aware, unaware = rng.normal(0.4, 0.3), rng.normal(0.3, 0.3)
            if a == "firefly_algorithm" and i == 0:
                aware = -1.0  # one panel reaching much further than the others
            rows.append({"space": f"dev{i}/kernel{i}", "algorithm": a, "density": density, "score_aware": aware,
                         "score_unaware": unaware, "gain": aware - unaware})
    return pd.DataFrame(rows)


def test_constraint_aware_spaces_share_the_score_axis_and_mark_rs(tmp_path):
    frame = many_space_scores()
    fig = constraint_aware.plot_spaces(frame, tmp_path / "s.pdf", tmp_path / "s.png")
    fig.draw_without_rendering()  # extents at the screen dpi, not the saved PNG's
    renderer = fig.canvas.get_renderer()
    panels = fig.axes[:4]
    assert len({ax.get_xlim() for ax in panels}) == 1, "the score panels' x ranges differ"
    lo, hi = panels[0].get_xlim()
    scores = frame[["score_aware", "score_unaware"]].to_numpy()
    assert lo <= scores.min() and hi >= scores.max()
    for ax in panels:
        rs = [ln for ln in ax.get_lines() if ln.get_gid() == "rs"]
        assert rs and set(rs[0].get_xdata()) == {0.0}
        label = [t for t in ax.texts if t.get_gid() == "rs-label"]
        assert label and label[0].get_text() == "RS"
        assert "RS" in ax.get_xlabel()
        assert not overlapping([label[0].get_window_extent(renderer), ax.title.get_window_extent(renderer)])


def test_constraint_aware_gain_panel_keeps_its_points_visible(tmp_path):
    frame = many_space_scores()
    fig = constraint_aware.plot_spaces(frame, tmp_path / "s.pdf", tmp_path / "s.png")
    fig.draw_without_rendering()  # extents at the screen dpi, not the saved PNG's
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[-1]
    legend = ax.get_legend()
    box = legend.get_window_extent(renderer)
    xs = {}
    for ln in ax.get_lines():
        if (ln.get_gid() or "").startswith("gain-"):
            for px, py in ax.transData.transform(ln.get_xydata()):
                assert not (box.x0 <= px <= box.x1 and box.y0 <= py <= box.y1), "the legend covers a point"
            xs[ln.get_gid()] = ln.get_xdata()
    assert len(xs) == 4
    # spaces of one density: each algorithm's points at their own x, so that they do not hide each other
    first = [x[0] for x in xs.values()]
    assert len(set(first)) == 4 and max(first) - min(first) < 10
    assert [ln.get_alpha() for ln in ax.get_lines() if (ln.get_gid() or "").startswith("gain-")] == [0.8] * 4


def test_constraint_aware_score_panels_share_the_y_scale_and_show_the_spread(tmp_path):
    parts = []
    for i, shift in enumerate((0.0, 0.3, -0.4)):
        f = scores_frame().assign(space=f"dev/k{i}")
        f["score"] = f["score"] + shift
        parts.append(f)
    scores = pd.concat(parts, ignore_index=True)
    scores.loc[scores["algorithm"] == "diff_evo", "score"] -= 2.0  # one strategy far below the others
    fig = constraint_aware.plot(scores, tmp_path / "c.pdf", tmp_path / "c.png")
    panels = visible_axes(fig)
    assert len({ax.get_ylim() for ax in panels}) == 1, "the panels' y scales differ"
    ga = next(ax for ax in panels if ax.get_title() == style.label("genetic_algorithm"))
    bands = {c.get_gid(): c for c in ga.collections if (c.get_gid() or "").startswith("band-")}
    assert set(bands) == {"band-aware", "band-unaware"}
    aware = scores[(scores["algorithm"] == "genetic_algorithm") & scores["constraint_aware"]]
    q = aware.groupby("time_fraction")["score"].quantile([0.25, 0.75]).unstack()
    y = bands["band-aware"].get_paths()[0].vertices[:, 1]
    assert y.min() == pytest.approx(q[0.25].min()) and y.max() == pytest.approx(q[0.75].max())
    title = fig.legends[0].get_title().get_text()
    assert "interquartile range over the 3 spaces" in title
    assert "RS" in fig._supylabel.get_text()


def test_tradeoff_fp64_label_stays_clear_of_the_left_spine(tmp_path):
    space = mixed_precision_space()  # all-FP64 has error 0: its line is the leftmost point, at the spine
    fig = tradeoff.plot(space.table, space.parameters, "mre", "A100 / bessel", tmp_path / "t.pdf", tmp_path / "t.png")
    top = fig.axes[0]
    fig.draw_without_rendering()  # extents (and the labels' white boxes) at the screen dpi
    renderer = fig.canvas.get_renderer()
    frame = top.get_window_extent(renderer)
    clearance = 2.0 * fig.dpi / 72.0
    for text in (t for t in top.texts if (t.get_gid() or "").startswith("type-")):
        box = text.get_bbox_patch().get_window_extent(renderer)  # its white box, not only the letters
        assert box.x0 >= frame.x0 + clearance and box.x1 <= frame.x1 - clearance, text.get_text()
