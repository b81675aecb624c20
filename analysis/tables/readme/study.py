"""The multi-objective comparison's text: README's (docs/findings.md's) paragraphs on the spaces, Table 2 and the
thesis, and docs/results.md's sections on Tables 2-5, the ablation and the spaces."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from analysis.statistics import censored_median
from analysis.tables import literature
from analysis.tables.comparison import HELD_OUT, SMALL_N, SMALL_N_FLAG, held_out_scope
from analysis.tables.readme.data import (
    ALPHA,
    GPU_MIXED,
    Tables,
    budget_header,
    budgets,
    counts,
    excluded_text,
    settings,
    space_kinds,
    verdicts,
)
from analysis.tables.readme.text import Prose, interval, name, num, pairs_of, plural, span, table

prose = Prose("study")


def improvement_table(t: Tables, name_: str, scopes: Sequence[str], only: Sequence[str] | None = None) -> str:
    """Per scope, setting and budget: the thesis's mean [95 % interval] in % (over the pairs where it is
    defined), the bounded mean [interval] over every pair, and the better / equal / worse pair counts."""
    df = t[name_]
    rows = []
    for scope in scopes:
        part = df[df["scope"] == scope]
        for s in settings(part, only):
            cells = part[part["setting"] == s].set_index("budget")
            row = [f"{t.scope_label(scope)} ({counts(cells)})", name(s)]
            for b in budgets(t):
                r = cells.loc[b]
                text = interval(r["thesis_mean_pct"], r["thesis_ci_low_pct"], r["thesis_ci_high_pct"])
                if int(r["n_in_thesis_mean"]) < int(r["n_pairs"]):
                    text += f" (over {int(r['n_in_thesis_mean'])})"
                bounded = interval(r["bounded_mean_pct"], r["bounded_ci_low_pct"], r["bounded_ci_high_pct"])
                text += f"; bounded {bounded}; {int(r['n_better'])}/{int(r['n_equal'])}/{int(r['n_worse'])}"
                row.append(text)
            rows.append(row)
    return table(budget_header(t, ["pairs", "algorithm"]), rows)


def cell_note(t: Tables, name_: str) -> str:
    """What a cell of `improvement_table` holds, and for a table with the spaces counted, what its intervals resample
    and what the brackets and the held-out scopes are."""
    df = t[name_]
    if "n_spaces" not in df:
        return prose("cell_note")
    text = prose("cell_note") + " " + prose("cell_note_spaces")
    if df["scope"].astype(str).str.endswith(f" {HELD_OUT}").any():
        text += " " + prose("cell_note_held_out", held_out=HELD_OUT, selection=t.selection())
    return text


def thesis_gap(t: Tables, name_: str, scope: str, setting: str, baseline: str) -> str:
    """One sentence on the pairs the thesis's mean leaves out at the largest budget, from the table."""
    df = t[name_]
    cell = df[(df["scope"] == scope) & (df["setting"] == setting)]
    if cell.empty:
        return ""
    r = cell.set_index("budget").loc[max(cell["budget"])]
    b, n, u = int(r.name), int(r["n_pairs"]), int(r["n_undefined"])
    undefined = prose("thesis_gap_undefined", undefined=u, s=plural(u), baseline=name(baseline),
                      setting=name(setting)) if u else ""
    return prose("thesis_gap", budget=b, scope=t.scope_label(scope), setting=name(setting), baseline=name(baseline),
                 better=int(r["n_better"]), equal=int(r["n_equal"]), worse=int(r["n_worse"]), n=n,
                 mean=num(r["thesis_mean_pct"]), covered=int(r["n_in_thesis_mean"]), undefined=undefined,
                 bounded=num(r["bounded_mean_pct"]), low=num(r["bounded_ci_low_pct"]),
                 high=num(r["bounded_ci_high_pct"]))


def significance_table(t: Tables, scopes: Sequence[str], only: Sequence[str] | None = None,
                       name_: str = "significance") -> str:
    """Pairs better / worse than the baseline of all pairs, per scope, setting and budget."""
    df = verdicts(t, name_)
    rows = []
    for scope in scopes:
        part = df[df["objective_set"].isin(t.scope_sets(scope))]
        for s in settings(part, only):
            row = [t.scope_label(scope), name(s)]
            for b in budgets(t):
                cell = part[(part["setting"] == s) & (part["budget"] == b)]["verdict"]
                row.append(f"{(cell == 'better').sum()} / {(cell == 'worse').sum()} of {len(cell)}")
            rows.append(row)
    return table(budget_header(t, ["pairs", "algorithm"]), rows)


