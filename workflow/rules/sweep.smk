# Sweeps: exhaustive Kernel Tuner measurements of a kernel of workflow/kernels/ on the host CPU
# (C backend) or a CUDA GPU, split into resumable shards, merged into one Kernel Tuner cache.
# A shard measures into a work file that outlives failed jobs (Snakemake deletes only declared
# outputs), so rerunning the workflow after a crash continues where the shard stopped.


rule sweep_shard:
    output:
        cache=f"{RESULTS}/sweeps/{{target}}/{{device}}/{{kernel}}/shards/{{shard}}-of-{{shards}}.json",
        provenance=f"{RESULTS}/sweeps/{{target}}/{{device}}/{{kernel}}/shards/{{shard}}-of-{{shards}}.provenance.json",
    log:
        f"{LOGS}/sweeps/{{target}}/{{device}}/{{kernel}}/shard-{{shard}}-of-{{shards}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/sweeps/{{target}}/{{device}}/{{kernel}}/shard-{{shard}}-of-{{shards}}.tsv"
    wildcard_constraints:
        target="cpu|cuda",
        device=r"[A-Za-z0-9_.-]+",
        kernel=r"[A-Za-z0-9_]+",
        shard=r"\d+",
        shards=r"\d+",
    conda:
        ENV
    # A cpu shard takes as many cores as its configurations' largest `threads`, so a shard that
    # measures two-thread configurations never runs beside another shard on the same cores.
    threads: lambda wc: sweep_shard_cores(wc)
    # A cuda shard needs a GPU of its own on a cluster (the Slurm plugin submits it with
    # --gpus=1; workflow/profiles/slurm); a local run does not count GPUs.
    resources:
        gpu=lambda wc: 1 if wc.target == "cuda" else 0,
        cpus_per_task=lambda wc, threads: threads,
    params:
        cli=CLI,
        work=lambda wc: f"{sweep_dir(wc.target, wc.device, wc.kernel)}/work/{wc.shard}-of-{wc.shards}.json",
        size=lambda wc: get_sweep(wc)["size"],
        iterations=lambda wc: get_sweep(wc)["iterations"],
        compile=lambda wc: get_sweep(wc)["compile"],
        tune_params=lambda wc: json_arg(get_sweep(wc)["tune_params"]),
    shell:
        "{params.cli} sweep-shard --kernel {wildcards.kernel} --target {wildcards.target} --size {params.size}"
        " --shard {wildcards.shard}/{wildcards.shards} --iterations {params.iterations} --compile {params.compile}"
        " --tune-params {params.tune_params} --cache {params.work:q} --provenance {output.provenance:q}"
        " 2> {log:q} && cp {params.work:q} {output.cache:q}"


rule sweep_merge:
    input:
        shards=sweep_shard_files,
        provenance=lambda wc: sweep_shard_files(wc, "provenance"),
    output:
        cache=f"{RESULTS}/sweeps/{{target}}/{{device}}/{{kernel}}/cache.json.gz",
        definition=f"{RESULTS}/sweeps/{{target}}/{{device}}/{{kernel}}/definition.yaml",
        provenance=f"{RESULTS}/sweeps/{{target}}/{{device}}/{{kernel}}/provenance.json",
    log:
        f"{LOGS}/sweeps/{{target}}/{{device}}/{{kernel}}/merge.log",
    benchmark:
        f"{RESULTS}/benchmarks/sweeps/{{target}}/{{device}}/{{kernel}}/merge.tsv"
    wildcard_constraints:
        target="cpu|cuda",
        device=r"[A-Za-z0-9_.-]+",
        kernel=r"[A-Za-z0-9_]+",
    conda:
        ENV
    params:
        cli=CLI,
        size=lambda wc: get_sweep(wc)["size"],
        tune_params=lambda wc: json_arg(get_sweep(wc)["tune_params"]),
    shell:
        "{params.cli} sweep-merge --kernel {wildcards.kernel} --target {wildcards.target} --size {params.size}"
        " --tune-params {params.tune_params} --shards {input.shards:q} --shard-provenance {input.provenance:q}"
        " --cache {output.cache:q} --definition {output.definition:q} --provenance {output.provenance:q}"
        " 2> {log:q}"
