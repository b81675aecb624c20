"""TSB_STOCK: with the fast path off the suite runs the stock libraries, and gives the same results."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from analysis import fastpath
from analysis.errors import InputError
from analysis.simulate import algorithm_names, get_algorithm, resolve_options, simulate_run
from helpers import REPO, tiny_space

# every registered algorithm, with both constraint_aware settings where it has the option
CASES = [(name, {"constraint_aware": aware} if "constraint_aware" in resolve_options(name, None) else {})
         for name in algorithm_names() for aware in (True, False)]
CASES = [case for i, case in enumerate(CASES) if case not in CASES[:i]]


@pytest.mark.parametrize("value, expected", [("", set()), ("0", set()), ("1", set(fastpath.GROUPS)),
                                             (" lhs, mating ", {"lhs", "mating"})])
def test_the_switch_reads_the_environment(monkeypatch, value, expected) -> None:
    monkeypatch.setenv(fastpath.ENV, value)
    assert fastpath.stock_groups() == expected
    assert {group for group in fastpath.GROUPS if not fastpath.enabled(group)} == expected


def test_an_unknown_group_is_named(monkeypatch) -> None:
    monkeypatch.setenv(fastpath.ENV, "runner,matting")
    with pytest.raises(InputError, match=r"TSB_STOCK.*matting.*known: runner"):
        fastpath.stock_groups()


@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_a_run_is_the_same_with_the_stock_libraries(monkeypatch, name, options) -> None:
    """Every registered algorithm, the leaderboard's too: the same run, or the same failure (skopt's model fails on
    this tiny space: it must fail the same way with the stock libraries)."""
    n_obj = 2 if get_algorithm(name).multi_objective and name != "rs" else 1

    def outcome(seed: int):
        try:
            trace = simulate_run(tiny_space(n_obj), name, options, 20, seed)
        except Exception as exc:  # noqa: BLE001  (compared below)
            return f"{type(exc).__name__}: {exc}", None
        return trace.comparable(), trace.meta["proposals"]

    for seed in (3, 4):
        monkeypatch.delenv(fastpath.ENV, raising=False)
        fast = outcome(seed)
        monkeypatch.setenv(fastpath.ENV, "1")
        stock = outcome(seed)
        assert fast == stock, (name, options, seed)


@pytest.mark.slow
def test_the_tiny_study_under_tsb_stock_gives_the_same_tables(tiny_run, tmp_path) -> None:
    """The whole tiny DAG with every fast-path group off: the published tables are the fast run's, byte for byte.

    The CPU sweep's measured shards are taken over from the fast run (measured times differ between
    two sweeps); everything downstream of them is recomputed with the stock libraries.
    """
    work = ".test-output/results/sweeps/cpu/host-cpu/bessel/work"
    shutil.copytree(tiny_run / work, tmp_path / work)
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "--cores", "2",
           "--configfile", str(REPO / "config/test.yaml")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env={**os.environ, fastpath.ENV: "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    fast, stock = tiny_run / ".test-output/tables", tmp_path / ".test-output/tables"
    names = sorted(str(p.relative_to(fast)) for p in fast.rglob("*") if p.is_file())
    assert names and names == sorted(str(p.relative_to(stock)) for p in stock.rglob("*") if p.is_file())
    assert [n for n in names if (fast / n).read_bytes() != (stock / n).read_bytes()] == []
