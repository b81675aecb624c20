"""Anytime IGD+ and final hypervolume: by hand, against moocore and pymoo, and on traces."""

from __future__ import annotations

import math

import moocore
import numpy as np
import pandas as pd
import pytest
from pymoo.indicators.igd_plus import IGDPlus

from analysis.indicators.hypervolume import HV_REFERENCE
from analysis.indicators.igd import igd_plus, igd_plus_curve
from analysis.indicators.jobs import NormalisedFront, indicators, load_front, run_indicators
from analysis.spaces.fronts import compute_fronts
from analysis.spaces.importers import import_space
from analysis.spaces.pareto import Front, true_front
from helpers import HUB


def test_igd_plus_worked_by_hand():
    z = np.array([[0.0, 1.0], [1.0, 0.0]])
    pts = np.array([[np.nan, 0.0],  # invalid: no approximation set yet
                    [0.5, 0.5],      # d+ = 0.5 to both reference points -> 0.5
                    [2.0, 2.0],      # dominated by (0.5, 0.5): no change
                    [0.0, 1.0]])     # hits (0,1): d+ = 0 there, 0.5 still to (1,0) -> 0.25
    curve = igd_plus_curve(pts, z)
    assert curve[0] == math.inf
    assert curve[1:].tolist() == [0.5, 0.5, 0.25]
    # d+ ignores the part of a point that is better than the reference point
    assert igd_plus(np.array([[-1.0, 1.5]]), np.array([[0.0, 1.0]])) == pytest.approx(0.5)


@pytest.mark.parametrize("m,r", [(2, 50), (3, 400), (5, 2500)])
def test_prefix_igd_plus_equals_moocore_and_pymoo(m, r):
    rng = np.random.default_rng(m)
    z = rng.random((r, m))
    pts = rng.random((120, m)) * 1.6 - 0.2
    pts[rng.random(120) < 0.15] = np.nan  # invalid evaluations
    curve = igd_plus_curve(pts, z)
    pymoo_igd = IGDPlus(z)
    for k in range(1, len(pts) + 1):
        prefix = pts[:k][np.isfinite(pts[:k]).all(axis=1)]
        if len(prefix) == 0:
            assert curve[k - 1] == math.inf
            continue
        expected = moocore.igd_plus(prefix, ref=z)
        assert curve[k - 1] == pytest.approx(expected, rel=1e-12, abs=0)
        assert curve[k - 1] == pytest.approx(pymoo_igd(prefix), rel=1e-12, abs=0)


def _front(points, ideal, nadir):
    points = np.asarray(points, float)
    front = Front("s", ("a", "b"), points, np.asarray(ideal, float), np.asarray(nadir, float), ("min", "min"),
                  np.arange(len(points)), excluded_failed=0, excluded_nonfinite=0)
    return NormalisedFront(front, points)


def _trace(rows):
    """A one-repetition trace: (a, b, valid, first_visit) per evaluation."""
    a, b, valid, first = zip(*rows)
    cum = np.cumsum([10.0 if f else 0.0 for f in first])
    return pd.DataFrame({"step": range(len(rows)), "objective.a": a, "objective.b": b, "valid": valid,
                         "first_visit": first, "sim_time_ms": cum})


def test_run_indicators_counts_distinct_evaluations_and_pads_early_stops():
    front = _front([[0.0, 1.0], [1.0, 0.0]], ideal=[0, 0], nadir=[1, 1])
    trace = _trace([(0.5, 0.5, True, True),
                    (0.5, 0.5, True, False),        # a repeat: free, no new k
                    (np.nan, np.nan, False, True),  # infeasible/failed: costs one, yields nothing
                    (0.0, 1.0, True, True)])
    curve, final = run_indicators(trace, front, budget=5)
    assert curve["k"].tolist() == [1, 2, 3, 4, 5]
    assert curve["igd_plus"].tolist() == [0.5, 0.5, 0.25, 0.25, 0.25]
    assert curve["evaluated"].tolist() == [1, 2, 3, 3, 3]  # stopped after 3 distinct evaluations
    assert curve["eval_time_ms"].tolist() == [10, 20, 30, 30, 30]
    assert final["evaluations"] == 3 and final["valid_evaluations"] == 2
    expected_hv = moocore.hypervolume(np.array([[0.5, 0.5], [0.0, 1.0]]), ref=[HV_REFERENCE] * 2)
    assert final["hv"] == pytest.approx(expected_hv)


def test_a_run_files_indicators_are_each_runs_in_repetition_order():
    """`indicators` over a whole run file (rows shuffled, repetitions out of order, an early stop, repeats,
    failures) equals `run_indicators` of each repetition's rows, concatenated: same columns, types, values."""
    front = _front([[0.0, 1.0], [0.4, 0.4], [1.0, 0.0]], ideal=[0, 0], nadir=[1, 1])
    rng = np.random.default_rng(7)
    frames = []
    for rep in (3, 0, 2, 1):
        n = 4 + rep * 3
        rows = [(float(a), float(b), bool(v), bool(f)) for a, b, v, f in
                zip(rng.random(n), rng.random(n), rng.random(n) > 0.2, rng.random(n) > 0.3)]
        trace = _trace(rows)
        trace.loc[~trace["valid"], ["objective.a", "objective.b"]] = np.nan
        trace.insert(0, "repetition", rep)
        trace.insert(1, "seed", 100 + rep)
        trace["stopped_early"] = rep == 2
        frames.append(trace)
    runs = pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=3).reset_index(drop=True)
    budget = 12
    curves, finals = [], []
    for rep, trace in runs.groupby("repetition", sort=True):
        curve, final = run_indicators(trace, front, budget)
        curve.insert(0, "repetition", rep)
        curves.append(curve)
        finals.append({"repetition": rep, "seed": int(trace["seed"].iloc[0]), **final,
                       "stopped_early": bool(trace["stopped_early"].iloc[0])})
    curve, final = indicators(runs, front, budget)
    pd.testing.assert_frame_equal(curve, pd.concat(curves, ignore_index=True), check_exact=True)
    pd.testing.assert_frame_equal(final, pd.DataFrame(finals), check_exact=True)
    assert final["stopped_early"].tolist() == [False, False, True, False]
    with pytest.raises(KeyError, match="objective.b"):
        indicators(runs.drop(columns="objective.b"), front, budget)


def test_normalisation_uses_ideal_and_nadir_and_range_one_when_equal():
    front = _front([[0.0, 0.0]], ideal=[2.0, 5.0], nadir=[4.0, 5.0])
    assert front.normalise(np.array([[3.0, 6.0]])).tolist() == [[0.5, 1.0]]


def test_stored_front_equals_a_fresh_true_front(tmp_path):
    space = import_space(HUB / "cachefiles/convolution_milo/A100.json.gz", kernel="convolution", device="A100",
                         definition=HUB / "kernels/convolution_milo.json")
    table, summary = compute_fronts(space, {"time": ["time"]})
    space.save(tmp_path / "s.parquet", tmp_path / "s.json")
    table.to_parquet(tmp_path / "f.parquet")
    import json

    (tmp_path / "f.json").write_text(json.dumps(summary))
    front = load_front(tmp_path / "s.json", tmp_path / "f.parquet", tmp_path / "f.json", "time")
    direct = true_front(space, "time", ["time"])
    assert np.array_equal(front.points, np.unique(direct.normalise(direct.points), axis=0))
    assert front.points.tolist() == [[0.0]]
