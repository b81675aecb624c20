"""One strategy against the baselines (#34): the summary table on crafted final frames, and its figure."""

from __future__ import annotations

from fnmatch import fnmatch

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from analysis import config
from analysis.cli import main
from analysis.figures import summary as summary_figure
from analysis.statistics import Bootstrap, a12_lower_better, holm
from analysis.tables import comparison as tables
from analysis.tables import summary

# S is a user strategy by dotted path (styled automatically by analysis.figures.style)
SETTINGS = {"rs": "rs", "nsga2": "nsga2", "nsga3": "nsga3", "mine": "kernel_tuner.strategies.mls"}
RUNS = 10


def _final(cells: dict[tuple[str, str, int], dict[str, np.ndarray]], objective_set: str = "time") -> pd.DataFrame:
    """Final-indicator rows: cells[(device, kernel, budget)][setting] = final IGD+ per run (all ran the budget)."""
    rows = []
    for (device, kernel, budget), per_setting in cells.items():
        for setting, values in per_setting.items():
            for rep, v in enumerate(values):
                rows.append({"device": device, "kernel": kernel, "objective_set": objective_set, "setting": setting,
                             "algorithm": {**SETTINGS, "ga": "genetic_algorithm"}.get(setting, setting),
                             "budget": budget, "repetition": rep, "igd_plus": float(v), "evaluations": budget})
    out = pd.DataFrame(rows)
    for col in ("device", "kernel", "objective_set", "setting", "algorithm"):
        out[col] = out[col].astype("string")  # as analysis.indicators.gather.gather writes them
    return out


def _spread(centre: float, width: float = 0.1) -> np.ndarray:
    return centre + np.linspace(-width, width, RUNS)


def known_frame() -> pd.DataFrame:
    """S clearly best on A/good, clearly worst on A/bad, level with RS on A/level; two budgets."""
    cells = {}
    for budget in (50, 100):
        cells[("A", "good", budget)] = {"rs": _spread(2.0), "nsga2": _spread(1.5), "nsga3": _spread(1.2),
                                        "mine": _spread(0.5)}
        cells[("A", "bad", budget)] = {"rs": _spread(2.0), "nsga2": _spread(1.5), "nsga3": _spread(1.2),
                                       "mine": _spread(4.0)}
        cells[("A", "level", budget)] = {"rs": _spread(2.0, 0.5), "nsga2": _spread(1.0), "nsga3": _spread(1.0),
                                         "mine": _spread(2.0, 0.5)[::-1] + 0.01}
    return _final(cells)


def test_verdicts_ranks_and_improvements_where_the_answer_is_known():
    final = known_frame()
    out = summary.build(final, SETTINGS, "mine").set_index(["kernel", "budget"])
    assert len(out) == 6 and set(out["setting"]) == {"mine"} and (out["n_runs"] == RUNS).all()
    for budget in (50, 100):
        good, bad, level = out.loc[("good", budget)], out.loc[("bad", budget)], out.loc[("level", budget)]
        assert (good["vs_rs"], good["vs_nsga2"], good["vs_nsga3"]) == ("better",) * 3
        assert (bad["vs_rs"], bad["vs_nsga2"], bad["vs_nsga3"]) == ("worse",) * 3
        assert level["vs_rs"] == "no difference" and level["vs_nsga2"] == "worse"
        assert (good["rank"], bad["rank"], good["n_ranked"]) == (1, 4, 4)
        assert good["a12_rs"] == 1.0 and bad["a12_rs"] == 0.0
        assert good["improvement_pct"] == pytest.approx(75.0)
        assert bad["improvement_pct"] == pytest.approx(-100.0)
        assert good["improvement_nsga2_pct"] == pytest.approx(25.0)
        assert good["improvement_nsga3_pct"] == pytest.approx(40.0)
        assert good["median_rs"] == pytest.approx(2.0) and good["median"] == pytest.approx(0.5)


def test_improvements_are_tables_improvement_per_space():
    """Per (space, budget), each algorithm's improvement_* is what tables.improvement gives for that one pair, and
    the mean over the spaces is its thesis mean."""
    final = known_frame()
    out = summary.build(final, SETTINGS, "mine")
    boot = Bootstrap(resamples=10, seed=0)
    for column, setting in (("improvement_pct", "mine"), ("improvement_nsga2_pct", "nsga2"),
                            ("improvement_nsga3_pct", "nsga3")):
        for row in out.itertuples(index=False):
            one = final[(final["kernel"] == row.kernel) & (final["budget"] == row.budget)]
            ref = tables.improvement(one, "rs", [setting], boot)
            assert getattr(row, column) == pytest.approx(ref["thesis_mean_pct"].item()), (column, row.kernel)
        pooled = tables.improvement(final, "rs", [setting], boot).set_index("budget")["thesis_mean_pct"]
        assert out.groupby("budget")[column].mean().to_dict() == pytest.approx(pooled.to_dict())


