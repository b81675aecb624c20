"""The results in README.md, docs/findings.md and docs/results.md are rendered from the published tables, not typed."""

from __future__ import annotations

import math
import re
import shutil

import pandas as pd
from scipy.stats import mannwhitneyu

from analysis import markdown
from analysis.tables import literature
from analysis.tables import readme as results
from helpers import REPO

README, DOC, TABLES, CONFIG = REPO / "README.md", REPO / "docs/results.md", REPO / "tables", REPO / "config/config.yaml"
FINDINGS = REPO / "docs/findings.md"


def test_committed_results_equal_their_rendering_from_the_committed_tables():
    for path, text in results.expected(README, DOC, TABLES, CONFIG).items():
        assert path.read_text() == text, (
            f"{path.relative_to(REPO)} is not what the tables give: run `python -m analysis.cli readme-results`")


def _copies(tmp_path):
    """README.md, docs/results.md and docs/findings.md copied into `tmp_path`."""
    copies = tmp_path / "README.md", tmp_path / "results.md", tmp_path / "findings.md"
    for source, copy in zip((README, DOC, FINDINGS), copies, strict=True):
        shutil.copy(source, copy)
    return copies


def test_a_hand_edited_number_fails_the_check(tmp_path, capsys):
    readme, doc, findings = _copies(tmp_path)
    assert results.main(readme, doc, TABLES, CONFIG, check=True, findings=findings) == 0
    table2 = pd.read_csv(TABLES / "improvement_over_rs.csv")
    row = table2[(table2["scope"] == "multi-objective") & (table2["setting"] == "nsga2")].iloc[-1]
    typed = results.num(row["thesis_mean_pct"])
    for edited in (readme, findings):
        text = edited.read_text()
        assert typed in text
        edited.write_text(text.replace(typed, typed + "1", 1))
        assert results.main(readme, doc, TABLES, CONFIG, check=True, findings=findings) == 1
        assert f"{edited.name}: differs" in capsys.readouterr().out
        edited.write_text(text)


def test_counts_are_computed_from_the_significance_table(tmp_path):
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    sig = pd.read_csv(folder / "significance.csv")
    t = results.Tables(folder, CONFIG)
    row = sig[(sig["setting"] == "nsga2") & (sig["objective_set"] == "time")].iloc[0]
    before = results.significance_table(t, ["time"], ["nsga2"])
    # make one time-only NSGA-II pair at that budget a clear loss to RS
    sig.loc[row.name, ["p_holm", "a12"]] = [0.001, 0.1]
    sig.to_csv(folder / "significance.csv", index=False)
    after = results.significance_table(results.Tables(folder, CONFIG), ["time"], ["nsga2"])
    assert before != after
    cell = after.splitlines()[2].split(" | ")[2 + sorted(sig["budget"].unique()).index(row["budget"])]
    assert "/ 1 of" in cell


def test_numbers_are_rounded_with_a_true_minus_and_no_negative_zero():
    assert results.num(-1.66) == "−1.7"
    assert results.num(-0.04) == "0.0"
    assert results.num(float("nan")) == "–"
    assert results.interval(97.54, 95.46, 1234.5) == "97.5 [95.5, 1,234.5]"


def test_the_thesis_gap_sentence_counts_the_pairs_it_leaves_out(tmp_path):
    """Table 3's prose says how many pairs the thesis's mean drops, and that each is a loss."""
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    t3 = pd.read_csv(folder / "nsga3_over_nsga2.csv")
    top = t3["budget"].max()
    at = (t3["scope"] == "O5") & (t3["setting"] == "nsga3") & (t3["budget"] == top)
    t3.loc[at, ["n_pairs", "n_better", "n_equal", "n_worse", "n_undefined", "n_in_thesis_mean"]] = [9, 4, 2, 3, 3, 6]
    t3.loc[at, ["thesis_mean_pct", "bounded_mean_pct", "bounded_ci_low_pct", "bounded_ci_high_pct"]] = [
        56.0, 4.0, -48.7, 55.5]
    t3.to_csv(folder / "nsga3_over_nsga2.csv", index=False)
    text = results.thesis_gap(results.Tables(folder, CONFIG), "nsga3_over_nsga2", "O5", "nsga3", "nsga2")
    assert f"At budget {top} on O5, NSGA-III is better than NSGA-II in 4, equal in 2 and worse in 3 of 9 pairs" in text
    assert "covers 6 of them: it leaves out the 3 pairs where NSGA-II found the whole front" in text
    assert "bounded mean is 4.0 % [−48.7, 55.5]" in text


def test_gemm_gain_against_the_other_gpu_spaces_is_computed_from_the_scores(tmp_path):
    """The density paragraph: GEMM's mean gain and the other GPU spaces', from the per-space scores."""
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    sc = pd.read_csv(folder / "constraint_aware_scores.csv")
    counted = results.counted(sc)  # the spaces kept out for their budget are in no mean
    gpu_spaces = sorted(counted.loc[counted["objective"] == "time", "space"].unique())
    sc.loc[sc["kernel"] == "gemm", "kernel"] = "gemm_elsewhere"  # only the two chosen spaces are GEMM
    gemm = sc["space"].isin(gpu_spaces[:2])
    sc.loc[gemm, "kernel"] = "gemm"
    sc.loc[gemm & (sc["algorithm"] == "pso"), "gain"] = [0.5, 0.25]
    sc = sc.drop(columns=[c for c in sc.columns if c.endswith(("_ci_low", "_ci_high"))])  # tables of before them
    sc.to_csv(folder / "constraint_aware_scores.csv", index=False)
    text = results.density_gains(results.Tables(folder, CONFIG))
    rest = results.counted(sc[(sc["objective"] == "time") & ~gemm & (sc["algorithm"] == "pso")])["gain"]
    row = next(line for line in text.splitlines() if line.startswith("| PSO |")).split(" | ")
    assert row[1:3] == ["0.38", results.num(rest.mean(), 2)]  # tables without per-space intervals: no counts
    assert row[4].rstrip(" |") == results.num(mannwhitneyu([0.5, 0.25], rest, alternative="greater").pvalue, 3)
    assert f"The {len(gpu_spaces)} GPU spaces here" in text and "above / below 0" not in text
    # with per-space intervals: the spaces whose own interval lies above / below 0, not those whose gain is > 0
    sc["gain_ci_low"], sc["gain_ci_high"] = sc["gain"] - 0.01, sc["gain"] + 0.01
    sc.loc[gemm & (sc["algorithm"] == "pso"), "gain_ci_low"] = [0.1, -0.2]
    sc.to_csv(folder / "constraint_aware_scores.csv", index=False)
    text = results.density_gains(results.Tables(folder, CONFIG))
    row = next(line for line in text.splitlines() if line.startswith("| PSO |")).split(" | ")
    others = results.counted(sc[(sc["objective"] == "time") & ~gemm & (sc["algorithm"] == "pso")])
    assert row[1:4] == ["0.38", "1 / 0 of 2", results.num(rest.mean(), 2)]
    assert row[4] == f"{int((others['gain'] > 0.01).sum())} / {int((others['gain'] < -0.01).sum())} of {len(others)}"


