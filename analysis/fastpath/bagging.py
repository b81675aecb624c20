"""The methodology's isotonic curves and bagged prediction interval, fitted without refitting from scratch.

A score (analysis.indicators.methodology.score_space) asks autotuning_methodology for each strategy's curve over
time; `StochasticOptimizationAlgorithm.get_curve_over_time` fits one isotonic regression (scikit-learn's
`IsotonicRegression`) to all the runs' points, then bags it: a `BaggingRegressor` of max(runs, 3) isotonic fits,
each on a bootstrap draw of 1/sqrt(estimators) of the points, whose mean prediction is the curve. Each fit
validates its input, sorts its points and builds an interpolator; the package then predicts with every fitted
estimator twice (once inside the bagging's mean, once for the interval). That is most of a score's time.

The replicas here compute the same numbers with the same library code, in the same order, but:

- the points are sorted once (`np.lexsort((y, x))`, stable; the isotonic curve and the bagging share the sort)
  and each bootstrap draw takes its points in that order, where scikit-learn sorts each draw's points anew: a
  stable sort of a subset is the subset of the stable sort, so every fit sees the same arrays; a draw's points
  and their weights (how often each was drawn) come from `np.unique` of their sorted positions, where
  scikit-learn counts over all points and drops those of weight 0;
- each estimator predicts once; its prediction is used for the mean and for the interval;
- the input validation scikit-learn repeats per estimator is done once (inputs that are not plain finite float64
  arrays, or a joblib context that would split the estimators over jobs, go to the library's own code).

Everything else is the library's: the bootstrap draws are `sklearn.ensemble._bagging._generate_bagging_indices`
on seeds drawn as `BaggingRegressor.fit` draws them (from NumPy's global generator, which the score seeds), the
duplicate merging is scikit-learn's `_make_unique`, the fit is SciPy's `isotonic_regression` (what scikit-learn
calls), the interpolation scikit-learn's `interp1d`, and the mean is summed in the order `BaggingRegressor.predict`
sums it. tests/fastpath/test_bagging.py compares the replicas with the library (TSB_STOCK=bagging) on the
study's own curves, bit for bit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from autotuning_methodology.curves import Curve, StochasticOptimizationAlgorithm
from joblib import effective_n_jobs
from scipy import interpolate, optimize
from sklearn._isotonic import _make_unique
from sklearn.ensemble._bagging import MAX_INT, _generate_bagging_indices
from sklearn.ensemble._bootstrap import _get_n_samples_bootstrap
from sklearn.utils import check_random_state

from analysis.fastpath.patching import swapped


def _plain(*arrays: np.ndarray) -> bool:
    """Whether every array is a finite float64 NumPy array (what the replicas assume; else the library runs)."""
    return all(isinstance(a, np.ndarray) and a.dtype == np.float64 and np.isfinite(a).all() for a in arrays)


def sorted_points(x: np.ndarray, y: np.ndarray) -> SortedPoints:
    """`SortedPoints(x, y)`, or the last one made where its points are these (a curve fits its isotonic curve and
    then bags the same points: sorted once)."""
    last = _LAST.get("points")
    if last is not None and np.array_equal(last.source[0], x) and np.array_equal(last.source[1], y):
        return last
    _LAST["points"] = points = SortedPoints(x, y)
    return points


class SortedPoints:
    """Training points (x, y) sorted once as IsotonicRegression sorts a fit's points, for fits on weighted
    subsets of them (`fit`)."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.source = (x.copy(), y.copy())
        order = np.lexsort((y, x))
        self.x = x[order]
        self.y = y[order]
        self.rank = np.empty_like(order)  # a point's position in the sorted order
        self.rank[order] = np.arange(order.shape[0])

    def fit(self, drawn: np.ndarray | None, increasing: bool, y_min: float | None,
            y_max: float | None) -> IsotonicFit:
        """IsotonicRegression(increasing, y_min, y_max, out_of_bounds="clip").fit(x, y, weights), as fitted, where
        a point's weight is how often its index is in `drawn` (the bagging's sample weight; None: each point once).
        Points of weight 0 are left out, as IsotonicRegression leaves them out."""
        if drawn is None:
            x, y, w = self.x, self.y, np.ones(self.x.shape[0], dtype=np.float64)
        else:
            keep, counts = np.unique(self.rank[drawn], return_counts=True)
            x, y, w = self.x[keep], self.y[keep], counts.astype(np.float64)
        unique_x, unique_y, unique_w = _make_unique(x, y, w)
        fitted = np.asarray(optimize.isotonic_regression(y=unique_y, weights=unique_w, increasing=increasing).x,
                            dtype=unique_y.dtype)
        if y_min is not None or y_max is not None:
            np.clip(fitted, -np.inf if y_min is None else y_min, np.inf if y_max is None else y_max, fitted)
        return IsotonicFit(unique_x, fitted)


