"""Where the repository's own folders are: one place for the code's paths into the checkout.

The workflow's result paths (results/, tables/, figures/ under a config's output_root) are the `.smk` files'
(workflow/rules/common.smk); these are the fixed folders the library reads beside them: the published data,
the literature's numbers, the docs, the benchmark reports and the kernels' folders.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
LITERATURE = DATA / "literature"  # the papers' numbers the suite compares with, each row with its citation
DOCS = REPO / "docs"
HISTORY = DOCS / "history"
REPORTS = REPO / "benchmarks" / "reports"
KERNELS = REPO / "workflow" / "kernels"