def test_p_values_are_holm_over_the_baselines_of_the_cell():
    final = known_frame()
    row = summary.build(final, SETTINGS, "mine").query("kernel == 'level' and budget == 50").iloc[0]
    part = final[(final["kernel"] == "level") & (final["budget"] == 50)]
    values = {s: part.loc[part["setting"] == s, "igd_plus"].to_numpy() for s in ("mine", "rs", "nsga2", "nsga3")}
    raw = [mannwhitneyu(values["mine"], values[b], alternative="two-sided").pvalue for b in ("rs", "nsga2", "nsga3")]
    assert [row["p_holm_rs"], row["p_holm_nsga2"], row["p_holm_nsga3"]] == pytest.approx(list(holm(raw)))
    assert row["a12_rs"] == pytest.approx(a12_lower_better(values["mine"], values["rs"]))
    assert row["p_holm_nsga2"] == pytest.approx(3 * raw[1])  # the smallest of a family of three


def test_tied_medians_share_the_best_rank():
    cells = {("A", "k", 20): {"rs": _spread(2.0), "nsga2": _spread(1.0), "nsga3": _spread(3.0),
                              "mine": _spread(1.0)}}
    row = summary.build(_final(cells), SETTINGS, "mine").iloc[0]
    assert (row["rank"], row["n_ranked"]) == (1, 4)
    cells[("A", "k", 20)]["nsga3"] = _spread(1.0)  # a three-way tie for the best: all three are 1 (not 2, the mean)
    assert summary.build(_final(cells), SETTINGS, "mine").iloc[0]["rank"] == 1
    cells[("A", "k", 20)]["nsga2"] = _spread(0.5)
    cells[("A", "k", 20)]["nsga3"] = _spread(0.5)
    assert summary.build(_final(cells), SETTINGS, "mine").iloc[0]["rank"] == 3


def test_undefined_improvement_where_only_rs_reached_the_front():
    cells = {("A", "zero", 20): {"rs": np.zeros(RUNS), "nsga2": np.zeros(RUNS), "nsga3": np.zeros(RUNS),
                                 "mine": _spread(1.0)}}
    row = summary.build(_final(cells), SETTINGS, "mine").iloc[0]
    assert np.isnan(row["improvement_pct"])
    assert row["improvement_nsga2_pct"] == 0.0 and row["improvement_nsga3_pct"] == 0.0
    assert row["rank"] == 4 and row["vs_rs"] == "worse"


def test_runs_cut_short_count_in_the_medians_as_in_tables_improvement():
    final = known_frame()
    short = (final["setting"] == "mine") & (final["kernel"] == "good") & (final["repetition"] < 3)
    final.loc[short, "evaluations"] = final.loc[short, "budget"] - 1
    final.loc[(final["setting"] == "rs") & (final["repetition"] == 0), "evaluations"] = 1
    out = summary.build(final, SETTINGS, "mine").set_index(["kernel", "budget"])
    assert out.loc[("good", 50), "runs_cut_short"] == 3 and out.loc[("bad", 50), "runs_cut_short"] == 0
    assert (out["baseline_runs_cut_short"] == 1).all()
    assert out.loc[("good", 50), "median"] == pytest.approx(0.5)  # the runs cut short are in the median
    assert out.loc[("good", 50), "n_runs"] == RUNS


def test_absent_baselines_have_no_columns():
    final = known_frame()
    without3 = {k: v for k, v in SETTINGS.items() if k != "nsga3"}
    out = summary.build(final, without3, "mine")
    assert not [c for c in out.columns if "nsga3" in c]
    assert {"improvement_nsga2_pct", "p_holm_nsga2", "a12_nsga2", "vs_nsga2"} <= set(out.columns)
    assert (out["n_ranked"] == 3).all()
    only_rs = {"rs": "rs", "mine": "my_strategy.py"}
    out = summary.build(final, only_rs, "mine")
    assert not [c for c in out.columns if "nsga" in c]
    level = out.query("kernel == 'level' and budget == 50").iloc[0]
    part = final[(final["kernel"] == "level") & (final["budget"] == 50)]
    p = mannwhitneyu(*(part.loc[part["setting"] == s, "igd_plus"] for s in ("mine", "rs"))).pvalue
    assert level["p_holm_rs"] == pytest.approx(p)  # a family of one: no adjustment
    docs = summary.column_docs(without3, "mine")
    assert "absent" in docs["note"] and "NSGA-III" in docs["note"]
    # two NSGA-II settings: neither is a baseline, both are summarised
    two = {**SETTINGS, "nsga2_b": "nsga2"}
    assert summary.baselines(two) == {"rs": "rs", "nsga3": "nsga3"}
    assert summary.summary_settings(two) == ["nsga2", "mine", "nsga2_b"]


