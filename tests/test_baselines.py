"""The baseline archive's format (analysis.simulate.archive) and what docs/baselines.md claims of the quick suite."""

from __future__ import annotations

import base64
import gzip
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
from analysis.indicators.jobs import charged_parts
from analysis.simulate import archive, derive_seed, resolve_options, simulate_run
from analysis.simulate.jobs import run_identity, space_data
from analysis.statistics import a12_lower_better, holm, mann_whitney_p
from helpers import bessel_sweep

RNG = np.random.default_rng(3)


# --- the stored form of configurations ------------------------------------------------------------------------


@pytest.mark.parametrize("distinct", [1, 3, 40])
def test_configurations_come_back_from_their_stored_form(distinct):
    """First visits (in and outside the table), repeats near and far of configurations outside the table,
    repeats of table configurations (only their validity kept), placeholders, over several runs."""
    table_codes = RNG.permutation(1000)[:300].astype(np.int64)
    rows_of = {int(c): i for i, c in enumerate(table_codes)}
    runs = np.repeat(np.arange(4), 250)
    pool = RNG.choice(np.r_[table_codes[:distinct], np.array([5000, 5001])], size=len(runs))
    codes = pool.astype(np.int64)
    codes[[0, 260, 999]] = archive.PLACEHOLDER
    rows = np.array([rows_of.get(int(c), -1) if c >= 0 else -1 for c in codes])
    repeat = pd.DataFrame({"run": runs, "code": codes}).duplicated().to_numpy() & (rows >= 0)
    codes[repeat] = RNG.choice(archive.NOT_KEPT, size=int(repeat.sum()))
    rows[repeat] = -1
    stored = archive.store_configs(codes, runs, rows, len(table_codes))
    assert stored.null_count == 3
    np.testing.assert_array_equal(archive.load_configs(stored, table_codes), codes)


def test_a_strategy_that_proposes_one_configuration_again_stores_small_numbers():
    """Repeats of configurations outside the table refer back; those of the table's keep their validity."""
    outside = np.array([7, 9, 9, 9, 7, 7], dtype=np.int64)
    stored = archive.store_configs(outside, np.zeros(6, dtype=int), np.full(6, -1), 10)
    assert stored.to_pylist() == [17, 19, -3, -3, -4, -4]  # 7 was first visited one distinct visit before 9
    inside = np.array([7, 9, archive.REPEAT_VALID, archive.REPEAT_INVALID], dtype=np.int64)
    assert archive.store_configs(inside, np.zeros(4, dtype=int), np.array([0, 1, -1, -1]), 10).to_pylist() == [
        0, 1, -1, -2]


def test_format_1_back_references_are_still_read():
    """Format 1 stored every repeat as -(1 + r); such an archive reads with every repeat's configuration."""
    table_codes = np.array([7, 9, 3], dtype=np.int64)
    stored = pa.array([0, 1, -1, -1, -2, -2, None], pa.int64())
    np.testing.assert_array_equal(archive.load_configs(stored, table_codes, version=1),
                                  [7, 9, 9, 9, 7, 7, archive.PLACEHOLDER])


# --- whole run files --------------------------------------------------------------------------------------------


def _space_files(tmp: Path):
    space = bessel_sweep()
    base = tmp / "results" / "spaces" / space.device / space.kernel
    base.mkdir(parents=True)
    space.save(base / "space.parquet", base / "space.json")
    return space, f"{space.device}/{space.kernel}"


def _proposed_again(frame: pd.DataFrame) -> pd.DataFrame:
    """A run's trace followed by its first three proposals again, as a strategy that repeats proposes them: served
    from the cache (not a first visit, no time charged), in the table or not as they were."""
    again = frame.iloc[:3].copy()
    again["step"] = np.arange(len(frame), len(frame) + 3)
    again["first_visit"] = False
    again["budget_used"] = frame["budget_used"].iloc[-1]
    again["sim_time_ms"] = frame["sim_time_ms"].iloc[-1]
    return pd.concat([frame, again], ignore_index=True)


def _run_file(tmp: Path, key: str, space, algorithm: str = "nsga2_unaware", budget: int = 12,
              repeats: bool = False) -> str:
    """A run file as rule simulate writes it: three repetitions of a real simulated run (`repeats`: each ending
    with three proposals of configurations it visited before)."""
    frames = []
    data = space_data(space, ["time", "memory", "mre"])
    options = resolve_options(algorithm, {"popsize": 4} if algorithm != "rs" else {})
    for rep in range(3):
        seed = derive_seed(**run_identity(space, "O3", algorithm, options, budget, rep))
        trace = simulate_run(data, algorithm, options, budget, seed)
        frame = trace.to_frame()
        if repeats:
            frame = _proposed_again(frame)
        frame.insert(0, "seed", seed)
        frame.insert(0, "repetition", rep)
        frame["stopped_early"] = False
        frames.append(frame)
    relative = f"runs/{key}/O3/{algorithm}/b{budget}.parquet"
    path = tmp / "results" / relative
    path.parent.mkdir(parents=True)
    pd.concat(frames, ignore_index=True).to_parquet(path, index=False, compression="zstd")
    return relative


