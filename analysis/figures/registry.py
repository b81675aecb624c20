"""The study's figures, each described once: `FIGURES`, in the order the default target lists them.

A `Figure` is drawn by rule `figure_<name>` (workflow/rules/figures.smk), which calls the sub-command
`command` of `python -m analysis.cli` (analysis/figures/cli.py). Each of its `outputs` is a PDF and a
200-dpi PNG at `figures/<stem>.pdf|png`; the rule takes its outputs, with their report captions,
categories and labels, from here (`report_outputs` in workflow/rules/common.smk), and `figure_outputs()`
there asks `implied` which of them the config yields. This module imports nothing heavy: the workflow
reads it on every start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

PDF_CATEGORY = "Figures as PDF"  # the report's category of every figure's PDF
PNG_CATEGORY = "Figures"  # and of its PNG, the one with the caption
EXTENSIONS = ("pdf", "png")
TRADEOFF_ERROR = "mre"  # the error objective of the trade-off clouds the study draws (one of mre, nrmse, nmae)


@dataclass(frozen=True)
class Study:
    """What the config implies for the figures (workflow/rules/common.smk builds it).

    `spaces`: the studied spaces as (device, kernel) -> their objective sets; `summary_settings`: the comparison
    settings summarised against the baselines; `mixed_precision`: the studied spaces with a sweep spec; the
    flags: whether the hyperparameter grid, the constraint-aware study, the leaderboard and seed 003's tuning run.
    """

    spaces: Mapping[tuple[str, str], Sequence[str]]
    summary_settings: Sequence[str] = ()
    mixed_precision: Sequence[tuple[str, str]] = ()
    grid: bool = False
    constraint_aware: bool = False
    leaderboard: bool = False
    seed_003: bool = False

    def objective_sets(self) -> list[str]:
        """Every objective set of a studied space, first appearance first."""
        return list(dict.fromkeys(o for sets in self.spaces.values() for o in sets))


@dataclass(frozen=True)
class Output:
    """One drawing of a figure: `stem` under figures/ (Snakemake wildcards in braces), the PNG's caption file
    under workflow/report/, and the labels the report lists it by (values may name the same wildcards)."""

    stem: str
    caption: str
    labels: Mapping[str, str]


@dataclass(frozen=True)
class Figure:
    """One figure family: rule `figure_<name>`, CLI sub-command `command`, drawn by `module`
    (analysis/figures/<module>.py); its `outputs` in the order the command writes them, listed in the report's
    `subcategory`; `implied` gives, from the `Study`, the wildcard values of every drawing the config yields
    (an empty list: none; one empty dict for a figure without wildcards)."""

    name: str
    command: str
    module: str
    subcategory: str
    outputs: tuple[Output, ...]
    implied: Callable[[Study], list[dict[str, str]]] = field(repr=False)

    def stems(self, study: Study) -> list[str]:
        """The stems (under figures/) of every drawing the study yields, output by output."""
        return [out.stem.format(**values) for values in self.implied(study) for out in self.outputs]

    def files(self, study: Study) -> list[str]:
        """The PDF and PNG (under figures/) of every drawing the study yields."""
        return [f"{stem}.{ext}" for stem in self.stems(study) for ext in EXTENSIONS]


def once_if(flag: Callable[[Study], bool]) -> Callable[[Study], list[dict[str, str]]]:
    """A figure without wildcards, drawn where `flag` holds."""
    return lambda study: [{}] if flag(study) else []


def _space_sets(study: Study) -> list[dict[str, str]]:
    return [{"device": d, "kernel": k, "objective_set": o} for (d, k), sets in study.spaces.items() for o in sets]


def _objective_sets(study: Study) -> list[dict[str, str]]:
    return [{"objective_set": o} for o in study.objective_sets()]


def _tradeoff(study: Study) -> list[dict[str, str]]:
    return [{"device": d, "kernel": k, "error": TRADEOFF_ERROR} for d, k in study.mixed_precision]


def _summary(study: Study) -> list[dict[str, str]]:
    return [{"setting": s} for s in study.summary_settings]


def _figure(name: str) -> dict[str, str]:
    return {"figure": name}


SO_FIGURES = ("scores", "best_worst", "impact", "over_time")  # seed 003 Figs. 2-5, in figure-hyperparameters-so's order

FIGURES: dict[str, Figure] = {f.name: f for f in (
    Figure("anytime", "figure-anytime", "anytime", "Anytime IGD+",
           (Output("anytime/{device}/{kernel}/{objective_set}", "figure_anytime.rst",
                   {"space": "{device}/{kernel}", "objective set": "{objective_set}"}),),
           _space_sets),
    Figure("anytime_grid", "figure-anytime-grid", "anytime", "Anytime IGD+",
           (Output("anytime/all_{objective_set}", "figure_anytime_grid.rst",
                   {"space": "all spaces", "objective set": "{objective_set}"}),),
           _objective_sets),
    Figure("tradeoff", "figure-tradeoff", "tradeoff", "Trade-off clouds",
           (Output("tradeoff/{device}/{kernel}/{error}", "figure_tradeoff.rst",
                   {"space": "{device}/{kernel}", "error objective": "{error}"}),),
           _tradeoff),
    Figure("summary", "figure-summary", "summary", "Strategy summary",
           (Output("summary/{setting}", "figure_summary.rst", {"setting": "{setting}"}),),
           _summary),
    Figure("hyperparameters", "figure-hyperparameters", "hyperparameters", "Hyperparameters",
           (Output("hyperparameters/fronts", "figure_hyperparameters.rst", _figure("grid fronts")),),
           once_if(lambda s: s.grid)),
    Figure("constraint_aware", "figure-constraint-aware", "constraint_aware", "Constraint-aware study",
           (Output("constraint_aware/score_over_time", "figure_constraint_aware.rst", _figure("score over time")),),
           once_if(lambda s: s.constraint_aware)),
    Figure("constraint_aware_spaces", "figure-constraint-aware-spaces", "constraint_aware", "Constraint-aware study",
           (Output("constraint_aware/spaces", "figure_constraint_aware_spaces.rst", _figure("score per space")),),
           once_if(lambda s: s.constraint_aware)),
    Figure("leaderboard", "figure-leaderboard", "leaderboard", "Leaderboard",
           (Output("leaderboard/score_over_time", "figure_leaderboard.rst", _figure("score over time")),
            Output("leaderboard/heatmap", "figure_leaderboard_heatmap.rst", _figure("score per space")),
            Output("leaderboard/critical_difference", "figure_leaderboard_critical_difference.rst",
                   _figure("critical difference"))),
           once_if(lambda s: s.leaderboard)),
    Figure("hyperparameters_so", "figure-hyperparameters-so", "hyperparameters_so", "Seed 003 tuning",
           tuple(Output(f"hyperparameters_so/{name}", f"figure_hyperparameters_so_{name}.rst",
                        _figure(name.replace("_", " "))) for name in SO_FIGURES),
           once_if(lambda s: s.seed_003)),
)}


def implied_files(study: Study) -> list[str]:
    """Every figure file (PDF and PNG, under figures/) the study yields, in `FIGURES` order."""
    return [path for figure in FIGURES.values() for path in figure.files(study)]
