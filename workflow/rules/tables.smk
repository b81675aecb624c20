# The study's tables (docs/study.md, "Tables"): indicator statistics, Tables 2-5, significance, the ablation;
# the held-out scopes leave out the spaces the hyperparameters were selected on (selection_spaces()).


rule study_tables:
    input:
        final=rules.summary.output.final,
        runs=rules.summary.output.runs,
    output:
        **{f"{name}_{ext}": path for name, pair in table_files().items() for ext, path in zip(("csv", "md"), pair)},
    log:
        f"{LOGS}/tables/study.log",
    conda:
        ENV
    params:
        cli=CLI,
        settings=json_arg(comparison_algorithms()),
        objective_sets=json_arg(config["objective_sets"]),
        selection_spaces=json_arg(selection_spaces()),
        names=list(table_files()),
        out_dir=output_folder,
        resamples=config["tables"]["bootstrap_resamples"],
        seed=config["tables"]["bootstrap_seed"],
    shell:
        "{params.cli} tables --final {input.final:q} --runs {input.runs:q} --settings {params.settings}"
        " --objective-sets {params.objective_sets} --selection-spaces {params.selection_spaces}"
        " --bootstrap-resamples {params.resamples} --bootstrap-seed {params.seed}"
        " --out-dir {params.out_dir:q} --names {params.names} 2> {log:q}"


# Tables 4 and 5 with the compile cost of the spaces compiled on another machine than the one that measured
# them rescaled: by the compile measurement's outside check and by tables.compile_sensitivity_factors.
rule compile_sensitivity:
    input:
        final=rules.summary.output.final,
        runs=rules.summary.output.runs,
        meta=[f"{RESULTS}/spaces/{d}/{k}/space.json" for d, k in compile_cost_space_ids()],
        provenance=compile_provenance_files(),
    output:
        csv=f"{TABLES}/compile_sensitivity.csv",
        md=f"{TABLES}/compile_sensitivity.md",
    log:
        f"{LOGS}/tables/compile_sensitivity.log",
    conda:
        ENV
    params:
        cli=CLI,
        settings=json_arg(comparison_algorithms()),
        objective_sets=json_arg(config["objective_sets"]),
        factors=json_arg(config["tables"]["compile_sensitivity_factors"]),
        resamples=config["tables"]["bootstrap_resamples"],
        seed=config["tables"]["bootstrap_seed"],
    shell:
        "{params.cli} compile-sensitivity --final {input.final:q} --runs {input.runs:q} --settings {params.settings}"
        " --objective-sets {params.objective_sets} --space-meta {input.meta:q} --factors {params.factors}"
        " --bootstrap-resamples {params.resamples} --bootstrap-seed {params.seed}"
        " --csv {output.csv:q} --md {output.md:q} 2> {log:q}"


# The constraint-aware study's tables: scores per space, gains per algorithm next to seed 001's, over the
# spaces whose budget is at least constraint_aware.min_budget_evaluations (the others flagged).
rule ca_tables:
    input:
        scores=[f"{RESULTS}/constraint_aware/scores/{d}/{k}.parquet" for d, k in CA_SPACES],
        curves=[f"{RESULTS}/constraint_aware/scores/{d}/{k}.curves.parquet" for d, k in CA_SPACES],
        resamples=[
            f"{RESULTS}/constraint_aware/resamples/{d}/{k}/{name}.parquet"
            for d, k in CA_SPACES
            for name in CA_STRATEGIES
        ],
        seed001_gains=str(literature.path("seed001_gains")),
    output:
        runs=f"{TABLES}/constraint_aware_runs.csv",
        scores=f"{TABLES}/constraint_aware_scores.csv",
        scores_md=f"{TABLES}/constraint_aware_scores.md",
        gains=f"{TABLES}/constraint_aware_gains.csv",
        gains_md=f"{TABLES}/constraint_aware_gains.md",
        curves=f"{RESULTS}/constraint_aware/curves.parquet",
    log:
        f"{LOGS}/tables/constraint_aware.log",
    conda:
        ENV
    params:
        cli=CLI,
        out_dir=output_folder,
        resamples=config["tables"]["bootstrap_resamples"],
        seed=config["tables"]["bootstrap_seed"],
        min_budget=CA["min_budget_evaluations"],
    shell:
        "{params.cli} ca-tables --scores {input.scores:q} --curves {input.curves:q} --resamples {input.resamples:q}"
        " --out-dir {params.out_dir:q}"
        " --curves-out {output.curves:q} --bootstrap-resamples {params.resamples} --bootstrap-seed {params.seed}"
        " --min-budget-evaluations {params.min_budget} --seed001-gains {input.seed001_gains:q} 2> {log:q}"


# One strategy against the baselines (RS, NSGA-II, NSGA-III) per space, objective set and budget (issue #34).
rule summary_table:
    input:
        rules.summary.output.final,
    output:
        csv=f"{TABLES}/summary/{{setting}}.csv",
        md=f"{TABLES}/summary/{{setting}}.md",
    log:
        f"{LOGS}/tables/summary/{{setting}}.log",
    wildcard_constraints:
        setting=_choices(summary_settings()) or "none",
    conda:
        ENV
    params:
        cli=CLI,
        settings=json_arg(comparison_algorithms()),
    shell:
        "{params.cli} summary-table --final {input:q} --settings {params.settings} --setting {wildcards.setting}"
        " --csv {output.csv:q} --md {output.md:q} 2> {log:q}"


