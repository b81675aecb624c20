"""Runs depend on their seed and the data alone, not on the machine.

The golden hashes below pin short runs of every registered algorithm (and Kernel Tuner's Bayesian
optimisation, whose Gaussian process goes through the BLAS) on a published host-CPU space. They were
recorded on an AMD EPYC VM (bayes_opt's on an Intel Xeon VM); a dependence on the machine (a BLAS kernel, a SIMD
path, anything read from the environment) changes them and fails here wherever CI runs. Two
such dependences are also provoked on this machine, with the pin of analysis/numerics.py off:
OpenBLAS's kernels chosen for an older CPU (`OPENBLAS_CORETYPE=Prescott`, which rounds pymoo's
Riesz s-energy reference directions differently: these runs do not depend on it) and NumPy's AVX2
loops switched off (which moves NSGA-II's runs: the pin keeps them on). tests/simulate/test_numerics.py
has the longer continuous-position traces that caught the BLAS kernel in Kernel Tuner's Firefly.

Run as a script (`python tests/simulate/test_reproducibility.py SPACE_DIR`) it prints the hashes as JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis import numerics  # noqa: E402
from analysis.simulate import refdirs  # noqa: E402

SOURCE = REPO / "data" / "sweeps" / "cpu" / "intel-xeon-vm" / "lavamd.json.gz"
DEFINITION = REPO / "data" / "sweeps" / "cpu" / "intel-xeon-vm" / "lavamd.yaml"
O3 = ["time", "memory", "mre"]

# (label, algorithm, options, objectives, budget, repetitions)
CASES = [
    ("rs", "rs", {}, ["time"], 40, 2),
    ("nsga2", "nsga2", {"popsize": 20}, O3, 100, 2),
    ("nsga3", "nsga3", {"popsize": 20}, O3, 100, 3),
    ("nsga2_unaware", "nsga2_unaware", {"popsize": 20}, O3, 60, 2),
    ("nsga3_unaware", "nsga3_unaware", {"popsize": 20}, O3, 60, 3),
    ("genetic_algorithm", "genetic_algorithm", {"constraint_aware": True, "popsize": 10, "maxiter": 5}, ["time"],
     40, 2),
    ("pso", "pso", {"constraint_aware": True, "popsize": 10, "maxiter": 5}, ["time"], 40, 2),
    ("diff_evo", "diff_evo", {"constraint_aware": True, "popsize": 10, "maxiter": 5}, ["time"], 40, 2),
    ("firefly_algorithm", "firefly_algorithm", {"constraint_aware": True, "popsize": 10, "maxiter": 5}, ["time"],
     40, 2),
    ("bayes_opt", "bayes_opt", {}, ["time"], 60, 2),
]

GOLDEN = {
    "nsga3_hyperplane": "232007b7f178c478",
    "rs": "f4960312011e32cf",
    "nsga2": "127a8601e5e0e306",
    "nsga3": "24ccef904c1ee60c",
    "nsga2_unaware": "6443687d6300047d",
    "nsga3_unaware": "e606c91420aa7536",
    "genetic_algorithm": "823850f57946558c",
    "pso": "84c593e68cf48eee",
    "diff_evo": "e73aef7f7a143ae1",
    "firefly_algorithm": "c7e2eb38d8d6f0bc",
    "bayes_opt": "0e37dfc16c04c6b5",  # recorded on an Intel Xeon VM (the others on an AMD EPYC VM)
}


def trace_digest(frame: pd.DataFrame) -> str:
    """sha256 of a run batch's values (columns, dtypes and every cell, NaN included), independent of Parquet."""
    h = hashlib.sha256()
    h.update(json.dumps([[c, str(t)] for c, t in frame.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def import_lavamd(out_dir: Path) -> tuple[Path, Path]:
    from analysis.spaces.importers import import_space

    parquet, meta = out_dir / "space.parquet", out_dir / "space.json"
    space = import_space(str(SOURCE), kernel="lavamd", device="intel-xeon-vm", fmt="auto",
                         definition=str(DEFINITION), objectives={})
    space.save(parquet, meta)
    return parquet, meta


# One NSGA-III run whose hyperplane normalisation meets a system where LAPACK's rounding and the
# portable solve's differ (budget 200, repetition 13 of the tuned O3 setting): with LAPACK, its
# trace is another one.
HYPERPLANE_CASE = ("nsga3_hyperplane", "nsga3", {"popsize": 20, "mutation_prob": 0.1}, O3, 200, 13)


def hyperplane_digest(space) -> str:
    from analysis.simulate import derive_seed, resolve_options, simulate_run
    from analysis.simulate.jobs import run_identity, space_data

    _, algorithm, options, objectives, budget, rep = HYPERPLANE_CASE
    options = resolve_options(algorithm, options)
    seed = derive_seed(**run_identity(space, "O3", algorithm, options, budget, rep))
    return trace_digest(simulate_run(space_data(space, objectives), algorithm, options, budget, seed).to_frame())


def golden_digests(space_dir: Path) -> dict[str, str]:
    from analysis.simulate.jobs import run_batch, space_data
    from analysis.spaces.space import Space

    space = Space.load(space_dir / "space.parquet", space_dir / "space.json")
    out = {HYPERPLANE_CASE[0]: hyperplane_digest(space)}
    for label, algorithm, options, objectives, budget, reps in CASES:
        set_name = "O3" if objectives == O3 else "time"
        frame = run_batch(space, set_name, objectives, algorithm, options, budget, reps, proposal_cap=10,
                          data=space_data(space, objectives))
        out[label] = trace_digest(frame)
    return out


@pytest.fixture(scope="module")
def space_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("lavamd")
    import_lavamd(d)
    return d


@pytest.fixture(scope="module")
def digests(space_dir) -> dict[str, str]:
    return golden_digests(space_dir)


def _digests_in_subprocess(space_dir: Path, **env: str) -> dict[str, str]:
    proc = subprocess.run([sys.executable, str(Path(__file__)), str(space_dir)], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("label", [HYPERPLANE_CASE[0], *(c[0] for c in CASES)])
def test_golden_trace(digests, label):
    """Each algorithm's short runs are exactly the recorded ones (seed and data alone decide them)."""
    assert digests[label] == GOLDEN[label], (
        f"{label}: the runs changed (digest {digests[label]}, recorded {GOLDEN[label]}). If the change is "
        "intended (an algorithm or the data changed), update GOLDEN; if not, something of the machine or the "
        "environment reached the runs")


def test_runs_independent_of_the_blas_kernel_even_unpinned(space_dir, digests):
    """The same short runs with OpenBLAS's kernels for an older CPU even with the machine's own choice
    (TSB_NUMERICS=native: no pin, analysis/numerics.py): the portable hyperplane and the shipped directions make
    these runs independent of the BLAS by themselves."""
    assert _digests_in_subprocess(space_dir, TSB_NUMERICS="native", OPENBLAS_CORETYPE="Prescott") == digests


def test_numpy_loops_below_x86_v3_move_nsga2_runs(space_dir, digests):
    """Why numpy's dispatch is pinned at X86_V3 rather than left to the machine: without its AVX2 loops (numpy
    2.4's dispatch targets switched off, no pin) NSGA-II's runs are other ones. A processor without AVX2 and
    FMA cannot reproduce the study's runs."""
    if not {"avx2", "fma"} <= (numerics.cpu_flags() or frozenset()):
        pytest.skip("this processor has no AVX2 loops to switch off")
    got = _digests_in_subprocess(space_dir, TSB_NUMERICS="native",
                                 NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR")
    moved = sorted(k for k in digests if got[k] != digests[k])
    assert "nsga2" in moved, moved


def test_the_hyperplane_case_takes_lapacks_rounding_otherwise(monkeypatch, space_dir, digests):
    """Without the portable solve, the pinned NSGA-III run is another one: the golden test can tell."""

    from analysis.spaces.space import Space

    monkeypatch.setenv("TSB_STOCK", "portable")
    space = Space.load(space_dir / "space.parquet", space_dir / "space.json")
    assert hyperplane_digest(space) != digests[HYPERPLANE_CASE[0]]


def bayes_opt_run(space_dir: Path, monkeypatch, slow_s: float) -> pd.DataFrame:
    """Bayesian optimisation's runs on lavamd with each evaluation `slow_s` seconds slower, as on a slower or a
    busier machine."""
    from kernel_tuner.strategies import bayes_opt

    from analysis.simulate.jobs import run_batch, space_data
    from analysis.spaces.space import Space

    original = bayes_opt.BayesianOptimization.evaluate_objective_function

    def slower(self, *args, **kwargs):
        time.sleep(slow_s)
        return original(self, *args, **kwargs)

    space = Space.load(space_dir / "space.parquet", space_dir / "space.json")
    with monkeypatch.context() as m:
        m.setattr(bayes_opt.BayesianOptimization, "evaluate_objective_function", slower)
        return run_batch(space, "time", ["time"], "bayes_opt", {}, 80, 2, proposal_cap=10,
                         data=space_data(space, ["time"]))


def test_bayes_opt_runs_do_not_follow_the_wall_clock(space_dir, monkeypatch):
    """Kernel Tuner's bayes_opt refits its model when an evaluation round took five times as long as the last
    prediction: on the wall clock, a busier machine's runs were other ones. On its tick clock
    (analysis.simulate.seeding.TickClock) the runs are the same however long an evaluation takes."""
    assert trace_digest(bayes_opt_run(space_dir, monkeypatch, 0.0)) == trace_digest(
        bayes_opt_run(space_dir, monkeypatch, 0.01))


def test_on_the_wall_clock_slower_evaluations_move_bayes_opt_runs(space_dir, monkeypatch):
    """Why the clock is replaced: with the wall clock back in place of the tick clock, the same runs with
    slower evaluations are other ones (the test above can tell)."""
    from analysis.simulate import seeding

    class WallClock:
        perf_counter = staticmethod(time.perf_counter)
        perf_counter_ns = staticmethod(time.perf_counter_ns)

    monkeypatch.setattr(seeding, "TickClock", WallClock)
    # 50 ms an evaluation: the refit rule compares it with five times the last prediction, which a busy machine
    # (this suite's own workers beside it) can stretch past the 10 ms of the test above
    assert trace_digest(bayes_opt_run(space_dir, monkeypatch, 0.0)) != trace_digest(
        bayes_opt_run(space_dir, monkeypatch, 0.05))


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_portable_solve_agrees_with_lapack_to_rounding(n):
    from analysis.fastpath.portable import portable_dot, portable_solve

    rng = np.random.default_rng(n)
    for _ in range(200):
        m = rng.random((n, n)) + np.eye(n)
        b = np.ones(n)
        x = portable_solve(m, b)
        assert np.allclose(x, np.linalg.solve(m, b), rtol=1e-10, atol=0)
        assert np.allclose(portable_dot(m, x), np.dot(m, x), rtol=1e-12, atol=0)


def test_portable_solve_raises_like_lapack_on_a_singular_matrix():
    from analysis.fastpath.portable import portable_solve

    with pytest.raises(np.linalg.LinAlgError):
        portable_solve(np.array([[1.0, 2.0], [2.0, 4.0]]), np.ones(2))
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.solve(np.array([[1.0, 2.0], [2.0, 4.0]]), np.ones(2))


def test_portable_hyperplane_is_scoped_to_the_run():
    from pymoo.algorithms.moo import nsga3

    from analysis.fastpath.portable import portable_hyperplane

    with portable_hyperplane():
        assert nsga3.np is not np and nsga3.np.linalg.solve is not np.linalg.solve
        assert nsga3.np.argmin is np.argmin
    assert nsga3.np is np


@pytest.mark.slow  # over 20 s in a clean-clone .ci/run (benchmarks/reports/ci_suite.csv, ebb2563)
def test_prescott_blas_changes_live_reference_directions():
    """The cause, shown: pymoo's energy directions computed under another OpenBLAS kernel differ in the
    last bits, which is why runs take them from data/refdirs rather than computing them."""
    code = ("import sys, json; sys.path.insert(0, '.'); from analysis.simulate.refdirs import compute; "
            "print(json.dumps(compute(3, 20).tolist()))")
    out = {}
    for core in ("Prescott", "Haswell"):
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                              env={**os.environ, "OPENBLAS_CORETYPE": core, "TSB_NUMERICS": "native"}, timeout=120)
        if proc.returncode != 0:  # Haswell kernels need AVX2; on a CPU without them there is nothing to show
            pytest.fail(f"computing directions with OPENBLAS_CORETYPE={core} failed: {proc.stderr[-500:]}")
        out[core] = np.array(json.loads(proc.stdout))
    assert np.allclose(out["Prescott"], out["Haswell"], atol=1e-9)
    assert not np.array_equal(out["Prescott"], out["Haswell"])


@pytest.mark.parametrize("n_obj,n_points", [(3, 20), (5, 20), (5, 40)])
def test_shipped_directions_are_pymoos(n_obj, n_points):
    """The shipped directions are what pymoo (so Kernel Tuner) computes, to the last bits a BLAS changes."""
    shipped = refdirs.reference_directions(n_obj, n_points)
    computed = refdirs.compute(n_obj, n_points)
    assert shipped.shape == computed.shape == (n_points, n_obj)
    assert np.allclose(shipped, computed, rtol=0, atol=1e-9)
    assert np.allclose(shipped.sum(axis=1), 1.0)


def test_runs_never_compute_directions(monkeypatch, space_dir):
    """An NSGA-III run (Kernel Tuner's and the unaware one) takes the shipped directions."""
    from analysis.simulate.jobs import run_batch, space_data
    from analysis.spaces.space import Space

    def refuse(*args):
        raise AssertionError("reference directions computed during a run")

    monkeypatch.setattr(refdirs, "compute", refuse)
    import pymoo.util.ref_dirs as pymoo_ref_dirs
    monkeypatch.setattr(pymoo_ref_dirs, "get_reference_directions", refuse)
    space = Space.load(space_dir / "space.parquet", space_dir / "space.json")
    for algorithm in ("nsga3", "nsga3_unaware"):
        frame = run_batch(space, "O3", O3, algorithm, {"popsize": 20}, 30, 1, proposal_cap=10,
                          data=space_data(space, O3))
        assert frame["budget_used"].max() == 30


def test_missing_pair_names_the_file_and_the_command(tmp_path):
    from analysis.errors import InputError

    with pytest.raises(InputError, match=r"riesz_energy\.json: field 'directions\.3x11'.*analysis\.cli refdirs "
                                         r"--objectives 3 --points 11"):
        refdirs.reference_directions(3, 11)


def test_tampered_directions_are_refused(tmp_path, monkeypatch):
    """A changed file no longer matches its manifest entry: an error naming it, never other runs."""
    from analysis.errors import InputError

    data = tmp_path / "data"
    (data / "refdirs").mkdir(parents=True)
    original = refdirs.REFDIRS_FILE.read_text()
    (data / "refdirs" / "riesz_energy.json").write_text(original.replace("0.11037861872051272", "0.11037861872051273"))
    (data / "MANIFEST.csv").write_text((REPO / "data" / "MANIFEST.csv").read_text())
    monkeypatch.setattr(refdirs, "DATA_DIR", data)
    monkeypatch.setattr(refdirs, "REFDIRS_FILE", data / "refdirs" / "riesz_energy.json")
    refdirs._load.cache_clear()
    try:
        with pytest.raises(InputError, match=r"riesz_energy\.json: field 'sha256'"):
            refdirs.reference_directions(2, 10, path=refdirs.REFDIRS_FILE)
    finally:
        refdirs._load.cache_clear()


if __name__ == "__main__":
    print(json.dumps(golden_digests(Path(sys.argv[1]))))


def test_selection_runs_are_seeded_apart_from_comparison_runs(space_dir):
    """A grid (selection) run and the comparison run of the same setting, budget and repetition differ."""
    from analysis.simulate import derive_seed
    from analysis.simulate.jobs import run_batch, run_identity
    from analysis.spaces.space import Space

    small_space = Space.load(space_dir / "space.parquet", space_dir / "space.json")
    options = {"popsize": 10, "mutation_prob": 0.1}
    comparison = run_identity(small_space, "time", "nsga2", options, 30, 0)
    selection = run_identity(small_space, "time", "nsga2", options, 30, 0, purpose="selection")
    assert "purpose" not in comparison and selection == {**comparison, "purpose": "selection"}
    assert derive_seed(**comparison) != derive_seed(**selection)
    with pytest.raises(ValueError, match="unknown run purpose 'grid'"):
        run_identity(small_space, "time", "nsga2", options, 30, 0, purpose="grid")
    a = run_batch(small_space, "time", ["time"], "nsga2", options, 30, 3)
    b = run_batch(small_space, "time", ["time"], "nsga2", options, 30, 3, purpose="selection")
    assert not set(a["seed"]) & set(b["seed"])
    params = [c for c in a.columns if c.startswith("param.")]
    for rep in range(3):  # no comparison run is a selection run
        assert a[a.repetition == rep][params].values.tolist() != b[b.repetition == rep][params].values.tolist()