def readme_spaces(t: Tables) -> str:
    """The study's spaces in one paragraph, from tables/spaces.csv."""
    sp = t["spaces"]
    multi = t.multi_sets()
    excluded = excluded_text(sp)
    kinds = space_kinds(t)
    labels = {"GPU": "GPU space{s} tuned on time",
              "host-CPU": f"host-CPU space{{s}} of the mixed-precision kernels (time, and {' / '.join(multi)})",
              GPU_MIXED: f"GPU space{{s}} of the mixed-precision kernels (time, and {' / '.join(multi)})"}
    parts = []
    for kind in ("GPU", "host-CPU", GPU_MIXED):
        part = kinds[kind]
        if part.empty:
            continue
        text = (f"{len(part)} {labels[kind].format(s=plural(len(part)))}: {span(part['constrained_size'], 0)} "
                f"configurations, {span(part['density_pct'], 1)} % of the Cartesian product")
        if "budget_share_pct" in part:
            text += f"; the largest budget covers {span(part['budget_share_pct'], 1)} % of a space"
        if "time_cv_median" in part and part["time_cv_median"].notna().any():
            text += (f"; median coefficient of variation of a configuration's times "
                     f"{span(part['time_cv_median'].dropna(), 3)}")
        parts.append(text)
    out = prose("spaces", kinds="; and ".join(parts))
    for _, r in sp[excluded != ""].iterrows():
        out += " " + prose("spaces_kept_out", space=r["space"], reason=r["excluded"])
    return out


def readme_comparison(t: Tables) -> str:
    ind = t["indicators"]
    runs = sorted(ind["n_runs"].unique())
    aware = [s for s in settings(t["improvement_over_rs"]) if not s.endswith("_unaware")]
    scopes = t.with_held_out("improvement_over_rs", ["multi-objective", "time"])
    return prose("comparison", runs=", ".join(str(r) for r in runs), cell_note=cell_note(t, "improvement_over_rs"),
                 table2=improvement_table(t, "improvement_over_rs", scopes, aware), alpha=ALPHA,
                 significance=significance_table(t, ["multi-objective", "time"], aware))


def _ours_thesis(mean: float, sd: float, thesis: tuple[float, float]) -> str:
    return f"{num(mean)} (± {num(sd)}) vs {num(thesis[0])} (± {num(thesis[1])})"


def _ours_n(r: pd.Series) -> str:
    """A Table 4 row's mean (± SD; n = the pairs behind them, '< SMALL_N' where flagged) for a table that gives n, else
    mean (± SD)."""
    if "n" not in r:
        return f"{num(r['reached_time_mean_pct'])} (± {num(r['reached_time_sd_pct'])})"
    flag = f" < {SMALL_N}" if str(r.get("n_flag", "")) == SMALL_N_FLAG else ""
    return f"{num(r['reached_time_mean_pct'])} (± {num(r['reached_time_sd_pct'])}; n = {int(r['n'])}{flag})"


