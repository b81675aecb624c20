"""Snakemake's scheduler on a local run: its default job-rate limit is dropped (the Snakefile's onstart).

Snakemake's command line limits job starts to `--max-jobs-per-timespan` (default 100/1s) with a
rate limiter, and with a limiter the scheduler (Snakemake 9.27.1,
`snakemake/scheduling/job_scheduler.py`, end of `JobScheduler.schedule`'s loop) arms a one-second
timer after every scheduling round, each of which starts another round when it fires. Every finished
job starts one such chain of timers, so after n jobs there are about n rounds a second, and each round
re-evaluates the params and stats the inputs of every ready job. On this study's 817 jobs that is the
main Snakemake process's own CPU time, taken from the jobs on a 2-core machine (`benchmarks/bench_study.py`
reports it). Snakemake's Python API has no limiter by default (`SchedulingSettings.max_jobs_per_timespan`
is None); a local run needs none, since no job queue is being flooded. A limit given on the command line
or in a profile other than the default, and every remote executor (Slurm), keeps it.
"""

from __future__ import annotations

import re

# a "rule    count" row of the job table Snakemake prints for a (dry) run
_JOB_ROW = re.compile(r"^\s*([A-Za-z_]\w*)\s+(\d+)\s*$", flags=re.M)

#: Snakemake's command-line default for --max-jobs-per-timespan (`snakemake/cli.py`, "100/1s").
CLI_DEFAULT_LIMIT = (100, 1)


def drop_default_rate_limit(workflow) -> bool:
    """Remove the scheduler's job-rate limiter of a local, non-dry run when it is the command line's default.

    `workflow` is the Snakefile's `workflow` object, called from `onstart` (after Snakemake built its
    JobScheduler, before the first scheduling round). Returns whether the limiter was removed.
    """
    scheduler = getattr(workflow, "scheduler", None)
    limiter = getattr(scheduler, "job_rate_limiter", None)
    if scheduler is None or limiter is None or not workflow.local_exec or workflow.dryrun:
        return False
    if (limiter.max_jobs, limiter.timespan) != CLI_DEFAULT_LIMIT:
        return False
    scheduler.job_rate_limiter = None
    return True


def job_counts(text: str) -> dict[str, int]:
    """Rule -> jobs from the job table in Snakemake's output (`--dry-run --quiet rules`), its total left out; a
    rule listed twice (Snakemake prints the table again at the end of a dry run) counts once."""
    return {rule: int(n) for rule, n in _JOB_ROW.findall(text) if rule != "total"}
