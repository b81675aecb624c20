"""The indicator registry: each entry keeps the shared signature, and the `indicators` stage's columns are the
registry's, in its order, so that a new indicator is a function and an entry."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.indicators import registry
from analysis.indicators.jobs import NormalisedFront, indicators
from analysis.indicators.registry import INDICATORS, Indicator
from analysis.spaces.pareto import Front


def _front():
    points = np.array([[0.0, 1.0], [0.4, 0.4], [1.0, 0.0]])
    front = Front("s", ("a", "b"), points, np.zeros(2), np.ones(2), ("min", "min"), np.arange(3),
                  excluded_failed=0, excluded_nonfinite=0)
    return NormalisedFront(front, points)


def _runs():
    """Two repetitions: one of five evaluations (a failure, a repeat), one whose only evaluation failed."""
    a = [0.5, np.nan, 0.5, 0.2, 0.9, np.nan]
    b = [0.5, np.nan, 0.5, 0.9, 0.1, np.nan]
    return pd.DataFrame({"repetition": [0, 0, 0, 0, 0, 1], "seed": [7] * 5 + [8], "step": [0, 1, 2, 3, 4, 0],
                         "objective.a": a, "objective.b": b, "valid": [True, False, True, True, True, False],
                         "first_visit": [True, True, False, True, True, True],
                         "sim_time_ms": [1.0, 2.0, 2.0, 3.0, 4.0, 1.0]})


@pytest.mark.parametrize("name", list(INDICATORS))
def test_every_indicator_keeps_the_shared_signature(name):
    indicator = INDICATORS[name]
    assert indicator.direction in ("min", "max") and indicator.description
    z = _front().points
    points = np.array([[np.nan, np.nan], [0.5, 0.5], [0.0, 1.0]])
    value = indicator.function(points, z)
    if indicator.anytime:
        assert isinstance(value, np.ndarray) and value.shape == (3,) and value.dtype == float
        assert value[0] == indicator.empty  # an invalid row yields no point: the value of an empty set
    else:
        assert isinstance(value, float)
        assert indicator.function(points[:1], z) == indicator.function(points[:0], z)  # invalid rows count nothing


def test_the_stage_writes_the_registered_indicators_in_registry_order():
    curve, final = indicators(_runs(), _front(), budget=4)
    assert curve.columns.tolist() == ["repetition", "k", "evaluated", "igd_plus", "eval_time_ms"]
    assert final.columns.tolist() == ["repetition", "seed", "evaluations", "valid_evaluations", "igd_plus", "hv",
                                      "eval_time_ms", "stopped_early"]


def test_a_new_indicator_is_one_registry_entry(monkeypatch):
    """An anytime and a final indicator added to the registry appear as columns after the others, with their
    values; an anytime curve is padded with its last value, or with `empty` for a run with no evaluation."""
    before_curve, before_final = indicators(_runs(), _front(), budget=4)

    def valid_so_far(points, reference):
        return np.cumsum(np.isfinite(points).all(axis=1)).astype(float)

    def best_a(points, reference):
        a = points[np.isfinite(points).all(axis=1), 0]
        return float(a.min()) if len(a) else math.inf

    monkeypatch.setitem(registry.INDICATORS, "valid_so_far", Indicator(valid_so_far, "max", True, "valid points",
                                                                       empty=-1.0))
    monkeypatch.setitem(registry.INDICATORS, "best_a", Indicator(best_a, "min", False, "best first objective"))
    curve, final = indicators(_runs(), _front(), budget=4)
    assert curve.columns.tolist() == ["repetition", "k", "evaluated", "igd_plus", "valid_so_far", "eval_time_ms"]
    assert final.columns.tolist() == ["repetition", "seed", "evaluations", "valid_evaluations", "igd_plus", "hv",
                                      "valid_so_far", "best_a", "eval_time_ms", "stopped_early"]
    # the first run's distinct evaluations: valid, failed, valid, valid (the repeat is no new k)
    assert curve.loc[curve["repetition"] == 0, "valid_so_far"].tolist() == [1.0, 1.0, 2.0, 3.0]
    # the second run's one evaluation failed: no point, and the curve holds its value to the budget
    assert curve.loc[curve["repetition"] == 1, "valid_so_far"].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert final["valid_so_far"].tolist() == [3.0, 0.0] and final["best_a"].tolist() == [0.2, math.inf]
    pd.testing.assert_frame_equal(curve.drop(columns="valid_so_far"), before_curve, check_exact=True)
    pd.testing.assert_frame_equal(final.drop(columns=["valid_so_far", "best_a"]), before_final, check_exact=True)
    # a run with no distinct evaluation (its rows all repeats): both anytime curves hold their `empty` value
    runs = _runs()
    runs.loc[runs["repetition"] == 1, "first_visit"] = False
    curve, final = indicators(runs, _front(), budget=2)
    assert curve.loc[curve["repetition"] == 1, "valid_so_far"].tolist() == [-1.0, -1.0]
    assert curve.loc[curve["repetition"] == 1, "igd_plus"].tolist() == [math.inf, math.inf]
