# Figures: one rule per figure family, each writing a PDF and a 200-dpi PNG per drawing in the shared style.
# Each family is described once in analysis/figures/registry.py: its outputs here (figure_files) and the default
# target's (figure_outputs, workflow/rules/common.smk) come from there, with their report captions and labels.
# Inputs come from the summary and hyperparameter stages and from the space store. In the HTML
# report (`snakemake --report report.html`) each PDF is listed by its labels (space, objective set,
# error objective or figure), not by its file name, which repeats (every anytime figure of a space
# on `time` is time.pdf).
rule figure_hyperparameters:
    input:
        f"{RESULTS}/hyperparameters/grid.csv",
    output:
        **figure_files("hyperparameters"),
    log:
        f"{LOGS}/figures/hyperparameters/fronts.log",
    conda:
        ENV
    params:
        cli=CLI,
        objective_sets=json_arg(config["objective_sets"]),
    shell:
        "{params.cli} figure-hyperparameters --grid {input:q} --objective-sets {params.objective_sets}"
        " --pdf {output.pdf:q} --png {output.png:q} 2> {log:q}"


rule figure_anytime:
    input:
        f"{RESULTS}/summary/curves.parquet",
    output:
        **figure_files("anytime"),
    log:
        f"{LOGS}/figures/anytime/{{device}}/{{kernel}}/{{objective_set}}.log",
    conda:
        ENV
    params:
        cli=CLI,
        objectives=lambda wc: json_arg(config["objective_sets"][wc.objective_set]),
    shell:
        "{params.cli} figure-anytime --curves {input:q} --device {wildcards.device} --kernel {wildcards.kernel}"
        " --objective-set {wildcards.objective_set} --objectives {params.objectives}"
        " --pdf {output.pdf:q} --png {output.png:q} 2> {log:q}"


rule figure_anytime_grid:
    input:
        f"{RESULTS}/summary/curves.parquet",
    output:
        **figure_files("anytime_grid"),
    log:
        f"{LOGS}/figures/anytime/all_{{objective_set}}.log",
    conda:
        ENV
    params:
        cli=CLI,
        objectives=lambda wc: json_arg(config["objective_sets"][wc.objective_set]),
    shell:
        "{params.cli} figure-anytime-grid --curves {input:q} --objective-set {wildcards.objective_set}"
        " --objectives {params.objectives} --pdf {output.pdf:q} --png {output.png:q} 2> {log:q}"


rule figure_tradeoff:
    input:
        parquet=f"{RESULTS}/spaces/{{device}}/{{kernel}}/space.parquet",
        meta=f"{RESULTS}/spaces/{{device}}/{{kernel}}/space.json",
    output:
        **figure_files("tradeoff"),
    log:
        f"{LOGS}/figures/tradeoff/{{device}}/{{kernel}}/{{error}}.log",
    wildcard_constraints:
        error="mre|nrmse|nmae",
    conda:
        ENV
    params:
        cli=CLI,
    shell:
        "{params.cli} figure-tradeoff --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --error {wildcards.error} --pdf {output.pdf:q} --png {output.png:q} 2> {log:q}"


rule figure_constraint_aware:
    input:
        rules.ca_tables.output.curves,
    output:
        **figure_files("constraint_aware"),
    log:
        f"{LOGS}/figures/constraint_aware/score_over_time.log",
    conda:
        ENV
    params:
        cli=CLI,
    shell:
        "{params.cli} figure-constraint-aware --scores {input:q} --pdf {output.pdf:q} --png {output.png:q} 2> {log:q}"


rule figure_constraint_aware_spaces:
    input:
        rules.ca_tables.output.scores,
    output:
        **figure_files("constraint_aware_spaces"),
    log:
        f"{LOGS}/figures/constraint_aware/spaces.log",
    conda:
        ENV
    params:
        cli=CLI,
    shell:
        "{params.cli} figure-constraint-aware-spaces --scores {input:q}"
        " --pdf {output.pdf:q} --png {output.png:q} 2> {log:q}"


rule figure_summary:
    input:
        rules.summary_table.output.csv,
    output:
        **figure_files("summary"),
    log:
        f"{LOGS}/figures/summary/{{setting}}.log",
    wildcard_constraints:
        setting=_choices(summary_settings()) or "none",
    conda:
        ENV
    params:
        cli=CLI,
        settings=json_arg(comparison_algorithms()),
        objective_sets=json_arg(config["objective_sets"]),
    shell:
        "{params.cli} figure-summary --table {input:q} --settings {params.settings} --setting {wildcards.setting}"
        " --objective-sets {params.objective_sets} --pdf {output.pdf:q} --png {output.png:q} 2> {log:q}"


# The leaderboard (docs/leaderboard.md): score over time, per strategy and space, and the critical-difference diagram.
rule figure_leaderboard:
    input:
        curves=rules.lb_tables.output.curves,
        board=rules.lb_tables.output.leaderboard,
        spaces=rules.lb_tables.output.leaderboard_spaces,
        pairs=rules.lb_tables.output.pairs,
    output:
        **figure_files("leaderboard"),
    log:
        f"{LOGS}/figures/leaderboard.log",
    conda:
        ENV
    params:
        cli=CLI,
    shell:
        "{params.cli} figure-leaderboard --curves {input.curves:q} --board {input.board:q} --spaces {input.spaces:q}"
        " --pairs {input.pairs:q} --out {output:q} 2> {log:q}"


if SO_SCOPES:

    rule figure_hyperparameters_so:
        input:
            grid=f"{TABLES}/hyperparameters_so.csv",
            summary=f"{TABLES}/hyperparameters_so_summary.csv",
            spaces=f"{RESULTS}/hyperparameters_so/spaces.parquet",
            curves=f"{RESULTS}/hyperparameters_so/curves.parquet",
        output:
            **figure_files("hyperparameters_so"),
        log:
            f"{LOGS}/figures/hyperparameters_so.log",
        conda:
            ENV
        params:
            cli=CLI,
        shell:
            "{params.cli} figure-hyperparameters-so --grid {input.grid:q} --summary {input.summary:q}"
            " --spaces {input.spaces:q} --curves {input.curves:q} --out {output:q} 2> {log:q}"