def test_a_baseline_missing_from_a_cell_leaves_that_cell_unranked_against_it():
    final = known_frame()
    final = final[~((final["setting"] == "nsga3") & (final["kernel"] == "good") & (final["budget"] == 50))]
    out = summary.build(final, SETTINGS, "mine").set_index(["kernel", "budget"])
    row = out.loc[("good", 50)]
    assert row["n_ranked"] == 3 and np.isnan(row["median_nsga3"]) and pd.isna(row["vs_nsga3"])
    assert row["vs_rs"] == "better" and out.loc[("good", 100), "n_ranked"] == 4


def test_needs_exactly_one_random_search_and_a_strategy():
    final = known_frame()
    with pytest.raises(ValueError, match="exactly one random-search"):
        summary.build(final, {"nsga2": "nsga2", "mine": "x"}, "mine")
    with pytest.raises(ValueError, match="exactly one random-search"):
        summary.build(final, {**SETTINGS, "rs2": "rs"}, "mine")
    with pytest.raises(ValueError, match="is a baseline"):
        summary.build(final, SETTINGS, "nsga2")
    with pytest.raises(ValueError, match="not a comparison setting"):
        summary.build(final, SETTINGS, "other")
    assert summary.summary_settings({"nsga2": "nsga2", "mine": "x"}) == []


def test_summary_settings_of_the_configs():
    def algorithms(path):
        return {k: v["algorithm"] for k, v in config.load(path)["simulation"]["algorithms"].items()}

    assert summary.summary_settings(algorithms(config.ROOT / "config/config.yaml")) == ["nsga2_unaware",
                                                                                         "nsga3_unaware"]
    tiny = summary.summary_settings(algorithms(config.ROOT / "config/test.yaml"))
    assert tiny[:2] == ["nsga2_unaware", "ga_aware"] and not {"rs", "nsga2"} & set(tiny)
    assert summary.summary_settings({**SETTINGS, "mod": "pkg.module:Strategy"}) == ["mine", "mod"]


def test_run_writes_csv_and_documented_markdown(tmp_path):
    path = tmp_path / "final.parquet"
    known_frame().to_parquet(path)
    frame = summary.run(path, SETTINGS, "mine", tmp_path / "mine.csv", tmp_path / "mine.md")
    back = pd.read_csv(tmp_path / "mine.csv")
    assert list(back.columns) == list(frame.columns) and len(back) == 6
    assert back.loc[back["kernel"] == "good", "vs_rs"].eq("better").all()
    md = (tmp_path / "mine.md").read_text()
    assert md.startswith("# mine against RS, NSGA-II, NSGA-III")
    docs = summary.column_docs(SETTINGS, "mine")
    keys = [k for key in docs for k in key.split(" / ")]
    assert not [c for c in frame.columns if not any(fnmatch(c, k) for k in keys)]


# --- the figure ---

def full_shape_table(n_spaces: int = 26, n_multi: int = 9, budgets=(50, 100, 150, 200)) -> pd.DataFrame:
    """A summary table of the full study's shape: n_spaces spaces on time, n_multi of them also on O3 and O5."""
    rng = np.random.default_rng(3)
    cells = {}
    frames = []
    names = [("RTX_3060_laptop" if i % 3 else "A100", f"convolution_bat_{i}") for i in range(n_spaces)]
    for objective_set, spaces in (("time", names), ("O3", names[:n_multi]), ("O5", names[:n_multi])):
        cells = {(d, k, b): {s: rng.uniform(0.0, 2.0) + rng.uniform(0, 0.3, RUNS) for s in SETTINGS}
                 for d, k in spaces for b in budgets}
        frames.append(_final(cells, objective_set))
    return summary.build(pd.concat(frames, ignore_index=True), SETTINGS, "mine")


