"""The package layout: stages import only from earlier stages, shared modules from no stage, and the
folder names are the rule files' stages."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers import REPO

# the order of the stages (workflow/rules/*.smk); a module may import from its own stage and earlier ones.
# The fast path replicates library code for the simulate stage and the methodology's scores.
RANK = {"spaces": 1, "sweep": 1, "simulate": 2, "fastpath": 2, "hyperparams": 3, "indicators": 3, "tables": 4,
        "figures": 5}
# shared by every stage: they import no stage (config and cli are the entry points, above all stages)
SHARED = {"errors", "io", "logs", "manifest", "markdown", "numerics", "objectives", "paths", "statistics",
          "scheduling"}
ENTRY = {"cli", "config", "names", "baselines"}  # baselines runs the workflow (verify-tables, compare)


def imported(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "analysis":
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names if alias.name.split(".")[0] == "analysis")
    return modules


MODULES = sorted((REPO / "analysis").rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(REPO)) for p in MODULES])
def test_no_module_imports_a_later_stage(path: Path) -> None:
    parts = path.relative_to(REPO / "analysis").with_suffix("").parts
    if len(parts) == 1:
        assert parts[0] in SHARED | ENTRY | {"__init__"}, f"{path}: a top-level module belongs to a stage folder"
        if parts[0] in SHARED:
            stages = {m.split(".")[1] for m in imported(path) if len(m.split(".")) > 1} & set(RANK)
            assert not stages, f"{path} is shared by every stage but imports from {sorted(stages)}"
        return
    stage = parts[0]
    assert stage in RANK, f"{path}: analysis/{stage}/ is no stage of workflow/rules/"
    later = sorted(m for m in imported(path) if len(m.split(".")) > 1 and RANK.get(m.split(".")[1], 0) > RANK[stage])
    assert not later, f"{path} ({stage}) imports from a later stage: {later}"


def test_every_rule_file_has_its_stage_package() -> None:
    rules = {p.stem for p in (REPO / "workflow/rules").glob("*.smk")} - {"common"}
    assert rules <= set(RANK), sorted(rules - set(RANK))
    assert all((REPO / "analysis" / stage / "__init__.py").is_file() for stage in RANK)
