# Simulated tuning runs: one job per (space, objective set, algorithm setting) runs every budget, all
# repetitions, into one file per budget. One process per setting rather than per budget: starting
# Python and loading a space cost more than many of the batches themselves. Comparison settings run
# simulation.budgets; the hyperparameter grid's settings (generated from hyperparameters.grids) run
# hyperparameters.budgets, on the training spaces only.


rule simulate:
    input:
        unpack(simulate_inputs),
        parquet=rules.import_space.output.parquet,
        meta=rules.import_space.output.meta,
    output:
        run_files(SIM["budgets"]),
    log:
        f"{LOGS}/runs/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/runs/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}.tsv"
    wildcard_constraints:
        setting=_choices(SETTINGS),
    conda:
        ENV
    params:
        cli=CLI,
        budgets=lambda wc: " ".join(str(b) for b in (HP_BUDGETS if wc.setting in GRID_SETTINGS else SIM["budgets"])),
        objectives=lambda wc: json_arg(config["objective_sets"][wc.objective_set]),
        algorithm=lambda wc: ALL_SETTINGS[wc.setting]["algorithm"],
        options=lambda wc: json_arg(ALL_SETTINGS[wc.setting]["options"]),
        repetitions=lambda wc: setting_repetitions(wc.setting),
        cap=lambda wc: (
            ""
            if config["simulation"]["proposal_cap"] is None
            else f"--proposal-cap {config['simulation']['proposal_cap']}"
        ),
        config_label=lambda wc: _budget_labels[budget_field(wc)],
        # the grid's runs are seeded apart from the comparison's (analysis.simulate.jobs.run_identity)
        purpose=lambda wc: "selection" if wc.setting in GRID_SETTINGS else "comparison",
        budget_field=budget_field,
        tuned=lambda wc, input: (
            f"--tuned-table {shlex.quote(input.tuned)} --tuned-grid {SETTINGS[wc.setting]['tuned']}"
            if "tuned" in input.keys()
            else ""
        ),
    shell:
        "{params.cli} simulate --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --objective-set {wildcards.objective_set} --objectives {params.objectives}"
        " --algorithm {params.algorithm:q} --options {params.options} --budget {params.budgets}"
        " --repetitions {params.repetitions} {params.cap} {params.tuned} --purpose {params.purpose} --out {output:q}"
        " --config {params.config_label:q} --budget-field {params.budget_field} 2> {log:q}"


if GRID_SETTINGS:

    use rule simulate as simulate_grid with:
        output:
            run_files(HP_BUDGETS),
        wildcard_constraints:
            setting=_choices(GRID_SETTINGS),


# The constraint-aware study (docs/constraint-aware.md): the auto-tuning methodology's time budget of one space,
# computed once for all its strategies.
rule ca_budget:
    input:
        parquet=rules.import_space.output.parquet,
        meta=rules.import_space.output.meta,
    output:
        f"{RESULTS}/constraint_aware/budgets/{{device}}/{{kernel}}.json",
    log:
        f"{LOGS}/constraint_aware/budgets/{{device}}/{{kernel}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/constraint_aware/{{device}}/{{kernel}}.budget.tsv"
    conda:
        ENV
    params:
        cli=CLI,
        threshold=ca_threshold,
        settings=json_arg(CA_SETTINGS),
    shell:
        "{params.cli} ca-budget --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --threshold {params.threshold}"
        " --settings {params.settings} --out {output:q} 2> {log:q}"


# All runs of one strategy, with or without constraint awareness, on one space, each limited by
# the space's budget.
rule ca_run:
    input:
        unpack(ca_run_inputs),
        parquet=rules.import_space.output.parquet,
        meta=rules.import_space.output.meta,
        budget=rules.ca_budget.output[0],
    output:
        runs=f"{RESULTS}/constraint_aware/runs/{{device}}/{{kernel}}/{{strategy}}.parquet",
        budget=f"{RESULTS}/constraint_aware/runs/{{device}}/{{kernel}}/{{strategy}}.budget.json",
    log:
        f"{LOGS}/constraint_aware/runs/{{device}}/{{kernel}}/{{strategy}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/constraint_aware/{{device}}/{{kernel}}/{{strategy}}.tsv"
    conda:
        ENV
    params:
        cli=CLI,
        threshold=ca_threshold,
        algorithm=lambda wc: CA_STRATEGIES[wc.strategy]["algorithm"],
        options=lambda wc: json_arg(CA_STRATEGIES[wc.strategy]["options"]),
        aware=lambda wc: "true" if CA_STRATEGIES[wc.strategy]["constraint_aware"] else "false",
        repetitions=CA["repetitions"],
        settings=json_arg(CA_SETTINGS),
        cap=CA["proposal_cap"],
    shell:
        "{params.cli} ca-run --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --threshold {params.threshold}"
        " --name {wildcards.strategy} --algorithm {params.algorithm:q} --options {params.options}"
        " --aware {params.aware} --repetitions {params.repetitions} --settings {params.settings}"
        " --proposal-cap {params.cap} --budget {input.budget:q} --out {output.runs:q} --budget-out {output.budget:q}"
        " 2> {log:q}"


