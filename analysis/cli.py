"""Command-line entry points called by the Snakemake rules: `python -m analysis.cli <command> ...`.

Each handler (`_<command>`) parses its arguments and calls the library; `main` turns an InputError
(bad input a user can fix: it names the file or the option and the field) into a one-line message
and exit status 2. A command that checks something returns 1 when the check finds a difference.
`--help` lists the commands by stage (COMMAND_STAGES).

Each handler imports the library it needs when it runs, not at the top: every job of the workflow starts here,
and importing what all handlers need would add seconds to each (measured by benchmarks/bench_startup.py, report in
benchmarks/reports/bench_startup.md). These command modules are the only ones whose imports wait for a call
without a comment of their own (tests/test_layout.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from analysis import logs, numerics
from analysis.errors import ArgumentError, InputError, json_argument
from analysis.figures import registry as figure_registry

log = logging.getLogger("analysis.cli")


def _json(a: argparse.Namespace, name: str) -> Any:
    """The JSON value of option --<name> (None where empty); bad JSON is an ArgumentError naming the option."""
    return json_argument("--" + name.replace("_", "-"), getattr(a, name))


def _import_space(a: argparse.Namespace) -> None:
    from analysis.spaces.importers import import_space

    space = import_space(a.source, kernel=a.kernel, device=a.device, fmt=a.format,
                         definition=a.definition or None, objectives=_json(a, "objectives"),
                         compile_times=a.compile_times or None)
    space.save(a.parquet, a.meta)


def _fronts(a: argparse.Namespace) -> None:
    from analysis.spaces import fronts

    fronts.run(a.space_parquet, a.space_meta, _json(a, "objective_sets"), a.parquet, a.json)


def _refdirs(a: argparse.Namespace) -> None:
    from analysis.simulate.refdirs import add

    pairs = [(m, n) for m in a.objectives for n in a.points]
    done = add(pairs, replace=a.replace)
    log.info("computed %d direction set(s): %s", len(done), ", ".join(done) or "none (all shipped)")


def _simulate(a: argparse.Namespace) -> None:
    from analysis.simulate import jobs as runs

    if len(a.out) != len(a.budget):
        raise ArgumentError("--out", f"{len(a.budget)} budget(s) {a.budget} but {len(a.out)} output file(s); give "
                                     "one per budget, in the same order")
    from analysis.hyperparams.selection import options_per_budget

    per_budget = options_per_budget(_json(a, "options"), a.budget, a.tuned_table, a.tuned_grid)
    runs.run(a.space_parquet, a.space_meta, a.objective_set, _json(a, "objectives"), a.algorithm,
             per_budget, a.budget, a.repetitions, a.out, proposal_cap=a.proposal_cap,
             budget_source=(a.config, a.budget_field), purpose=a.purpose)


def _indicators(a: argparse.Namespace) -> None:
    from analysis.indicators import jobs as runs

    runs.run(a.runs, _json(a, "algorithms"), a.space_parquet, a.space_meta, a.fronts_parquet, a.fronts_json,
             a.objective_set, a.curve, a.final)


def _summary(a: argparse.Namespace) -> None:
    from analysis.indicators import gather as summary

    summary.run(a.curves, a.finals, a.out_runs, a.out_final, a.out_curves)


def _hyperparameters(a: argparse.Namespace) -> None:
    from analysis.hyperparams import selection as hyperparams
    from analysis.indicators.gather import gather

    final = gather(a.finals)
    hyperparams.run(final, _json(a, "grids"), a.seed, a.grid_csv, a.csv, a.md)


def _tables(a: argparse.Namespace) -> None:
    from analysis.statistics import Bootstrap
    from analysis.tables import registry

    boot = Bootstrap(resamples=a.bootstrap_resamples, seed=a.bootstrap_seed)
    selection = _json(a, "selection_spaces") or []
    if not (isinstance(selection, list) and all(isinstance(x, str) and x.count("/") == 1 for x in selection)):
        raise ArgumentError("--selection-spaces", f"expected a JSON list of 'device/kernel' names, got "
                                                  f"{a.selection_spaces!r}")
    registry.run(a.final, a.runs, _json(a, "settings"), boot, a.out_dir, a.names, _json(a, "objective_sets"),
                 selection)


def _compile_sensitivity(a: argparse.Namespace) -> None:
    from analysis.statistics import Bootstrap
    from analysis.tables import compile_sensitivity

    boot = Bootstrap(resamples=a.bootstrap_resamples, seed=a.bootstrap_seed)
    compile_sensitivity.run(a.final, a.runs, _json(a, "settings"), boot, a.space_meta, _json(a, "factors"), a.csv,
                            a.md, _json(a, "objective_sets"))


def _summary_table(a: argparse.Namespace) -> None:
    from analysis.tables import summary

    summary.run(a.final, _json(a, "settings"), a.setting, a.csv, a.md)


def _ca_settings(a: argparse.Namespace):
    from analysis.spaces.methodology import ScoreSettings

    return ScoreSettings.from_config(_json(a, "settings"))


def _ca_budget(a: argparse.Namespace) -> None:
    from analysis.indicators import constraint_aware

    constraint_aware.space_budget(a.space_parquet, a.space_meta, _json(a, "threshold"), _ca_settings(a), a.out)


def _ca_run(a: argparse.Namespace) -> None:
    from analysis.simulate import constraint_aware

    constraint_aware.run(a.space_parquet, a.space_meta, _json(a, "threshold"), a.name, a.algorithm,
                         _json(a, "options"), a.aware == "true", a.repetitions, _ca_settings(a),
                         a.proposal_cap, a.out, a.budget_out, budget=a.budget or None)


def _ca_score(a: argparse.Namespace) -> None:
    from analysis.indicators import constraint_aware

    names = json_argument("--strategies", a.strategies, lambda v: isinstance(v, dict),
                          "a JSON object {name: {algorithm, constraint_aware}}")
    if len(names) != len(a.runs):
        raise ArgumentError("--runs", f"{len(a.runs)} run file(s) for the {len(names)} strategies of --strategies; "
                                      "give one per strategy, in the same order")
    constraint_aware.score(a.space_parquet, a.space_meta, _json(a, "threshold"), names,
                           dict(zip(names, a.runs)), _ca_settings(a), a.scores, a.curves, group=_json(a, "group"))


def _ca_resample(a: argparse.Namespace) -> None:
    from analysis.indicators import constraint_aware

    constraint_aware.resample(a.space_parquet, a.space_meta, _json(a, "threshold"), a.strategy, a.runs,
                              _ca_settings(a), a.resamples, a.out)


def _space_triples(a: argparse.Namespace) -> list[tuple[str, str, str]]:
    """--spaces as (parquet, meta, budget) triples; an ArgumentError unless they come in threes."""
    if len(a.spaces) % 3:
        raise ArgumentError("--spaces", f"{len(a.spaces)} paths; give each space's parquet, meta and budget file, "
                                        "three per space")
    return [tuple(a.spaces[i:i + 3]) for i in range(0, len(a.spaces), 3)]


def _lb_run(a: argparse.Namespace) -> None:
    from analysis.simulate import leaderboard

    leaderboard.run(_space_triples(a), a.name, a.algorithm, _json(a, "options"), a.repetitions, _ca_settings(a),
                    a.proposal_cap, a.out, max_budget_evaluations=a.max_budget_evaluations)


def _lb_score(a: argparse.Namespace) -> None:
    from analysis.indicators import leaderboard

    if a.source not in leaderboard.SOURCES:
        raise ArgumentError("--source", f"{a.source!r} is not one of {', '.join(leaderboard.SOURCES)}")
    leaderboard.score(a.name, a.source, a.runs, _space_triples(a), a.repetitions, _ca_settings(a), a.resamples,
                      a.scores, a.curves)


def _lb_tables(a: argparse.Namespace) -> None:
    from analysis.tables import leaderboard

    entries = json_argument("--entries", a.entries, lambda v: isinstance(v, dict), "a JSON object {entry: {...}}")
    leaderboard.tables(a.scores, a.curves, entries, a.out_dir, a.curves_out, a.bootstrap_resamples,
                       a.bootstrap_seed, a.min_budget_evaluations, _json(a, "seed_001") or {},
                       cost_file=a.cost_file or None)


def _so_run(a: argparse.Namespace) -> None:
    from analysis.hyperparams import single_objective

    configs = json_argument("--configs", a.configs, lambda v: isinstance(v, dict) and bool(v),
                            "a non-empty JSON object {configuration: {option: value}}")
    single_objective.run_chunk(_space_triples(a), a.algorithm, configs, a.repetitions, _ca_settings(a),
                               a.proposal_cap, a.out)


def _so_score(a: argparse.Namespace) -> None:
    from analysis.hyperparams import single_objective

    single_objective.score_chunk(a.algorithm, a.runs, _space_triples(a), a.repetitions, _ca_settings(a),
                                 a.resamples, a.scores, a.resamples_out, a.curves)


def _so_final_run(a: argparse.Namespace) -> None:
    from analysis.hyperparams import single_objective

    single_objective.run_final(a.scores, a.resamples, a.min_budget_evaluations, a.role, _json(a, "grid"),
                               _space_triples(a), a.algorithm, a.repetitions, _ca_settings(a), a.proposal_cap,
                               a.out)


def _so_meta(a: argparse.Namespace) -> None:
    from analysis.hyperparams import meta

    section = _json(a, "section")
    meta.tables(a.grid, section["grids"], section["meta"], a.out)


def _so_tables(a: argparse.Namespace) -> None:
    from analysis.tables import hyperparameters_so

    hyperparameters_so.tables(a.grid_scores, a.grid_resamples, a.final_runs, a.final_scores, a.final_curves,
                              a.keys, _json(a, "section"), _json(a, "scopes"), a.min_budget_evaluations,
                              a.out, a.bootstrap_resamples, a.bootstrap_seed)


def _so_lb_table(a: argparse.Namespace) -> None:
    from analysis.tables import hyperparameters_so

    entries = json_argument("--entries", a.entries, lambda v: isinstance(v, dict), "a JSON object {entry: {...}}")
    if len(a.lb_scores) != len(entries):
        raise ArgumentError("--lb-scores", f"{len(a.lb_scores)} score file(s) for the {len(entries)} entries of "
                                           "--entries; give one per entry, in the same order")
    hyperparameters_so.leaderboard_table(a.lb_scores, a.so_scores, entries, a.final_runs, a.keys,
                                         _json(a, "section")["grids"], a.repetitions, a.out,
                                         a.bootstrap_resamples, a.bootstrap_seed, a.min_budget_evaluations,
                                         cost_file=a.cost_file or None)


def _ca_tables(a: argparse.Namespace) -> None:
    from analysis.tables import constraint_aware

    constraint_aware.tables(a.scores, a.curves, a.out_dir, a.curves_out, a.bootstrap_resamples, a.bootstrap_seed,
                            a.min_budget_evaluations, resample_files=a.resamples,
                            seed001_gains=a.seed001_gains or constraint_aware.SEED_001_GAINS_FILE)


def _check_config(a: argparse.Namespace) -> None:
    from analysis import config

    for checked in config.check_config_files(a.config, merged=a.merged):
        log.info("%s: valid", checked)


def _algorithms(a: argparse.Namespace) -> None:
    from analysis.simulate import options_markdown

    try:
        text = options_markdown(a.names or None)
    except ValueError as exc:  # an unknown name, or a user strategy that breaks the convention
        raise InputError(None, str(exc), field="algorithm") from None
    sys.stdout.write(text + "\n")


def _fastpath(a: argparse.Namespace) -> int:
    from analysis.fastpath.pins import report

    text, ok = report(show_diff=a.diff)
    sys.stdout.write(text)
    return 0 if ok else 1


def _spaces_table(a: argparse.Namespace) -> None:
    from analysis.spaces.table import write_table

    if len(a.meta) != len(a.fronts):
        raise ArgumentError("--fronts", f"{len(a.fronts)} file(s) for the {len(a.meta)} of --meta; give one per "
                                        "space, in the same order")
    if a.space_parquets and len(a.space_parquets) != len(a.meta):
        raise ArgumentError("--space-parquets", f"{len(a.space_parquets)} file(s) for the {len(a.meta)} of --meta; "
                                                "give one per space, in the same order")
    df = write_table(a.meta, a.fronts, a.largest_budget, _json(a, "excluded"), a.space_parquets or None, a.csv, a.md)
    log.info("spaces table: %d spaces -> %s, %s", len(df), a.csv, a.md)


def _compile_cost_table(a: argparse.Namespace) -> None:
    from analysis.spaces.compile_cost import write_table

    df = write_table(a.meta, a.csv, a.md)
    log.info("compile cost table: %d spaces -> %s, %s", len(df), a.csv, a.md)


def _verify_space(a: argparse.Namespace) -> int:
    from analysis import verify_space as verify

    return verify.main(a.space, a.config, a.tables, a.work or None, a.settings or None)


def _export_space(a: argparse.Namespace) -> None:
    from analysis.config import FULL_STUDY, import_config_space
    from analysis.spaces.export import export

    source = a.config or FULL_STUDY
    run = export(import_config_space(source, a.space), a.format, a.out, a.objective, source=source)
    if run:
        print(run, end="")


def _add_data(a: argparse.Namespace) -> int:
    from analysis import manifest

    recorded = manifest.add_data(a.data, a.folder, a.source, a.licence, a.citation)
    print(f"{a.data}/{manifest.MANIFEST}: {len(recorded)} file(s) recorded", *recorded, sep="\n  ")
    print("next: an entry under `spaces:` in your config for each space (docs/extending.md, its first item)")
    return 0


def _restore(a: argparse.Namespace) -> None:
    from analysis.simulate import archive

    written = archive.restore_files(a.archives, a.results, a.runs)
    log.info("%d run file(s) restored from %s", len(written), ", ".join(a.archives))


def _repack(a: argparse.Namespace) -> None:
    from analysis.simulate import archive

    meta = archive.repack(a.archive, a.out, a.results, archive.provenance(Path(__file__).resolve().parents[1]))
    log.info("%s: %d run file(s) packed again in format %d at %s", a.archive, len(meta["files"]),
             meta["format_version"], a.out)


def _verify_tables(a: argparse.Namespace) -> int:
    from analysis import baselines

    try:
        differences = baselines.verify_tables(a.configfile, a.work, a.cores, a.archive, a.published)
    except baselines.WorkflowFailed as exc:
        print(exc, file=sys.stderr)
        return 1
    for line in differences:
        print(line)
    print(f"{len(differences)} table(s) differ" if differences else "every published table recomputed byte for byte")
    return 1 if differences else 0


def _compare(a: argparse.Namespace) -> int:
    from analysis import baselines

    options = json_argument("--options", a.options, lambda v: isinstance(v, dict), "a JSON object of options")
    try:
        summary = baselines.compare(a.strategy, a.suite, a.out, options, a.cores, a.label)
    except baselines.WorkflowFailed as exc:  # the workflow's own lines say what failed (a strategy: file:line)
        print(exc, file=sys.stderr)
        return 1
    print(f"{a.out}/summary.csv: {len(summary)} row(s); {a.out}/summary.md")
    return 0


def _report_pages(a: argparse.Namespace) -> int:
    from analysis.tables import report_pages

    report_pages.write_pages(a.tables, a.pages, a.glance, a.tables_dir, json.loads(a.config), a.figure)
    return 0


def _readme_results(a: argparse.Namespace) -> int:
    from analysis.tables.readme import documents

    return documents.main(a.readme, a.doc, a.tables, a.config, a.check, a.findings)


def _space_args(s: argparse.ArgumentParser) -> None:
    s.add_argument("--space-parquet", required=True)
    s.add_argument("--space-meta", required=True)


def _summarised_setting_args(s: argparse.ArgumentParser) -> None:
    s.add_argument("--settings", required=True, help="JSON: comparison setting label -> algorithm")
    s.add_argument("--setting", required=True, help="the strategy summarised (not a baseline)")


# The stages of the study, in the order the workflow runs them, with what each one does.
STAGES = {
    "sweep": "measure kernels exhaustively with Kernel Tuner (data/sweeps/)",
    "spaces": "import a sweep as a search space; its true Pareto fronts, tables, export",
    "simulate": "simulated tuning runs of each algorithm setting on a stored space",
    "hyperparams": "pick each tuned algorithm's options from its grid's runs",
    "indicators": "the quality of every run (IGD+, hypervolume, methodology scores)",
    "tables": "the study's tables, and the README's results rendered from them",
    "figures": "the study's figures",
    "config/tools": "check configs, describe algorithms, the fast path's pins, generated docs, data",
}
# Every command of the parser and its stage (tests/test_cli.py: each command in exactly one stage);
# within a stage `--help` lists the commands in this order.
COMMAND_STAGES = {
    "sweep-shard": "sweep", "sweep-merge": "sweep", "sweep-publish": "sweep",
    "compile-cost-measure": "sweep", "compile-cost-publish": "sweep",
    "import-space": "spaces", "fronts": "spaces", "spaces-table": "spaces", "compile-cost-table": "spaces",
    "export-space": "spaces",
    "simulate": "simulate", "refdirs": "simulate", "ca-budget": "simulate", "ca-run": "simulate",
    "lb-run": "simulate", "restore": "simulate", "repack": "simulate", "compare": "simulate", "lb-score": "indicators",
    "hyperparameters": "hyperparams", "so-run": "hyperparams", "so-score": "hyperparams",
    "so-final-run": "hyperparams", "so-meta": "hyperparams", "so-tables": "tables", "so-lb-table": "tables",
    "indicators": "indicators", "summary": "indicators", "ca-score": "indicators", "ca-resample": "indicators",
    "tables": "tables", "compile-sensitivity": "tables", "summary-table": "tables", "ca-tables": "tables",
    "lb-tables": "tables",
    "readme-results": "tables", "report-pages": "tables", "verify-space": "tables",
    "verify-tables": "tables",
    **{figure.command: "figures" for figure in figure_registry.FIGURES.values()},  # in the registry's order
    "check-config": "config/tools", "algorithms": "config/tools", "fastpath": "config/tools",
    "kernel-sizes": "config/tools", "add-data": "config/tools",
}
OTHER_STAGE = "other"  # commands missing from COMMAND_STAGES: listed, so that `--help` never hides one

WHERE_THINGS_GO = """\
where things go:
  a new algorithm    analysis/simulate/registry.py, or one .py file of your own (docs/your-tuner.md)
  a new indicator    analysis/indicators/registry.py
  a new table        analysis/tables/registry.py
  a new figure       analysis/figures/registry.py, and its module in analysis/figures/ (docs/extending.md)
  a new kernel       workflow/kernels/<name>/ (workflow/kernels/README.md)
  a new command      analysis/cli.py: a handler making one library call, its stage in COMMAND_STAGES
  a library replica  analysis/fastpath/ (exact, faster equivalents of library internals)
  a GPU visit        gpuvisit/, its own commands: python -m gpuvisit --help (docs/kernels.md)"""


def grouped_commands(commands: dict[str, argparse.ArgumentParser]) -> dict[str, list[str]]:
    """The commands by stage, stages in STAGES' order (then OTHER_STAGE), each in COMMAND_STAGES' order."""
    order = {name: i for i, name in enumerate(COMMAND_STAGES)}
    groups: dict[str, list[str]] = {stage: [] for stage in [*STAGES, OTHER_STAGE]}
    for name in sorted(commands, key=lambda n: (order.get(n, len(order)), n)):
        groups[COMMAND_STAGES.get(name, OTHER_STAGE)].append(name)
    return {stage: names for stage, names in groups.items() if names}


def command_listing(commands: dict[str, argparse.ArgumentParser]) -> str:
    """The `--help` listing: per stage its title and summary, then each command with its one-line summary
    (the sub-parser's description), followed by where new code goes."""
    width = max(map(len, commands)) + 2
    lines = ["commands by stage (`<command> --help` for a command's arguments):"]
    for stage, names in grouped_commands(commands).items():
        lines += ["", f"{stage}: {STAGES.get(stage, 'commands without a stage in COMMAND_STAGES')}"]
        lines += [f"  {name:<{width}}{commands[name].description or ''}" for name in names]
    return "\n".join([*lines, "", WHERE_THINGS_GO])


def _build() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The argument parser and its sub-parsers by command name."""
    p = argparse.ArgumentParser(prog="python -m analysis.cli", formatter_class=argparse.RawDescriptionHelpFormatter,
                                description="The library entry points the Snakemake rules call, one command per "
                                            "job (workflow/rules/*.smk).\nBad input ends with a one-line message "
                                            "naming the file or option and exit status 2.")
    p.add_argument("--log", help="also write the log to this file")
    sub = p.add_subparsers(dest="command", required=True, title="commands", metavar="<command>",
                           help="one of the commands listed below")

    s = sub.add_parser("import-space", description="import a Kernel Tuner cache or T4 file into the space store")
    s.add_argument("--source", required=True)
    s.add_argument("--kernel", required=True)
    s.add_argument("--device", required=True)
    s.add_argument("--format", default="auto")
    s.add_argument("--definition", default="")
    s.add_argument("--objectives", default="{}", help="JSON: source field -> objective")
    s.add_argument("--compile-times", nargs="*", default=[],
                   help="Kernel Tuner caches of the configurations compiled one by one (a grouped sweep, host-CPU "
                        "or CUDA, needs them): each configuration's compile time is measured there or imputed "
                        "from them")
    s.add_argument("--parquet", required=True)
    s.add_argument("--meta", required=True)
    s.set_defaults(func=_import_space)

    s = sub.add_parser("compile-cost-table", description="per space: compile times measured alone, imputed, and "
                                                         "the error")
    s.add_argument("--meta", nargs="+", required=True, help="space metadata files (space.json)")
    s.add_argument("--csv", required=True)
    s.add_argument("--md", required=True)
    s.set_defaults(func=_compile_cost_table)

    s = sub.add_parser("fronts", description="true Pareto fronts of a stored space, per objective set")
    s.add_argument("--space-parquet", required=True)
    s.add_argument("--space-meta", required=True)
    s.add_argument("--objective-sets", required=True, help="JSON: set name -> objectives")
    s.add_argument("--parquet", required=True)
    s.add_argument("--json", required=True)
    s.set_defaults(func=_fronts)

    s = sub.add_parser("simulate", description="repeated simulated tuning runs of one algorithm setting")
    _space_args(s)
    s.add_argument("--objective-set", required=True)
    s.add_argument("--objectives", required=True, help="JSON list of objectives")
    s.add_argument("--algorithm", required=True)
    s.add_argument("--options", default="{}", help="JSON: algorithm options")
    s.add_argument("--budget", type=int, nargs="+", required=True, help="one or more budgets")
    s.add_argument("--repetitions", type=int, required=True)
    s.add_argument("--proposal-cap", type=float, default=None,
                   help="stop a run after this many times the space size in proposals (default: no cap)")
    s.add_argument("--out", nargs="+", required=True, help="one run file per budget, in --budget's order")
    s.add_argument("--purpose", default="comparison", choices=["comparison", "selection"],
                   help="selection: a hyperparameter grid's run, seeded apart from the comparison's runs")
    s.add_argument("--tuned-table", default="", help="tables/hyperparameters.csv, for --tuned-grid")
    s.add_argument("--tuned-grid", default="", help="take the options picked for this grid at each budget")
    s.add_argument("--config", default=None, help="config file(s) the budgets come from, named by errors")
    s.add_argument("--budget-field", default="simulation.budgets",
                   help="config field of the budgets, named by the error on a budget larger than the space")
    s.set_defaults(func=_simulate)

    s = sub.add_parser("indicators", description="anytime IGD+ and final hypervolume of every run of a space")
    s.add_argument("--runs", nargs="+", required=True, help="run files .../<setting>/b<budget>.parquet")
    s.add_argument("--algorithms", required=True, help="JSON: setting label -> algorithm")
    s.add_argument("--space-parquet", required=True,
                   help="the space's table: the compile, verification and benchmark time each visit is charged")
    s.add_argument("--space-meta", required=True)
    s.add_argument("--fronts-parquet", required=True)
    s.add_argument("--fronts-json", required=True)
    s.add_argument("--objective-set", required=True)
    s.add_argument("--curve", required=True)
    s.add_argument("--final", required=True)
    s.set_defaults(func=_indicators)

    s = sub.add_parser("summary", description="study-wide run, final and median-curve tables of the indicators")
    s.add_argument("--curves", nargs="+", required=True)
    s.add_argument("--finals", nargs="+", required=True)
    s.add_argument("--out-runs", required=True)
    s.add_argument("--out-final", required=True)
    s.add_argument("--out-curves", required=True)
    s.set_defaults(func=_summary)

    s = sub.add_parser("hyperparameters", description="hyperparameter selection (Table 6) from the grid runs")
    s.add_argument("--finals", nargs="+", required=True, help="final indicator files of the grid runs")
    s.add_argument("--grids", required=True, help="JSON: the config's hyperparameters.grids")
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--grid-csv", required=True)
    s.add_argument("--csv", required=True)
    s.add_argument("--md", required=True)
    s.set_defaults(func=_hyperparameters)

    s = sub.add_parser("tables", description="indicator statistics, Tables 2-5, significance, ablation")
    s.add_argument("--final", required=True)
    s.add_argument("--runs", required=True)
    s.add_argument("--settings", required=True, help="JSON: comparison setting label -> algorithm")
    s.add_argument("--objective-sets", default="", help="JSON: objective set -> objectives (scopes of the means)")
    s.add_argument("--selection-spaces", default="",
                   help="JSON: the 'device/kernel' spaces the hyperparameters were selected on (left out of the "
                        "held-out scopes)")
    s.add_argument("--bootstrap-resamples", type=int, default=10000)
    s.add_argument("--bootstrap-seed", type=int, default=0)
    s.add_argument("--out-dir", required=True)
    s.add_argument("--names", nargs="+", required=True)
    s.set_defaults(func=_tables)

    s = sub.add_parser("compile-sensitivity",
                       description="Tables 4 and 5 with compile costs measured elsewhere rescaled",
                       epilog="The spaces whose compile costs were measured on another machine than the space: their "
                              "compile part times each measurement's outside-check ratio, and times each of --factors.")
    s.add_argument("--final", required=True)
    s.add_argument("--runs", required=True)
    s.add_argument("--settings", required=True, help="JSON: comparison setting label -> algorithm")
    s.add_argument("--objective-sets", default="", help="JSON: objective set -> objectives (scopes of the means)")
    s.add_argument("--space-meta", nargs="*", default=[],
                   help="space.json of the spaces with per-configuration compile times")
    s.add_argument("--factors", default="[]", help="JSON: the compile-time factors besides the outside check's")
    s.add_argument("--bootstrap-resamples", type=int, default=10000)
    s.add_argument("--bootstrap-seed", type=int, default=0)
    s.add_argument("--csv", required=True)
    s.add_argument("--md", required=True)
    s.set_defaults(func=_compile_sensitivity)

    s = sub.add_parser("summary-table", description="one strategy against RS, NSGA-II and NSGA-III, per space",
                       epilog="Per space, objective set and budget: tables/summary/<setting>.csv and .md.")
    s.add_argument("--final", required=True, help="the study's results/summary/final.parquet")
    _summarised_setting_args(s)
    s.add_argument("--csv", required=True)
    s.add_argument("--md", required=True)
    s.set_defaults(func=_summary_table)

    s = sub.add_parser("check-config", description="check config files as the workflow does",
                       epilog="Errors name the file, and the line (YAML syntax) or the field.")
    s.add_argument("config", nargs="+", help="config file(s), e.g. config/test.yaml")
    s.add_argument("--merged", action="store_true",
                   help="check the files merged in order, as `snakemake --configfile A B` merges them (a later "
                        "file's mappings update an earlier one's key by key), e.g. a study and an overlay")
    s.set_defaults(func=_check_config)

    s = sub.add_parser("algorithms", description="print the algorithm registry, or the named algorithms",
                       epilog="Options, descriptions, defaults. Names are registered names, .py paths or dotted "
                              "import paths.")
    s.add_argument("names", nargs="*", help="algorithms to describe (default: every registered one)")
    s.set_defaults(func=_algorithms)

    s = sub.add_parser("fastpath", description="the fast path's pinned library functions, and whether they match",
                       epilog="Lists every library function analysis/fastpath replicates (and those the study relies "
                              "on) with ok or CHANGED against the installed libraries; exit 1 if any changed. "
                              "TSB_STOCK=1 runs the stock libraries (docs/upstream.md).")
    s.add_argument("--diff", action="store_true",
                   help="show each changed function's difference from its pinned release (pip download if needed)")
    s.set_defaults(func=_fastpath)

    s = sub.add_parser("spaces-table", description="tables/spaces.csv and .md: one row per search space")
    s.add_argument("--meta", nargs="+", required=True)
    s.add_argument("--fronts", nargs="+", required=True)
    s.add_argument("--csv", required=True)
    s.add_argument("--md", required=True)
    s.add_argument("--largest-budget", type=int, help="the study's largest budget (column budget_share_pct)")
    s.add_argument("--excluded", default="{}",
                   help='JSON {"device/kernel": reason} of the spaces kept out of the studies (column excluded)')
    s.add_argument("--space-parquets", nargs="*", default=[],
                   help="the spaces' space.parquet files, in --meta's order (columns *_share_pct: what an "
                        "evaluation's time is spent on)")
    s.set_defaults(func=_spaces_table)

    s = sub.add_parser("refdirs", description="compute and ship NSGA-III reference directions (data/refdirs)")
    s.add_argument("--objectives", type=int, nargs="+", required=True, help="objective counts (>= 2)")
    s.add_argument("--points", type=int, nargs="+", required=True, help="point counts (population sizes)")
    s.add_argument("--replace", action="store_true", help="recompute pairs already shipped")
    s.set_defaults(func=_refdirs)

    s = sub.add_parser("ca-budget", description="constraint-aware study: the methodology's time budget of a space")
    _space_args(s)
    s.add_argument("--threshold", default="null", help="JSON {tau, error, beta} or null (tune on time)")
    s.add_argument("--settings", default="{}", help="JSON methodology settings (cutoff_percentile, ...)")
    s.add_argument("--out", required=True)
    s.set_defaults(func=_ca_budget)

    s = sub.add_parser("ca-run", description="constraint-aware study: all runs of one strategy on one space",
                       epilog="The strategy with or without constraint awareness (--aware).")
    _space_args(s)
    s.add_argument("--threshold", default="null", help="JSON {tau, error, beta} or null (tune on time)")
    s.add_argument("--name", required=True, help="strategy name, e.g. ga_aware")
    s.add_argument("--algorithm", required=True)
    s.add_argument("--options", default="{}", help="JSON strategy options (without constraint_aware)")
    s.add_argument("--aware", required=True, choices=["true", "false"])
    s.add_argument("--repetitions", type=int, required=True)
    s.add_argument("--settings", default="{}", help="JSON methodology settings (cutoff_percentile, ...)")
    s.add_argument("--proposal-cap", type=float, default=10.0)
    s.add_argument("--out", required=True)
    s.add_argument("--budget-out", required=True)
    s.add_argument("--budget", default="", help="the space's budget from ca-budget (default: computed here)")
    s.set_defaults(func=_ca_run)

    s = sub.add_parser("ca-score", description="constraint-aware study: methodology scores of every strategy",
                       epilog="Of one space.")
    _space_args(s)
    s.add_argument("--threshold", default="null")
    s.add_argument("--group", default="null", help="JSON: the space's group in the tables (config spaces[].group), "
                                                   "or null: time, or accuracy threshold for a space with a threshold")
    s.add_argument("--strategies", required=True,
                   help="JSON {name: {algorithm, constraint_aware}}, in the order of --runs")
    s.add_argument("--runs", nargs="+", required=True)
    s.add_argument("--settings", default="{}")
    s.add_argument("--scores", required=True)
    s.add_argument("--curves", required=True)
    s.set_defaults(func=_ca_score)

    s = sub.add_parser("ca-resample", description="constraint-aware study: scores on resamples of runs",
                       epilog="One strategy on one space: its score on bootstrap resamples of its runs and on each "
                              "half of them, the rows of the tables' score and gain intervals.")
    _space_args(s)
    s.add_argument("--threshold", default="null")
    s.add_argument("--strategy", required=True, help="the strategy's name (a key of ca-score's --strategies)")
    s.add_argument("--runs", required=True, help="the strategy's runs (ca-run --out)")
    s.add_argument("--settings", default="{}")
    s.add_argument("--resamples", type=int, required=True, help="bootstrap resamples (0: only the halves)")
    s.add_argument("--out", required=True)
    s.set_defaults(func=_ca_resample)

    s = sub.add_parser("lb-run", description="leaderboard: all runs of one entry on every leaderboard space")
    s.add_argument("--spaces", nargs="+", required=True, help="per space: its parquet, meta and budget (ca-budget)")
    s.add_argument("--name", required=True, help="the entry's name")
    s.add_argument("--algorithm", required=True)
    s.add_argument("--options", default="{}", help="JSON strategy options (the entry's; defaults filled in)")
    s.add_argument("--repetitions", type=int, required=True)
    s.add_argument("--settings", default="{}", help="JSON methodology settings (cutoff_percentile, ...)")
    s.add_argument("--proposal-cap", type=float, default=10.0)
    s.add_argument("--max-budget-evaluations", type=int, default=None,
                   help="run only on spaces whose budget is at most this many evaluations (leaderboard.fewer_spaces)")
    s.add_argument("--out", required=True)
    s.set_defaults(func=_lb_run)

    s = sub.add_parser("lb-score", description="leaderboard: one entry's score and interval on each space")
    s.add_argument("--spaces", nargs="+", required=True, help="per space: its parquet, meta and budget (ca-budget)")
    s.add_argument("--name", required=True, help="the entry's name")
    s.add_argument("--source", required=True,
                   help="runs: one lb-run file; constraint_aware: the ca-run file of each space, in --spaces' order; "
                        "hyperparameters_so: one so-final-run file")
    s.add_argument("--runs", nargs="+", required=True)
    s.add_argument("--repetitions", type=int, required=True, help="runs per space (the first ones of a ca-run file)")
    s.add_argument("--settings", default="{}")
    s.add_argument("--resamples", type=int, required=True, help="bootstrap resamples of the runs per space")
    s.add_argument("--scores", required=True)
    s.add_argument("--curves", required=True)
    s.set_defaults(func=_lb_score)

    s = sub.add_parser("lb-tables", description="leaderboard: its tables over all entries and spaces")
    s.add_argument("--scores", nargs="+", required=True, help="every entry's lb-score --scores, in --entries' order")
    s.add_argument("--curves", nargs="+", required=True)
    s.add_argument("--entries", required=True, help="JSON {entry: {family, display, ...}} (the Snakefile's)")
    s.add_argument("--out-dir", required=True)
    s.add_argument("--curves-out", required=True)
    s.add_argument("--bootstrap-resamples", type=int, default=10000)
    s.add_argument("--bootstrap-seed", type=int, default=0)
    s.add_argument("--min-budget-evaluations", type=int, default=20)
    s.add_argument("--seed-001", default="{}", help="JSON: seed 001's values of its pyATF comparison (config)")
    s.add_argument("--cost-file", default="", help="benchmarks/bench_leaderboard.py's CSV (entry, cost_per_run)")
    s.set_defaults(func=_lb_tables)

    s = sub.add_parser("so-run", description="seed 003 tuning: runs of some configurations of one grid")
    s.add_argument("--spaces", nargs="+", required=True, help="per space: its parquet, meta and budget (ca-budget)")
    s.add_argument("--algorithm", required=True)
    s.add_argument("--configs", required=True, help="JSON {configuration: options} (the Snakefile's chunk)")
    s.add_argument("--repetitions", type=int, required=True)
    s.add_argument("--settings", default="{}", help="JSON methodology settings (cutoff_percentile, ...)")
    s.add_argument("--proposal-cap", type=float, default=10.0)
    s.add_argument("--out", required=True)
    s.set_defaults(func=_so_run)

    s = sub.add_parser("so-score", description="seed 003 tuning: each configuration's score on each space")
    s.add_argument("--algorithm", required=True)
    s.add_argument("--runs", nargs="+", required=True, help="so-run or so-final-run files")
    s.add_argument("--spaces", nargs="+", required=True, help="per space: its parquet, meta and budget (ca-budget)")
    s.add_argument("--repetitions", type=int, required=True)
    s.add_argument("--settings", default="{}")
    s.add_argument("--resamples", type=int, required=True, help="bootstrap resamples of the runs per space")
    s.add_argument("--scores", required=True)
    s.add_argument("--resamples-out", required=True, help="the resampled scores (configuration, space, resample)")
    s.add_argument("--curves", default=None, help="the score curves (optional)")
    s.set_defaults(func=_so_score)

    s = sub.add_parser("so-final-run", description="seed 003 tuning: a grid's best, worst or default, on all spaces")
    s.add_argument("--scores", nargs="+", required=True, help="the grid's so-score --scores files")
    s.add_argument("--resamples", nargs="+", required=True, help="the grid's so-score --resamples-out files")
    s.add_argument("--min-budget-evaluations", type=int, default=20)
    s.add_argument("--role", required=True, choices=["best", "worst", "default"])
    s.add_argument("--grid", required=True, help="JSON: the algorithm's grid {option: [values]}")
    s.add_argument("--spaces", nargs="+", required=True, help="per space: its parquet, meta and budget (ca-budget)")
    s.add_argument("--algorithm", required=True)
    s.add_argument("--repetitions", type=int, required=True)
    s.add_argument("--settings", default="{}")
    s.add_argument("--proposal-cap", type=float, default=10.0)
    s.add_argument("--out", required=True)
    s.set_defaults(func=_so_final_run)

    s = sub.add_parser("so-meta", description="seed 003 tuning: meta-strategies searching the scored grids")
    s.add_argument("--grid", required=True, help="tables/hyperparameters_so.csv (so-tables)")
    s.add_argument("--section", required=True, help="JSON: config section hyperparameters_so")
    s.add_argument("--out", nargs=3, required=True, help="hyperparameters_so_meta.csv and .md, the meta-runs' parquet")
    s.set_defaults(func=_so_meta)

    s = sub.add_parser("so-tables", description="seed 003 tuning: its tables and the figures' data")
    s.add_argument("--grid-scores", nargs="+", required=True)
    s.add_argument("--grid-resamples", nargs="+", required=True)
    s.add_argument("--final-runs", nargs="+", required=True)
    s.add_argument("--final-scores", nargs="+", required=True)
    s.add_argument("--final-curves", nargs="+", required=True)
    s.add_argument("--keys", nargs="+", required=True, help="each final file's algorithm/role, in their order")
    s.add_argument("--section", required=True, help="JSON: config section hyperparameters_so")
    s.add_argument("--scopes", required=True, help="JSON: scope -> its spaces (device/kernel)")
    s.add_argument("--min-budget-evaluations", type=int, default=20)
    s.add_argument("--out", nargs=6, required=True,
                   help="hyperparameters_so.csv and .md, hyperparameters_so_summary.csv and .md, and the figures' "
                        "data: spaces.parquet, curves.parquet")
    s.add_argument("--bootstrap-resamples", type=int, default=10000)
    s.add_argument("--bootstrap-seed", type=int, default=0)
    s.set_defaults(func=_so_tables)

    s = sub.add_parser("so-lb-table", description="seed 003 tuning: the leaderboard with its tuned configurations")
    s.add_argument("--lb-scores", nargs="+", required=True, help="every leaderboard entry's lb-score --scores, in "
                                                                 "--entries' order")
    s.add_argument("--so-scores", nargs="+", required=True,
                   help="lb-score --scores of each grid's best and worst configuration, in --keys' order")
    s.add_argument("--entries", required=True, help="JSON {entry: {family, display, ...}}: the leaderboard's")
    s.add_argument("--final-runs", nargs="+", required=True, help="so-final-run files, in --keys' order")
    s.add_argument("--keys", nargs="+", required=True, help="each final runs file's algorithm/role")
    s.add_argument("--section", required=True, help="JSON: config section hyperparameters_so")
    s.add_argument("--repetitions", type=int, required=True, help="runs per space scored (leaderboard.repetitions)")
    s.add_argument("--out", nargs=2, required=True, help="hyperparameters_so_leaderboard.csv and .md")
    s.add_argument("--bootstrap-resamples", type=int, default=10000)
    s.add_argument("--bootstrap-seed", type=int, default=0)
    s.add_argument("--min-budget-evaluations", type=int, default=20)
    s.add_argument("--cost-file", default="", help="the leaderboard's cost per run (leaderboard.cost_file)")
    s.set_defaults(func=_so_lb_table)

    s = sub.add_parser("ca-tables", description="constraint-aware study: score and gain tables over all spaces")
    s.add_argument("--scores", nargs="+", required=True)
    s.add_argument("--curves", nargs="+", required=True)
    s.add_argument("--out-dir", required=True)
    s.add_argument("--curves-out", required=True)
    s.add_argument("--resamples", nargs="*", default=[],
                   help="every strategy's ca-resample output: the per-space score and gain intervals and the "
                        "scores on half of the runs (none: those columns stay empty)")
    s.add_argument("--bootstrap-resamples", type=int, default=10000)
    s.add_argument("--bootstrap-seed", type=int, default=0)
    s.add_argument("--min-budget-evaluations", type=int, default=20,
                   help="keep a space whose methodology budget is fewer evaluations than this out of every "
                        "aggregate (flagged in column `excluded`)")
    s.add_argument("--seed001-gains",
                   help="seed 001's gains per algorithm, set beside ours (default: data/literature/seed001_gains.csv)")
    s.set_defaults(func=_ca_tables)

    s = sub.add_parser("verify-space", description="rerun one space's comparison from data/, compare with tables/",
                       epilog="Exit 1 on any difference from the published rows.")
    s.add_argument("--space", required=True, help="device/kernel, e.g. amd-epyc-vm/lavamd")
    s.add_argument("--config", default="config/config.yaml", help="the config whose comparison is rerun")
    s.add_argument("--tables", default="tables",
                   help="the published tables (their hyperparameters.csv gives the tuned settings' options)")
    s.add_argument("--work", default="", help="keep the rerun (space, runs, indicators, tables) here "
                   "(default: a temporary folder, removed afterwards)")
    s.add_argument("--settings", nargs="+", default=[],
                   help="rerun only these comparison settings; only their indicators and "
                        "speedup_to_rs_spaces rows are compared")
    s.set_defaults(func=_verify_space)

    s = sub.add_parser("export-space", description="export a space: Kernel Tuner cache, T4 file or methodology folder",
                       epilog="One space of a config, parameters in the kernel's order (docs/running.md).")
    s.add_argument("--space", required=True, help="device/kernel, e.g. amd-epyc-vm/lavamd")
    s.add_argument("--format", required=True, choices=["kernel-tuner", "t4", "methodology"],
                   help="kernel-tuner: a cache for tune_kernel(simulation_mode=True, cache=FILE) (name it .json), its "
                        "restrictions beside it, and the tune_kernel call printed; t4: a T4 results file; "
                        "methodology: an experiment folder (run `autotuning_experiment experiments.json` in it)")
    s.add_argument("--out", required=True, help="the file to write (replaced atomically, mode 0644); for "
                   "methodology, the folder")
    s.add_argument("--objective", default=None, help="methodology: the objective it tunes and scores "
                   "(default: the space's first)")
    s.add_argument("--config", default=None, help="the config whose entry of the space is imported (source, "
                   "definition, objectives, compile times; default: the repository's config/config.yaml)")
    s.set_defaults(func=_export_space)

    s = sub.add_parser("report-pages", description="the HTML report's pages: each table as HTML, results at a glance")
    s.add_argument("--tables", nargs="+", required=True, help="the published tables (CSV) to show")
    s.add_argument("--pages", nargs="+", required=True, help="their pages (HTML), one per table, in the same order")
    s.add_argument("--glance", required=True, help="the results-at-a-glance page (HTML)")
    s.add_argument("--tables-dir", required=True, help="the folder of the published tables the glance reads")
    s.add_argument("--config", required=True, help="JSON: objective_sets, hyperparameters.kernels, spaces and "
                   "leaderboard.seed_001 of the config")
    s.add_argument("--figure", default=None, help="the glance's figure (PNG), embedded where it exists")
    s.set_defaults(func=_report_pages)

    s = sub.add_parser("restore", description="write run files back from the baseline archive (docs/baselines.md)",
                       epilog="Each run file is written atomically, its space checked against the archive's "
                       "fingerprint.")
    s.add_argument("--archives", nargs="+", required=True, help="the archives (data/baselines/<study>.parquet)")
    s.add_argument("--results", required=True, help="the results folder: spaces are read, run files written there")
    s.add_argument("--runs", nargs="+", required=True, help="the run files to restore, as paths under --results")
    s.set_defaults(func=_restore)

    s = sub.add_parser("repack", description="pack a baseline archive again in this format (docs/baselines.md)",
                       epilog="Its run files are restored under --results (which holds their "
                       "spaces, and none of the run files) and removed again after packing.")
    s.add_argument("--archive", required=True, help="the archive (data/baselines/<study>.parquet)")
    s.add_argument("--out", required=True, help="the new archive")
    s.add_argument("--results", required=True, help="a results folder with the runs' spaces (results/spaces/)")
    s.set_defaults(func=_repack)

    s = sub.add_parser("verify-tables", description="recompute the published tables from the baseline archive",
                       epilog="Runs the workflow in --work with baselines.restore set (nothing simulated), then "
                       "compares every published table byte for byte; exit status 1 on any difference.")
    s.add_argument("--configfile", nargs="+", default=["config/config.yaml"], help="the config files, in order")
    s.add_argument("--work", default=".verify-tables", help="the output folder of the recomputation")
    s.add_argument("--archive", default=None, help="the archives' folder (default: the config's baselines.archive)")
    s.add_argument("--published", default=None, help="the folder of the published tables/ (default: the config's "
                   "output_root)")
    s.add_argument("--cores", type=int, default=None, help="cores for Snakemake (default: all)")
    s.set_defaults(func=_verify_tables)

    s = sub.add_parser("compare", description="one strategy against a suite's archived baselines",
                       epilog="Writes OUT/summary.csv and .md (and the summary figure); docs/baselines.md.")
    s.add_argument("strategy", help="a strategy: a .py file, a dotted import path or a registered name")
    s.add_argument("--suite", default="quick", help="quick (config/quick.yaml), full (config/config.yaml) or a "
                   "config file")
    s.add_argument("--out", default="compare", help="the output folder")
    s.add_argument("--options", default=None, help="JSON: the strategy's options")
    s.add_argument("--label", default=None, help="its label in the tables (default: the file's stem)")
    s.add_argument("--cores", type=int, default=None, help="cores for Snakemake (default: all)")
    s.set_defaults(func=_compare)

    s = sub.add_parser("add-data", description="record a dataset copied under data/ in data/MANIFEST.csv",
                       epilog="Every file under the folder, with its sha256 and size; earlier entries of the folder "
                       "are replaced.")
    s.add_argument("folder", help="the dataset's folder, inside data/ (e.g. data/my_hub or my_hub)")
    s.add_argument("--source", required=True, help="where the files come from (a URL or DOI)")
    s.add_argument("--licence", required=True, help="their licence, e.g. MIT")
    s.add_argument("--citation", required=True, help="how to cite them")
    s.add_argument("--data", default="data", help="the data folder holding MANIFEST.csv")
    s.set_defaults(func=_add_data)

    s = sub.add_parser("readme-results", description="render the results in README.md and docs/ (findings, "
                       "results)", epilog="From tables/*.csv.")
    s.add_argument("--tables", default="tables")
    s.add_argument("--config", default="config/config.yaml", help="its objective_sets name the multi-objective sets")
    s.add_argument("--readme", default="README.md",
                   help="the parts between its glance and suite markers are replaced")
    s.add_argument("--findings", default="docs/findings.md",
                   help="the parts between its results and reading markers are replaced")
    s.add_argument("--doc", default="docs/results.md")
    s.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file differs from the rendering")
    s.set_defaults(func=_readme_results)

    from analysis.figures.cli import add_commands as add_figure_commands
    from analysis.sweep.commands import add_commands as add_sweep_commands

    add_sweep_commands(sub)
    add_figure_commands(sub)
    p.epilog = command_listing(sub.choices)
    return p, dict(sub.choices)


def parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per library entry point; `--help` lists them by stage."""
    return _build()[0]


def commands() -> dict[str, argparse.ArgumentParser]:
    """The parser's sub-parsers by command name."""
    return _build()[1]


def main(argv: list[str] | None = None) -> int:
    """Run one command; bad input ends with its one-line message and exit status 2 (a check that fails, 1)."""
    args = parser().parse_args(argv)
    logs.configure(args.log)
    logging.getLogger("fontTools").setLevel(logging.WARNING)  # its PDF font subsetting logs every glyph at INFO
    kernels = numerics.state()
    log.log(logging.INFO if kernels["pinned"] else logging.WARNING, "%s", numerics.describe(kernels))
    return logs.run_command(args, log)


if __name__ == "__main__":
    sys.exit(main())
