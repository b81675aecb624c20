"""The comparison's tables, each described once: `TABLES`, in the order they are built and listed.

A `Table` is written as `tables/<name>.csv` and `tables/<name>.md` by rule `study_tables`
(workflow/rules/tables.smk), whose outputs are `implied_tables` of the config's comparison settings;
`build` (below) builds the tables that apply to the settings from the same entries, `run` writes them.
Both read only this registry, so a table exists for a config exactly where its `applies` holds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.io import write_csv, write_text
from analysis.markdown import to_markdown
from analysis.statistics import Bootstrap
from analysis.tables.comparison import (
    SMALL_N,
    SMALL_N_FLAG,
    Inputs,
    aware_twins,
    eval_time,
    eval_time_parts,
    improvement,
    indicator_stats,
    significance,
    speedup_per_kernel,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Table:
    """One table of the comparison.

    `name` is the file stem under tables/; `applies` says from the comparison settings (label ->
    algorithm) alone whether the config yields the table; `build` computes the frame and `docs` its
    Markdown column notes from the inputs (`comparison.Inputs`); `title` heads the Markdown file.
    """

    name: str
    title: str
    applies: Callable[[Mapping[str, str]], bool]
    build: Callable[[Inputs], pd.DataFrame]
    docs: Callable[[Inputs], dict[str, str]]

    @property
    def caption(self) -> str:
        """The caption of the CSV in the Snakemake report, relative to workflow/: report/tables/<name>.rst."""
        return f"report/tables/{self.name}.rst"


def always(settings: Mapping[str, str]) -> bool:
    """Every comparison yields the table."""
    return True


def single(settings: Mapping[str, str], algorithm: str) -> str | None:
    """The label of the one setting of `algorithm`; None where there is none or several."""
    labels = [label for label, a in settings.items() if a == algorithm]
    return labels[0] if len(labels) == 1 else None


def one_nsga2_and_one_nsga3(settings: Mapping[str, str]) -> bool:
    """Exactly one setting of NSGA-II and one of NSGA-III (Table 3 compares the two)."""
    return single(settings, "nsga2") is not None and single(settings, "nsga3") is not None


def has_aware_twins(settings: Mapping[str, str]) -> bool:
    """At least one constraint-unaware setting has its aware twin (`comparison.aware_twins`)."""
    return bool(aware_twins(settings))


SCOPE_DOC = ("objective sets pooled: all, multi-objective (sets of two or more objectives), or one set; '<scope> "
             "held-out': the same over the spaces the hyperparameters were not selected on (config "
             "hyperparameters.kernels; see the note), where the scope has spaces of both kinds")


def difference_docs(m: str, note: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Column notes of a relative-difference table (DIFFERENCE_COLUMNS, then `extra`'s columns); `m` says what
    the medians m_A, m_B are."""
    return {
        "scope": SCOPE_DOC,
        "setting / baseline": "A, the setting compared, and B, the baseline it is compared against",
        "budget": "evaluations per run of both",
        "m_A / m_B": m,
        "n_pairs": "(space, objective set) pairs of the scope where both m_A and m_B exist; every n_* count and "
                   "the bounded_* columns cover all of them",
        "n_spaces": "spaces of those pairs: the clusters the bootstrap resamples (a space with all its objective "
                    "sets)",
        "n_better / n_equal / n_worse": "pairs where m_A < m_B / m_A = m_B / m_A > m_B (exact comparison); "
                                        "they sum to n_pairs",
        "n_undefined": "pairs where m_B = 0 and m_A > 0: the thesis's ratio is undefined and the pair is left out "
                       "of thesis_*; every one of them is also counted in n_worse",
        "n_in_thesis_mean": "n_pairs - n_undefined: the pairs that thesis_* covers",
        "n_spaces_in_thesis_mean": "spaces of the n_in_thesis_mean pairs",
        "thesis_mean_pct / thesis_sd_pct": "the thesis's aggregate: mean and SD over the n_in_thesis_mean pairs of "
                                           "(m_B - m_A) / m_B in % (0 when both are 0); at most 100, unbounded below; "
                                           "> 0 favours A",
        "bounded_mean_pct / bounded_sd_pct": "mean and SD over all n_pairs pairs of (m_B - m_A) / max(m_A, m_B) "
                                             "in %: within [-100, 100], 0 when both are 0, -100 when only m_B is 0; "
                                             "> 0 favours A",
        "*_ci_low_pct / *_ci_high_pct": "95 % percentile cluster bootstrap interval of the mean beside it: each "
                                        "resample draws spaces, each with all its pairs (they are not "
                                        "independent); NaN for fewer than 2 spaces",
        **(extra or {}),
        "note": note,
    }