# Every simulated run of the config (comparison and grid), and what they need (spaces, the grid's
# indicators and picks): `snakemake --cores all simulations`.
rule simulations:
    input:
        [f"{RESULTS}/runs/{d}/{k}/{o}/{s}/b{b}.parquet" for cells in GROUP_CELLS.values() for d, k, o, s, b in cells()],


# The leaderboard (docs/leaderboard.md): all runs of one entry on every leaderboard space, each limited by the
# space's budget of the constraint-aware study.
rule lb_run:
    input:
        spaces=lb_space_files(),
        strategy=lambda wc: list(strategy_inputs(LB_ENTRIES[wc.entry]["algorithm"]).values()),
    output:
        f"{RESULTS}/leaderboard/runs/{{entry}}.parquet",
    log:
        f"{LOGS}/leaderboard/runs/{{entry}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/leaderboard/{{entry}}.run.tsv"
    wildcard_constraints:
        entry=_choices(n for n, e in LB_ENTRIES.items() if e["source"] == "runs") or "none",
    conda:
        ENV
    params:
        cli=CLI,
        algorithm=lambda wc: LB_ENTRIES[wc.entry]["algorithm"],
        options=lambda wc: json_arg(LB_ENTRIES[wc.entry]["options"]),
        repetitions=lambda wc: LB_ENTRIES[wc.entry]["repetitions"],
        settings=json_arg(CA_SETTINGS),
        cap=CA["proposal_cap"],
        largest=lambda wc: (
            f"--max-budget-evaluations {LB_ENTRIES[wc.entry]['max_budget_evaluations']}"
            if LB_ENTRIES[wc.entry]["max_budget_evaluations"] is not None
            else ""
        ),
    shell:
        "{params.cli} lb-run --spaces {input.spaces:q} --name {wildcards.entry} --algorithm {params.algorithm:q}"
        " --options {params.options} --repetitions {params.repetitions} --settings {params.settings}"
        " --proposal-cap {params.cap} {params.largest} --out {output:q} 2> {log:q}"


# The baseline archive (docs/baselines.md): every run file of the config, packed per study into
# baselines.archive (`snakemake --cores 1 archive`; not part of `all`). Not while restoring from it.
if not BASELINES["restore"]:

    rule archive:
        input:
            runs=[f"{RESULTS}/{rel}" for rel in RUN_JOBS],
            spaces=expand_spaces(f"{RESULTS}/spaces/{{device}}/{{kernel}}/space.parquet"),
        output:
            [archive_path(study) for study in dict.fromkeys(s for s, _ in RUN_JOBS.values())],
        log:
            f"{LOGS}/archive.log",
        params:
            jobs=RUN_JOBS,
            results=results_folder,
        run:
            archive.write_studies(
                params.jobs, params.results, ARCHIVE_DIR, archive.provenance(workflow.basedir), repo_path("data")
            )


# Where baselines.restore is set: the run files the archive holds for this config, restored in one
# job instead of simulated (every other run file is simulated as usual).
if RESTORED:

    rule restore_runs:
        input:
            archives=[archive_path(s) for s in ARCHIVE_STUDIES if Path(archive_path(s)).is_file()],
            spaces=restored_spaces(),
        output:
            restored_outputs(),
        log:
            f"{LOGS}/restore_runs.log",
        params:
            cli=CLI,
            results=RESULTS,
            runs=" ".join(shlex.quote(rel) for rel in RESTORED),
        shell:
            "{params.cli} restore --archives {input.archives:q} --results {params.results:q}"
            " --runs {params.runs} 2> {log:q}"

    ruleorder: restore_runs > simulate
    ruleorder: restore_runs > ca_run
    ruleorder: restore_runs > lb_run

    if GRID_SETTINGS:

        ruleorder: restore_runs > simulate_grid
