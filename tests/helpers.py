"""Helpers shared by the tests: repository paths, hand-made Kernel Tuner caches, the tiny synthetic space.

Import them with `from helpers import ...` (pytest puts tests/ on the path: `pythonpath` in pyproject.toml).
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from kernel_tuner.searchspace import Searchspace

from analysis.fastpath.neighbours import memoise_neighbours
from analysis.simulate import KernelTunerSpace

REPO = Path(__file__).resolve().parents[1]
HUB = REPO / "data" / "benchmark_hub"


def kt_cache(tune_params: dict[str, list], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A Kernel Tuner cache document holding `rows` (parameter values plus measured fields)."""
    keys = list(tune_params)
    cache = {}
    for r in rows:
        entry = {"compile_time": 1.0, "verification_time": 0.0, "benchmark_time": 2.0, **r}
        cache[",".join(str(r[p]) for p in keys)] = entry
    return {"device_name": "Test GPU", "kernel_name": "k", "problem_size": [8], "tune_params_keys": keys,
            "tune_params": tune_params, "objective": "time", "cache": cache}


def write(path: Path, doc: Any, gz: bool = False) -> Path:
    """Write `doc` as JSON (gzipped when asked) and return the path."""
    text = json.dumps(doc)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path



TINY_PARAMS = {"a": [1, 2, 3, 4, 5, 6], "b": [1, 2, 4, 8, 16], "c": [0, 1]}
LIMIT = 24  # keeps diff_evo off Kernel Tuner's np.shuffle bug (popsize == space size)
TINY_RESTRICTIONS = [f"a * b <= {LIMIT}"]
TINY_FAILED = {(3, 8, 1): "RuntimeFailedConfig", (5, 4, 0): "CompilationFailedConfig", (6, 1, 1): "RuntimeFailedConfig"}

def tiny_cache() -> dict:
    """An exhaustive synthetic cache over TINY_PARAMS under TINY_RESTRICTIONS, two objectives, failed entries."""
    entries = {}
    for a, b, c in itertools.product(*TINY_PARAMS.values()):
        if a * b > LIMIT:
            continue
        entry = {"a": a, "b": b, "c": c}
        failure = TINY_FAILED.get((a, b, c))
        if failure:
            entry.update(time=failure, energy=failure)
        else:
            entry.update(time=1.0 + abs(a - 4) + abs(b - 4) / 2 + 0.3 * c, energy=10.0 - a - 0.5 * c + b / 8)
        entry.update(compile_time=100.0 + a, verification_time=1.0, benchmark_time=10.0 * b)
        entries[f"{a},{b},{c}"] = entry
    return {
        "device_name": "Test GPU",
        "kernel_name": "tiny",
        "problem_size": [64],
        "tune_params_keys": list(TINY_PARAMS),
        "tune_params": TINY_PARAMS,
        "objective": "time",
        "cache": entries,
    }


def tiny_space(n_obj: int) -> KernelTunerSpace:
    """The tiny space with one (time) or two (time, energy) objectives, both minimised."""
    objectives = ["time", "energy"][:n_obj]
    return KernelTunerSpace(dict(TINY_PARAMS), list(TINY_RESTRICTIONS), tiny_cache(), objectives, ["min"] * n_obj)



# a space with gaps (restrictions), a single-valued parameter, floats and strings: some configurations have no
# Hamming neighbour, invalid ones are repaired by each of the three neighbour methods
PARAMS = {"a": [1, 2, 3, 4, 5, 6], "b": [1, 2, 4, 8, 16], "c": [7], "d": [0.5, 1.5, 2.5], "e": ["x", "y"]}
RESTRICTIONS = ["a * b <= 24", "b != 4", "d < 2 or a > 2", "e == 'x' or a % 2 == 0"]


def searchspace(memoised: bool) -> Searchspace:
    space = Searchspace(PARAMS, RESTRICTIONS, 1024)
    if memoised:
        memoise_neighbours(space, {})
    return space