class IsotonicFit:
    """A fitted isotonic regression's thresholds and prediction (IsotonicRegression._build_y's trimming,
    _build_f and _transform with out_of_bounds="clip")."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x_min, self.x_max = np.min(x), np.max(x)
        keep = np.ones((len(y),), dtype=bool)
        keep[1:-1] = np.logical_or(np.not_equal(y[1:-1], y[:-2]), np.not_equal(y[1:-1], y[2:]))
        x, y = x[keep], y[keep]
        if len(y) == 1:
            self.f = lambda t: y.repeat(t.shape)
        else:
            self.f = interpolate.interp1d(x, y, kind="linear", bounds_error=False)

    def predict(self, t: np.ndarray) -> np.ndarray:
        t = np.clip(t, self.x_min, self.x_max)
        return self.f(t).astype(t.dtype)


def get_isotonic_curve(self, x: np.ndarray, y: np.ndarray, x_new: np.ndarray, ymin=None, ymax=None) -> np.ndarray:
    """Replica of autotuning_methodology's `Curve.get_isotonic_curve`."""
    assert isinstance(x, np.ndarray)
    assert isinstance(y, np.ndarray)
    assert isinstance(x_new, np.ndarray)
    assert x_new.ndim == 1
    if x.ndim > 1:
        x = x.flatten()
    if y.ndim > 1:
        y = y.flatten()
    if x.ndim != 1 or x.shape != y.shape or not _plain(x, y, x_new):
        return _STOCK["get_isotonic_curve"](self, x, y, x_new, ymin=ymin, ymax=ymax)
    return sorted_points(x, y).fit(None, not self.minimization, ymin, ymax).predict(x_new)


def get_prediction_interval_bagging(self, x_1d: np.ndarray, y_1d: np.ndarray, x_test_1d: np.ndarray,
                                    confidence_level: float, num_repeats: int) -> np.ndarray:
    """Replica of autotuning_methodology's `StochasticOptimizationAlgorithm._get_prediction_interval_bagging`."""
    if (x_1d.ndim != 1 or x_1d.shape != y_1d.shape or x_1d.shape[0] == 0 or x_test_1d.ndim != 1
            or not _plain(x_1d, y_1d, x_test_1d) or effective_n_jobs(None) != 1):
        return _STOCK["_get_prediction_interval_bagging"](self, x_1d, y_1d, x_test_1d, confidence_level,
                                                          num_repeats)
    n_estimators = max(num_repeats, 3)
    max_samples = 1 / np.sqrt(n_estimators)
    n_samples = x_1d.shape[0]
    draw = _get_n_samples_bootstrap(n_samples, max_samples, None)
    seeds = check_random_state(None).randint(MAX_INT, size=n_estimators)
    points = sorted_points(x_1d, y_1d)
    increasing, y_min, y_max = not self.minimization, y_1d.min(), y_1d.max()
    predictions = []
    for seed in seeds:
        _, indices = _generate_bagging_indices(seed, False, True, 1, n_samples, 1, draw, None)
        fit = points.fit(indices, increasing, y_min, y_max)
        predictions.append(fit.predict(x_test_1d))
    total = sum(predictions)  # BaggingRegressor.predict: one job's sum, then the sum over jobs, over estimators
    mean_prediction = sum([total]) / n_estimators
    collection = np.array(predictions)
    lower, upper = self.get_confidence_interval(collection.transpose(), confidence_level=confidence_level)
    interval = np.concatenate([lower, upper, mean_prediction]).reshape((3, -1)).transpose()
    assert interval.shape == (x_test_1d.shape[0], 3), f"{interval.shape}"
    return interval


# the last points sorted (`sorted_points`)
_LAST: dict[str, SortedPoints] = {}
# the library's own methods, for inputs the replicas leave to them
_STOCK = {"get_isotonic_curve": Curve.get_isotonic_curve,
          "_get_prediction_interval_bagging": StochasticOptimizationAlgorithm._get_prediction_interval_bagging}


@contextlib.contextmanager
def patched() -> Iterator[None]:
    """A context in which the package's curves use the replicas (analysis.indicators.methodology.score_space)."""
    with swapped(Curve, get_isotonic_curve=get_isotonic_curve), swapped(
            StochasticOptimizationAlgorithm, _get_prediction_interval_bagging=get_prediction_interval_bagging):
        try:
            yield
        finally:
            _LAST.clear()
