# Simulated tuning runs: one job per (space, objective set, algorithm setting, budget), all repetitions.
# Comparison settings come from simulation.algorithms; the hyperparameter grid's settings are
# generated from hyperparameters.grids and run on the training spaces only.


rule simulate:
    input:
        unpack(tuned_inputs),
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
        algorithm=lambda wc: ALL_SETTINGS[wc.setting]["algorithm"],
        options=lambda wc: json_arg(ALL_SETTINGS[wc.setting]["options"]),
        repetitions=lambda wc: setting_repetitions(wc.setting),
        tuned=lambda wc, input: (
            f"--tuned-table {shlex.quote(input.tuned)} --tuned-grid {SETTINGS[wc.setting]['tuned']}"
            if "tuned" in input.keys()
            else ""
        ),
    conda:
        ENV
    shell:
        "{CLI} simulate --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --objective-set {wildcards.objective_set} --objectives {params.objectives}"
        " --algorithm {params.algorithm} --options {params.options} --budget {wildcards.budget}"
        " --repetitions {params.repetitions} {params.tuned} --out {output:q} 2> {log:q}"