def readme_thesis(t: Tables) -> str:
    """Tables 2, 4 and 5 of the thesis next to ours on the multi-objective (host-CPU) pairs, and where the tables
    have them, ours on the held-out spaces beside them and the n behind Table 4's SDs."""
    multi = t.multi_sets()
    if not multi:
        return ""
    scope = "multi-objective"
    held = held_out_scope(scope)
    with_held = (t["improvement_over_rs"]["scope"] == held).any()
    rows = []
    for table_name, label, thesis in (
            ("improvement_over_rs", "Table 2: median IGD+ improvement over RS", literature.thesis(2)),
            ("eval_time", "Table 5: median evaluation-time improvement over RS", literature.thesis(5))):
        df = t[table_name]
        part = df[df["scope"] == scope] if (df["scope"] == scope).any() else df[df["scope"] == "all"]
        held_part = df[df["scope"] == held]
        for budget, ref in thesis.items():
            cells = []
            for setting, ref_setting in zip(literature.THESIS_SETTINGS, ref):
                r = part[(part["setting"] == setting) & (part["budget"] == budget)]
                cells.append(_ours_thesis(r["thesis_mean_pct"].iloc[0], r["thesis_sd_pct"].iloc[0], ref_setting)
                             if len(r) else "–")
                if with_held:
                    h = held_part[(held_part["setting"] == setting) & (held_part["budget"] == budget)]
                    cells.append(f"{num(h['thesis_mean_pct'].iloc[0])} (± {num(h['thesis_sd_pct'].iloc[0])})"
                                 if len(h) else "–")
            rows.append([label, f"budget {budget}", *cells])
    sp = t["speedup_to_rs"]
    for kernel, ref in literature.thesis(4).items():
        cells = []
        for setting, ref_setting in zip(literature.THESIS_SETTINGS, ref):
            r = sp[(sp["kernel"] == kernel) & (sp["setting"] == setting)]
            if not len(r):
                cells += ["–", "–"] if with_held else ["–"]
                continue
            r = r.iloc[0]
            cells.append(f"{_ours_n(r)} vs {num(ref_setting[0])} (± {num(ref_setting[1])})"
                         + ("" if r["n_reached"] == r["n_pairs"] else f"; {r['status']}"))
            if with_held:
                held_out = "n_spaces_held_out" not in r or int(r["n_spaces_held_out"]) == int(r["n_spaces"])
                cells.append("kernel held out" if held_out else "selection kernel")
        rows.append(["Table 4: speedup to RS's budget-200 quality", kernel, *cells])
    pairs = int(t["improvement_over_rs"].query("scope == @scope")["n_pairs"].max())
    kinds = space_kinds(t)
    where = (f"{pairs} (host-CPU space, {' / '.join(multi)}) pairs" if kinds[GPU_MIXED].empty else
             f"{pairs} (space, {' / '.join(multi)}) pairs of {len(kinds['host-CPU'])} host-CPU and "
             f"{len(kinds[GPU_MIXED])} GPU space{plural(len(kinds[GPU_MIXED]))}")
    header = ["table", "row", "NSGA-II: ours vs thesis", "NSGA-III: ours vs thesis"]
    extra = ""
    if with_held:
        h = t["improvement_over_rs"].query("scope == @held")
        header = ["table", "row", "NSGA-II: ours vs thesis", "NSGA-II held-out", "NSGA-III: ours vs thesis",
                  "NSGA-III held-out"]
        extra += prose("thesis_held_out", pairs=pairs_of(h), selection=t.selection(), held=held)
    if "n" in sp:
        extra += prose("thesis_n", small_n=SMALL_N)
    return prose("thesis", where=where, extra=extra, table=table(header, rows))


def doc_comparison(t: Tables) -> str:
    ind = t["indicators"]
    scopes = ["multi-objective", *t.multi_sets(), *[s for s in sorted(set(ind["objective_set"]))
                                                     if s not in t.multi_sets()]]
    top = max(budgets(t))
    pooled_first = ["multi-objective", *[s for s in scopes if s != "multi-objective"]]
    parts = [prose("doc_table2", cell_note=cell_note(t, "improvement_over_rs")),
             improvement_table(t, "improvement_over_rs", t.with_held_out("improvement_over_rs", scopes)),
             *(prose("doc_figure", set=s) for s in t.multi_sets()[:1]),
             prose("doc_significance", alpha=ALPHA), significance_table(t, pooled_first)]
    zero = ind[(ind["budget"] == top) & (ind["igd_median"] == 0)]
    aware = [s for s in settings(ind) if not s.endswith("_unaware") and s != "rs"]
    lines = []
    for o in t.multi_sets():
        spaces = zero[(zero["objective_set"] == o) & zero["setting"].isin(aware)][["device", "kernel"]]
        total = ind[ind["objective_set"] == o][["device", "kernel"]].drop_duplicates()
        lines.append(f"{len(spaces.drop_duplicates())} of the {len(total)} spaces with {o}")
    sp = t["spaces"]
    multi_spaces = ind[ind["objective_set"].isin(t.multi_sets())]["device"] + "/" + \
        ind[ind["objective_set"].isin(t.multi_sets())]["kernel"]
    sizes = sp[sp["space"].isin(set(multi_spaces))]["constrained_size"]
    if len(sizes):
        parts.append(prose("doc_zero", smallest=sizes.min(), largest=sizes.max(), top=top,
                           low=num(100 * top / sizes.max(), 0), high=num(100 * top / sizes.min(), 0),
                           settings=" or ".join(name(s) for s in aware), where=" and on ".join(lines)))
    gaps = (thesis_gap(t, "nsga3_over_nsga2", sc, "nsga3", "nsga2") for sc in [*t.multi_sets()[-1:], "multi-objective"])
    parts += [prose("doc_table3", gaps=" ".join(x for x in gaps if x)),
              improvement_table(t, "nsga3_over_nsga2", t.with_held_out("nsga3_over_nsga2", scopes)),
              prose("doc_table4"), speedup_summary(t, scopes), prose("doc_table5"),
              improvement_table(t, "eval_time", t.with_held_out("eval_time", scopes)),
              cut_short_table(t, t.with_held_out("eval_time", scopes)),
              prose("doc_ablation", improvement=improvement_table(
                  t, "aware_over_unaware", t.with_held_out("aware_over_unaware", scopes)),
                    significance=significance_table(t, pooled_first, name_="aware_over_unaware_tests")),
              early_stops(t, scopes)]
    return "\n\n".join(parts)


