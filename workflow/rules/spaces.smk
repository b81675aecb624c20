# Search-space store: import each cache/T4 file, compute true fronts, tabulate the spaces.


rule import_space:
    input:
        unpack(get_space_inputs),
    output:
        parquet=f"{RESULTS}/spaces/{{device}}/{{kernel}}/space.parquet",
        meta=f"{RESULTS}/spaces/{{device}}/{{kernel}}/space.json",
    log:
        f"{LOGS}/spaces/{{device}}/{{kernel}}/space.log",
    conda:
        ENV
    params:
        cli=CLI,
        fmt=lambda wc: get_space(wc)["format"],
        options=import_options,
        objectives=lambda wc: json_arg(get_space(wc)["objectives"]),
    shell:
        "{params.cli} import-space --source {input.source:q} {params.options}"
        " --kernel {wildcards.kernel} --device {wildcards.device} --format {params.fmt}"
        " --objectives {params.objectives} --parquet {output.parquet:q} --meta {output.meta:q} 2> {log:q}"


rule true_fronts:
    input:
        parquet=rules.import_space.output.parquet,
        meta=rules.import_space.output.meta,
    output:
        parquet=f"{RESULTS}/spaces/{{device}}/{{kernel}}/fronts.parquet",
        json=f"{RESULTS}/spaces/{{device}}/{{kernel}}/fronts.json",
    log:
        f"{LOGS}/spaces/{{device}}/{{kernel}}/fronts.log",
    conda:
        ENV
    params:
        cli=CLI,
        sets=json_arg(config["objective_sets"]),
    shell:
        "{params.cli} fronts --space-parquet {input.parquet:q} --space-meta {input.meta:q}"
        " --objective-sets {params.sets} --parquet {output.parquet:q} --json {output.json:q} 2> {log:q}"


rule spaces_table:
    input:
        meta=expand_spaces(f"{RESULTS}/spaces/{{device}}/{{kernel}}/space.json"),
        fronts=expand_spaces(f"{RESULTS}/spaces/{{device}}/{{kernel}}/fronts.json"),
        parquet=expand_spaces(f"{RESULTS}/spaces/{{device}}/{{kernel}}/space.parquet"),
    output:
        csv=f"{TABLES}/spaces.csv",
        md=f"{TABLES}/spaces.md",
    log:
        f"{LOGS}/tables/spaces.log",
    conda:
        ENV
    params:
        cli=CLI,
        largest_budget=max(SIM["budgets"]),
        excluded=json_arg(EXCLUDED),
    shell:
        "{params.cli} spaces-table --meta {input.meta:q} --fronts {input.fronts:q}"
        " --largest-budget {params.largest_budget}"
        " --excluded {params.excluded} --space-parquets {input.parquet:q} --csv {output.csv:q} --md {output.md:q}"
        " 2> {log:q}"


# Host-CPU spaces whose compile times were measured configuration by configuration (their
# `compile_times:`): how many were measured, how many imputed, and the imputation's error.
rule compile_cost_table:
    input:
        meta=[f"{RESULTS}/spaces/{d}/{k}/space.json" for d, k in compile_cost_space_ids()],
    output:
        csv=f"{TABLES}/compile_cost.csv",
        md=f"{TABLES}/compile_cost.md",
    log:
        f"{LOGS}/tables/compile_cost.log",
    conda:
        ENV
    params:
        cli=CLI,
    shell:
        "{params.cli} compile-cost-table --meta {input.meta:q} --csv {output.csv:q} --md {output.md:q} 2> {log:q}"
