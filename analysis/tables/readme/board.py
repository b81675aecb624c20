"""The leaderboard's text (README's summary, docs/results.md's whole board) and seed 003's tuning in
docs/results.md."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from analysis.statistics import p_text
from analysis.tables.leaderboard import left_out_entries, mean_ranks
from analysis.tables.readme.data import Tables, has
from analysis.tables.readme.text import Prose, interval, listing, num, table, verdict

prose = Prose("board")


def leaderboard_rows(t: Tables, top: int | None = None) -> str:
    board = t["leaderboard"]
    rows = [[str(i + 1), r["display"], r["family"], f"{int(r['n_spaces'])}", interval(r["mean_score"], r["ci_low"],
             r["ci_high"], 3), num(r["mean_rank"], 1), f"{int(r['spaces_best'])}",
             num(r["cost_per_run"], 1), r["note"] if isinstance(r["note"], str) else ""]
            for i, (_, r) in enumerate(board.head(top).iterrows() if top else board.iterrows())]
    return table(["#", "strategy", "family", "spaces", "mean score [95 % CI]", "mean rank", "best on", "cost/run",
                  "note"], rows)


def tied_with_best(t: Tables) -> list[str]:
    """The entries whose scores the pairwise tests (Holm) do not tell apart from the best mean rank's."""
    pairs = t["leaderboard_pairs"]
    if pairs.empty or pairs["p_holm"].isna().all():
        return []
    ranks = mean_ranks(pairs)
    best = min(ranks, key=lambda e: (ranks[e], e))
    mine = pairs[(pairs["entry_a"] == best) | (pairs["entry_b"] == best)]
    apart = mine[~mine["significant"].astype(bool)]
    others = [b if a == best else a for a, b in zip(apart["entry_a"], apart["entry_b"], strict=True)]
    return [best, *others]


def pyatf_sentence(t: Tables) -> str:
    """Seed 001 §VI-D on our spaces: the two sides' mean scores, their difference, and how the spaces differ."""
    c = t["pyatf_comparison"]
    means = c[c["row"] == "mean score"].set_index("side")
    if means.empty:
        return ""
    diff = c[c["row"].str.startswith("difference")]
    de = c[c["row"] == "DE against DE"]
    sides = [f"{side}: {interval(r['score'], r['ci_low'], r['ci_high'], 3)}"
             + (f" (seed 001: {num(r['seed_001'], 3)})" if pd.notna(r.get("seed_001")) else "")
             for side, r in means.iterrows()]
    n = int(means["n_spaces"].iloc[0])
    text = prose("pyatf", n=n, sides="; ".join(sides))
    if not diff.empty:
        d = diff.iloc[0]
        side = verdict(d["ci_low"], d["ci_high"], "above pyATF's", "below pyATF's", "not told apart from pyATF's")
        text += " " + prose("pyatf_difference", difference=interval(d["score"], d["ci_low"], d["ci_high"], 3),
                            p=p_text(d["wilcoxon_p"]), side=side)
    if not de.empty:
        text += " " + prose("pyatf_de", ahead=int((de["score"] > 0).sum()), spaces=len(de))
    text += " " + spaces_unlike_seed_001(t, list(t["leaderboard_spaces"]["space"].unique()))
    return text


def spaces_unlike_seed_001(t: Tables, spaces: Sequence[str]) -> str:
    """How our leaderboard spaces differ from seed 001's (its applications x GPUs, from the config)."""
    ref = t.seed_001
    apps, gpus = list(ref.get("applications") or []), list(ref.get("gpus") or [])
    if not apps or not gpus:
        return ""
    sp = t["leaderboard_spaces"].drop_duplicates("space")
    counted_spaces = sp[sp["excluded"].fillna("") == ""]["space"]
    kernels = {s: s.split("/")[1].split("_")[0].lower() for s in counted_spaces}
    devices = {s: s.split("/")[0] for s in counted_spaces}
    same = [s for s in counted_spaces if kernels[s] in [a.lower() for a in apps] and devices[s] in gpus]
    missing_apps = sorted({a for a in apps if a.lower() not in set(kernels.values())})
    extra = sorted({s.split("/")[1] for s in counted_spaces if kernels[s] not in [a.lower() for a in apps]})
    versions = ""
    if ref.get("kernel_tuner") and ref.get("pyatf"):
        versions = " " + prose("unlike_versions", kernel_tuner=ref["kernel_tuner"], pyatf=ref["pyatf"])
    missing = prose("unlike_missing", apps=listing(missing_apps), are="is" if len(missing_apps) == 1 else "are") \
        if missing_apps else ""
    return prose("unlike_seed_001", spaces=ref.get("spaces", len(apps) * len(gpus)), apps=listing(apps),
                 gpus=listing(gpus), same=len(same), counted=len(counted_spaces),
                 other=len(counted_spaces) - len(same), extra=listing(extra) or "none", missing=missing,
                 versions=versions)