def _ca_tables(folder, spaces, minimum=20):
    """The constraint-aware tables of `spaces` ((space, group, budget, gain, aware and unaware runs of 10 ended by
    PSO's iteration limit)) as rule ca_tables writes them, into `folder`."""
    from analysis.tables.constraint_aware import tables

    folder.mkdir(parents=True, exist_ok=True)
    files, curves = [], []
    for i, (space, group, budget, gain, maxiter) in enumerate(spaces):
        base = {"space": space, "kernel": space.split("/")[1], "device": space.split("/")[0], "objective": "time",
                "threshold": float("nan"), "feasible_fraction": 1.0, "density": 0.1 * (i + 1), "runs": 10,
                "cutoff_fevals": budget, "real_fraction": 1.0, "group": group}
        stops = [";".join(f"{r}:{k}" for r, k in (("strategy", n), ("time_limit", 10 - n)) if k) for n in maxiter]
        frame = pd.DataFrame([
            {**base, "strategy": "pso_aware", "algorithm": "pso", "constraint_aware": True, "score": 0.2 + gain,
             "stop_reasons": stops[0]},
            {**base, "strategy": "pso_unaware", "algorithm": "pso", "constraint_aware": False, "score": 0.2,
             "stop_reasons": stops[1]},
            {**base, "strategy": "rs", "algorithm": "rs", "constraint_aware": True, "score": -0.3 * i,
             "stop_reasons": "time_limit:10"},
        ])
        files.append(folder / f"s{i}.parquet")
        frame.to_parquet(files[-1])
        curves.append(folder / f"c{i}.parquet")
        pd.DataFrame({"space": [space], "time_fraction": [0.0], "score": [0.0]}).to_parquet(curves[-1])
    tables(files, curves, folder, folder / "curves.parquet", resamples=100, seed=0, min_budget_evaluations=minimum)
    return results.Tables(folder, CONFIG)


def test_the_spaces_kept_out_are_listed_with_their_budget_and_left_out_of_the_gains(tmp_path):
    t = _ca_tables(tmp_path / "tables", [("gpu/a", "hub", 300, 0.1, (0, 0)), ("gpu/b", "hub", 8, 0.9, (0, 0)),
                                         ("cpu/c", "thr", 19, -0.5, (0, 0)), ("cpu/d", "thr", 20, 0.3, (0, 0)),
                                         ("cpu/e", "thr", 5, 0.2, (0, 0))])
    text = results.excluded_spaces(t)
    # sorted by budget, each with random search's score there; the group that loses most of its spaces is named
    assert "*budget under 20 evaluations (constraint_aware.min_budget_evaluations)*: cpu/e (5; RS −1.20), " \
           "gpu/b (8; RS −0.30), cpu/c (19; RS −0.60)." in text
    assert "2 of the 3 spaces of group thr are kept out" in text and "hub are kept out" not in text
    gains = results.gains_table(t)
    # over gpu/a and cpu/d only: their gains, and random search's scores there (0 and -0.9)
    # no per-space intervals in these tables: no count of spaces that gain (a point gain > 0 is no claim)
    assert "| all (2; 3 kept out) | 0.20 [0.10, 0.30] | −0.45 |" in gains
    assert "| thr (1; 2 kept out) | 0.30 [–, –] | −0.90 |" in gains
    # and in the full README block
    assert "cpu/c (19; RS −0.60)" in results.readme_constraint_aware(t)
    # with a minimum of 0 nothing is kept out and nothing is said about it
    t = _ca_tables(tmp_path / "all", [("gpu/a", "hub", 300, 0.1, (0, 0)), ("gpu/b", "hub", 8, 0.9, (0, 0))], 0)
    assert results.excluded_spaces(t) == "" and "| all (2) |" in results.gains_table(t)


def test_the_iteration_limit_table_says_how_much_of_a_gain_rests_on_such_runs(tmp_path):
    t = _ca_tables(tmp_path / "tables", [("gpu/a", "hub", 300, 0.6, (8, 2)), ("gpu/b", "hub", 300, 0.1, (0, 3)),
                                         ("gpu/c", "hub", 300, -0.1, (2, 6)), ("gpu/d", "hub", 5, 0.9, (10, 10))])
    row = next(line for line in results.maxiter_table(t).splitlines() if line.startswith("| all (3) |"))
    # runs ended by maxiter 33 / 37 %, all of the range backed, and without gpu/a and gpu/c only gpu/b's 0.10
    assert row == "| all (3) | 33 / 37 %; 100 / 100 %; 0.10 over 1 |"


