# Auto-tuning strategy benchmarking suite: entry point.
# `snakemake --cores all` runs the full study (config/config.yaml);
# `snakemake --cores 2 --configfile config/test.yaml` the tiny one.
import sys

from snakemake.utils import min_version

min_version("9.0")


# A --configfile given on the command line replaces the full study's config (not merged into it).
# Snakemake reads config files itself and names no line of a syntax error: the suite reads the
# full study's first, to name it (a --configfile is read before this file runs; `python -m
# analysis.cli check-config FILE` names the line there).
if not workflow.overwrite_configfiles:
    sys.path.insert(0, workflow.basedir)
    from analysis.config import read_yaml
    from analysis.errors import ConfigError

    try:
        read_yaml(f"{workflow.basedir}/config/config.yaml")
    except ConfigError as exc:
        raise WorkflowError(str(exc)) from None

    configfile: f"{workflow.basedir}/config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/sweep.smk"
include: "workflow/rules/spaces.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/indicators.smk"
include: "workflow/rules/hyperparams.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/figures.smk"


# A local run drops the command line's default job-rate limit: with it, Snakemake 9's scheduler
# starts one more once-a-second round per finished job (analysis/scheduling.py).
onstart:
    from analysis.scheduling import drop_default_rate_limit

    if drop_default_rate_limit(workflow):
        logger.info("Local run: Snakemake's default job-rate limit is off (analysis/scheduling.py).")


rule all:
    default_target: True
    input:
        get_final_outputs(),
        figure_outputs(),