def speedup_summary(t: Tables, scopes: Sequence[str]) -> str:
    sp = t["speedup_to_rs_spaces"]
    top = int(sp["budget"].max())
    rows = []
    for scope in scopes:
        part = sp[sp["objective_set"].isin(t.scope_sets(scope))]
        for s in settings(part):
            cell = part[part["setting"] == s]
            reached = cell[cell["status"] == "reached"]
            med = [censored_median(cell["speedup_evals_pct"].where(cell["status"] == "reached")),
                   censored_median(cell["speedup_time_pct"].where(cell["status"] == "reached"))]
            rows.append([t.scope_label(scope), name(s), f"{len(reached)} of {len(cell)}",
                         num(reached["speedup_evals_pct"].mean(), 0), num(reached["speedup_time_pct"].mean(), 0),
                         *("not reached" if m == float("-inf") else num(m, 0) for m in med)])
    return prose("speedup", top=top, table=table(
        ["pairs", "algorithm", "reached", "mean over reached, evaluations", "mean over reached, time",
         "median over all, evaluations", "median over all, time"], rows))


def cut_short_table(t: Tables, scopes: Sequence[str]) -> str:
    """The runs cut short that Table 5 leaves out, per scope, algorithm and budget (from tables/eval_time.csv):
    a lead sentence and a Markdown table."""
    et = t["eval_time"]
    rows = []
    for scope in scopes:
        part = et[et["scope"] == scope]
        for s in settings(part):
            cells = part[part["setting"] == s].set_index("budget")
            rows.append([t.scope_label(scope), name(s),
                         *(f"{int(cells.loc[b, 'runs_cut_short'])} / {int(cells.loc[b, 'baseline_runs_cut_short'])}"
                           f" ({int(cells.loc[b, 'n_pairs_without_full_run'])})" for b in budgets(t))])
    return prose("cut_short", table=table(budget_header(t, ["pairs", "algorithm"]), rows))


def early_stops(t: Tables, scopes: Sequence[str]) -> str:
    ind = t["indicators"]
    rows = []
    for scope in scopes:
        part = ind[ind["objective_set"].isin(t.scope_sets(scope))]
        for s in settings(part):
            cells = part[part["setting"] == s]
            row = [t.scope_label(scope), name(s)]
            for b in budgets(t):
                c = cells[cells["budget"] == b]
                row.append(f"{int(c['stopped_early'].sum())} of {int(c['n_runs'].sum())}")
            rows.append(row)
    return prose("early_stops", table=table(budget_header(t, ["pairs", "algorithm"]), rows))


def doc_spaces(t: Tables) -> str:
    sp = t["spaces"]
    sc = t["constraint_aware_scores"].drop_duplicates("space").set_index("space")
    multi = t.multi_sets()
    sp = sp[sp[[f"Z_{s}" for s in multi]].notna().all(axis=1)] if multi else sp.iloc[0:0]
    rows = []
    for _, r in sp.iterrows():
        tau = sc["threshold"].get(r["space"], float("nan"))
        feasible = sc["feasible_fraction"].get(r["space"], float("nan"))
        rows.append([r["space"], int(r["constrained_size"]), *(int(r[f"Z_{s}"]) for s in multi),
                     f"{r['time_ms_min']:.3g} – {r['time_ms_max']:.3g}", num(tau, 1),
                     num(100 * feasible, 0)])
    return prose("doc_spaces", table=table(["space", "configurations", *(f"\\|Z\\| {s}" for s in multi),
                                            "time (ms) min – max", "tau", "feasible %"], rows))
