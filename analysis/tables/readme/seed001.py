"""The reading's bullet on seed 001 (analysis.tables.readme.reading): which gains' intervals exclude 0, GEMM
against the other GPU spaces, gain against density, and our GPU gains against seed 001's."""

from __future__ import annotations

from analysis.tables import literature
from analysis.tables.constraint_aware import GPU_GROUP
from analysis.tables.readme.awareness import larger_p
from analysis.tables.readme.data import ALPHA, Tables, counted, resampled
from analysis.tables.readme.text import listing, name, num, span

# |Spearman rho| below RHO_WEAK is called weak, below RHO_MODERATE moderate, else strong
RHO_WEAK, RHO_MODERATE = 0.4, 0.7


def rho_strength(rho: float) -> str:
    r = abs(rho)
    return "weak" if r < RHO_WEAK else "moderate" if r < RHO_MODERATE else "strong"


def reading_seed001(t: Tables) -> str:
    """The bullet on seed 001: which gains' intervals exclude 0, GEMM against the other GPU spaces, the
    correlation of gain with density, and our GPU gains against seed 001's."""
    g = t["constraint_aware_gains"]
    sc = counted(t["constraint_aware_scores"])
    algos = [a for a in dict.fromkeys(g["algorithm"]) if a != "rs"]
    g = g[g["algorithm"].isin(algos)]
    if g.empty:
        return ""
    sentences = []
    # intervals that exclude 0, per row set of the gains table
    found, clear = [], []
    for group in dict.fromkeys(g["group"]):
        part = g[(g["group"] == group) & (g["spaces"] > 0)]
        if part.empty:
            continue
        above = [name(a) for a in part[part["gain_ci_low"] > 0]["algorithm"]]
        below = [name(a) for a in part[part["gain_ci_high"] < 0]["algorithm"]]
        if not above and not below:
            clear.append(f"the {group} spaces" if group != "all" else "all spaces")
            continue
        n = int(part["spaces"].max())
        label = f"all {n} spaces" if group == "all" else f"the {n} {group} spaces"
        sides = [(listing([f"{a}'s" for a in side]), where) for side, where in ((above, "above"), (below, "below"))
                 if side]
        found.append(f"on {label}, " + " and ".join(f"{who} ({where} 0)" for who, where in sides))
    sentences.append("Gains whose 95 % interval excludes 0 (`tables/constraint_aware_gains.csv`): "
                     + ("; ".join(found) if found else "none")
                     + (f"; on {listing(clear)}, none" if clear and found else "") + ".")
    gpu = sc[sc["objective"] == "time"]
    gemm = gpu[gpu["kernel"] == "gemm"]
    rest = gpu[gpu["kernel"] != "gemm"]
    if not gemm.empty and not rest.empty:
        n = gemm["space"].nunique()
        density = gemm["density"].min()
        sparsest = "the sparsest GPU kernel here" if density <= rest["density"].min() else \
            f"not the sparsest GPU kernel here ({rest.loc[rest['density'].idxmin(), 'space']} is)"
        more = [a for a in algos
                if larger_p(gemm[gemm["algorithm"] == a]["gain"], rest[rest["algorithm"] == a]["gain"]) < ALPHA]

        def which(chosen: list[str]) -> str:
            return "every algorithm" if chosen == algos else listing([name(a) for a in chosen]) if chosen \
                else "no algorithm"

        if resampled(gemm, "gain_ci_low"):
            on_all = [a for a in algos if (gemm[gemm["algorithm"] == a]["gain_ci_low"] > 0).sum() == n]
            each = (f"gains on each of its {n} GPUs (the space's 95 % interval over resamples of its runs above 0) "
                    f"under {which(on_all)}")
        else:
            each = f"is {n} GPU spaces"
        sentences.append(
            f"GEMM ({span(100 * gemm['density'], 1)} % valid, {sparsest}) {each}; its gains are larger than the "
            f"other {rest['space'].nunique()} GPU spaces' (one-sided Mann–Whitney U test over spaces, p < {ALPHA}) "
            f"under {which(more)} (`tables/constraint_aware_scores.csv`).")
    row_set = GPU_GROUP if (g["group"] == GPU_GROUP).any() else None
    if row_set:
        gp = g[g["group"] == row_set].set_index("algorithm")
        rho = gp["gain_density_spearman"].dropna()
        if len(rho):
            by: dict[str, list[str]] = {}  # strength -> the algorithms of that strength
            for a, r in rho.items():
                by.setdefault(rho_strength(r), []).append(name(a))
            strength = "; ".join(f"{w} for {'every algorithm' if len(v) == len(rho) else listing(v)}"
                                 for w, v in by.items())
            neg = [name(a) for a, r in rho.items() if r < 0]
            sentences.append(
                f"Over the {int(gp['spaces'].max())} GPU spaces the Spearman correlation of gain with density is "
                f"{strength} (|ρ| {span(rho.abs(), 2)}; |ρ| < {RHO_WEAK} counted as weak, < {RHO_MODERATE} as "
                f"moderate), negative (sparser spaces gain more) for "
                f"{listing(neg) if neg else 'no algorithm'}.")
        below = [name(a) for a, r in gp.iterrows() if r["gain_ci_high"] < r["seed001_gain"]]
        above = [name(a) for a, r in gp.iterrows() if r["gain_ci_low"] > r["seed001_gain"]]
        inside = [name(a) for a, r in gp.iterrows() if r["gain_ci_low"] <= r["seed001_gain"] <= r["gain_ci_high"]]
        clauses = [f"{w} for {listing(v)} ({note})" for v, w, note in (
            (below, "below", "seed 001's value above our 95 % interval"),
            (above, "above", "seed 001's value below our 95 % interval"),
            (inside, "consistent", "seed 001's value inside our 95 % interval")) if v]
        sparsest_here = 100 * gpu["density"].min() if not gpu.empty else float("nan")
        hot = literature.values("seed001_density")["hotspot"]
        sentences.append(
            "Against seed 001's published gains, our mean gains over the GPU spaces are " + ", ".join(clauses)
            + f". Seed 001 measured on its own spaces; its sparsest, hotspot ({num(hot, 1)} % valid), is "
            + ("sparser than any GPU space here" if hot < sparsest_here
               else "no sparser than the sparsest GPU space here")
            + f" ({num(sparsest_here, 1)} %).")
    return "- *Seed 001.* " + " ".join(sentences)
