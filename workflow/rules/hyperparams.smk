# Hyperparameter selection (docs/study.md, "Hyperparameter selection"): the grid's final IGD+ on the
# training spaces -> Table 6.


rule hyperparameters:
    input:
        finals=indicator_files("final", "grid"),
    output:
        grid=f"{RESULTS}/hyperparameters/grid.csv",
        csv=f"{TABLES}/hyperparameters.csv",
        md=f"{TABLES}/hyperparameters.md",
    log:
        f"{LOGS}/tables/hyperparameters.log",
    conda:
        ENV
    params:
        cli=CLI,
        grids=json_arg(HP["grids"]),
        seed=HP["seed"],
    shell:
        "{params.cli} hyperparameters --finals {input.finals:q} --grids {params.grids}"
        " --seed {params.seed} --grid-csv {output.grid:q} --csv {output.csv:q} --md {output.md:q} 2> {log:q}"
