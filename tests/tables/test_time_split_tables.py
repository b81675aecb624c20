"""Table 5 split into compile / verification / benchmark, and Tables 4 and 5 with the compile part rescaled."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.errors import SpaceError
from analysis.spaces.compile_cost import provenance_path, where_measured
from analysis.statistics import Bootstrap
from analysis.tables import comparison as tables
from analysis.tables import compile_sensitivity as sensitivity
from analysis.tables import registry
from helpers import REPO

BOOT = Bootstrap(200, 0)
PARTS = ["eval_compile_ms", "eval_verification_ms", "eval_benchmark_ms"]


def _final(per_pair, budget=4):
    """Finals {device: {setting: [(evaluations, compile, verification, benchmark), ...]}} at one budget."""
    rows = []
    for device, settings in per_pair.items():
        for setting, runs in settings.items():
            for rep, (n, c, v, b) in enumerate(runs):
                rows.append({"device": device, "kernel": "k", "objective_set": "O3", "setting": setting,
                             "algorithm": setting, "budget": budget, "repetition": rep, "evaluations": n,
                             "eval_time_ms": c + v + b, "eval_compile_ms": c, "eval_verification_ms": v,
                             "eval_benchmark_ms": b})
    return pd.DataFrame(rows)


FINAL = _final({
    # medians of the sums are not the sums of the medians here: RS T 500 (C 380, V 20, B 110 -> 510)
    "d1": {"rs": [(4, 300, 20, 80), (4, 380, 10, 110), (4, 450, 30, 120)],
           "nsga2": [(4, 200, 20, 80), (4, 240, 20, 90), (4, 250, 30, 20), (2, 10, 1, 1)]},  # one run cut short
    "d2": {"rs": [(4, 100, 10, 90)] * 3, "nsga2": [(4, 90, 10, 50)] * 3},
    "d3": {"rs": [(4, 100, 0, 0)] * 3, "nsga2": [(3, 10, 0, 0)] * 3},  # no full-budget run of A: left out
})


def _by_hand(final, device):
    full = final[(final["device"] == device) & (final["evaluations"] == final["budget"])]
    med = full.groupby("setting")[["eval_time_ms", *PARTS]].median()
    t_rs = med.loc["rs", "eval_time_ms"]
    saving = (t_rs - med.loc["nsga2", "eval_time_ms"]) / t_rs * 100
    parts = [(med.loc["rs", c] - med.loc["nsga2", c]) / t_rs * 100 for c in PARTS]
    return saving, parts


def test_the_parts_of_table_5_by_hand_and_its_saving_is_table_5s():
    row = tables.eval_time_parts(FINAL, "rs", ["nsga2"], BOOT).iloc[0]
    table5 = tables.eval_time(FINAL, "rs", ["nsga2"], BOOT).iloc[0]
    assert row["n_pairs"] == table5["n_in_thesis_mean"] == 2  # d3 has no full-budget run of A
    assert row["saving_mean_pct"] == table5["thesis_mean_pct"]
    (s1, p1), (s2, p2) = _by_hand(FINAL, "d1"), _by_hand(FINAL, "d2")
    for name, a, b in zip(("compile", "verification", "benchmark"), p1, p2):
        assert row[f"{name}_mean_pct"] == pytest.approx((a + b) / 2, rel=1e-12)
    assert row["verification_benchmark_mean_pct"] == pytest.approx((p1[1] + p1[2] + p2[1] + p2[2]) / 2, rel=1e-12)
    residuals = [s1 - sum(p1), s2 - sum(p2)]
    assert residuals[1] == pytest.approx(0, abs=1e-12) and abs(residuals[0]) > 1  # d1's medians do not add up
    assert row["residual_mean_pct"] == pytest.approx(np.mean(residuals), rel=1e-12)
    assert row["residual_max_abs_pct"] == pytest.approx(abs(residuals[0]), rel=1e-12)
    parts = row["compile_mean_pct"] + row["verification_mean_pct"] + row["benchmark_mean_pct"]
    assert parts + row["residual_mean_pct"] == pytest.approx(row["saving_mean_pct"], rel=1e-12)
    low, high = BOOT.ci(np.array([p1[0], p2[0]]))
    assert (row["compile_ci_low_pct"], row["compile_ci_high_pct"]) == pytest.approx((low, high), rel=1e-12)


def test_finals_without_the_parts_are_refused_with_a_hint():
    with pytest.raises(ValueError, match="rerun the indicators"):
        tables.eval_time_parts(FINAL.drop(columns="eval_benchmark_ms"), "rs", ["nsga2"], BOOT)


def _runs_and_final(spaces):
    """Per-run IGD+ curves at budget 4 with the evaluation time 100 ms per k, of which `compile` ms per k compile:
    {device: {setting: (curve, compile)}}, three repetitions each."""
    rows = []
    for device, settings in spaces.items():
        for setting, (curve, compile_per_k) in settings.items():
            for rep in range(3):
                for k, v in enumerate(curve, start=1):
                    rows.append({"device": device, "kernel": "k", "objective_set": "O3", "setting": setting,
                                 "algorithm": setting, "budget": len(curve), "repetition": rep, "k": k,
                                 "igd_plus": v, "eval_time_ms": 100.0 * k, "eval_compile_ms": compile_per_k * k})
    runs = pd.DataFrame(rows)
    final = runs[runs["k"] == runs["budget"]].copy()
    final["eval_verification_ms"] = 0.0
    final["eval_benchmark_ms"] = final["eval_time_ms"] - final["eval_compile_ms"]
    final["hv"], final["valid_evaluations"], final["evaluations"], final["stopped_early"] = 0.0, 4, 4, False
    return runs, final


SETTINGS = {"rs": "rs", "nsga2": "nsga2"}
SPACES = {"gpu": {"rs": ([5, 4, 3, 2], 60.0), "nsga2": ([4, 2, 2, 1], 90.0)},
          "cpu": {"rs": ([5, 4, 3, 2], 60.0), "nsga2": ([4, 2, 2, 1], 90.0)}}


def test_factor_1_reproduces_tables_4_and_5_exactly():
    runs, final = _runs_and_final(SPACES)
    built = registry.build(final, runs, SETTINGS, BOOT)
    every = {"gpu/k": 1.0, "cpu/k": 1.0}
    out = tables.compile_sensitivity(final, runs, SETTINGS, BOOT, [("one", every)])
    assert (out["published"].to_numpy() == out["scaled"].to_numpy()).all()
    assert set(out["table"]) == {"eval_time", "speedup_to_rs", "speedup_to_rs_spaces"}
    for table, columns in tables.SENSITIVITY_COLUMNS.items():
        published = built[table][0]
        part = out[out["table"] == table]
        for column in columns:
            assert part.loc[part["column"] == column, "published"].tolist() == published[column].tolist()
    # and so does scaling itself: every time as it was, bit for bit
    f1, r1 = tables.scale_compile(final, runs, every)
    pd.testing.assert_frame_equal(f1, final, check_exact=True)
    pd.testing.assert_frame_equal(r1, runs, check_exact=True)


def test_doubling_one_spaces_compile_moves_only_the_rows_it_is_in():
    runs, final = _runs_and_final(SPACES)
    out = tables.compile_sensitivity(final, runs, SETTINGS, BOOT, [("compile x2", {"gpu/k": 2.0})])
    per_space = out[out["table"] == "speedup_to_rs_spaces"]
    assert per_space["device"].tolist() == ["gpu"]  # only the rescaled space's rows
    # k* = 2: T_A = 200 + 2 x 90 compile more, T_RS = 400 + 4 x 60 more: 640 / 380 - 1
    assert per_space["published"].item() == pytest.approx(100.0)
    assert per_space["scaled"].item() == pytest.approx((640 / 380 - 1) * 100)
    kernel = out[(out["table"] == "speedup_to_rs") & (out["column"] == "reached_time_mean_pct")]
    assert kernel["scaled"].item() == pytest.approx(((640 / 380 - 1) * 100 + 100) / 2)  # pooled with cpu's
    t5 = out[(out["table"] == "eval_time") & (out["column"] == "thesis_mean_pct")]
    # at budget 4 both spent 400 ms, RS 240 of them compiling, A 360: doubled, 640 against 760 on gpu, cpu as it was
    assert t5["published"].item() == 0 and t5["scaled"].item() == pytest.approx((640 - 760) / 640 * 100 / 2)
    assert set(out["spaces_scaled"]) == {"gpu/k ×2"}


def _meta(tmp_path, source, compile_file, name="space.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"device": "d", "kernel": "k", "source": {"path": str(source)},
                                "compile_cost": {"files": [{"path": str(compile_file)}]}}))
    return path


def test_where_the_compile_costs_were_measured_comes_from_the_provenance(tmp_path):
    cuda = REPO / "data/sweeps/cuda/nvidia-h200"
    h200 = where_measured(_meta(tmp_path, cuda / "kmeans.json.gz", cuda / "compile/kmeans.json.gz"))
    check = json.loads(provenance_path(cuda / "compile/kmeans.json.gz").read_text())["outside_check"]
    assert h200["elsewhere"] and h200["outside_check_ratio"] == check["ratio"]
    cpu = REPO / "data/sweeps/cpu/amd-epyc-vm"
    epyc = where_measured(_meta(tmp_path, cpu / "kmeans.json.gz", cpu / "compile/kmeans.json.gz", "cpu.json"))
    assert not epyc["elsewhere"] and epyc["outside_check_ratio"] is None
    # the scenarios: the outside check's ratio, then each factor, on the space compiled elsewhere only
    metas = [tmp_path / "space.json", tmp_path / "cpu.json"]
    assert sensitivity.scenarios(metas, [2]) == [(sensitivity.OUTSIDE_CHECK, {"d/k": check["ratio"]}),
                                                 ("compile x2", {"d/k": 2.0})]
    with pytest.raises(SpaceError, match="missing"):
        where_measured(_meta(tmp_path, tmp_path / "nowhere.json.gz", cuda / "compile/kmeans.json.gz", "x.json"))
    assert provenance_path("a/b/kmeans.json.gz") == provenance_path("a/b/kmeans.json") != provenance_path("a/x.json")