# The leaderboard's tables over every entry and space (docs/leaderboard.md).
rule lb_tables:
    input:
        scores=expand(f"{RESULTS}/leaderboard/scores/{{entry}}.parquet", entry=LB_ENTRIES),
        curves=expand(f"{RESULTS}/leaderboard/scores/{{entry}}.curves.parquet", entry=LB_ENTRIES),
        cost=[repo_path(LB["cost_file"])] if LB["cost_file"] else [],
    output:
        **{name: f"{TABLES}/{name}.csv" for name in LB_TABLES},
        pairs=f"{TABLES}/leaderboard_pairs.csv",
        md=[f"{TABLES}/{name}.md" for name in (*LB_TABLES, "leaderboard_pairs")],
        users=[
            f"{TABLES}/summary/leaderboard_{name}.{ext}"
            for name, e in LB_ENTRIES.items()
            if e["family"] == "user"
            for ext in ("csv", "md")
        ],
        curves=f"{RESULTS}/leaderboard/curves.parquet",
    log:
        f"{LOGS}/tables/leaderboard.log",
    conda:
        ENV
    params:
        cli=CLI,
        out_dir=output_folder,
        entries=json_arg(LB_ENTRIES),
        resamples=config["tables"]["bootstrap_resamples"],
        seed=config["tables"]["bootstrap_seed"],
        min_budget=CA["min_budget_evaluations"],
        seed_001=json_arg(LB["seed_001"]),
        cost=lambda wc, input: shlex.quote(input.cost[0] if input.cost else ""),
    shell:
        "{params.cli} lb-tables --scores {input.scores:q} --curves {input.curves:q} --entries {params.entries}"
        " --out-dir {params.out_dir:q} --curves-out {output.curves:q} --bootstrap-resamples {params.resamples}"
        " --bootstrap-seed {params.seed} --min-budget-evaluations {params.min_budget} --seed-001 {params.seed_001}"
        " --cost-file {params.cost} 2> {log:q}"


# The HTML report's pages: every published table as an HTML table (the report shows an HTML file on the page, a CSV
# only as a download) with its caption and category, and the results at a glance first.
rule report_pages:
    input:
        tables=list(report_tables()),
        figure=glance_figure(),
    output:
        glance=report(
            f"{RESULTS}/report/glance.html",
            category="Results at a glance",
            caption="../report/glance.rst",
        ),
        pages=[
            report(report_page(csv), category=category, caption=caption, labels={"table": label})
            for csv, (category, caption, label) in report_tables().items()
        ],
    log:
        f"{LOGS}/tables/report_pages.log",
    conda:
        ENV
    params:
        cli=CLI,
        tables_dir=lambda wc, input: os.path.dirname(input.tables[0]),  # spaces.csv's: the tables' folder
        config=json_arg(report_config()),
        figure=lambda wc, input: shlex.quote(input.figure[0] if input.figure else ""),
    shell:
        "{params.cli} report-pages --tables {input.tables:q} --pages {output.pages:q} --glance {output.glance:q}"
        " --tables-dir {params.tables_dir:q} --config {params.config} --figure {params.figure} 2> {log:q}"


# README.md and docs/*.md rendered from the published tables, the benchmark reports and the papers' numbers
# (analysis.tables.readme; the CLI's `readme-results` alone does the same). Only where the config publishes into the
# repository (PUBLISHES: a test config's tables never reach its README), and not in the default target: run
# `snakemake readme_results` after the study. The documents are updated between their markers, so they are update()
# outputs (kept, and restored if the job fails); docs/results.md is written whole.
if PUBLISHES:

    rule readme_results:
        input:
            tables=readme_tables(),
            sources=[readme_file(p) for p in readme_sources.repository_files()],
            config=readme_file(repo_path("config/config.yaml")),
        output:
            readme=update(readme_file(readme_sources.README)),
            findings=update(readme_file(readme_sources.FINDINGS)),
            results=update(readme_file(readme_sources.RESULTS)),
            constraint_aware=update(readme_file(readme_sources.CA_DOC)),
            your_tuner=update(readme_file(readme_sources.TUNER_DOC)),
        log:
            f"{LOGS}/tables/readme_results.log",
        conda:
            ENV
        params:
            cli=CLI,
            tables_dir=lambda wc, input: os.path.dirname(input.tables[0]),  # spaces.csv's: the tables' folder
        shell:
            "{params.cli} readme-results --tables {params.tables_dir:q} --config {input.config:q}"
            " --readme {output.readme:q} --findings {output.findings:q} --doc {output.results:q} > {log:q} 2>&1"


# Every published table of the config that follows from archived runs (`snakemake tables`; verify-tables and
# compare build it): all but seed 003's tuning's, whose runs the archive does not hold (docs/baselines.md).
rule tables:
    input:
        [path for path in get_final_outputs() if path.startswith(f"{TABLES}/") and not is_so_table(path)],
