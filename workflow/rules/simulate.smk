# Simulated tuning runs: one job per (space, objective set, algorithm setting, budget), all repetitions.


rule simulate:
    input:
        parquet=rules.import_space.output.parquet,
        meta=rules.import_space.output.meta,
    output:
        f"{RESULTS}/runs/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}/b{{budget}}.parquet",
    log:
        f"{LOGS}/runs/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}/b{{budget}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/runs/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}/b{{budget}}.tsv"
    params:
        objectives=lambda wc: json_arg(config["objective_sets"][wc.objective_set]),
        algorithm=lambda wc: SETTINGS[wc.setting]["algorithm"],
        options=lambda wc: json_arg(SETTINGS[wc.setting]["options"]),
        repetitions=config["simulation"]["repetitions"],
    conda:
        ENV
    shell:
        "{CLI} simulate --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --objective-set {wildcards.objective_set} --objectives {params.objectives}"
        " --algorithm {params.algorithm} --options {params.options} --budget {wildcards.budget}"
        " --repetitions {params.repetitions} --out {output:q} 2> {log:q}"
