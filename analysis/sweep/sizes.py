"""The nine kernels' space sizes, computed from their specs, next to seed 002 Table II.

`python -m analysis.cli kernel-sizes` writes the table between the markers of
workflow/kernels/README.md (`--check`: exit 1 when the README differs, writing nothing).
Every number comes from the specs: ours by enumerating the valid configurations of each
target, Table II's from each spec's `paper` mapping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis import markdown
from analysis.sweep.spec import KERNELS_DIR, list_kernels, load_spec

BEGIN = "<!-- kernel-sizes:begin -->"
END = "<!-- kernel-sizes:end -->"
README = KERNELS_DIR / "README.md"
# the largest relative difference between a CUDA space and Table II's total that a spec may have
CUDA_SCALE_TOLERANCE = 0.25


def kernel_row(kernel: str) -> dict[str, Any]:
    """Counts of one kernel: parameters, precision and optimisation combinations, valid configurations."""
    spec = load_spec(kernel)
    paper = spec.paper
    row: dict[str, Any] = {"kernel": kernel, "precision_params": len(spec.precision),
                           "paper_precision_params": paper.get("precision_params"),
                           "precision_combinations": spec.precision_combinations("cuda"),
                           "paper_precision_combinations": paper.get("precision_combinations")}
    for target in ("cuda", "cpu"):
        row[f"{target}_optimisation_params"] = len(spec.target(target).own_params)
        row[f"{target}_optimisation_combinations"] = spec.optimisation_combinations(target)
        row[f"{target}_configurations"] = len(spec.valid_configs(target))
    row["paper_optimisation_params"] = paper.get("optimisation_params")
    row["paper_optimisation_combinations"] = paper.get("optimisation_combinations")
    row["paper_configurations"] = paper.get("configurations")
    total = paper.get("configurations")
    row["cuda_vs_paper"] = row["cuda_configurations"] / total - 1 if total else None
    return row


def rows() -> list[dict[str, Any]]:
    """One row per kernel folder, sorted by name."""
    return [kernel_row(k) for k in list_kernels()]


def _pair(ours: Any, paper: Any) -> str:
    return f"{ours:,}" if paper is None else f"{ours:,} / {paper:,}"


def render(table: list[dict[str, Any]]) -> str:
    """The Markdown block, markers included."""
    lines = [BEGIN, "",
             "Generated from the specs by `python -m analysis.cli kernel-sizes`; \"ours / Table II\" "
             "(seed 002, Nvidia A100). Precision combinations are the same on both targets.", "",
             "| kernel | precision params | precision combinations | CUDA optimisation params | "
             "CUDA optimisation combinations | CUDA configurations | CUDA vs Table II | CPU optimisation params | "
             "CPU configurations |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in table:
        diff = "" if r["cuda_vs_paper"] is None else f"{100 * r['cuda_vs_paper']:+.1f} %"
        lines.append(
            f"| {r['kernel']} | {_pair(r['precision_params'], r['paper_precision_params'])} | "
            f"{_pair(r['precision_combinations'], r['paper_precision_combinations'])} | "
            f"{_pair(r['cuda_optimisation_params'], r['paper_optimisation_params'])} | "
            f"{_pair(r['cuda_optimisation_combinations'], r['paper_optimisation_combinations'])} | "
            f"{_pair(r['cuda_configurations'], r['paper_configurations'])} | {diff} | "
            f"{r['cpu_optimisation_params']} | {r['cpu_configurations']:,} |")
    lines += ["", END]
    return "\n".join(lines)


def main(readme: str | Path = README, check: bool = False) -> int:
    """Write the table into `readme` (or, with `check`, exit 1 when it differs)."""
    readme = Path(readme)
    text = readme.read_text()
    new = markdown.splice(text, render(rows()), str(readme), BEGIN, END, "kernel-size")
    if new == text:
        print(f"{readme}: up to date")
        return 0
    if check:
        print(f"{readme}: differs from what `python -m analysis.cli kernel-sizes` renders from the specs")
        return 1
    readme.write_text(new)
    print(f"{readme}: written")
    return 0