def test_tables_from_before_spaces_could_be_kept_out_render_as_they_did(tmp_path):
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    for name in ("constraint_aware_scores", "constraint_aware_runs"):
        frame = pd.read_csv(folder / f"{name}.csv")
        frame.drop(columns=[c for c in ("excluded", "budget_evaluations") if c in frame.columns]).to_csv(
            folder / f"{name}.csv", index=False)
    gains = pd.read_csv(folder / "constraint_aware_gains.csv")
    gains.drop(columns=[c for c in gains.columns if c == "spaces_excluded" or "maxiter" in c]).to_csv(
        folder / "constraint_aware_gains.csv", index=False)
    t = results.Tables(folder, CONFIG)
    assert results.excluded_spaces(t) == "" and results.maxiter_table(t) == ""
    assert "kept out" not in results.gains_table(t)


# --- the reading against the papers (README's second generated block) -------------------------------

def _tables(tmp_path):
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    return folder


def _set(folder, name, where, values):
    """Set `values` ({column: value}) on the rows of tables/<name>.csv that `where(frame)` selects."""
    df = pd.read_csv(folder / f"{name}.csv")
    rows = where(df)
    assert rows.any(), f"no row of {name}.csv to change"
    for column, value in values.items():
        df.loc[rows, column] = value
    df.to_csv(folder / f"{name}.csv", index=False)


def _multi(df, setting, budget):
    return (df["scope"] == "multi-objective") & (df["setting"] == setting) & (df["budget"] == budget)


def test_a_hand_edited_reading_fails_the_check(tmp_path):
    readme, doc, findings = _copies(tmp_path)
    text = findings.read_text()
    start, stop = text.index(results.READING_BEGIN), text.index(results.READING_END)
    block = text[start:stop]
    assert " than the thesis's " in block
    findings.write_text(text[:start] + block.replace(" than the thesis's ", " than the thesis's, we think, ", 1)
                        + text[stop:])
    assert results.expected(readme, doc, TABLES, CONFIG, findings)[findings] != findings.read_text()


def test_the_smallest_budget_sentence_counts_pairs_and_significant_pairs(tmp_path):
    folder = _tables(tmp_path)
    t = results.Tables(folder, CONFIG)
    first = results.budgets(t)[0]
    imp = pd.read_csv(folder / "improvement_over_rs.csv")
    n = int(imp.loc[_multi(imp, "nsga2", first), "n_pairs"].iloc[0])
    # NSGA-II now better than RS in all but one pair at the smallest budget, significantly in three
    _set(folder, "improvement_over_rs", lambda d: _multi(d, "nsga2", first),
         {"n_better": n - 1, "n_equal": 0, "n_worse": 1})
    sig = pd.read_csv(folder / "significance.csv")
    cells = sig[(sig["setting"] == "nsga2") & (sig["budget"] == first) & sig["objective_set"].isin(t.multi_sets())]
    sig.loc[cells.index, ["p_holm", "a12"]] = [1.0, 0.5]
    sig.loc[cells.index[:3], ["p_holm", "a12"]] = [0.001, 0.9]
    sig.to_csv(folder / "significance.csv", index=False)
    text = results.smallest_budget(results.Tables(folder, CONFIG))
    assert (f"At the smallest budget, {first}, the median final IGD+ of NSGA-II is better than RS's in {n - 1} and "
            f"worse in 1 of the {n} pairs (significantly better in 3, worse in 0)") in text


def _all_pairs_sentence(text: str) -> str:
    """The all-pairs sentence of a thesis comparison, without its count of pairs and spaces (and without the
    held-out sentence that follows it)."""
    first = text.split(" Over the ")[0]
    return re.sub(r"^Ours, over \d+ pairs of \d+ spaces \(the intervals resample spaces\), is", "Ours is", first)


def test_larger_or_smaller_than_the_thesis_follows_the_numbers(tmp_path):
    folder = _tables(tmp_path)
    budgets = sorted(literature.thesis(2))
    what = "Ours"
    # ours above the thesis's at every budget, the thesis's mean inside our interval everywhere
    for b in budgets:
        for s, (ref, _) in zip(literature.THESIS_SETTINGS, literature.thesis(2)[b]):
            _set(folder, "improvement_over_rs", lambda d, s=s, b=b: _multi(d, s, b),
                 {"thesis_mean_pct": ref + 5, "thesis_ci_low_pct": ref - 1, "thesis_ci_high_pct": ref + 10})
    text = _all_pairs_sentence(results.thesis_comparison(results.Tables(folder, CONFIG), "improvement_over_rs",
                                                         literature.thesis(2), what))
    assert text == ("Ours is larger than the thesis's at every budget for NSGA-II and NSGA-III alike; the thesis's "
                    "mean lies inside our 95 % interval at every budget for both.")
    # NSGA-III now below the thesis's at the largest budget, outside our interval there
    top, ref = budgets[-1], literature.thesis(2)[budgets[-1]][1][0]
    _set(folder, "improvement_over_rs", lambda d: _multi(d, "nsga3", top),
         {"thesis_mean_pct": ref - 5, "thesis_ci_low_pct": ref - 9, "thesis_ci_high_pct": ref - 1})
    text = _all_pairs_sentence(results.thesis_comparison(results.Tables(folder, CONFIG), "improvement_over_rs",
                                                         literature.thesis(2), what))
    rest = results.listing(budgets[:-1])
    assert text == (f"Ours is, for NSGA-II, larger than the thesis's at every budget; for NSGA-III, larger than the "
                    f"thesis's at budgets {rest} and smaller at budget {top}; the thesis's mean lies outside our 95 % "
                    f"interval at no budget for NSGA-II and at budget {top} for NSGA-III.")
    # equal as displayed is neither larger nor smaller
    assert results.compare(11.24, 11.19) == "equal" and results.compare(11.26, 11.19) == "larger"


