"""The package layout: stages import only from earlier stages, shared modules from no stage, and the
folder names are the rule files' stages; the GPU visit's package (gpuvisit/) builds on analysis.sweep's public
names and the shared modules, and the study (analysis/, the workflow) never imports it."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from helpers import REPO

# the deferred imports are found as benchmarks/bench_startup.py finds those it times
_spec = importlib.util.spec_from_file_location("bench_startup", REPO / "benchmarks" / "bench_startup.py")
bench_startup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_startup)

# the order of the stages (workflow/rules/*.smk); a module may import from its own stage and earlier ones.
# The fast path replicates library code for the simulate stage and the methodology's scores; both build on kt, the
# Kernel Tuner adapter (a space and a budget as Kernel Tuner sees them), which is no stage of its own.
RANK = {"spaces": 1, "sweep": 1, "kt": 2, "simulate": 3, "fastpath": 3, "hyperparams": 4, "indicators": 4,
        "tables": 5, "figures": 6}
# shared by every stage: they import no stage (config and cli are the entry points, above all stages)
SHARED = {"errors", "io", "logs", "manifest", "markdown", "names", "numerics", "objectives", "paths", "statistics",
          "scheduling", "strategy_files"}
# baselines runs the workflow (verify-tables, compare); kernel_tuner_hyper checks the scores against Kernel
# Tuner's hyperparameter tuner on the spaces of a config; verify_space reruns one space's comparison. They read
# configs (analysis.config imports several stages), so no stage imports them
ENTRY = {"cli", "config", "baselines", "kernel_tuner_hyper", "verify_space"}


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
    if parts[0] not in ENTRY | {"__init__"}:  # a stage or shared module: no entry module (they import the stages)
        entries = sorted(m for m in imported(path) if m.split(".")[1:2] and m.split(".")[1] in ENTRY)
        assert not entries, f"{path} imports an entry module, which imports the stages: {entries}"
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


# The command modules: their handlers import what a command needs when it runs (benchmarks/bench_startup.py
# measures what the imports would cost every job at the top). Every other import inside a function says why.
COMMAND_MODULES = {"analysis/cli.py", "analysis/figures/cli.py", "analysis/sweep/commands.py", "gpuvisit/cli.py"}
REASON = "lazy"  # the word that opens (or, on the import's own line, is in) the comment that says why


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_graph(package: str = "analysis", modules: list[Path] = MODULES) -> dict[str, set[str]]:
    """Module of `package` -> the modules of `package` its top-level imports load (their packages' __init__
    included, the top package's own left out)."""
    names = {_module_name(p) for p in modules}
    graph = {}
    for path in modules:
        found = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package:
                found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == package}
        loaded = {".".join(m.split(".")[:i]) for m in found for i in range(2, len(m.split(".")) + 1)}
        graph[_module_name(path)] = (loaded & names) - {_module_name(path)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: its strongly connected components of more than one module."""
    order, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        order[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return found


def test_the_top_level_imports_form_no_circle() -> None:
    assert cycles(top_level_graph()) == []


def test_the_packages_import_one_another_in_no_circle() -> None:
    packages: dict[str, set[str]] = {}
    for module, imported_modules in top_level_graph().items():
        for other in imported_modules:
            a, b = module.split(".")[1:2] or [module], other.split(".")[1:2]
            if a != b:
                packages.setdefault(a[0], set()).add(b[0])
    assert cycles(packages) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def unexplained_imports(path: Path, packages: tuple[str, ...] | None = ("analysis",)) -> list[str]:
    """The deferred imports (of `packages`' modules; None: of any) of `path` with no comment saying why: none on
    their line has the word REASON, and no line of the comment block right above them opens with it."""
    lines, out = path.read_text().split("\n"), []
    for node in bench_startup.deferred_imports(path, packages):
        line, statement = node.lineno, ast.unparse(node)
        above, k = [], line - 2
        while k >= 0 and lines[k].strip().startswith("#"):
            above.append(lines[k].strip().lstrip("#").strip())
            k -= 1
        if REASON not in lines[line - 1].partition("#")[2] and not any(c.startswith(REASON) for c in above):
            out.append(f"{line}: {statement}")
    return out


def test_imports_sit_at_the_top_unless_a_comment_says_why() -> None:
    unexplained = [f"{p.relative_to(REPO).as_posix()}:{u}" for p in MODULES
                   if p.relative_to(REPO).as_posix() not in COMMAND_MODULES for u in unexplained_imports(p)]
    assert unexplained == [], "imports inside functions without a comment saying why:\n" + "\n".join(unexplained)


def test_a_deferred_import_without_its_reason_is_found(tmp_path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from analysis.io import write_csv\n\n\ndef g():\n"
                      "    # lazy: imports pandas\n    from analysis.io import write_text\n\n\ndef h():\n"
                      "    from analysis import io  # lazy: as in g\n    import json\n")
    assert unexplained_imports(module) == ["2: from analysis.io import write_csv"]


# ---- the GPU visit's package: gpuvisit -> analysis, never the other way --------------------------------------

GPUVISIT = sorted((REPO / "gpuvisit").rglob("*.py"))
# what gpuvisit may import of analysis: the sweep stage's modules and the shared ones
GPUVISIT_MAY_IMPORT = {"analysis.sweep"} | {f"analysis.{m}" for m in SHARED}


def imports_of(path: Path, package: str) -> list[tuple[int, str, list[str]]]:
    """(line, module, names imported from it) of every import of `package`'s modules in `path` (anywhere in it)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == package:
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.split(".")[0] == package]
    return found


def study_imports_of_gpuvisit(root: Path = REPO) -> list[str]:
    """Where the study (analysis/, the Snakefile, workflow/) imports gpuvisit: `file:line module`."""
    files = sorted((root / "analysis").rglob("*.py")) + sorted((root / "workflow").rglob("*.py"))
    found = [f"{p.relative_to(root).as_posix()}:{line} {module}" for p in files
             for line, module, _ in imports_of(p, "gpuvisit")]
    rules = [root / "Snakefile", *sorted((root / "workflow").rglob("*.smk"))]
    for path in (p for p in rules if p.is_file()):
        for i, text in enumerate(path.read_text().splitlines(), 1):
            words = text.split()
            if len(words) >= 2 and words[0] in ("import", "from") and words[1].split(".")[0] == "gpuvisit":
                found.append(f"{path.relative_to(root).as_posix()}:{i} {words[1]}")
            elif "-m gpuvisit" in text:
                found.append(f"{path.relative_to(root).as_posix()}:{i} python -m gpuvisit")
    return found


def test_the_study_never_imports_gpuvisit() -> None:
    assert study_imports_of_gpuvisit() == [], "the study reads data/sweeps/ only; gpuvisit imports analysis"


def test_an_import_of_gpuvisit_by_the_study_is_found(tmp_path) -> None:
    (tmp_path / "analysis" / "sweep").mkdir(parents=True)
    (tmp_path / "workflow" / "rules").mkdir(parents=True)
    (tmp_path / "analysis" / "sweep" / "m.py").write_text("def f():\n    from gpuvisit.pack import read_pack\n")
    rule = 'rule r:\n    shell:\n        "python -m gpuvisit gpu-lease"\n'
    (tmp_path / "workflow" / "rules" / "r.smk").write_text(rule)
    (tmp_path / "Snakefile").write_text("import gpuvisit.plan\n")
    assert study_imports_of_gpuvisit(tmp_path) == ["analysis/sweep/m.py:2 gpuvisit.pack", "Snakefile:1 gpuvisit.plan",
                                                   "workflow/rules/r.smk:3 python -m gpuvisit"]


@pytest.mark.parametrize("path", GPUVISIT, ids=[str(p.relative_to(REPO)) for p in GPUVISIT])
def test_gpuvisit_imports_only_public_names_of_the_sweep_and_the_shared_modules(path: Path) -> None:
    bad = []
    aliases = set()
    for line, module, names in imports_of(path, "analysis"):
        if not any(module == m or module.startswith(m + ".") for m in GPUVISIT_MAY_IMPORT) and not (
                module == "analysis" and all(f"analysis.{n}" in GPUVISIT_MAY_IMPORT for n in names)):
            bad.append(f"{line}: {module} is neither analysis.sweep nor a shared module")
        bad += [f"{line}: {module}.{n} is private" for n in [*module.split("."), *names] if n.startswith("_")]
        aliases.update(names or [module.split(".")[0]])
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("analysis"):
            aliases.update(a.asname for a in node.names if a.asname)
    for node in ast.walk(ast.parse(path.read_text())):  # harness._private through an imported module
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases and \
                node.attr.startswith("_") and not node.attr.startswith("__"):
            bad.append(f"{node.lineno}: {node.value.id}.{node.attr} is private")
    assert bad == [], f"{path.relative_to(REPO)}:\n" + "\n".join(bad)


def test_gpuvisit_modules_import_one_another_in_no_circle() -> None:
    graph = top_level_graph("gpuvisit", GPUVISIT)
    assert {"gpuvisit.lease", "gpuvisit.pack", "gpuvisit.plan", "gpuvisit.merge"} <= set(graph)
    assert "gpuvisit.cache" in graph["gpuvisit.pack"]
    assert cycles(graph) == []


def test_gpuvisit_imports_sit_at_the_top_unless_a_comment_says_why() -> None:
    """Every import inside a function of gpuvisit (of any module) says why, but the command module's handlers'."""
    unexplained = [f"{p.relative_to(REPO).as_posix()}:{u}" for p in GPUVISIT
                   if p.relative_to(REPO).as_posix() not in COMMAND_MODULES for u in unexplained_imports(p, None)]
    assert unexplained == [], "imports inside functions without a comment saying why:\n" + "\n".join(unexplained)


def test_no_two_test_files_share_a_name() -> None:
    """The test folders have no __init__.py, so pytest imports each test file by its base name: two of one name
    stop the whole suite with an 'import file mismatch'."""
    names: dict[str, list[str]] = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        names.setdefault(path.name, []).append(path.relative_to(REPO).as_posix())
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}


# analysis/config.py checks what spans sections; each section's own rules are its stage's (config.py's docstring)
CROSS_SECTION_CHECKS = {"_check_finite", "_check_output_root", "check_workflow_config", "check_files",
                        "check_space_objectives", "check_config_files"}


def test_config_leaves_each_sections_rules_to_its_stage() -> None:
    tree = ast.parse((REPO / "analysis" / "config.py").read_text())
    checks = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and "check" in node.name}
    stray = sorted(checks - CROSS_SECTION_CHECKS)
    assert not stray, f"a section's check belongs to its stage: {stray}"
    validate = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "validate")
    called = {node.func.id for node in ast.walk(validate)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert {"check_spaces_section", "check_simulation", "check_hyperparameters", "check_sweeps",
            "check_constraint_aware", "check_hyperparameters_so"} <= called