def random_rows(seed: int, n: int, valid_share: float) -> np.ndarray:
    """An object array of configurations as pymoo holds them: valid ones and arbitrary value combinations."""
    g = np.random.default_rng(seed)
    space = searchspace(False)
    everything = list(itertools.product(*PARAMS.values()))
    rows = [space.list[g.integers(space.size)] if g.random() < valid_share else everything[g.integers(len(everything))]
            for _ in range(n)]
    return np.array(rows, dtype=object)


# For the constraint-aware study's tests (tests/simulate/test_constraint_aware_runs.py,
# tests/indicators/test_constraint_aware_scores.py, tests/tables/test_constraint_aware_tables.py)
SWEEP = REPO / "data" / "sweeps" / "cpu" / "intel-xeon-vm"


def bessel_sweep():
    """The real host-CPU Bessel sweep (448 configurations, constraints on the precision order)."""
    from analysis.spaces.importers import import_space

    return import_space(SWEEP / "bessel.json.gz", definition=SWEEP / "bessel.yaml", kernel="bessel",
                        device="intel-xeon-vm")


def ca_config(**ca) -> dict:
    """A minimal study config with one space and the constraint_aware section `ca`."""
    return {"spaces": [{"kernel": "convolution", "device": "A100", "source": "x.json"}], "constraint_aware": ca}


# The leaderboard's tables and figures on hand-made scores (tests/tables, tests/figures): entries of each family, eight
# spaces, and scores drawn once.
LB_SPACES = [f"GPU{i}/k" for i in range(8)]


def _lb_entry(family: str, display: str, **extra) -> dict:
    return {"family": family, "display": display, "kt_name": display, "options": {}, "repetitions": 25,
            "source": "runs", "fewer_runs": False, "max_budget_evaluations": None, **extra}


LB_ENTRIES = {
    "a": _lb_entry("Kernel Tuner", "A"),
    "b": _lb_entry("Kernel Tuner", "B"),
    "c": _lb_entry("Kernel Tuner", "C"),
    "ca_de_aware": _lb_entry("constraint-aware", "DE tuned (aware)"),
    "pyatf_differential_evolution": _lb_entry("pyATF", "pyATF DE"),
}


def lb_scores(values: dict[str, list[float]], budgets: list[int] | None = None) -> pd.DataFrame:
    """Score rows as lb-score writes them, one per entry and space (a NaN score: missing with a reason)."""
    rows = []
    for entry, scores in values.items():
        for space, value, budget in zip(LB_SPACES, scores, budgets or [100] * len(LB_SPACES), strict=False):
            rows.append({"entry": entry, "space": space, "runs": 25, "failed_runs": 0, "score": value,
                         "score_ci_low": value - 0.1, "score_ci_high": value + 0.1, "score_resamples": 20,
                         "missing_reason": "" if not math.isnan(value) else "1 of 25 runs failed: ValueError: x",
                         "budget_evaluations": budget, "stopped_early": 0, "stop_reasons": "time_limit:25",
                         "mean_distinct_evaluations": 50.0, "rejected_attempts": 0})
    return pd.DataFrame(rows)


_LB_RNG = np.random.default_rng(3)
LB_VALUES = {name: list(np.round(_LB_RNG.normal(loc, 0.3, len(LB_SPACES)), 3))
             for name, loc in zip(LB_ENTRIES, [0.8, 0.7, -0.5, 0.4, -1.0], strict=True)}


def one_error_line(err: str) -> str:
    """The one line of a command's standard error that reports an error (its logger's " ERROR " level)."""
    lines = [ln for ln in err.splitlines() if " ERROR " in ln]
    assert len(lines) == 1, err
    return lines[0]


def check_bad_arguments(main, argv: list[str], message: str, folder: Path, capfd) -> None:
    """`main(argv)` (a CLI's entry point, run in `folder`) ends with status 2 and one error line holding `message`,
    and writes nothing."""
    assert main(argv) == 2
    assert message in one_error_line(capfd.readouterr().err)
    assert not any(folder.iterdir())
