"""The parts of a run's evaluation time: compile, verification and benchmark sum back to the simulated clock."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.errors import InputError
from analysis.indicators import jobs
from analysis.objectives import EVALUATION_TIME_COLUMNS
from analysis.simulate import jobs as simulate
from analysis.spaces import fronts
from analysis.spaces.importers import import_space
from helpers import HUB

SETTINGS = {"rs": "rs", "nsga2_unaware": "nsga2_unaware"}


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory):
    """Convolution on the A100 imported and simulated as the workflow does: RS and constraint-unaware NSGA-II,
    which proposes configurations the space lacks (infeasible, charged nothing) and revisits known ones."""
    work = tmp_path_factory.mktemp("parts")
    space = import_space(HUB / "cachefiles/convolution_milo/A100.json.gz", kernel="convolution", device="A100",
                         definition=HUB / "kernels/convolution_milo.json")
    sp, sm = work / "space.parquet", work / "space.json"
    space.save(sp, sm)
    fronts.run(sp, sm, {"time": ["time"]}, work / "fronts.parquet", work / "fronts.json")
    files = []
    for setting, options in (("rs", {}), ("nsga2_unaware", {"popsize": 10, "mutation_prob": 0.1})):
        out = work / "runs" / setting / "b40.parquet"
        out.parent.mkdir(parents=True)
        simulate.run(sp, sm, "time", ["time"], SETTINGS[setting], [options], [40], 3, [out])
        files.append(out)
    return work, files


def _indicators(work, files, space_parquet):
    curve, final = work / "c.parquet", work / "f.parquet"
    jobs.run(files, SETTINGS, space_parquet, work / "space.json", work / "fronts.parquet", work / "fronts.json",
             "time", curve, final)
    return pd.read_parquet(curve), pd.read_parquet(final)


def test_the_parts_sum_back_to_the_clock_of_real_runs(real_runs):
    work, files = real_runs
    runs = pd.concat([pd.read_parquet(f).assign(setting=f.parent.name) for f in files], ignore_index=True)
    table = pd.read_parquet(work / "space.parquet")
    params = list(json.loads((work / "space.json").read_text())["parameters"])
    keys = set(map(tuple, table[params].to_numpy().tolist()))
    proposed = set(map(tuple, runs[[f"param.{p}" for p in params]].to_numpy().tolist()))
    assert proposed - keys, "the unaware runs should propose configurations the space lacks"
    assert (~runs["first_visit"]).any(), "and revisit some"

    curve, final = _indicators(work, files, work / "space.parquet")
    parts = final[list(jobs.PART_COLUMNS)].sum(axis=1)
    assert np.allclose(parts, final["eval_time_ms"], rtol=1e-12, atol=0)
    assert (final[["eval_compile_ms", "eval_benchmark_ms"]] > 0).all().all()  # this space records no verification
    # per k, the compile part rises with the clock and never exceeds it
    assert (curve[jobs.CURVE_COMPILE] <= curve["eval_time_ms"] * (1 + 1e-12)).all()
    last = curve[curve["k"] == curve["budget"]].reset_index(drop=True)
    assert last[jobs.CURVE_COMPILE].tolist() == final["eval_compile_ms"].tolist()
    # each run's compile part by hand: its distinct configurations' compile times in the space table
    table_ms = {tuple(row[:-1]): row[-1] for row in
                table[[*params, EVALUATION_TIME_COLUMNS["compile_time"]]].to_numpy().tolist()}
    for (setting, rep), run in runs.groupby(["setting", "repetition"]):
        visited = run.sort_values("step")[run.sort_values("step")["first_visit"]].head(40)
        expected = sum(table_ms.get(tuple(c), 0.0) for c in visited[[f"param.{p}" for p in params]].to_numpy().tolist())
        got = final[(final["setting"] == setting) & (final["repetition"] == rep)]["eval_compile_ms"].item()
        assert got == pytest.approx(expected, rel=1e-12)


def test_a_space_table_that_does_not_match_the_clock_is_refused_naming_the_run_file(real_runs, tmp_path):
    work, files = real_runs
    table = pd.read_parquet(work / "space.parquet")
    runs = pd.read_parquet(files[0])
    params = list(json.loads((work / "space.json").read_text())["parameters"])
    first = runs.iloc[0]
    row = (table[params] == pd.Series({p: first[f"param.{p}"] for p in params})).all(axis=1)
    table.loc[row, EVALUATION_TIME_COLUMNS["benchmark_time"]] += 1.0  # another space's benchmark time
    table.to_parquet(tmp_path / "other.parquet")
    with pytest.raises(InputError, match="sim_time_ms") as info:
        _indicators(work, files, tmp_path / "other.parquet")
    assert str(files[0]) in str(info.value) and "repetition" in str(info.value)
    with pytest.raises(InputError, match="benchmark_time_ms"):
        _indicators(work, files, _without(table, "benchmark_time_ms", tmp_path))


def _without(table, column, folder):
    path = folder / f"without_{column}.parquet"
    table.drop(columns=column).to_parquet(path)
    return path


def test_a_run_cut_short_keeps_its_last_parts_and_an_empty_run_has_none():
    parts = np.array([[1.0, 1.0, 1.0], [2.0, 1.0, 1.0]])  # per distinct evaluation: compile, verification, benchmark
    compile_curve, final = jobs._parts_of_run(parts, np.array([3.0, 7.0]), 2, 3, 0)
    assert compile_curve.tolist() == [1.0, 3.0, 3.0]  # padded to the budget like the clock
    assert final == {"eval_compile_ms": 3.0, "eval_verification_ms": 2.0, "eval_benchmark_ms": 2.0}
    with pytest.raises(ValueError, match="repetition 5: .* distinct evaluation 2"):
        jobs._parts_of_run(parts, np.array([3.0, 7.5]), 2, 3, 5)
    compile_curve, final = jobs._parts_of_run(np.empty((0, 3)), np.empty(0), 0, 2, 0)
    assert np.isnan(compile_curve).all() and all(np.isnan(v) for v in final.values())
