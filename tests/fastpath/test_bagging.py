"""The `bagging` group: the methodology's isotonic curve and bagged prediction interval, replicated, give the
library's numbers bit for bit and leave NumPy's global generator where the library leaves it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from autotuning_methodology.curves import StochasticOptimizationAlgorithm

from analysis.fastpath import bagging
from analysis.indicators.methodology import resampled_scores, score_runs
from analysis.simulate.constraint_aware import run
from analysis.spaces.methodology import ScoreSettings
from helpers import bessel_sweep


def _curve(minimization: bool = True) -> StochasticOptimizationAlgorithm:
    """A curve object for the methods under test (they read only `minimization` and the interval helper)."""
    curve = StochasticOptimizationAlgorithm.__new__(StochasticOptimizationAlgorithm)
    curve.minimization = minimization
    return curve


def _points(rng: np.random.Generator, runs: int, length: int, size: int) -> tuple[np.ndarray, ...]:
    """Points as a curve over time has them: each run's clock (rounded, so that times tie across runs) against the
    rank of its best value so far."""
    x = np.concatenate([np.round(np.cumsum(rng.exponential(1.0, length)), 1) for _ in range(runs)])
    y = np.concatenate([np.minimum.accumulate(rng.integers(0, size, length)).astype(float) for _ in range(runs)])
    return x, y, np.linspace(x.min(), x.max(), 500)


CASES = [(3, 5, 4, 1), (1, 40, 30, 1), (20, 60, 900, 20), (50, 200, 5000, 50), (7, 2, 3, 2), (30, 30, 1, 30)]


@pytest.mark.parametrize("runs, length, size, repeats", CASES)
@pytest.mark.parametrize("minimization", [True, False])
def test_the_replicas_are_the_librarys_bit_for_bit(runs, length, size, repeats, minimization) -> None:
    rng = np.random.default_rng(runs * 1000 + length)
    x, y, t = _points(rng, runs, length, size)
    curve = _curve(minimization)
    got = []
    for method in (bagging._STOCK["_get_prediction_interval_bagging"], bagging.get_prediction_interval_bagging):
        np.random.seed(11)
        interval = method(curve, x, y, t, 0.95, repeats)
        got.append((interval, np.random.get_state()[1].copy(), np.random.random()))
    (stock, stock_state, stock_next), (fast, fast_state, fast_next) = got
    assert stock.dtype == fast.dtype and stock.tobytes() == fast.tobytes()
    assert np.array_equal(stock_state, fast_state) and stock_next == fast_next  # the same draws, no more
    bounds = {"ymin": y.min(), "ymax": y.max()}
    assert (bagging._STOCK["get_isotonic_curve"](curve, x, y, t, **bounds).tobytes()
            == bagging.get_isotonic_curve(curve, x, y, t, **bounds).tobytes())
    assert (bagging._STOCK["get_isotonic_curve"](curve, x, y, t).tobytes()
            == bagging.get_isotonic_curve(curve, x, y, t).tobytes())


def test_input_the_replicas_do_not_handle_goes_to_the_library() -> None:
    x, y, t = _points(np.random.default_rng(0), 4, 10, 50)
    curve = _curve()
    with pytest.raises(ValueError, match="NaN"):  # scikit-learn's own complaint, not the replica's
        bagging.get_isotonic_curve(curve, x, np.where(y > y.min(), y, np.nan), t)
    np.random.seed(3)
    stock = bagging._STOCK["_get_prediction_interval_bagging"](curve, x, y.astype(np.float32), t, 0.95, 4)
    np.random.seed(3)
    assert bagging.get_prediction_interval_bagging(curve, x, y.astype(np.float32), t, 0.95, 4).tobytes() == \
        stock.tobytes()


@pytest.fixture(scope="module")
def bessel_runs(tmp_path_factory):
    """The study's own input: Bessel's space, and 12 runs of each of two constraint-aware strategies on it."""
    folder = tmp_path_factory.mktemp("bessel")
    space = bessel_sweep()
    meta, parquet = folder / "space.json", folder / "space.parquet"
    space.save(parquet, meta)
    settings = ScoreSettings(time_resolution=200)
    runs = {}
    for name, algorithm in (("ga", "genetic_algorithm"), ("rs", "rs")):
        run(parquet, meta, None, name, algorithm, {}, True, 12, settings, 10.0, folder / f"{name}.parquet",
            folder / f"{name}.json")
        runs[name] = pd.read_parquet(folder / f"{name}.parquet")
    return space, runs, settings


def test_scores_and_resamples_of_real_runs_are_the_librarys(bessel_runs, monkeypatch) -> None:
    """Scored with the replicas and with the library (TSB_STOCK=bagging): the same curves, bounds, scores and
    resampled scores."""
    space, runs, settings = bessel_runs
    scored, resampled = [], []
    for stock in ("", "bagging"):
        monkeypatch.setenv("TSB_STOCK", stock)
        scored.append(score_runs(space, "time", runs, settings, seed=5)[0])
        resampled.append(resampled_scores(space, "time", runs, settings, {"ga": 1, "rs": 2}, resamples=3))
    for name in runs:
        for key in ("curve", "lower", "upper"):
            assert scored[0]["strategies"][name][key].tobytes() == scored[1]["strategies"][name][key].tobytes()
        assert scored[0]["strategies"][name]["score"] == scored[1]["strategies"][name]["score"]
    pd.testing.assert_frame_equal(resampled[0], resampled[1], check_exact=True)
    assert resampled[0]["score"].nunique() > 2