def test_where_the_evaluation_time_goes_follows_the_spaces_table(tmp_path):
    folder = _tables(tmp_path)
    t = results.Tables(folder, CONFIG)
    host = set(results.space_kinds(t)["host-CPU"]["space"])
    text = results.eval_time_reading(t)
    sp = t["spaces"][lambda d: d["space"].isin(host)]
    assert f"on the {len(host)} host-CPU spaces compile {results.span(sp['compile_share_pct'])} %" in text
    # the benchmark the largest part everywhere
    _set(folder, "spaces", lambda d: d["space"].isin(host),
         {"compile_share_pct": 10.0, "verification_share_pct": 1.0, "benchmark_share_pct": 89.0})
    flipped = results.eval_time_reading(results.Tables(folder, CONFIG))
    assert ("host-CPU spaces compile 10.0 %, verification 1.0 %, benchmark 89.0 % (benchmark the largest part on "
            "every one)") in flipped
    # the saving is no longer bounded by one space's benchmark share (issue #44): without eval_time_parts.csv,
    # nothing is said of it
    assert "faster kernels alone could save" not in flipped and "benchmark's share" not in flipped
    # a spaces table without the share columns: no sentence on them
    pd.read_csv(folder / "spaces.csv").drop(columns=["compile_share_pct"]).to_csv(folder / "spaces.csv", index=False)
    assert "Where an evaluation's time goes" not in results.eval_time_reading(results.Tables(folder, CONFIG))


def test_the_seed_001_reading_follows_the_gains_and_scores(tmp_path):
    folder = _tables(tmp_path)
    gains = lambda group, algo: lambda d: (d["group"] == group) & (d["algorithm"] == algo)  # noqa: E731
    for algo in ("diff_evo", "firefly_algorithm", "genetic_algorithm", "pso"):
        _set(folder, "constraint_aware_gains", gains("GPU tuned on time", algo),
             {"gain_density_spearman": 0.1, "gain": 0.1, "gain_ci_low": -0.05, "gain_ci_high": 0.2,
              "seed001_gain": 0.1})
    for group in ("all", "benchmark_hub", "benchmark_hub_more", "accuracy threshold"):
        _set(folder, "constraint_aware_gains", lambda d, group=group: d["group"] == group,
             {"gain_ci_low": -0.1, "gain_ci_high": 0.1})
    sc = pd.read_csv(folder / "constraint_aware_scores.csv")  # first without per-space intervals
    sc.drop(columns=[c for c in sc.columns if c.endswith(("_ci_low", "_ci_high"))]).to_csv(
        folder / "constraint_aware_scores.csv", index=False)
    t = results.Tables(folder, CONFIG)
    text = results.reading_seed001(t)
    g, sc = t["constraint_aware_gains"], results.counted(t["constraint_aware_scores"])
    hub = int(g.loc[g["group"] == "benchmark_hub", "spaces"].max())
    gpu = sc[sc["objective"] == "time"]
    others = gpu.loc[gpu["kernel"] != "gemm", "space"].nunique()
    sparse = gpu.loc[gpu["kernel"] != "gemm", "space"].iloc[0]  # made the sparsest below
    n_gemm = gpu.loc[gpu["kernel"] == "gemm", "space"].nunique()
    gemm = f"GEMM ({results.num(100 * gpu.loc[gpu['kernel'] == 'gemm', 'density'].min())} % valid, "
    assert "(`tables/constraint_aware_gains.csv`): none." in text
    assert "is weak for every algorithm (|ρ| 0.10;" in text and "for no algorithm." in text
    assert "over the GPU spaces are consistent for DE, Firefly, GA and PSO (seed 001's value inside" in text
    assert gemm + f"the sparsest GPU kernel here) is {n_gemm} GPU spaces; its gains are larger" in text
    # with per-space intervals, "gains on each" follows them: every GEMM interval above 0 but one of PSO's
    sc = pd.read_csv(folder / "constraint_aware_scores.csv")
    sc["gain_ci_low"], sc["gain_ci_high"] = sc["gain"] - 0.01, sc["gain"] + 0.01
    sc.loc[sc["kernel"] == "gemm", "gain_ci_low"] = 0.05
    one = sc.index[(sc["kernel"] == "gemm") & (sc["algorithm"] == "pso")][0]
    sc.loc[one, "gain_ci_low"] = -0.05
    sc.to_csv(folder / "constraint_aware_scores.csv", index=False)
    text = results.reading_seed001(results.Tables(folder, CONFIG))
    assert gemm + (f"the sparsest GPU kernel here) gains on each of its {n_gemm} GPUs (the space's 95 % interval over "
                   "resamples of its runs above 0) under DE, Firefly and GA") in text
    # flip each claim
    _set(folder, "constraint_aware_gains", gains("benchmark_hub", "diff_evo"), {"gain_ci_low": 0.01})
    _set(folder, "constraint_aware_gains", gains("GPU tuned on time", "genetic_algorithm"),
         {"gain_density_spearman": -0.55, "seed001_gain": 0.8})
    _set(folder, "constraint_aware_gains", gains("GPU tuned on time", "pso"),
         {"gain_density_spearman": -0.75, "seed001_gain": -0.3})
    sc = pd.read_csv(folder / "constraint_aware_scores.csv")
    for column in ("gain", "gain_ci_low", "gain_ci_high"):  # below every other space
        sc.loc[sc["kernel"] == "gemm", column] = sc.loc[sc["kernel"] == "gemm", column] - 5
    sc.loc[sc["space"] == sparse, "density"] = 0.01
    sc.to_csv(folder / "constraint_aware_scores.csv", index=False)
    flipped = results.reading_seed001(results.Tables(folder, CONFIG))
    assert f"on the {hub} benchmark_hub spaces, DE's (above 0); on all spaces, " in flipped
    assert "weak for DE and Firefly; moderate for GA; strong for PSO" in flipped and "for GA and PSO." in flipped
    assert ("below for GA (seed 001's value above our 95 % interval), above for PSO (seed 001's value below our 95 % "
            "interval), consistent for DE and Firefly") in flipped
    assert (gemm + f"not the sparsest GPU kernel here ({sparse} is)) gains on each of its {n_gemm} GPUs (the "
            "space's 95 % interval over resamples of its runs above 0) under no algorithm; its gains are larger than "
            f"the other {others} GPU spaces' (one-sided Mann–Whitney U test over spaces, p < 0.05) under no "
            "algorithm") in flipped
    assert "hotspot (1.6 % valid), is no sparser than the sparsest GPU space here (1.0 %)" in flipped


