# Figures: one rule per figure family, each writing a PDF and a 200-dpi PNG in the shared style.
# Inputs come from the summary and hyperparameter stages and from the space store. In the HTML
# report (`snakemake --report report.html`) each PDF is listed by its labels (space, objective set,
# error objective or figure), not by its file name, which repeats (every anytime figure of a space
# on `time` is time.pdf).
rule figure_hyperparameters:
    input:
        f"{RESULTS}/hyperparameters/grid.csv",
    output:
        pdf=report(
            f"{FIGURES}/hyperparameters/fronts.pdf",
            category="Figures as PDF",
            subcategory="Hyperparameters",
            labels={"figure": "grid fronts"},
        ),
        png=report(
            f"{FIGURES}/hyperparameters/fronts.png",
            caption="../report/figure_hyperparameters.rst",
            category="Figures",
            subcategory="Hyperparameters",
            labels={"figure": "grid fronts"},
        ),
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
        pdf=report(
            f"{FIGURES}/anytime/{{device}}/{{kernel}}/{{objective_set}}.pdf",
            category="Figures as PDF",
            subcategory="Anytime IGD+",
            labels={"space": "{device}/{kernel}", "objective set": "{objective_set}"},
        ),
        png=report(
            f"{FIGURES}/anytime/{{device}}/{{kernel}}/{{objective_set}}.png",
            caption="../report/figure_anytime.rst",
            category="Figures",
            subcategory="Anytime IGD+",
            labels={"space": "{device}/{kernel}", "objective set": "{objective_set}"},
        ),
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
        pdf=report(
            f"{FIGURES}/anytime/all_{{objective_set}}.pdf",
            category="Figures as PDF",
            subcategory="Anytime IGD+",
            labels={"space": "all spaces", "objective set": "{objective_set}"},
        ),
        png=report(
            f"{FIGURES}/anytime/all_{{objective_set}}.png",
            caption="../report/figure_anytime_grid.rst",
            category="Figures",
            subcategory="Anytime IGD+",
            labels={"space": "all spaces", "objective set": "{objective_set}"},
        ),
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
        pdf=report(
            f"{FIGURES}/tradeoff/{{device}}/{{kernel}}/{{error}}.pdf",
            category="Figures as PDF",
            subcategory="Trade-off clouds",
            labels={"space": "{device}/{kernel}", "error objective": "{error}"},
        ),
        png=report(
            f"{FIGURES}/tradeoff/{{device}}/{{kernel}}/{{error}}.png",
            caption="../report/figure_tradeoff.rst",
            category="Figures",
            subcategory="Trade-off clouds",
            labels={"space": "{device}/{kernel}", "error objective": "{error}"},
        ),
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
        pdf=report(
            f"{FIGURES}/constraint_aware/score_over_time.pdf",
            category="Figures as PDF",
            subcategory="Constraint-aware study",
            labels={"figure": "score over time"},
        ),
        png=report(
            f"{FIGURES}/constraint_aware/score_over_time.png",
            caption="../report/figure_constraint_aware.rst",
            category="Figures",
            subcategory="Constraint-aware study",
            labels={"figure": "score over time"},
        ),
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
        pdf=report(
            f"{FIGURES}/constraint_aware/spaces.pdf",
            category="Figures as PDF",
            subcategory="Constraint-aware study",
            labels={"figure": "score per space"},
        ),
        png=report(
            f"{FIGURES}/constraint_aware/spaces.png",
            caption="../report/figure_constraint_aware_spaces.rst",
            category="Figures",
            subcategory="Constraint-aware study",
            labels={"figure": "score per space"},
        ),
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
        pdf=report(
            f"{FIGURES}/summary/{{setting}}.pdf",
            category="Figures as PDF",
            subcategory="Strategy summary",
            labels={"setting": "{setting}"},
        ),
        png=report(
            f"{FIGURES}/summary/{{setting}}.png",
            caption="../report/figure_summary.rst",
            category="Figures",
            subcategory="Strategy summary",
            labels={"setting": "{setting}"},
        ),
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
        time_pdf=report(
            f"{FIGURES}/leaderboard/score_over_time.pdf",
            category="Figures as PDF",
            subcategory="Leaderboard",
            labels={"figure": "score over time"},
        ),
        time_png=report(
            f"{FIGURES}/leaderboard/score_over_time.png",
            caption="../report/figure_leaderboard.rst",
            category="Figures",
            subcategory="Leaderboard",
            labels={"figure": "score over time"},
        ),
        heat_pdf=report(
            f"{FIGURES}/leaderboard/heatmap.pdf",
            category="Figures as PDF",
            subcategory="Leaderboard",
            labels={"figure": "score per space"},
        ),
        heat_png=report(
            f"{FIGURES}/leaderboard/heatmap.png",
            caption="../report/figure_leaderboard_heatmap.rst",
            category="Figures",
            subcategory="Leaderboard",
            labels={"figure": "score per space"},
        ),
        cd_pdf=report(
            f"{FIGURES}/leaderboard/critical_difference.pdf",
            category="Figures as PDF",
            subcategory="Leaderboard",
            labels={"figure": "critical difference"},
        ),
        cd_png=report(
            f"{FIGURES}/leaderboard/critical_difference.png",
            caption="../report/figure_leaderboard_critical_difference.rst",
            category="Figures",
            subcategory="Leaderboard",
            labels={"figure": "critical difference"},
        ),
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
            [
                report(
                    f"{FIGURES}/hyperparameters_so/{name}.{ext}",
                    category="Figures as PDF" if ext == "pdf" else "Figures",
                    subcategory="Seed 003 tuning",
                    labels={"figure": name.replace("_", " ")},
                    caption=None if ext == "pdf" else f"../report/figure_hyperparameters_so_{name}.rst",
                )
                for name in SO_FIGURES
                for ext in ("pdf", "png")
            ],
        log:
            f"{LOGS}/figures/hyperparameters_so.log",
        conda:
            ENV
        params:
            cli=CLI,
        shell:
            "{params.cli} figure-hyperparameters-so --grid {input.grid:q} --summary {input.summary:q}"
            " --spaces {input.spaces:q} --curves {input.curves:q} --out {output:q} 2> {log:q}"
