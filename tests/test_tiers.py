"""The two tiers of the suite (tests/conftest.py, README "Test"): a plain `pytest` leaves the slow tests out,
`--slow` brings them in, `--slurm` alone brings in the Slurm test only, and `-m slow` selects the slow tier alone
(what .ci/run runs after the plain suite)."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO

FILES = ["tests/workflow/test_workflow.py", "tests/workflow/test_slurm.py", "tests/test_io.py"]
TINY = "tests/workflow/test_workflow.py::test_tiny_config_runs_every_stage"  # reads the tiny run: slow
SLURM = "tests/workflow/test_slurm.py::"
FAST = "tests/test_io.py::"


def collected(*options: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", *options, *FILES],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if "::" in line]


def test_a_plain_run_leaves_the_slow_tests_out() -> None:
    ids = collected()
    assert any(i.startswith(FAST) for i in ids)
    assert TINY not in ids and not any(i.startswith(SLURM) for i in ids)


def test_slow_brings_them_in_and_slurm_only_its_own() -> None:
    assert TINY in collected("--slow")
    ids = collected("--slurm")
    assert TINY not in ids and any(i.startswith(SLURM) for i in ids)


def test_the_slow_tier_alone_is_what_ci_runs_after_the_plain_suite() -> None:
    plain, tier, every = collected(), collected("--slow", "--slurm", "-m", "slow"), collected("--slow", "--slurm")
    assert TINY in tier and not any(i.startswith(FAST) for i in tier)
    assert not set(plain) & set(tier) and sorted(plain + tier) == sorted(every)
