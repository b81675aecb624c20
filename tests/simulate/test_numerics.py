"""The study's runs do not depend on which x86-64 processor makes them (issue #50; analysis/numerics.py).

The cause, found on A100/dedispersion: Kernel Tuner's firefly algorithm measures distances with
`np.linalg.norm`, OpenBLAS's `ddot`, whose summation order is the kernel OpenBLAS picks for the processor.
Under the AVX-512 kernels (an Intel Xeon, a Zen 4 EPYC) the fourth of the study's Firefly runs there goes
elsewhere at its 512th step than under the AVX2 ones (an earlier EPYC, where the study was published).

The golden traces (`golden/continuous_traces.json.gz`) are the configurations, step by step, that the
continuous-position strategies of the constraint-aware study (Firefly, PSO, differential evolution, with and
without constraint awareness) visit in their first repetitions on that space, with the study's options and
settings read from config/config.yaml. They are compared in child processes whose environment asks for the
kernels of each kind of machine; `pin()` must make every one give the golden traces. Without the pin the
AVX-512 kind's Firefly trace differs (the last test shows it where the processor has AVX-512).

Run as a script (`python tests/simulate/test_numerics.py OUT_DIR`) it prints the traces as JSON; with
`--write` it rewrites the golden file (only after an intended change of an algorithm or the data).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis import numerics  # noqa: E402

GOLDEN = Path(__file__).parent / "golden" / "continuous_traces.json.gz"
SPACE = ("A100", "dedispersion")
ALGORITHMS = ("firefly_algorithm", "pso", "diff_evo")
# the first repetitions of each strategy: Firefly's fourth is the one that the BLAS kernel moved
REPETITIONS = 4

# environments that ask for each kind of machine's kernels (the AVX-512 kind's needs such a processor)
KINDS = {
    "avx512-machine": {"OPENBLAS_CORETYPE": "SkylakeX", "NPY_DISABLE_CPU_FEATURES": ""},
    "avx2-machine": {"OPENBLAS_CORETYPE": "Zen", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"},
}


def has_avx512() -> bool:
    return "avx512f" in (numerics.cpu_flags() or ())


def traces(out_dir: Path) -> dict[str, list[int]]:
    """{strategy/repetition: the space rows each step evaluated}, made as the workflow's rules make them."""
    import pandas as pd

    from analysis.config import load
    from analysis.indicators.constraint_aware import space_budget
    from analysis.simulate import constraint_aware
    from analysis.spaces.importers import import_space
    from analysis.spaces.methodology import ScoreSettings
    from analysis.spaces.space import Space

    config = load(REPO / "config" / "config.yaml", workdir=REPO)
    entry = next(s for s in config["spaces"] if (s["device"], s["kernel"]) == SPACE)
    ca = config["constraint_aware"]
    settings = ScoreSettings.from_config({key: ca[key] for key in ("cutoff_percentile", "cutoff_percentile_start",
                                                                   "cutoff_margin", "time_resolution",
                                                                   "confidence_level")})
    parquet, meta, budget = out_dir / "space.parquet", out_dir / "space.json", out_dir / "budget.json"
    import_space(str(REPO / entry["source"]), kernel=SPACE[1], device=SPACE[0], fmt="auto",
                 definition=str(REPO / entry["definition"]), objectives={}).save(parquet, meta)
    space_budget(parquet, meta, None, settings, budget)
    space = Space.load(parquet, meta)
    params = list(space.parameters)
    names = [f"param.{p}" for p in params]
    row = {tuple(v): i for i, v in enumerate(space.table[params].itertuples(index=False, name=None))}
    assert len(row) == len(space.table), "a space's rows are its distinct configurations"
    out = {}
    for label, spec in ca["strategies"].items():
        if spec["algorithm"] not in ALGORITHMS:
            continue
        for aware in (True, False):
            name = f"{label}_{'aware' if aware else 'unaware'}"
            runs_file = out_dir / f"{name}.parquet"
            constraint_aware.run(parquet, meta, None, name, spec["algorithm"], spec["options"], aware, REPETITIONS,
                                 settings, ca["proposal_cap"], runs_file, out_dir / f"{name}.budget.json",
                                 budget=budget)
            runs = pd.read_parquet(runs_file)
            for rep, part in runs.groupby("repetition", sort=True):
                out[f"{name}/{rep}"] = [row[tuple(v)] for v in part[names].itertuples(index=False, name=None)]
    return out