EVAL_TIME_DOCS = {
    "n_pairs_without_full_run": "pairs left out of every other column but the run counts: A or RS has no run "
                                "that spent the whole budget",
    "n_pairs_with_runs_cut_short": "pairs where A or RS has at least one run cut short (fewer evaluations than the "
                                   "budget: proposal cap or the strategy's own end); those runs are left out of "
                                   "the medians",
    "runs_cut_short / baseline_runs_cut_short": "runs of A / of RS cut short, summed over the pairs of the row "
                                                "(n_pairs + n_pairs_without_full_run)",
    "thesis_mean_all_runs_pct": "for reference: the thesis's mean with the runs cut short mixed into the medians "
                                "(not an equal-budget comparison), over the same pairs minus undefined ones",
}
EVAL_TIME_PARTS_DOCS = {
    "scope": SCOPE_DOC,
    "setting / baseline / budget": "the row of Table 5 (eval_time) split: A, RS and the budget",
    "n_pairs": "the (space, objective set) pairs of that row's thesis mean (its n_in_thesis_mean): each has "
               "runs of A and RS that spent the whole budget, and T_RS > 0 (or T_RS = T_A = 0)",
    "n_spaces": "the spaces of those pairs (a space's objective sets are resampled together)",
    "saving_mean_pct": "Table 5's thesis_mean_pct: mean over the pairs of (T_RS - T_A) / T_RS in %, T the median "
                       "evaluation time of the full-budget runs",
    "compile_* / verification_* / benchmark_*": "the part's contribution: mean over the pairs of (median P_RS - "
                                                "median P_A) / T_RS in points of %, P that part of the runs' "
                                                "evaluation time (the time the simulated clock charged for "
                                                "compiling / verifying / benchmarking their configurations), the "
                                                "medians over the same runs; > 0: A spent less on it than RS",
    "verification_benchmark_*": "verification + benchmark together (both run the kernel)",
    "*_ci_low_pct / *_ci_high_pct": "95 % percentile bootstrap interval of the mean beside it (spaces resampled, "
                                    "each with all its pairs)",
    "residual_mean_pct": "saving - (compile + verification + benchmark), mean over the pairs: what the medians "
                         "leave, the median of a sum not being the sum of the medians",
    "residual_max_abs_pct": "the largest |residual| of one pair",
}
IGD_MEDIANS = "median final IGD+ over the repetitions of A and of B at the budget, per (space, objective set)"
EVAL_TIME_MEDIANS = ("median cumulative evaluation time at the budget over the runs of A and of B (B = RS) that "
                     "spent the whole budget, per (space, objective set); thesis_* is (T_RS - T_A) / T_RS")

INDICATORS_DOCS = {"igd_*": "final IGD+ (normalised objectives): median and IQR over repetitions",
                   "hv_*": "hypervolume, reference point 1.1 per normalised objective",
                   "eval_time_median_ms": "median cumulative simulated evaluation time",
                   "stopped_early": "runs that ended before their budget"}
