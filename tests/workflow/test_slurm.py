"""The tiny config through a real Slurm: the profile's jobs go through sbatch, slurmctld and slurmd.

A single-node cluster on this machine (.ci/slurm-local: Debian's slurm-wlm and munge, installed
when missing; needs root), so it runs only when asked: `pytest --slurm` (.ci/run asks; a plain
`pytest` skips it and installs and starts nothing). Asked, the test fails, never skips, when the
cluster cannot start: the profile is only known to work where this test ran.

The scenario, on one DAG: a first invocation in which one `simulate` or `simulate_grid` job
(the first seen running) is cancelled by `scancel` while it runs (with `--retries 0`, so that
the executor's report of the failure ends the run instead of a resubmission hiding it); a
second invocation, as a user would type it, finishes the DAG. Every job of the DAG ran through
Slurm and completed exactly once, the cancelled one aside; the first invocation's outputs were
kept, not recomputed; the tables are byte-identical to the local run's (conftest.tiny_run).

The sweep of Bessel measures wall time, which no second run reproduces. So the Slurm run starts
from the local run's shard work files: its sweep_shard jobs still run through Slurm, find every
configuration measured (the resume path a crashed or cancelled shard takes) and pass the same
measurements on, which keeps the tables comparable byte for byte.

The executor options on the command line are this cluster's, not the profile's: no slurmdbd,
so `squeue` follows the jobs (`sacct` has no accounting to read); no accounts; status checks
from one second on, for short jobs (the plugin's default waits 40 s).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from analysis.simulate import leaderboard
from helpers import REPO

# the tiny DAG again, through a Slurm cluster that the test starts
pytestmark = [pytest.mark.slow, pytest.mark.slurm]

SCRIPT = REPO / ".ci/slurm-local"
# the jobs of the tiny DAG but `all` (test_workflow.test_dry_run_tiny_config lists them), which
# Snakemake runs itself: it has no command. The leaderboard's: a run and a score of each Kernel Tuner strategy and
# pyATF technique, a score of each of the 3 x 2 constraint-aware strategies, its tables and its figures. Seed 003's
# tuning: 4 grid runs and scores, 6 final runs and scores, its tables, meta-strategies and figures, and the
# leaderboard's scores of each grid's best and worst (2 x 2) and its table of them.
_OWN = len(leaderboard.kernel_tuner_strategies()) + len(leaderboard.pyatf_techniques()) + 1  # + a user's (optuna)
SLURM_JOBS = 90 + 2 * _OWN + 3 * 2 + 2 + (2 * 4 + 2 * 6 + 3) + (2 * 2 + 1)
CLUSTER_OPTIONS = ["--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "1",
                   "--slurm-no-account"]


def sh(*cmd: str, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def slurm():
    """A running single-node Slurm; stopped afterwards, whatever happened."""
    started = time.monotonic()
    out = sh(str(SCRIPT), "start", timeout=600)
    try:
        if out.returncode != 0:
            pytest.fail(f"Slurm did not start ({SCRIPT.name} start):\n{out.stdout}{out.stderr}", pytrace=False)
        print(f"slurm-local start: {time.monotonic() - started:.1f} s: {out.stdout.strip()}")
        yield
    finally:
        stop = sh(str(SCRIPT), "stop", timeout=300)
        assert stop.returncode == 0, f"{SCRIPT.name} stop: {stop.stdout}{stop.stderr}"


def slurm_jobs() -> dict[str, tuple[str, str]]:
    """Every job slurmctld still knows (MinJobAge keeps finished ones an hour): id -> (state, comment).

    The executor names each job's rule and wildcards in its comment (rule_<name>_wildcards_<values>).
    """
    out = sh("squeue", "--states=all", "--noheader", "--format=%i|%T|%k")
    assert out.returncode == 0, out.stderr
    jobs = {}
    for line in out.stdout.splitlines():
        jobid, state, comment = line.split("|", 2)
        jobs[jobid] = (state, comment)
    return jobs


def queue_summary() -> str:
    """How many of slurmctld's jobs are in each state, e.g. 'COMPLETED 120, PENDING 3, RUNNING 2'."""
    states = Counter(s for s, _ in slurm_jobs().values())
    return ", ".join(f"{s} {n}" for s, n in sorted(states.items()))