def test_an_archive_gives_every_run_file_back_in_its_archived_form(tmp):
    """Every value but the configuration (and its objectives) of a repeat of a configuration of the table."""
    space, key = _space_files(tmp)
    relatives = [_run_file(tmp, key, space, "nsga2_unaware", repeats=True), _run_file(tmp, key, space, "rs")]
    results = tmp / "results"
    out = tmp / "archive.parquet"
    jobs = {rel: {"rule": "simulate", "n": i} for i, rel in enumerate(relatives)}
    meta = archive.write_archive([(results / r, r, jobs[r]) for r in relatives], archive.results_space_of(results),
                                 out, "comparison")
    assert [f["path"] for f in meta["files"]] == relatives
    restored = tmp / "restored"
    shutil.copytree(results / "spaces", restored / "spaces")
    archive.restore(out, restored, archive.results_space_of(restored))
    space_of = archive.results_space_of(results)
    for rel in relatives:
        original = pq.read_table(results / rel)
        back = pq.read_table(restored / rel)
        assert back.schema == original.schema
        pd.testing.assert_frame_equal(back.to_pandas(), archive.archived_form(original, rel, space_of).to_pandas(),
                                      check_exact=True)
        frame, ours = original.to_pandas(), back.to_pandas()
        repeat = ours["param.kmax"].isna().to_numpy()
        inside = frame.filter(like="param.").apply(tuple, axis=1).isin(set(space.table[list(space.parameters)]
                                                                          .apply(tuple, axis=1)))
        np.testing.assert_array_equal(repeat, ~frame["first_visit"] & inside)  # exactly those lose them
        assert repeat.any() == (rel == relatives[0])
        left = ours.columns.str.startswith(("param.", "objective."))
        pd.testing.assert_frame_equal(ours.loc[~repeat], frame.loc[~repeat].astype(ours.dtypes.to_dict()),
                                      check_exact=True)
        assert ours.loc[repeat, ours.columns[left]].isna().all().all()
        pd.testing.assert_frame_equal(ours.loc[:, ~left], frame.loc[:, ~left], check_exact=True)
        # the comparison's indicators read first visits only: their charged parts are the full file's
        first = frame["first_visit"].to_numpy()
        np.testing.assert_array_equal(charged_parts(ours, space.table, list(space.parameters))[first],
                                      charged_parts(frame, space.table, list(space.parameters))[first])
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
    with pytest.raises(ArchiveError, match="tsb_archive.json.gz.b64"):
        archive.read_meta(path)


def test_the_metadata_names_each_file_its_job_and_its_space(tmp):
    space, key = _space_files(tmp)
    rel = _run_file(tmp, key, space)
    results = tmp / "results"
    out = tmp / "a.parquet"
    archive.write_archive([(results / rel, rel, {"algorithm": "nsga2_unaware"})], archive.results_space_of(results),
                          out, "comparison", provenance={"commit": "abc"})
    stored = pq.read_metadata(out).metadata[archive.META_GZIP_KEY]
    meta = json.loads(gzip.decompress(base64.b64decode(stored)))
    assert stored == archive.encode_meta(meta) and meta == archive.read_meta(out)
    assert meta["provenance"] == {"commit": "abc"} and meta["format_version"] == archive.FORMAT_VERSION
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


def test_repack_packs_an_archive_again_and_leaves_no_run_file(tmp):
    space, key = _space_files(tmp)
    rel = _run_file(tmp, key, space, "nsga2_unaware", repeats=True)
    results = tmp / "results"
    first = archive.write_archive([(results / rel, rel, {"rule": "simulate"})], archive.results_space_of(results),
                                  tmp / "first.parquet", "comparison", provenance={"commit": "a"})
    scratch = tmp / "scratch"
    shutil.copytree(results / "spaces", scratch / "spaces")
    again = archive.repack(tmp / "first.parquet", tmp / "again.parquet", scratch, {"commit": "b"})
    assert again["provenance"] == {"commit": "b", "repacked_from": {"commit": "a"}}
    assert [(f["path"], f["job"]) for f in again["files"]] == [(f["path"], f["job"]) for f in first["files"]]
    assert not (scratch / rel).exists()
    space_of = archive.results_space_of(scratch)
    entry = again["files"][0]
    assert archive.read_run_file(tmp / "again.parquet", again, entry, space_of).equals(
        archive.read_run_file(tmp / "first.parquet", first, first["files"][0], space_of))
    (scratch / rel).write_text("mine")  # its folder is left
    with pytest.raises(ArchiveError, match="would be overwritten"):
        archive.repack(tmp / "first.parquet", tmp / "third.parquet", scratch, {})
    assert (scratch / rel).read_text() == "mine" and not (tmp / "third.parquet").exists()


# --- the published archive ------------------------------------------------------------------------------------

ARCHIVE_TARGET_BYTES = 50_000_000  # issue 46: the baseline archive fits in 50 MB


def test_the_published_archive_is_format_2_and_fits_its_50_mb():
    manifest = pd.read_csv(REPOSITORY / "data" / "MANIFEST.csv", dtype={"bytes": int})
    rows = manifest[manifest["path"].str.startswith("baselines/")]
    assert sorted(rows["path"]) == [f"baselines/{s}.parquet" for s in ("comparison", "constraint_aware",
                                                                        "leaderboard")]
    for path, size in zip(rows["path"], rows["bytes"], strict=True):
        file = REPOSITORY / "data" / path
        assert file.stat().st_size == size, path
        assert archive.read_meta(file)["format_version"] == archive.FORMAT_VERSION, path
    assert rows["bytes"].sum() <= ARCHIVE_TARGET_BYTES