def readme_leaderboard(t: Tables) -> str:
    """The leaderboard in short: its top entries, the entries the tests do not tell from the best, seed 001's
    pyATF comparison (tables/leaderboard*.csv, tables/pyatf_comparison.csv)."""
    if not has(t, "leaderboard"):
        return ""
    board = t["leaderboard"]
    pairs = t["leaderboard_pairs"]
    families = board["family"].value_counts()
    tied = tied_with_best(t)
    names = dict(zip(board["entry"], board["display"], strict=True))
    friedman = pairs["friedman_p"].iloc[0] if len(pairs) else math.nan
    complete = int(pairs["complete_spaces"].iloc[0]) if len(pairs) else 0
    tested = len(set(pairs["entry_a"]) | set(pairs["entry_b"]))
    left_out = left_out_entries(pairs)
    wilcoxon = prose("tied", tied=listing([names[e] for e in tied[1:]]), best=names[tied[0]]) if len(tied) > 1 else \
        prose("none_tied", best=names[tied[0]]) if tied else ""
    left = " " + prose("friedman_left_out", entries=listing([names[e] for e in left_out])) if left_out else ""
    friedman_text = prose("friedman", tested=tested, complete=complete, left_out=left, p=p_text(friedman),
                          wilcoxon=wilcoxon) if complete else ""
    return "\n\n".join(filter(None, [
        prose("leaderboard", n=len(board), families=", ".join(f"{n} {fam}" for fam, n in families.items()),
              table=leaderboard_rows(t, 10)),
        friedman_text, pyatf_sentence(t), cost_sentence(board),
    ]))


def cost_sentence(board: pd.DataFrame) -> str:
    """The measured cost per run of the cheapest and the costliest entries (tables/leaderboard.csv's cost_per_run)."""
    costs = board.dropna(subset=["cost_per_run"]).sort_values(["cost_per_run", "entry"])
    if costs.empty:
        return ""
    low, high = costs.iloc[0], costs.iloc[-1]
    return prose("run_cost", cheapest=num(low["cost_per_run"], 2), cheap=low["display"],
                 costliest=num(high["cost_per_run"], 1), costly=high["display"], entries=len(costs))


def doc_leaderboard(t: Tables) -> str:
    """The whole leaderboard (docs/results.md)."""
    if not has(t, "leaderboard"):
        return ""
    return prose("doc_leaderboard", table=leaderboard_rows(t))


def doc_hyperparameters_so(t: Tables) -> str:
    """Seed 003's tuning (docs/results.md): tuned against untuned and default per algorithm and scope, beside seed
    003's reported improvement, and the meta-strategies' cost."""
    if not has(t, "hyperparameters_so_summary"):
        return ""
    summary = t["hyperparameters_so_summary"]
    def difference(r: pd.Series, name_: str) -> str:
        low, high = r[f"tuned_minus_{name_}_ci_low"], r[f"tuned_minus_{name_}_ci_high"]
        reading = f" ({verdict(low, high, neither='not apart')})" if math.isfinite(low) and math.isfinite(high) else ""
        return interval(r[f"tuned_minus_{name_}"], low, high, 3) + reading

    rows = [[r["display"], r["scope"], f"{int(r['n_spaces'])}", num(r["tuned"], 3), num(r["untuned"], 3),
             num(r["default"], 3), difference(r, "untuned"), difference(r, "default"),
             num(r["seed_003_tuned_minus_untuned"], 3)] for _, r in summary.iterrows() if r["n_spaces"] > 0]
    parts = [prose("doc_seed_003", table=table(["algorithm", "scope", "spaces", "tuned", "untuned", "default",
                                                "tuned − untuned [95 % CI]", "tuned − default [95 % CI]",
                                                "seed 003: tuned − untuned"], rows))]
    if has(t, "hyperparameters_so_meta"):
        meta = t["hyperparameters_so_meta"]
        display = dict(zip(summary["algorithm"], summary["display"], strict=False))
        rows = [[display.get(r["algorithm"], r["algorithm"]), r["meta_strategy"], f"{int(r['grid_size'])}",
                 f"{int(r['reached'])} of {int(r['runs'])}", num(r["median_evaluations"], 1),
                 num(r["mean_or_grid"], 1), num(100 * r["share_of_grid"], 0) + " %"] for _, r in meta.iterrows()]
        parts.append(prose("doc_meta", table=table(["algorithm", "meta-strategy", "grid", "reached", "median",
                                                    "mean (unreached = grid)", "share of grid"], rows)))
    return "\n\n".join(parts)