def test_the_table_4_sentence_counts_the_devices_of_a_kernel(tmp_path):
    """Host-CPU and mixed-precision GPU spaces of a kernel both count as its devices."""
    folder = _tables(tmp_path)
    t = results.Tables(folder, CONFIG)
    kinds = results.space_kinds(t)
    sp = pd.read_csv(folder / "spaces.csv")
    both = sp[sp["space"].isin(kinds["host-CPU"]["space"]) | sp["space"].isin(kinds[results.GPU_MIXED]["space"])]
    devices = both.groupby("kernel")["device"].nunique()
    expected = ("pairs of one device, so its SD is no measure" if devices.max() == 1
                else f"pairs of {results.span(devices, 0)} devices.")
    assert expected in results.table4_devices(t)
    sp[~sp["space"].isin(kinds[results.GPU_MIXED]["space"])].to_csv(folder / "spaces.csv", index=False)
    assert "pairs of one device, so its SD is no measure" in results.table4_devices(results.Tables(folder, CONFIG))
    host = kinds["host-CPU"].iloc[[0]]
    host = host.assign(device="other-vm", space="other-vm/" + host["kernel"])
    pd.concat([sp, host]).to_csv(folder / "spaces.csv", index=False)
    assert "pairs of 1–2 devices." in results.table4_devices(results.Tables(folder, CONFIG))


def test_eval_time_shares_in_the_spaces_table(tmp_path):
    import json

    from analysis.cli import main
    from analysis.spaces.table import eval_time_shares

    times = pd.DataFrame({"compile_time_ms": [6.0, 2.0, float("nan")], "verification_time_ms": [1.0, 0.0, 0.0],
                          "benchmark_time_ms": [1.0, 0.0, 0.0]})
    assert eval_time_shares(times) == {"compile_share_pct": 80.0, "verification_share_pct": 10.0,
                                       "benchmark_share_pct": 10.0}
    assert set(eval_time_shares(None).values()) == {None}
    assert set(eval_time_shares(times * 0).values()) == {None}
    meta = {"device": "d", "kernel": "k", "parameters": {"a": [1, 2, 3]}, "constraints": [], "objectives": [],
            "counts": {"cartesian": 3, "constrained": 3, "rows": 3, "missing": 0, "failed": {}, "removed": {}}}
    (tmp_path / "m.json").write_text(json.dumps(meta))
    (tmp_path / "f.json").write_text(json.dumps({"sets": {}, "ranges": {}}))
    times.to_parquet(tmp_path / "s.parquet")
    out = ["--csv", str(tmp_path / "spaces.csv"), "--md", str(tmp_path / "spaces.md")]
    files = ["--meta", str(tmp_path / "m.json"), "--fronts", str(tmp_path / "f.json")]
    assert main(["spaces-table", *files, "--space-parquets", str(tmp_path / "s.parquet"), *out]) == 0
    row = pd.read_csv(tmp_path / "spaces.csv").iloc[0]
    assert (row["compile_share_pct"], row["verification_share_pct"], row["benchmark_share_pct"]) == (80.0, 10.0, 10.0)
    assert list(pd.read_csv(tmp_path / "spaces.csv").columns).index("compile_share_pct") == \
        list(pd.read_csv(tmp_path / "spaces.csv").columns).index("budget_share_pct") + 1
    # without the parquets the columns are there, empty
    assert main(["spaces-table", *files, *out]) == 0
    assert pd.read_csv(tmp_path / "spaces.csv")["compile_share_pct"].isna().all()


def test_spaces_are_told_apart_by_where_they_were_measured(tmp_path):
    """host-CPU, mixed-precision GPU (data/sweeps/cuda/) and the other GPU spaces come from the config's
    sources, not from whether a space is multi-objective: a CUDA sweep tuned on O3 is a GPU space."""
    import yaml

    spaces = [{"kernel": "kmeans", "device": "cpu-vm", "source": "data/sweeps/cpu/cpu-vm/kmeans.json.gz"},
              {"kernel": "kmeans", "device": "h200", "source": "data/sweeps/cuda/h200/kmeans.json.gz"},
              {"kernel": "gemm", "device": "A100", "source": "data/benchmark_hub/cachefiles/gemm/A100.json.gz"}]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"objective_sets": {"O3": ["time", "memory", "mre"],
                                                                             "time": ["time"]}, "spaces": spaces}))
    pd.DataFrame({"space": ["cpu-vm/kmeans", "h200/kmeans", "A100/gemm"], "device": ["cpu-vm", "h200", "A100"],
                  "kernel": ["kmeans", "kmeans", "gemm"], "Z_O3": [1.0, 1.0, None], "Z_time": [1.0, 1.0, 1.0],
                  "excluded": [None, None, None]}).to_csv(tmp_path / "spaces.csv", index=False)
    pd.DataFrame({"objective_set": ["O3", "time"]}).to_csv(tmp_path / "indicators.csv", index=False)
    kinds = results.space_kinds(results.Tables(tmp_path, tmp_path / "config.yaml"))
    assert {k: list(v["space"]) for k, v in kinds.items()} == {
        "host-CPU": ["cpu-vm/kmeans"], results.GPU_MIXED: ["h200/kmeans"], "GPU": ["A100/gemm"]}


