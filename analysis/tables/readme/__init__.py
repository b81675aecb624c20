"""The results quoted in README.md and docs/*.md, rendered from the published tables.

Every number in those places comes from here (`python -m analysis.cli readme-results`, rule readme_results), and a
test checks that the committed text equals what this renders from the committed `tables/*.csv`, so a hand edit or a
table rebuilt without rerunning the command fails. The prose is in templates/ (`text.Prose`: one file per module,
its `$names` filled in from the tables); each section is one small function from tables to Markdown, and
`documents` puts them together: add a section by adding a function to `documents.README_SECTIONS` or
`documents.DOC_SECTIONS`. README's reading of the results against the papers is a second block (`reading`,
`seed001`) in which every comparison word (larger / smaller, better / worse, weak / moderate / strong, ...) is
decided by a rule on the tables, never typed. `sources` lists every file the rendering reads (the inputs of
rule readme_results).

The names below are imported on first use (as in analysis.simulate), so that importing one module stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

# module -> the names it defines that this package exports
_PUBLIC = {
    "text": "LINE_WIDTH num interval verdict table name listing at_budgets span compare pairs_of plural",
    "data": "ALPHA Tables base_scope counts budgets settings budget_header verdicts kept_out counted resampled has "
            "excluded_text GPU_MIXED space_kinds published",
    "study": "improvement_table cell_note thesis_gap significance_table readme_spaces readme_comparison "
             "readme_thesis doc_comparison speedup_summary cut_short_table early_stops doc_spaces",
    "awareness": "gains_table spaces_apart excluded_spaces maxiter_table readme_constraint_aware density_gains "
                 "above_below larger_p gain_cell doc_constraint_aware CA_DOC RUNS_BEGIN RUNS_END render_run_count",
    "board": "leaderboard_rows tied_with_best pyatf_sentence spaces_unlike_seed_001 readme_leaderboard cost_sentence "
             "doc_leaderboard doc_hyperparameters_so",
    "costs": "STUDY_COST cost_in_calibrations readme_cost SUITE_COST SUITE_BEGIN SUITE_END readme_suite ADD_COST "
             "TUNER_DOC ADD_BEGIN ADD_END render_add_strategy",
    "reading": "READING_BEGIN READING_END EVAL_PARTS KERNEL_SPECS thesis_comparison smallest_budget space_difference "
               "table4_devices eval_time_reading saving_parts compile_sensitivity_reading table4_gpu reading_thesis "
               "render_reading",
    "seed001": "RHO_WEAK RHO_MODERATE rho_strength reading_seed001",
    "glance": "GLANCE_BEGIN GLANCE_END glance_improvement glance_findings GLANCE_LINKS glance_figure GLANCE_LEGEND "
              "GLANCE_ALT render_glance",
    "documents": "BEGIN END README_SECTIONS DOC_SECTIONS render_readme render_doc splice FINDINGS_DOC expected main",
}
_EXPORTS = {name: f"{__name__}.{module}" for module, names in _PUBLIC.items() for name in names.split()}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
