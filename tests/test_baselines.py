"""The baseline archive's format (analysis.simulate.archive) and what docs/baselines.md claims of the quick suite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.baselines import REPOSITORY, joined
from analysis.config import merge_files, validate
from analysis.errors import ArchiveError
from analysis.simulate import archive, derive_seed, resolve_options, simulate_run
from analysis.simulate.jobs import run_identity, space_data
from analysis.statistics import a12_lower_better, holm, mann_whitney_p
from helpers import bessel_sweep

RNG = np.random.default_rng(3)


# --- the stored form of configurations ------------------------------------------------------------------------


@pytest.mark.parametrize("distinct", [1, 3, 40])
def test_configurations_come_back_from_their_stored_form(distinct):
    """First visits (in and outside the table), repeats near and far, placeholders, over several runs."""
    table_codes = RNG.permutation(1000)[:300].astype(np.int64)
    rows_of = {int(c): i for i, c in enumerate(table_codes)}
    runs = np.repeat(np.arange(4), 250)
    pool = RNG.choice(np.r_[table_codes[:distinct], np.array([5000, 5001])], size=len(runs))
    codes = pool.astype(np.int64)
    codes[[0, 260, 999]] = -1  # placeholder rows
    rows = np.array([rows_of.get(int(c), -1) if c >= 0 else -1 for c in codes])
    stored = archive.store_configs(codes, runs, rows, len(table_codes))
    assert stored.null_count == 3
    np.testing.assert_array_equal(archive.load_configs(stored, table_codes), codes)


def test_a_strategy_that_proposes_one_configuration_again_stores_small_numbers():
    codes = np.array([7, 9, 9, 9, 7, 7], dtype=np.int64)
    stored = archive.store_configs(codes, np.zeros(6, dtype=int), np.array([0, 1, 1, 1, 0, 0]), 10)
    assert stored.to_pylist() == [0, 1, -1, -1, -2, -2]  # 7 was first visited one distinct visit before 9


# --- whole run files --------------------------------------------------------------------------------------------


def _space_files(tmp: Path):
    space = bessel_sweep()
    base = tmp / "results" / "spaces" / space.device / space.kernel
    base.mkdir(parents=True)
    space.save(base / "space.parquet", base / "space.json")
    return space, f"{space.device}/{space.kernel}"


def _run_file(tmp: Path, key: str, space, algorithm: str = "nsga2_unaware", budget: int = 12) -> str:
    """A run file as rule simulate writes it: three repetitions of a real simulated run."""
    frames = []
    data = space_data(space, ["time", "memory", "mre"])
    options = resolve_options(algorithm, {"popsize": 4} if algorithm != "rs" else {})
    for rep in range(3):
        seed = derive_seed(**run_identity(space, "O3", algorithm, options, budget, rep))
        trace = simulate_run(data, algorithm, options, budget, seed)
        frame = trace.to_frame()
        frame.insert(0, "seed", seed)
        frame.insert(0, "repetition", rep)
        frame["stopped_early"] = False
        frames.append(frame)
    relative = f"runs/{key}/O3/{algorithm}/b{budget}.parquet"
    path = tmp / "results" / relative
    path.parent.mkdir(parents=True)
    pd.concat(frames, ignore_index=True).to_parquet(path, index=False, compression="zstd")
    return relative


def test_an_archive_gives_every_run_file_back_exactly(tmp):
    space, key = _space_files(tmp)
    relatives = [_run_file(tmp, key, space, "nsga2_unaware"), _run_file(tmp, key, space, "rs")]
    results = tmp / "results"
    out = tmp / "archive.parquet"
    jobs = {rel: {"rule": "simulate", "n": i} for i, rel in enumerate(relatives)}
    meta = archive.write_archive([(results / r, r, jobs[r]) for r in relatives], archive.results_space_of(results),
                                 out, "comparison")
    assert [f["path"] for f in meta["files"]] == relatives
    restored = tmp / "restored"
    shutil.copytree(results / "spaces", restored / "spaces")
    archive.restore(out, restored, archive.results_space_of(restored))
    for rel in relatives:
        pd.testing.assert_frame_equal(pd.read_parquet(restored / rel), pd.read_parquet(results / rel),
                                      check_exact=True)
    # the unaware runs propose configurations outside the space's constraints: kept, with their codes
    unaware = pd.read_parquet(results / relatives[0])
    assert not unaware["valid"].all()
    assert archive.restorable(out, jobs) == relatives
    assert archive.restorable(out, {relatives[0]: {"rule": "simulate", "n": 5}}) == []


def test_a_space_that_changed_is_refused_by_name(tmp):
    space, key = _space_files(tmp)
    rel = _run_file(tmp, key, space)
    results = tmp / "results"
    out = tmp / "archive.parquet"
    archive.write_archive([(results / rel, rel, {})], archive.results_space_of(results), out, "comparison")
    changed = tmp / "changed"
    shutil.copytree(results / "spaces", changed / "spaces")
    base = changed / "spaces" / key
    table = pd.read_parquet(base / "space.parquet")
    table.loc[0, "time_ms"] += 1.0
    table.to_parquet(base / "space.parquet", index=False)
    with pytest.raises(ArchiveError, match="fingerprint") as err:
        archive.restore(out, changed, archive.results_space_of(changed))
    assert str(base / "space.json") in str(err.value)
    assert not (changed / rel).exists()  # nothing half-written


def test_a_value_outside_the_space_is_an_error_naming_file_and_column(tmp):
    space, key = _space_files(tmp)
    rel = _run_file(tmp, key, space)
    results = tmp / "results"
    frame = pd.read_parquet(results / rel)
    column = next(c for c in frame.columns if c.startswith("param."))
    frame.loc[3, column] = 12345
    frame.to_parquet(results / rel, index=False)
    with pytest.raises(ArchiveError, match=column) as err:
        archive.write_archive([(results / rel, rel, {})], archive.results_space_of(results), tmp / "a.parquet", "x")
    assert rel in str(err.value)
    assert not (tmp / "a.parquet").exists()


def test_a_file_that_is_not_an_archive_is_named(tmp):
    path = tmp / "not.parquet"
    path.write_text("hello")
    with pytest.raises(ArchiveError, match="not.parquet"):
        archive.read_meta(path)
    pq.write_table(pa.table({"x": [1]}), path)
    with pytest.raises(ArchiveError, match="tsb_archive"):
        archive.read_meta(path)


def test_the_metadata_names_each_file_its_job_and_its_space(tmp):
    space, key = _space_files(tmp)
    rel = _run_file(tmp, key, space)
    results = tmp / "results"
    out = tmp / "a.parquet"
    archive.write_archive([(results / rel, rel, {"algorithm": "nsga2_unaware"})], archive.results_space_of(results),
                          out, "comparison", provenance={"commit": "abc"})
    meta = json.loads(pq.read_metadata(out).metadata[archive.META_KEY])
    assert meta["provenance"] == {"commit": "abc"}
    (entry,) = meta["files"]
    assert entry["job"] == {"algorithm": "nsga2_unaware"}
    (part,) = [meta["parts"][i] for i in entry["parts"]]
    assert part["space"] == key and part["fingerprint"] == archive.fingerprint(space)
    assert {"step", "first_visit", "budget_used", "valid", "sim_time_ms"} <= set(part["derived"])


# --- the quick suite's power (docs/baselines.md#the-quick-suite) ----------------------------------------------


def test_thirty_runs_a_side_can_show_a_large_difference_after_holm():
    runs = np.arange(30.0)
    shift = next(s for s in np.arange(0.5, 30, 1.0) if a12_lower_better(runs, runs + s) >= 0.71)
    large = mann_whitney_p(runs, runs + shift)
    assert large < 0.01 <= 0.05 / 5  # below Holm's first threshold for five settings
    assert holm([large, 0.5, 0.5, 0.5, 0.5])[0] < 0.05
    assert mann_whitney_p(runs, runs + 100) < 1e-10  # a complete separation
    assert mann_whitney_p(np.arange(3.0), np.arange(3.0) + 100) >= 0.1  # the tiny config's 3 runs: never


def test_a_compared_strategy_joins_the_suites_own_settings():
    """An overlay's mapping replaces a default: the constraint-aware study's default strategies must be listed."""
    files = [str(REPOSITORY / "config/quick.yaml")]
    base = validate(merge_files(files), files=files, workdir=REPOSITORY)
    single = joined(base, "mine", "mine.py", {"x": 1}, multi_objective=False)["constraint_aware"]["strategies"]
    assert list(single) == [*base["constraint_aware"]["strategies"], "mine"] and len(single) == 5
    assert single["mine"] == {"algorithm": "mine.py", "options": {"x": 1}}
    multi = joined(base, "mine", "mine.py", None, multi_objective=True)["simulation"]["algorithms"]
    assert list(multi) == ["rs", "nsga2", "nsga3", "nsga2_unaware", "nsga3_unaware", "mine"]