def _new_format_tables(folder):
    """The committed tables in `folder`, with Table 2 rebuilt by the current code from the committed per-pair medians
    (tables/indicators.csv: one stand-in run per cell whose final IGD+ is the cell's median, so the medians are the
    study's) and Tables 4 and 5 given the new columns and held-out rows: what a republication brings."""
    import yaml

    from analysis.statistics import Bootstrap
    from analysis.tables import comparison

    shutil.copytree(TABLES, folder)
    cfg = yaml.safe_load(CONFIG.read_text())
    ind = pd.read_csv(folder / "indicators.csv")
    final = ind.rename(columns={"igd_median": "igd_plus"})[["device", "kernel", "objective_set", "budget", "setting",
                                                            "igd_plus"]]
    kernels = cfg["hyperparameters"]["kernels"]
    training = sorted({f"{d}/{k}" for d, k in zip(ind["device"], ind["kernel"]) if k in kernels})
    others = [s for s in dict.fromkeys(final["setting"]) if s != "rs"]
    t2 = comparison.by_scope(comparison.improvement, final, cfg["objective_sets"], "rs", others, Bootstrap(2000, 0),
                             selection_spaces=training)
    t2.to_csv(folder / "improvement_over_rs.csv", index=False)
    t5 = pd.read_csv(folder / "eval_time.csv")
    if "n_spaces" not in t5:  # the tables of before the republication that brought them
        t5.insert(t5.columns.get_loc("n_pairs") + 1, "n_spaces", (t5["n_pairs"] + 1) // 2)
        t5.insert(t5.columns.get_loc("n_in_thesis_mean") + 1, "n_spaces_in_thesis_mean",
                  (t5["n_in_thesis_mean"] + 1) // 2)
    t5 = t5[~t5["scope"].str.endswith(" held-out")]
    held = t5[t5["scope"] == "multi-objective"].assign(scope="multi-objective held-out", n_pairs=14, n_spaces=7)
    held["thesis_mean_pct"] -= 1.0
    pd.concat([t5, held], ignore_index=True).to_csv(folder / "eval_time.csv", index=False)
    t4 = pd.read_csv(folder / "speedup_to_rs.csv")
    t4["n_spaces"] = t4["kernel"].map(lambda k: 2 if k == "kmeans" else 1)
    t4["n_spaces_held_out"] = t4["n_spaces"].where(~t4["kernel"].isin(cfg["hyperparameters"]["kernels"]), 0)
    t4["n"] = t4["n_reached"]
    t4["n_flag"] = t4["n"].map(lambda n: comparison.SMALL_N_FLAG if n < comparison.SMALL_N else "")
    t4.to_csv(folder / "speedup_to_rs.csv", index=False)
    return t2, held, t4


def test_republished_tables_quote_spaces_pairs_and_the_held_out_scope_beside_every_thesis_mean(tmp_path):
    t2, t5_held, t4 = _new_format_tables(tmp_path / "tables")
    t = results.Tables(tmp_path / "tables", CONFIG)
    multi = t2[(t2["scope"] == "multi-objective") & (t2["setting"] == "nsga2")]
    held = t2[(t2["scope"] == "multi-objective held-out") & (t2["setting"] == "nsga2")]
    assert (multi["n_pairs"].max(), multi["n_spaces"].max()) == (20, 10)
    assert (held["n_pairs"].max(), held["n_spaces"].max()) == (14, 7)  # the 7 spaces not used for the selection

    comparison_text = results.readme_comparison(t)
    assert "| O3 + O5 (20 pairs, 10 spaces) | NSGA-II |" in comparison_text
    assert "| O3 + O5, held-out (14 pairs, 7 spaces) | NSGA-II |" in comparison_text
    assert "The intervals resample spaces" in comparison_text
    top = held.set_index("budget").loc[held["budget"].max()]
    assert results.interval(top["thesis_mean_pct"], top["thesis_ci_low_pct"], top["thesis_ci_high_pct"]) \
        in comparison_text

    thesis = results.readme_thesis(t)
    assert "NSGA-II held-out" in thesis
    assert "the 14 pairs of 7 spaces the hyperparameters were not selected on" in thesis
    row = next(line for line in thesis.splitlines() if line.startswith(f"| Table 2: median IGD+ improvement over RS | "
                                                                        f"budget {int(top.name)} |"))
    assert row.split(" | ")[3] == f"{results.num(top['thesis_mean_pct'])} (± {results.num(top['thesis_sd_pct'])})"
    bessel = t4[(t4["kernel"] == "bessel") & (t4["setting"] == "nsga2")].iloc[0]
    row = next(line for line in thesis.splitlines() if "| bessel |" in line)
    assert f"n = {int(bessel['n'])} < 3" in row and "selection kernel" in row
    assert "kernel held out" in next(line for line in thesis.splitlines() if "| lavamd |" in line)

    reading = results.thesis_comparison(t, "improvement_over_rs", literature.thesis(2), "Ours")
    assert "Ours, over 20 pairs of 10 spaces (the intervals resample spaces), is" in reading
    assert "Over the 14 pairs of 7 spaces the hyperparameters were not selected on (all but those of bessel, " \
           "convolution2d and mriq; scope `multi-objective held-out`), ours is" in reading
    # the held-out sentence follows the held-out intervals: "outside" exactly where a thesis mean lies outside one
    rows = t2[t2["scope"] == "multi-objective held-out"].set_index(["setting", "budget"])
    outside = [not rows.loc[(s, b), "thesis_ci_low_pct"] <= ref[i][0] <= rows.loc[(s, b), "thesis_ci_high_pct"]
               for b, ref in literature.thesis(2).items() for i, s in enumerate(literature.THESIS_SETTINGS)]
    assert ("lies outside our 95 % interval" in reading.split("Over the 14 pairs")[1]) == any(outside)
    assert "Over the 14 pairs of 7 spaces" in results.eval_time_reading(t)

    doc = results.doc_comparison(t)
    assert "O3, held-out" in doc and "time, held-out" not in doc  # no selection space among the time-only ones


def _parts_table(folder, rows):
    """tables/eval_time_parts.csv of multi-objective rows {(setting, budget): (saving, compile, (lo, hi),
    verification + benchmark, residual)}."""
    out = []
    for (setting, budget), (saving, comp, (lo, hi), vb, residual) in rows.items():
        out.append({"scope": "multi-objective", "setting": setting, "baseline": "rs", "budget": budget,
                    "n_pairs": 20, "saving_mean_pct": saving, "compile_mean_pct": comp, "compile_ci_low_pct": lo,
                    "compile_ci_high_pct": hi, "verification_benchmark_mean_pct": vb,
                    "verification_benchmark_ci_low_pct": vb - 1, "verification_benchmark_ci_high_pct": vb + 1,
                    "residual_mean_pct": residual})
    out.append({**out[0], "scope": "O3", "saving_mean_pct": 99.0})  # another scope: not the README's
    pd.DataFrame(out).to_csv(folder / "eval_time_parts.csv", index=False)


def test_the_saving_is_split_as_eval_time_parts_says(tmp_path):
    folder = _tables(tmp_path)
    _parts_table(folder, {("nsga2", 100): (2.0, 1.5, (0.5, 2.5), 0.4, 0.1),
                          ("nsga3", 150): (5.3, 3.0, (1.2, 4.1), 2.2, 0.1),
                          ("nsga3", 200): (4.0, 2.3, (-0.2, 4.0), 1.2, 0.5)})
    text = results.eval_time_reading(results.Tables(folder, CONFIG))
    assert ("NSGA-III's largest mean saving, 5.3 % at budget 150, is over its 20 pairs (`tables/eval_time_parts.csv`, "
            "points of the saving with their 95 % intervals) 3.0 [1.2, 4.1] points of compile time and 2.2 [1.2, 3.2] "
            "of verification + benchmark time, 0.1 left by medians that do not add up; so it is not faster kernels "
            "alone") in text
    assert ("Over NSGA-II's and NSGA-III's rows at every budget, compile accounts for 1.5–3.0 points of the mean "
            "saving and verification + benchmark for 0.4–2.2.") in text
    # a compile part whose interval covers 0 says nothing of why
    _parts_table(folder, {("nsga3", 150): (5.3, 3.0, (-1.0, 4.1), 2.2, 0.1)})
    text = results.eval_time_reading(results.Tables(folder, CONFIG))
    assert "not faster kernels alone" not in text
    assert "2.2 [1.2, 3.2] of verification + benchmark time, 0.1 left" in text


def test_the_compile_sensitivity_sentence_follows_its_table(tmp_path):
    folder = _tables(tmp_path)
    rows = []
    for scenario, scaled, change in (("outside check", "nvidia-h200/kmeans ×1.97", 1.0),
                                     ("compile x2", "nvidia-h200/kmeans ×2", 1.1)):
        for setting in ("nsga2", "nsga3"):
            rows += [{"table": "eval_time", "scenario": scenario, "spaces_scaled": scaled, "scope": "multi-objective",
                      "setting": setting, "budget": 100, "column": "thesis_mean_pct", "change": change * s}
                     for s in (-1, 2)]
            rows.append({"table": "eval_time", "scenario": scenario, "spaces_scaled": scaled, "scope": "O3",
                         "setting": setting, "budget": 100, "column": "thesis_mean_pct", "change": 50.0})
            rows.append({"table": "speedup_to_rs", "scenario": scenario, "spaces_scaled": scaled, "kernel": "kmeans",
                         "setting": setting, "column": "reached_time_mean_pct", "change": -3 * change})
            rows.append({"table": "speedup_to_rs_spaces", "scenario": scenario, "spaces_scaled": scaled,
                         "device": "nvidia-h200", "kernel": "kmeans", "objective_set": "O3", "setting": setting,
                         "column": "speedup_time_pct", "change": float("nan")})
    pd.DataFrame(rows).to_csv(folder / "compile_sensitivity.csv", index=False)
    text = results.eval_time_reading(results.Tables(folder, CONFIG))
    assert ("rescaling their compile part (`tables/compile_sensitivity.csv`) moves NSGA-II's and NSGA-III's values "
            "with nvidia-h200/kmeans ×1.97 (the outside check of its compile measurement) by at most 2.0 points in "
            "Table 5's multi-objective means, 3.0 in Table 4's means of its kernel and – in its own Table 4 speedups; "
            "with nvidia-h200/kmeans ×2 (a factor of the config's tables.compile_sensitivity_factors) by at most 2.2 "
            "points") in text
    # no space compiled elsewhere: no sentence
    pd.DataFrame(rows).assign(spaces_scaled="none").to_csv(folder / "compile_sensitivity.csv", index=False)
    assert "compile_sensitivity" not in results.eval_time_reading(results.Tables(folder, CONFIG))


def test_the_run_count_example_follows_the_half_run_scores(tmp_path):
    """docs/constraint-aware.md's measured example: from the runs table's scores on each half of the runs, over the
    spaces that count; the pair that moves most is the example, with its interval."""
    folder = _tables(tmp_path)
    runs = pd.read_csv(folder / "constraint_aware_runs.csv")
    before = runs.drop(columns=[c for c in ("score_ci_low", "score_ci_high", "score_resamples", "score_first_half",
                                            "score_second_half", "half_runs") if c in runs.columns])
    before.to_csv(folder / "constraint_aware_runs.csv", index=False)  # a runs table of before the resamples
    assert results.render_run_count(results.Tables(folder, CONFIG)).startswith("Not measured")
    counted = ~results.kept_out(runs)
    runs["score_ci_low"], runs["score_ci_high"] = runs["score"] - 0.05, runs["score"] + 0.05
    runs["score_first_half"], runs["score_second_half"] = runs["score"] + 0.01, runs["score"] - 0.01  # neither side
    runs["half_runs"] = runs["runs"] // 2
    up = runs.index[counted][:3]
    runs.loc[up, "score_first_half"] = runs.loc[up, "score"] + 0.02
    runs.loc[up, "score_second_half"] = runs.loc[up, "score"] + 0.04
    most = up[1]
    runs.loc[most, "score_second_half"] = runs.loc[most, "score"] + 0.3  # outside the interval, with the first not
    down = runs.index[counted][3]
    runs.loc[down, ["score_first_half", "score_second_half"]] = runs.loc[down, "score"] - 0.1  # both outside
    runs.loc[~counted, "score_first_half"] = runs.loc[~counted, "score"] + 5  # kept out: not in the example
    runs.to_csv(folder / "constraint_aware_runs.csv", index=False)
    text = results.render_run_count(results.Tables(folder, CONFIG))
    e = runs.loc[most]
    assert f"Measured on the study's {int(counted.sum())} (space, strategy) pairs" in text
    assert "on both halves in 3 pairs and below on both in 1 (two-sided sign test over those 4: p = 0.625)" in text
    assert "in 1 pairs both halves lie outside the 95 % interval" in text
    assert (f"{e['strategy']} on {e['space']}, {results.num(e['score'] + 0.02, 3)} and "
            f"{results.num(e['score'] + 0.3, 3)} on its two halves of {int(e['half_runs'])} runs, "
            f"{results.interval(e['score'], e['score'] - 0.05, e['score'] + 0.05, 3)} on all {int(e['runs'])}.") in text
    # and it is what docs/constraint-aware.md holds between its markers
    doc = results.expected(README, DOC, folder, CONFIG)[results.CA_DOC]
    assert f"{results.RUNS_BEGIN}\n\n{text}\n\n{results.RUNS_END}" in doc


def test_the_spaces_that_gain_are_those_whose_own_interval_lies_above_0(tmp_path):
    folder = _tables(tmp_path)
    g = pd.read_csv(folder / "constraint_aware_gains.csv")
    g["spaces_gain_above"], g["spaces_gain_below"] = 2, 1
    g.loc[g["algorithm"] == "rs", ["spaces_gain_above", "spaces_gain_below"]] = math.nan
    g.to_csv(folder / "constraint_aware_gains.csv", index=False)
    sc = pd.read_csv(folder / "constraint_aware_scores.csv")
    sc["gain_ci_low"], sc["gain_ci_high"] = sc["gain"] - 0.1, sc["gain"] + 0.1
    sc.to_csv(folder / "constraint_aware_scores.csv", index=False)
    t = results.Tables(folder, CONFIG)
    row = g[(g["group"] == "all") & (g["algorithm"] == "pso")].iloc[0]
    cell = (f"{results.interval(row['gain'], row['gain_ci_low'], row['gain_ci_high'], 2)}; 2 of {int(row['spaces'])} "
            "above 0, 1 below")
    assert cell in results.gains_table(t)
    assert "by its 95 % interval over resamples of the space's runs" in results.readme_constraint_aware(t)
    # docs/results.md's per-space table gives each gain with its interval
    r = sc[(sc["algorithm"] == "pso")].iloc[0]
    row = next(line for line in results.doc_constraint_aware(t).splitlines() if line.startswith(f"| {r['space']} |"))
    assert results.interval(r["gain"], r["gain"] - 0.1, r["gain"] + 0.1, 2) in row


# --- README for a newcomer: its shape and the results at a glance -------------------------------------

def test_the_readme_is_short_with_short_lines_and_its_sections_in_order():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150
    assert [n for n, line in enumerate(lines, 1) if len(line) > results.LINE_WIDTH] == []
    sections = [line[3:] for line in lines if line.startswith("## ")]
    assert sections[:5] == ["Set up", "Run", "Test", "Results at a glance", "Glossary"]
    # what it is and for whom: at most five lines between the title and the first section
    intro = lines[1:lines.index("## Set up")]
    assert len([line for line in intro if line.strip()]) <= 5


def test_the_glance_is_at_most_15_lines_with_one_figure_that_exists():
    t = results.Tables(TABLES, CONFIG)
    block = results.render_glance(t).splitlines()[1:-1]
    assert len(block) <= 15
    figures = [line for line in block if line.startswith("![")]
    assert len(figures) == 1 and results.glance_figure(t) == "figures/anytime/all_O3.png"
    assert (REPO / results.glance_figure(t)).is_file()
    assert all(len(line) <= results.LINE_WIDTH for line in block)


def test_each_verdict_at_a_glance_follows_its_interval(tmp_path):
    """'better' / 'not apart' / 'worse' and 'gain' / 'lose' follow the 95 % interval's place against 0."""
    assert [results.verdict(*ci) for ci in ((0.1, 2.0), (-1.0, 2.0), (-2.0, -0.1))] == ["better", "not apart", "worse"]
    folder = _tables(tmp_path)
    budget = min(pd.read_csv(folder / "improvement_over_rs.csv")["budget"])
    line = results.glance_improvement(results.Tables(folder, CONFIG), "multi-objective", budget)
    assert "NSGA-II −0.8 % [−11.4, 9.9] not apart" in line  # the published cell, its interval holds 0
    _set(folder, "improvement_over_rs", lambda d: (d["scope"] == "multi-objective") & (d["setting"] == "nsga2")
         & (d["budget"] == budget), {"thesis_ci_low_pct": 0.5})
    line = results.glance_improvement(results.Tables(folder, CONFIG), "multi-objective", budget)
    assert "NSGA-II −0.8 % [0.5, 9.9] better" in line
    _set(folder, "constraint_aware_gains", lambda d: (d["group"] == "all") & (d["algorithm"] == "diff_evo"),
         {"gain_ci_high": -0.01})
    aware = [f for f in results.glance_findings(results.Tables(folder, CONFIG)) if f.startswith("Aware minus")][0]
    assert "DE −0.07 [−0.16, −0.01] lose" in aware and "DE not apart" not in aware


def test_links_written_for_the_root_are_rewritten_for_a_folder_below():
    text = "[a](docs/study.md#search-spaces) [b](tables/y.csv) ![c](figures/z.png) [d](https://e.org/docs/) [f](#g)"
    assert markdown.relink(text, "docs") == (
        "[a](study.md#search-spaces) [b](../tables/y.csv) ![c](../figures/z.png) [d](https://e.org/docs/) [f](#g)")
