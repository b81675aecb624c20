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


# Seed 003's tuning of single-objective strategies (docs/hyperparameters-so.md; config/seed003.yaml): each
# grid job runs some configurations on the training spaces and scores them; each algorithm's best, worst and
# default configuration then run on every final space (training, test, wider test) and are scored there.
if SO_SCOPES:

    rule so_run:
        input:
            spaces=space_triples(SO_SCOPES["training"]),
        output:
            f"{RESULTS}/hyperparameters_so/grid/runs/{{so_algorithm}}/{{chunk}}.parquet",
        log:
            f"{LOGS}/hyperparameters_so/grid/runs/{{so_algorithm}}/{{chunk}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/hyperparameters_so/grid/{{so_algorithm}}/{{chunk}}.run.tsv"
        wildcard_constraints:
            so_algorithm=_choices(SO_CHUNKS),
            chunk=r"\d+",
        conda:
            ENV
        params:
            cli=CLI,
            configs=so_chunk_configs,
            repetitions=SO["repetitions"],
            settings=json_arg(CA_SETTINGS),
            cap=CA["proposal_cap"],
        shell:
            "{params.cli} so-run --spaces {input.spaces:q} --algorithm {wildcards.so_algorithm}"
            " --configs {params.configs} --repetitions {params.repetitions} --settings {params.settings}"
            " --proposal-cap {params.cap} --out {output:q} 2> {log:q}"

    rule so_score:
        input:
            spaces=space_triples(SO_SCOPES["training"]),
            runs=f"{RESULTS}/hyperparameters_so/grid/runs/{{so_algorithm}}/{{chunk}}.parquet",
        output:
            scores=f"{RESULTS}/hyperparameters_so/grid/scores/{{so_algorithm}}/{{chunk}}.parquet",
            resamples=f"{RESULTS}/hyperparameters_so/grid/resamples/{{so_algorithm}}/{{chunk}}.parquet",
        log:
            f"{LOGS}/hyperparameters_so/grid/scores/{{so_algorithm}}/{{chunk}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/hyperparameters_so/grid/{{so_algorithm}}/{{chunk}}.score.tsv"
        wildcard_constraints:
            so_algorithm=_choices(SO_CHUNKS),
            chunk=r"\d+",
        conda:
            ENV
        params:
            cli=CLI,
            repetitions=SO["repetitions"],
            settings=json_arg({**CA_SETTINGS, "baseline": CA["baseline"]}),
            resamples=SO["score_resamples"],
        shell:
            "{params.cli} so-score --algorithm {wildcards.so_algorithm} --runs {input.runs:q}"
            " --spaces {input.spaces:q} --repetitions {params.repetitions} --settings {params.settings}"
            " --resamples {params.resamples} --scores {output.scores:q}"
            " --resamples-out {output.resamples:q} 2> {log:q}"

    rule so_final_run:
        input:
            spaces=space_triples(SO_FINAL),
            scores=lambda wc: so_grid_files("scores", wc.so_algorithm),
            resamples=lambda wc: so_grid_files("resamples", wc.so_algorithm),
        output:
            f"{RESULTS}/hyperparameters_so/final/runs/{{so_algorithm}}/{{role}}.parquet",
        log:
            f"{LOGS}/hyperparameters_so/final/runs/{{so_algorithm}}/{{role}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/hyperparameters_so/final/{{so_algorithm}}/{{role}}.run.tsv"
        wildcard_constraints:
            so_algorithm=_choices(SO_CHUNKS),
            role="best|worst|default",
        conda:
            ENV
        params:
            cli=CLI,
            grid=lambda wc: json_arg(SO["grids"][wc.so_algorithm]),
            repetitions=SO["final_repetitions"],
            settings=json_arg(CA_SETTINGS),
            cap=CA["proposal_cap"],
            min_budget=CA["min_budget_evaluations"],
        shell:
            "{params.cli} so-final-run --scores {input.scores:q} --resamples {input.resamples:q}"
            " --min-budget-evaluations {params.min_budget} --role {wildcards.role} --grid {params.grid}"
            " --spaces {input.spaces:q} --algorithm {wildcards.so_algorithm}"
            " --repetitions {params.repetitions} --settings {params.settings}"
            " --proposal-cap {params.cap} --out {output:q} 2> {log:q}"

    rule so_final_score:
        input:
            spaces=space_triples(SO_FINAL),
            runs=f"{RESULTS}/hyperparameters_so/final/runs/{{so_algorithm}}/{{role}}.parquet",
        output:
            scores=f"{RESULTS}/hyperparameters_so/final/scores/{{so_algorithm}}/{{role}}.parquet",
            resamples=f"{RESULTS}/hyperparameters_so/final/resamples/{{so_algorithm}}/{{role}}.parquet",
            curves=f"{RESULTS}/hyperparameters_so/final/curves/{{so_algorithm}}/{{role}}.parquet",
        log:
            f"{LOGS}/hyperparameters_so/final/scores/{{so_algorithm}}/{{role}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/hyperparameters_so/final/{{so_algorithm}}/{{role}}.score.tsv"
        wildcard_constraints:
            so_algorithm=_choices(SO_CHUNKS),
            role="best|worst|default",
        conda:
            ENV
        params:
            cli=CLI,
            repetitions=SO["final_repetitions"],
            settings=json_arg({**CA_SETTINGS, "baseline": CA["baseline"]}),
            resamples=SO["score_resamples"],
        shell:
            "{params.cli} so-score --algorithm {wildcards.so_algorithm} --runs {input.runs:q}"
            " --spaces {input.spaces:q} --repetitions {params.repetitions} --settings {params.settings}"
            " --resamples {params.resamples} --scores {output.scores:q}"
            " --resamples-out {output.resamples:q} --curves {output.curves:q} 2> {log:q}"

    rule so_tables:
        input:
            grid_scores=[f for a in SO_CHUNKS for f in so_grid_files("scores", a)],
            grid_resamples=[f for a in SO_CHUNKS for f in so_grid_files("resamples", a)],
            final_runs=so_final_files("runs"),
            final_scores=so_final_files("scores"),
            final_curves=so_final_files("curves"),
        output:
            tables=[f"{TABLES}/{name}.{ext}" for name in SO_TABLES for ext in ("csv", "md")],
            spaces=f"{RESULTS}/hyperparameters_so/spaces.parquet",
            curves=f"{RESULTS}/hyperparameters_so/curves.parquet",
        log:
            f"{LOGS}/tables/hyperparameters_so.log",
        conda:
            ENV
        params:
            cli=CLI,
            final_keys=SO_FINAL_KEYS,
            section=json_arg(SO),
            scopes=json_arg({scope: [f"{d}/{k}" for d, k in keys] for scope, keys in SO_SCOPES.items()}),
            min_budget=CA["min_budget_evaluations"],
        shell:
            "{params.cli} so-tables --grid-scores {input.grid_scores:q}"
            " --grid-resamples {input.grid_resamples:q} --final-runs {input.final_runs:q}"
            " --final-scores {input.final_scores:q} --final-curves {input.final_curves:q}"
            " --keys {params.final_keys} --section {params.section} --scopes {params.scopes}"
            " --min-budget-evaluations {params.min_budget} --out {output:q} 2> {log:q}"

    rule so_meta:
        input:
            grid=f"{TABLES}/hyperparameters_so.csv",
        output:
            csv=f"{TABLES}/{so_tuning.TABLES[2]}.csv",
            md=f"{TABLES}/{so_tuning.TABLES[2]}.md",
            runs=f"{RESULTS}/hyperparameters_so/meta_runs.parquet",
        log:
            f"{LOGS}/tables/hyperparameters_so_meta.log",
        conda:
            ENV
        params:
            cli=CLI,
            section=json_arg(SO),
        shell:
            "{params.cli} so-meta --grid {input.grid:q} --section {params.section} --out {output:q} 2> {log:q}"

    # Where the study has a leaderboard: each grid's best and worst configuration joins it as an entry, scored by the
    # leaderboard's scoring on its spaces from the first leaderboard.repetitions of its final runs.
    if LB_SPACES:

        rule so_lb_score:
            input:
                spaces=lb_space_files(),
                runs=f"{RESULTS}/hyperparameters_so/final/runs/{{so_algorithm}}/{{role}}.parquet",
            output:
                scores=f"{RESULTS}/hyperparameters_so/leaderboard/{{so_algorithm}}/{{role}}.parquet",
                curves=f"{RESULTS}/hyperparameters_so/leaderboard/{{so_algorithm}}/{{role}}.curves.parquet",
            log:
                f"{LOGS}/hyperparameters_so/leaderboard/{{so_algorithm}}/{{role}}.log",
            benchmark:
                f"{RESULTS}/benchmarks/hyperparameters_so/leaderboard/{{so_algorithm}}/{{role}}.score.tsv"
            wildcard_constraints:
                so_algorithm=_choices(SO_CHUNKS),
                role="|".join(so_tuning.LEADERBOARD_ROLES),
            conda:
                ENV
            params:
                cli=CLI,
                name=lambda wc: so_tuning.leaderboard_entry_name(wc.so_algorithm, wc.role),
                repetitions=LB["repetitions"],
                settings=json_arg({**CA_SETTINGS, "baseline": CA["baseline"]}),
                resamples=LB["score_resamples"],
            shell:
                "{params.cli} lb-score --spaces {input.spaces:q} --name {params.name} --source hyperparameters_so"
                " --runs {input.runs:q} --repetitions {params.repetitions} --settings {params.settings}"
                " --resamples {params.resamples} --scores {output.scores:q} --curves {output.curves:q} 2> {log:q}"

        rule so_lb_table:
            input:
                lb_scores=expand(f"{RESULTS}/leaderboard/scores/{{entry}}.parquet", entry=LB_ENTRIES),
                so_scores=so_lb_files(),
                final_runs=[so_final_files("runs")[i] for i in so_lb_final_indices()],
                cost=[repo_path(LB["cost_file"])] if LB["cost_file"] else [],
            output:
                csv=f"{TABLES}/{so_tuning.LEADERBOARD_TABLE}.csv",
                md=f"{TABLES}/{so_tuning.LEADERBOARD_TABLE}.md",
            log:
                f"{LOGS}/tables/{so_tuning.LEADERBOARD_TABLE}.log",
            conda:
                ENV
            params:
                cli=CLI,
                entries=json_arg(LB_ENTRIES),
                final_keys=[SO_FINAL_KEYS[i] for i in so_lb_final_indices()],
                section=json_arg(SO),
                repetitions=LB["repetitions"],
                resamples=config["tables"]["bootstrap_resamples"],
                seed=config["tables"]["bootstrap_seed"],
                min_budget=CA["min_budget_evaluations"],
                cost=lambda wc, input: shlex.quote(input.cost[0] if input.cost else ""),
            shell:
                "{params.cli} so-lb-table --lb-scores {input.lb_scores:q} --so-scores {input.so_scores:q}"
                " --entries {params.entries} --final-runs {input.final_runs:q} --keys {params.final_keys}"
                " --section {params.section} --repetitions {params.repetitions} --out {output:q}"
                " --bootstrap-resamples {params.resamples} --bootstrap-seed {params.seed}"
                " --min-budget-evaluations {params.min_budget} --cost-file {params.cost} 2> {log:q}"