def _in_child(out_dir: Path, env: dict[str, str]) -> tuple[dict[str, list[int]], dict]:
    proc = subprocess.run([sys.executable, str(Path(__file__)), str(out_dir)], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc["traces"], doc["state"]


def _first_difference(got: dict[str, list[int]], want: dict[str, list[int]]) -> str:
    for key in want:
        a, b = got.get(key, []), want[key]
        for step, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"{key} step {step}: row {x}, golden row {y}"
        if len(a) != len(b):
            return f"{key}: {len(a)} steps, golden {len(b)}"
    return f"other runs: {sorted(set(got) ^ set(want))}"


def test_pinned_environment_sets_both_libraries_on_an_avx2_processor():
    env = {"OPENBLAS_CORETYPE": "SkylakeX", "NPY_DISABLE_CPU_FEATURES": "AVX512_SPR,FOO"}
    assert numerics.pinned_environment(env, "x86_64", {"avx2", "fma", "sse2"})
    assert env["OPENBLAS_CORETYPE"] == numerics.OPENBLAS_CORETYPE
    assert env["NPY_DISABLE_CPU_FEATURES"].split() == ["AVX512_SPR", "FOO", "X86_V4", "AVX512_ICL"]


@pytest.mark.parametrize("machine,flags,env", [
    ("aarch64", {"avx2", "fma"}, {}),
    ("x86_64", {"avx", "sse2"}, {}),
    ("x86_64", None, {}),
    ("x86_64", {"avx2", "fma"}, {"TSB_NUMERICS": "native"}),
], ids=["not-x86", "no-avx2", "no-cpuinfo", "native-asked"])
def test_nothing_pinned_where_the_kernels_cannot_or_should_not_be(machine, flags, env):
    before = dict(env)
    assert not numerics.pinned_environment(env, machine, flags)
    assert env == before


def test_cpu_flags_reads_the_first_flags_line(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\nprocessor\t: 1\nflags\t\t: fpu\n")
    assert numerics.cpu_flags(info) == {"fpu", "avx2", "fma"}
    assert numerics.cpu_flags(tmp_path / "missing") is None


def test_this_test_process_is_pinned():
    """conftest imports analysis before anything loads numpy, so in-process tests run the pinned kernels."""
    if not numerics.pinned_environment({}, "x86_64", numerics.cpu_flags()):
        pytest.skip("this processor has no AVX2 and FMA: nothing is pinned")
    state = numerics.state()
    assert state["pinned"], state


def test_numpy_loaded_first_is_reported_not_pinned():
    code = ("import numpy, json, sys; sys.path.insert(0, '.'); from analysis import numerics; "
            "print(json.dumps(numerics.state()))")
    env = {**os.environ, "OPENBLAS_CORETYPE": "Sandybridge", "NPY_DISABLE_CPU_FEATURES": ""}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    state = json.loads(proc.stdout)
    assert state["numpy_loaded_first"] and state["blas"] == ["openblas:Sandybridge"] and not state["pinned"]


@pytest.fixture(scope="module")
def golden() -> dict[str, list[int]]:
    with gzip.open(GOLDEN, "rt") as f:
        return json.load(f)


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(KINDS))
def test_golden_traces_on_every_kind_of_machine(tmp_path, golden, kind):
    if kind == "avx512-machine" and not has_avx512():
        pytest.skip("asking OpenBLAS for AVX-512 kernels needs a processor with AVX-512")
    got, state = _in_child(tmp_path, KINDS[kind])
    assert state["pinned"], state
    assert got == golden, (
        f"the runs changed ({_first_difference(got, golden)}). If intended (an algorithm or the data changed), "
        f"rewrite {GOLDEN.name} with `python {Path(__file__).relative_to(REPO)} OUT --write`; if not, something "
        "of the machine or the environment reached the runs")


@pytest.mark.slow
def test_without_the_pin_the_avx512_kernels_move_a_firefly_run(tmp_path, golden):
    """The cause, shown: the machine's own choice on an AVX-512 processor changes the golden Firefly trace."""
    if not has_avx512():
        pytest.skip("needs a processor with AVX-512")
    got, state = _in_child(tmp_path, {**KINDS["avx512-machine"], "TSB_NUMERICS": "native"})
    assert not state["pinned"] and state["blas"] == ["openblas:SkylakeX"]
    moved = sorted(k for k in golden if got[k] != golden[k])
    assert moved and all(k.startswith("firefly") for k in moved), moved


if __name__ == "__main__":
    traces_now = traces(Path(sys.argv[1]))
    if "--write" in sys.argv:
        GOLDEN.parent.mkdir(exist_ok=True)
        with gzip.GzipFile(GOLDEN, "wb", mtime=0) as f:
            f.write(json.dumps(traces_now, sort_keys=True, separators=(",", ":")).encode())
    print(json.dumps({"traces": traces_now, "state": numerics.state()}))
