# The study's tables (STUDY §4): indicator statistics, Tables 2-5, significance, the ablation.


rule study_tables:
    input:
        final=rules.summary.output.final,
        runs=rules.summary.output.runs,
    output:
        **{
            f"{name}_{ext}": (report(path, category="Tables", caption=f"../report/tables/{name}.rst") if ext == "csv" else path)
            for name, pair in table_files().items()
            for ext, path in zip(("csv", "md"), pair)
        },
    log:
        f"{LOGS}/tables/study.log",
    params:
        settings=json_arg(comparison_algorithms()),
        names=list(table_files()),
        out_dir=TABLES,
        resamples=config["tables"]["bootstrap_resamples"],
        seed=config["tables"]["bootstrap_seed"],
    conda:
        ENV
    shell:
        "{CLI} tables --final {input.final:q} --runs {input.runs:q} --settings {params.settings}"
        " --bootstrap-resamples {params.resamples} --bootstrap-seed {params.seed}"
        " --out-dir {params.out_dir:q} --names {params.names} 2> {log:q}"
