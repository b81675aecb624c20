"""The Snakefile's onstart drops Snakemake's default job-rate limit on a local run only."""

from types import SimpleNamespace

import pytest
from snakemake.scheduling.job_scheduler import JobRateLimiter
from snakemake.settings.types import MaxJobsPerTimespan

from analysis.scheduling import CLI_DEFAULT_LIMIT, drop_default_rate_limit


def fake_workflow(limit: str | None, local: bool = True, dryrun: bool = False):
    limiter = JobRateLimiter(MaxJobsPerTimespan.parse_choice(limit)) if limit else None
    return SimpleNamespace(scheduler=SimpleNamespace(job_rate_limiter=limiter), local_exec=local, dryrun=dryrun)


def test_cli_default_is_snakemakes():
    # the command line's default, parsed as Snakemake parses it (an upgrade that changes it fails here)
    from snakemake.cli import get_argument_parser

    default = get_argument_parser().parse_args([]).max_jobs_per_timespan
    assert (default.max_jobs, default.timespan) == CLI_DEFAULT_LIMIT


def test_local_run_with_the_default_limit_drops_it():
    workflow = fake_workflow("100/1s")
    assert drop_default_rate_limit(workflow)
    assert workflow.scheduler.job_rate_limiter is None


@pytest.mark.parametrize("kwargs", [
    {"limit": "100/1s", "local": False},      # Slurm and every remote executor
    {"limit": "100/1s", "dryrun": True},
    {"limit": "5/1s"},                        # a limit the user chose
    {"limit": "100/1m"},
    {"limit": None},                          # the API's default: no limiter
])
def test_other_runs_keep_their_limit(kwargs):
    workflow = fake_workflow(**kwargs)
    before = workflow.scheduler.job_rate_limiter
    assert not drop_default_rate_limit(workflow)
    assert workflow.scheduler.job_rate_limiter is before


def test_no_scheduler_yet():
    assert not drop_default_rate_limit(SimpleNamespace(local_exec=True, dryrun=False))