def _texts_inside(fig) -> list:
    """Visible texts that run off the figure."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    out = []
    for t in fig.findobj(lambda a: hasattr(a, "get_text") and a.get_visible() and a.get_text()):
        box = t.get_window_extent(renderer)
        if box.width and (box.x0 < frame.x0 - 0.5 or box.x1 > frame.x1 + 0.5 or box.y0 < frame.y0 - 0.5
                          or box.y1 > frame.y1 + 0.5):
            out.append(t.get_text())
    return out


def test_figure_of_the_full_study_shape(tmp_path):
    table = full_shape_table()
    sets = {"time": ["time"], "O3": ["time", "memory", "mre"], "O5": ["time", "memory", "mre", "nrmse", "nmae"]}
    fig = summary_figure.plot(table, SETTINGS, "mine", tmp_path / "s.pdf", tmp_path / "s.png", sets)
    assert (tmp_path / "s.pdf").read_bytes()[:5] == b"%PDF-" and (tmp_path / "s.png").stat().st_size > 50_000
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == [f"budget {b}" for b in (50, 100, 150, 200)]
    rows = 26 + 9 + 9 + 3  # the pairs and a header per objective set
    assert len(axes[0].get_yticks()) == rows
    width, height = fig.get_size_inches()
    assert width <= 7.0 and 0.14 * rows < height <= 10.0  # one page, the height from the rows
    # S filled exactly where it differs significantly from RS; one rank per row and budget
    significant = table["vs_rs"].isin(["better", "worse"]).groupby(table["budget"]).sum()
    for ax, budget in zip(axes, (50, 100, 150, 200)):
        filled = sum(len(line.get_xdata()) for line in ax.get_lines() if line.get_gid() == "s-significant")
        hollow = sum(len(line.get_xdata()) for line in ax.get_lines() if line.get_gid() == "s-not-significant")
        assert filled == significant[budget] and filled + hollow == 44
        ranks = [t for t in ax.texts if t.get_gid() == "rank"]
        assert len(ranks) == 44
    assert not _texts_inside(fig)


def test_figure_with_rs_only_and_a_floor(tmp_path):
    final = known_frame()
    final.loc[final["setting"] == "mine", "igd_plus"] *= 10  # far behind RS: improvements below -100 %
    only_rs = {"rs": "rs", "mine": "genetic_algorithm"}
    table = summary.build(final, only_rs, "mine")
    fig = summary_figure.plot(table, only_rs, "mine", tmp_path / "s.pdf", tmp_path / "s.png")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "≤−100" and ax.get_xlim()[0] < -100
    assert not [line for line in ax.get_lines() if (line.get_gid() or "").startswith("baseline")]
    assert not _texts_inside(fig)


def test_cli_end_to_end(tmp_path):
    final = tmp_path / "final.parquet"
    known_frame().to_parquet(final)
    import json

    settings = json.dumps(SETTINGS)
    assert main(["summary-table", "--final", str(final), "--settings", settings, "--setting", "mine",
                 "--csv", str(tmp_path / "t" / "mine.csv"), "--md", str(tmp_path / "t" / "mine.md")]) == 0
    assert main(["figure-summary", "--table", str(tmp_path / "t" / "mine.csv"), "--settings", settings,
                 "--setting", "mine", "--objective-sets", '{"time": ["time"]}',
                 "--pdf", str(tmp_path / "f.pdf"), "--png", str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").stat().st_size > 20_000
    bad = pd.read_csv(tmp_path / "t" / "mine.csv").drop(columns=["vs_rs"])
    bad.to_csv(tmp_path / "bad.csv", index=False)
    assert main(["figure-summary", "--table", str(tmp_path / "bad.csv"), "--settings", settings, "--setting", "mine",
                 "--pdf", str(tmp_path / "g.pdf"), "--png", str(tmp_path / "g.png")]) == 2


def test_a_line_marker_of_s_is_replaced_by_one_that_can_be_hollow(tmp_path, monkeypatch):
    """A style whose marker has no face ('1') could not show filled / hollow: S is drawn with a filled one."""
    from analysis.figures import style

    plain = style.setting_styles

    def with_line_marker(settings):
        return {s: {**st, "marker": "1"} if s == "mine" else st for s, st in plain(settings).items()}

    monkeypatch.setattr(style, "setting_styles", with_line_marker)
    table = summary.build(known_frame(), SETTINGS, "mine")
    fig = summary_figure.plot(table, SETTINGS, "mine", tmp_path / "s.pdf", tmp_path / "s.png")
    s_lines = [line for line in fig.axes[0].get_lines() if (line.get_gid() or "").startswith("s-")]
    assert s_lines and {line.get_marker() for line in s_lines} == {summary_figure.UNFILLABLE_FALLBACK}