def snakemake(cmd: list[str], timeout: float) -> tuple[int, str]:
    """Run a Snakemake command line in a session of its own: (exit status, its output).

    Past `timeout` seconds the whole session (Snakemake and what it started) is killed and the test
    fails with the queue's states and the output's tail, not a bare TimeoutExpired.
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        queue = queue_summary()
        os.killpg(proc.pid, signal.SIGKILL)
        log, _ = proc.communicate()
        pytest.fail(f"Snakemake did not finish in {timeout:.0f} s; the queue: {queue}\n{log[-3000:]}")
    return proc.returncode, log


def outputs(root: Path) -> dict[str, int]:
    """Every file under `root` (relative path -> mtime in ns)."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_tiny_config_through_slurm_with_a_cancelled_job(tiny_run, slurm, tmp_path):
    before = set(slurm_jobs())  # jobs of an earlier session, if the cluster was already up
    work = ".test-output/results/sweeps/cpu/host-cpu/bessel/work"
    shutil.copytree(tiny_run / work, tmp_path / work)
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
           "--profile", str(REPO / "workflow/profiles/slurm"), "--configfile", str(REPO / "config/test.yaml"),
           *CLUSTER_OPTIONS]

    # 1. A `simulate` job cancelled while it runs: the executor reports it failed, the run stops.
    started = time.monotonic()
    first = subprocess.Popen([*cmd, "--retries", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
    try:
        victim = None
        while victim is None and first.poll() is None and time.monotonic() - started < 600:
            running = [(j, c) for j, (s, c) in slurm_jobs().items()
                       if s == "RUNNING" and c.startswith("rule_simulate_")]
            if running:
                victim = running[0]
                time.sleep(1)  # mid-run: the job's Snakemake has started
                assert sh("scancel", victim[0]).returncode == 0
            else:
                time.sleep(0.5)
        log, _ = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    cancelled_in = time.monotonic() - started
    assert victim is not None, f"no simulate job was seen running:\n{log[-3000:]}"
    assert first.returncode != 0, log[-3000:]
    assert re.search(rf"SLURM-job '{victim[0]}' failed, SLURM status is: 'CANCELLED'", log), log[-3000:]
    kept = outputs(tmp_path / ".test-output")

    # 2. The next invocation (the profile's own retries) finishes the DAG. Its ~150 jobs take about
    # 850 s on an idle 2-CPU machine (two at a time, ~11 s each: each job's own Snakemake and command,
    # and the executor's status checks between them); the limit leaves room for a loaded one.
    started = time.monotonic()
    returncode, log = snakemake(cmd, timeout=2400)
    finished_in = time.monotonic() - started
    assert returncode == 0, log[-6000:]
    print(f"first invocation (cancelled {victim[1]}): {cancelled_in:.0f} s; second: {finished_in:.0f} s")
    # a remote executor keeps Snakemake's job-rate limit (only a local run drops it: analysis/scheduling.py)
    assert "job-rate limit is off" not in log

    # every job of the DAG went through Slurm and completed once; only the cancelled one ran twice
    jobs = {j: sc for j, sc in slurm_jobs().items() if j not in before}
    states = sorted(s for s, _ in jobs.values())
    assert jobs[victim[0]][0] == "CANCELLED"
    assert states.count("COMPLETED") == SLURM_JOBS and len(states) == SLURM_JOBS + 1, states
    comments = [c for s, c in jobs.values() if s == "COMPLETED"]
    assert len(set(comments)) == SLURM_JOBS and victim[1] in comments
    # nothing of the first invocation was lost or redone: its files are there, untouched
    now = outputs(tmp_path / ".test-output")
    changed = [f for f, t in kept.items() if now.get(f) != t and not f.startswith("logs/")]
    assert not changed, changed

    # the tables are the local run's, byte for byte
    local, remote = tiny_run / ".test-output/tables", tmp_path / ".test-output/tables"
    names = sorted(str(p.relative_to(local)) for p in local.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(remote)) for p in remote.rglob("*") if p.is_file())
    assert "summary/optuna.csv" in names
    assert [n for n in names if (local / n).read_bytes() != (remote / n).read_bytes()] == []
