# Indicators: anytime IGD+ and final hypervolume of every run, one job per (space, objective set)
# and group (the comparison, or the hyperparameter grid), then the study-wide summaries.


rule indicators:
    input:
        runs=group_run_files,
        space=rules.import_space.output.parquet,
        meta=rules.import_space.output.meta,
        fronts_parquet=rules.true_fronts.output.parquet,
        fronts_json=rules.true_fronts.output.json,
    output:
        curve=f"{RESULTS}/indicators/{{device}}/{{kernel}}/{{objective_set}}/{{group}}.curve.parquet",
        final=f"{RESULTS}/indicators/{{device}}/{{kernel}}/{{objective_set}}/{{group}}.final.parquet",
    log:
        f"{LOGS}/indicators/{{device}}/{{kernel}}/{{objective_set}}/{{group}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/indicators/{{device}}/{{kernel}}/{{objective_set}}/{{group}}.tsv"
    conda:
        ENV
    params:
        cli=CLI,
        # the group's own settings only: adding a comparison setting leaves the grid's jobs as they are
        algorithms=lambda wc: json_arg(
            {label: spec["algorithm"] for label, spec in (GRID_SETTINGS if wc.group == "grid" else SETTINGS).items()}
        ),
    shell:
        "{params.cli} indicators --runs {input.runs:q} --algorithms {params.algorithms}"
        " --space-parquet {input.space:q} --space-meta {input.meta:q}"
        " --fronts-parquet {input.fronts_parquet:q} --fronts-json {input.fronts_json:q}"
        " --objective-set {wildcards.objective_set} --curve {output.curve:q} --final {output.final:q} 2> {log:q}"


rule summary:
    input:
        curves=indicator_files("curve", "comparison"),
        finals=indicator_files("final", "comparison"),
    output:
        runs=f"{RESULTS}/summary/runs.parquet",
        final=f"{RESULTS}/summary/final.parquet",
        curves=f"{RESULTS}/summary/curves.parquet",
    log:
        f"{LOGS}/summary/summary.log",
    conda:
        ENV
    params:
        cli=CLI,
    shell:
        "{params.cli} summary --curves {input.curves:q} --finals {input.finals:q}"
        " --out-runs {output.runs:q} --out-final {output.final:q} --out-curves {output.curves:q} 2> {log:q}"


# The constraint-aware study: the methodology's performance score of every strategy on one space.
rule ca_score:
    input:
        parquet=rules.import_space.output.parquet,
        meta=rules.import_space.output.meta,
        runs=ca_run_files,
    output:
        scores=f"{RESULTS}/constraint_aware/scores/{{device}}/{{kernel}}.parquet",
        curves=f"{RESULTS}/constraint_aware/scores/{{device}}/{{kernel}}.curves.parquet",
    log:
        f"{LOGS}/constraint_aware/scores/{{device}}/{{kernel}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/constraint_aware/{{device}}/{{kernel}}.score.tsv"
    conda:
        ENV
    params:
        cli=CLI,
        threshold=ca_threshold,
        group=ca_group,
        strategies=json_arg(CA_STRATEGIES),
        settings=json_arg({**CA_SETTINGS, "baseline": CA["baseline"]}),
    shell:
        "{params.cli} ca-score --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --threshold {params.threshold}"
        " --group {params.group}"
        " --strategies {params.strategies} --runs {input.runs:q} --settings {params.settings}"
        " --scores {output.scores:q} --curves {output.curves:q} 2> {log:q}"


# The constraint-aware study: one strategy's score on bootstrap resamples of its runs and on each half of them
# (the per-space score and gain intervals of the tables; constraint_aware.score_resamples).
rule ca_resample:
    input:
        parquet=rules.import_space.output.parquet,
        meta=rules.import_space.output.meta,
        runs=f"{RESULTS}/constraint_aware/runs/{{device}}/{{kernel}}/{{strategy}}.parquet",
    output:
        f"{RESULTS}/constraint_aware/resamples/{{device}}/{{kernel}}/{{strategy}}.parquet",
    log:
        f"{LOGS}/constraint_aware/resamples/{{device}}/{{kernel}}/{{strategy}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/constraint_aware/{{device}}/{{kernel}}/{{strategy}}.resample.tsv"
    conda:
        ENV
    params:
        cli=CLI,
        threshold=ca_threshold,
        settings=json_arg({**CA_SETTINGS, "baseline": CA["baseline"]}),
        resamples=CA["score_resamples"],
    shell:
        "{params.cli} ca-resample --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --threshold {params.threshold} --strategy {wildcards.strategy} --runs {input.runs:q}"
        " --settings {params.settings} --resamples {params.resamples} --out {output:q} 2> {log:q}"


# The leaderboard: one entry's methodology score on each space, alone, with an interval from resamples of its runs.
rule lb_score:
    input:
        spaces=lb_space_files(),
        runs=lb_run_inputs,
    output:
        scores=f"{RESULTS}/leaderboard/scores/{{entry}}.parquet",
        curves=f"{RESULTS}/leaderboard/scores/{{entry}}.curves.parquet",
    log:
        f"{LOGS}/leaderboard/scores/{{entry}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/leaderboard/{{entry}}.score.tsv"
    wildcard_constraints:
        entry=_choices(LB_ENTRIES) or "none",
    conda:
        ENV
    params:
        cli=CLI,
        source=lambda wc: LB_ENTRIES[wc.entry]["source"],
        repetitions=lambda wc: LB_ENTRIES[wc.entry]["repetitions"],
        settings=json_arg({**CA_SETTINGS, "baseline": CA["baseline"]}),
        resamples=LB["score_resamples"],
    shell:
        "{params.cli} lb-score --spaces {input.spaces:q} --name {wildcards.entry} --source {params.source}"
        " --runs {input.runs:q} --repetitions {params.repetitions} --settings {params.settings}"
        " --resamples {params.resamples} --scores {output.scores:q} --curves {output.curves:q} 2> {log:q}"