SIGNIFICANCE_DOCS = {"p_value": "two-sided Mann-Whitney U on final IGD+",
                     "p_holm": "Holm-adjusted within (space, objective set, budget)",
                     "a12": "P(setting's IGD+ < RS's) + 0.5 P(tie); > 0.5 favours the setting"}
SPEEDUP_SPACES_DOCS = {"rs_quality": "RS's median IGD+ at the largest budget (q)",
                       "k_star": "fewest evaluations at which the median curve is <= q",
                       "time_ms": "median cumulative evaluation time at k*",
                       "speedup_time_pct": "(T_RS / T_A - 1) * 100",
                       "speedup_evals_pct": "(budget / k* - 1) * 100"}
SPEEDUP_DOCS = {"status": "in how many (device, objective set) pairs of the kernel the setting's "
                          "median curve reached q; 'not reached' when in none",
                "n_pairs": "(device, objective set) pairs of the kernel (rows of speedup_to_rs_spaces)",
                "n_spaces": "spaces (devices) of those pairs",
                "n_spaces_held_out": "of them, the spaces the hyperparameters were not selected on (0: a kernel of "
                                     "the selection, config hyperparameters.kernels)",
                "n_reached / fraction_reached": "pairs where q was reached, as a count and as a fraction of n_pairs",
                "n / n_spaces_reached": "the pairs (= n_reached) and the spaces behind each reached_* cell: its "
                                        "mean, SD and interval",
                "n_flag": f"'{SMALL_N_FLAG}' where the reached_* mean and SD rest on fewer than {SMALL_N} pairs "
                          "(the host-CPU kernels have two, O3 and O5 of one space), else empty",
                "reached_time_* / reached_evals_*": "the thesis's aggregate: mean, SD and bootstrap interval of "
                                                    "speedup_time_pct / speedup_evals_pct over the n_reached pairs "
                                                    "only; the interval resamples spaces, each with its objective "
                                                    "sets, so it is NaN for a kernel of one space",
                "all_pairs_time_median_pct / all_pairs_evals_median_pct":
                    "median speedup over all n_pairs pairs, 'not reached' ranked below every reached value: -inf "
                    "when no more than half the pairs reached q"}
AWARE_TESTS_DOCS = {"a12": "P(aware's IGD+ < unaware's) + 0.5 P(tie)"}


def _speedup_to_rs(i: Inputs) -> pd.DataFrame:
    return speedup_per_kernel(i.per_space, i.boot, i.selection_spaces) if len(i.per_space) else i.per_space


def _nsga3_over_nsga2(i: Inputs) -> pd.DataFrame:
    return i.by_scope(improvement, single(i.settings, "nsga2"), [single(i.settings, "nsga3")], i.boot)


def _aware_over_unaware(i: Inputs) -> pd.DataFrame:
    return pd.concat([i.by_scope(improvement, unaware, [aware], i.boot)
                      for unaware, aware in aware_twins(i.settings)], ignore_index=True)


def _aware_over_unaware_tests(i: Inputs) -> pd.DataFrame:
    return pd.concat([significance(i.final, unaware, [aware]) for unaware, aware in aware_twins(i.settings)],
                     ignore_index=True)


