# Indicators: anytime IGD+ and final hypervolume per run file, then study-wide summaries.


rule indicators:
    input:
        runs=rules.simulate.output[0],
        meta=rules.import_space.output.meta,
        fronts_parquet=rules.true_fronts.output.parquet,
        fronts_json=rules.true_fronts.output.json,
    output:
        curve=f"{RESULTS}/indicators/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}/b{{budget}}.curve.parquet",
        final=f"{RESULTS}/indicators/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}/b{{budget}}.final.parquet",
    log:
        f"{LOGS}/indicators/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}/b{{budget}}.log",
    conda:
        ENV
    shell:
        "{CLI} indicators --runs {input.runs:q} --space-meta {input.meta:q}"
        " --fronts-parquet {input.fronts_parquet:q} --fronts-json {input.fronts_json:q}"
        " --objective-set {wildcards.objective_set} --budget {wildcards.budget}"
        " --curve {output.curve:q} --final {output.final:q} 2> {log:q}"


rule summary:
    input:
        curves=indicator_files("curve", comparison_cells()),
        finals=indicator_files("final", comparison_cells()),
    output:
        runs=f"{RESULTS}/summary/runs.parquet",
        final=f"{RESULTS}/summary/final.parquet",
        curves=f"{RESULTS}/summary/curves.parquet",
    log:
        f"{LOGS}/summary/summary.log",
    params:
        algorithms=json_arg(comparison_algorithms()),
    conda:
        ENV
    shell:
        "{CLI} summary --curves {input.curves:q} --finals {input.finals:q} --algorithms {params.algorithms}"
        " --out-runs {output.runs:q} --out-final {output.final:q} --out-curves {output.curves:q} 2> {log:q}"