TABLES: dict[str, Table] = {t.name: t for t in (
    Table("indicators", "IGD+ and hypervolume at the budget", always,
          lambda i: indicator_stats(i.final), lambda i: INDICATORS_DOCS),
    Table("improvement_over_rs", "Relative improvement over RS (Table 2)", always,
          lambda i: i.by_scope(improvement, i.rs, i.others, i.boot),
          lambda i: difference_docs(IGD_MEDIANS, i.boot_note)),
    Table("significance", "Each setting against RS: Mann-Whitney U, Holm, A12", always,
          lambda i: significance(i.final, i.rs, i.others), lambda i: SIGNIFICANCE_DOCS),
    Table("eval_time", "Evaluation time saved against RS at equal budget (Table 5)", always,
          lambda i: i.by_scope(eval_time, i.rs, i.others, i.boot),
          lambda i: difference_docs(EVAL_TIME_MEDIANS, i.boot_note, EVAL_TIME_DOCS)),
    Table("eval_time_parts", "Table 5's saving split into compile, verification and benchmark time", always,
          lambda i: i.by_scope(eval_time_parts, i.rs, i.others, i.boot),
          lambda i: {**EVAL_TIME_PARTS_DOCS, "note": i.boot_note}),
    Table("speedup_to_rs_spaces", "Speedup to RS quality per space (Table 4 detail)", always,
          lambda i: i.per_space, lambda i: SPEEDUP_SPACES_DOCS),
    Table("speedup_to_rs", "Speedup to RS quality per kernel (Table 4)", always,
          _speedup_to_rs, lambda i: {**SPEEDUP_DOCS, "note": i.boot_note}),
    Table("nsga3_over_nsga2", "NSGA-III over NSGA-II (Table 3; the thesis's O5-only column is scope O5)",
          one_nsga2_and_one_nsga3, _nsga3_over_nsga2,
          lambda i: difference_docs(IGD_MEDIANS + " (A = NSGA-III, B = NSGA-II)", i.boot_note)),
    Table("aware_over_unaware", "Constraint-aware over constraint-unaware twin", has_aware_twins,
          _aware_over_unaware,
          lambda i: difference_docs(IGD_MEDIANS + " (A = aware, B = its unaware twin)", i.boot_note)),
    Table("aware_over_unaware_tests", "Constraint-aware against unaware twin: Mann-Whitney U, A12", has_aware_twins,
          _aware_over_unaware_tests, lambda i: AWARE_TESTS_DOCS),
)}


def implied_tables(settings: Mapping[str, str]) -> list[str]:
    """The names of the tables a set of comparison settings (label -> algorithm) yields, in `TABLES` order."""
    return [t.name for t in TABLES.values() if t.applies(settings)]


def build(final: pd.DataFrame, runs: pd.DataFrame, settings: Mapping[str, str], boot: Bootstrap,
          objective_sets: Mapping[str, Sequence[str]] | None = None, selection_spaces: Sequence[str] = ()
          ) -> dict[str, tuple[pd.DataFrame, str, dict[str, str]]]:
    """Every table of `TABLES` that applies to `settings`, in its order: name -> (frame, title,
    column docs). `settings`: comparison label -> algorithm, exactly one of them `rs` (else ValueError);
    `objective_sets`: set name -> objectives (the config's), which defines the scopes of the means;
    `selection_spaces`: the 'device/kernel' spaces the hyperparameters were selected on (the held-out scopes
    leave them out)."""
    inputs = Inputs.of(final, runs, settings, boot, objective_sets, selection_spaces)
    return {t.name: (t.build(inputs), t.title, t.docs(inputs)) for t in TABLES.values() if t.applies(settings)}


def run(final_parquet: str | Path, runs_parquet: str | Path, settings: Mapping[str, str], boot: Bootstrap,
        out_dir: str | Path, names: Sequence[str], objective_sets: Mapping[str, Sequence[str]] | None = None,
        selection_spaces: Sequence[str] = ()) -> None:
    """Build the tables and write `<name>.csv` and `<name>.md` for each of `names` (an absent table is an
    error: the config must imply it)."""
    tables = build(pd.read_parquet(final_parquet), pd.read_parquet(runs_parquet), settings, boot, objective_sets,
                   selection_spaces)
    missing = [n for n in names if n not in tables]
    if missing:
        raise ValueError(f"tables {missing} cannot be built from these settings ({dict(settings)})")
    for name in names:
        frame, title, docs = tables[name]
        write_csv(frame, Path(out_dir) / f"{name}.csv")
        write_text(to_markdown(frame, title, docs), Path(out_dir) / f"{name}.md")
        log.info("table %s: %d rows", name, len(frame))
