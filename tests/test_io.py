"""Published CSVs hold floats at PUBLISHED_FLOAT_DIGITS significant digits, so last-bit differences of
floating-point library code between processors do not change them."""

from __future__ import annotations

import csv
import re
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from analysis import verify_space as verify
from analysis.io import PUBLISHED_FLOAT_DIGITS, round_floats, write_csv
from analysis.tables import comparison as tables
from helpers import REPO

# Scores, p-values, percentages and times as they appear in tables/ (constraint_aware_gains.csv,
# significance.csv, improvement_over_rs.csv, indicators.csv, spaces.csv)
VALUES = [0.04576177306301446, 0.27176229466538676, -0.017497371553019954, 0.3079538243013344,
          0.0008231815101402638, 3.0168293829118745e-07, 42.91366906474821, -13.528159311936335,
          554100.1473518554, 152461.80506271776, 0.9993481370449542, 7.123456789012345e-12]


def margin(x: float, digits: int = PUBLISHED_FLOAT_DIGITS) -> float:
    """How far `x` is from a rounding boundary of `digits` significant digits, as a fraction of the spacing
    of such decimals there (0.5: in the middle between two boundaries; 0: on one)."""
    exact = Decimal(x)  # the float's exact binary value
    scaled = exact.scaleb(digits - 1 - exact.adjusted())  # `digits` digits before the point
    return float(abs((scaled - scaled.to_integral_value(rounding="ROUND_FLOOR")) - Decimal("0.5")))


def perturbed(values, ulps: int) -> np.ndarray:
    """`values` moved by `ulps` units in the last place (toward +inf for ulps > 0)."""
    out = np.asarray(values, dtype=float)
    for _ in range(abs(ulps)):
        out = np.nextafter(out, np.inf if ulps > 0 else -np.inf)
    return out


def frame(values) -> pd.DataFrame:
    n = len(values)
    return pd.DataFrame({"space": [f"d/k{i}" for i in range(n)], "budget": np.arange(100, 100 + n),
                         "score": values, "spaces_gaining": pd.array([3, None] * (n // 2), dtype="Int64"),
                         "empty": np.nan, "whole": 1200.0, "limit": -np.inf})


def written(df: pd.DataFrame, path, **kwargs) -> bytes:
    write_csv(df, path, **kwargs)
    return path.read_bytes()


def test_the_values_of_these_tests_are_not_at_a_rounding_boundary():
    # a value within a few ulps of a boundary could round either way (see round_floats)
    assert min(margin(x) for x in VALUES) > 1e-3


@pytest.mark.parametrize("ulps", [1, -1, 3, -4])
def test_a_few_ulps_leave_the_published_csv_byte_identical_and_would_change_it_unrounded(tmp_path, ulps):
    ours = written(frame(VALUES), tmp_path / "a.csv")
    theirs = written(frame(perturbed(VALUES, ulps)), tmp_path / "b.csv")
    assert ours == theirs
    # unrounded, the same perturbation shows in the text: the rounding is what makes them equal
    assert written(frame(VALUES), tmp_path / "c.csv", float_digits=None) != \
        written(frame(perturbed(VALUES, ulps)), tmp_path / "d.csv", float_digits=None)


def test_the_issues_two_scores_publish_as_one():
    # amd-epyc-vm/bessel de_unaware on two machines (issue #32)
    a, b = 0.04576177306301446, 0.045761773063014446
    assert a != b and round_floats(pd.DataFrame({"x": [a]})).equals(round_floats(pd.DataFrame({"x": [b]})))
    assert round_floats(pd.DataFrame({"x": [a, b]})).to_csv(index=False) == "x\n0.045761773063\n0.045761773063\n"


def test_relative_1e_15_through_a_table_builder_leaves_the_csv_byte_identical(tmp_path):
    rng = np.random.default_rng(7)
    n = 40
    settings = np.repeat(["rs", "nsga2"], n // 2)
    final = pd.DataFrame({"device": "A100", "kernel": "convolution", "objective_set": "time",
                          "setting": settings, "algorithm": settings,
                          "budget": 200, "repetition": np.tile(np.arange(n // 2), 2),
                          "igd_plus": rng.lognormal(-3, 1, n), "hv": rng.uniform(0.2, 0.9, n),
                          "eval_time_ms": rng.uniform(100, 5000, n), "valid_evaluations": rng.integers(150, 200, n),
                          "stopped_early": False})
    noisy = final.copy()
    for column in ("igd_plus", "hv", "eval_time_ms"):
        noisy[column] = final[column] * (1 + 1e-15 * rng.choice([-1, 1], n))
    ours, theirs = tables.indicator_stats(final), tables.indicator_stats(noisy)
    floats = ours[["igd_median", "igd_iqr", "hv_median", "hv_iqr", "eval_time_median_ms"]].to_numpy().ravel()
    assert min(margin(x) for x in floats) > 1e-3
    assert written(ours, tmp_path / "a.csv") == written(theirs, tmp_path / "b.csv")
    assert written(ours, tmp_path / "c.csv", float_digits=None) != written(theirs, tmp_path / "d.csv",
                                                                          float_digits=None)


def test_at_a_rounding_boundary_a_few_ulps_can_still_flip_the_text():
    # the documented limit: 1.000000000005 lies half-way between two 12-digit decimals
    x = 1.000000000005
    assert margin(x) < 1e-3
    texts = {round_floats(pd.DataFrame({"x": perturbed([x], k)})).to_csv(index=False) for k in range(-3, 4)}
    assert texts == {"x\n1.0\n", "x\n1.00000000001\n"}


def test_integers_stay_integers_nan_stays_empty_and_text_is_untouched(tmp_path):
    df = pd.DataFrame({"n": [1, 2], "maybe": pd.array([4, None], dtype="Int64"), "f": [0.1 + 0.2, np.nan],
                       "whole": [3.0, 1e20], "tiny": [1e-5 / 3, -np.inf], "flag": [True, False],
                       "label": ["0.30000000000000004", "hp_nsga2__mutation_prob_0.1"],
                       "mixed": [2 / 3, "x"], "nullable": pd.array([1 / 7, None], dtype="Float64")})
    text = written(df, tmp_path / "t.csv").decode()
    assert text == ("n,maybe,f,whole,tiny,flag,label,mixed,nullable\n"
                    "1,4,0.3,3.0,3.33333333333e-06,True,0.30000000000000004,0.666666666667,0.142857142857\n"
                    "2,,,1e+20,-inf,False,hp_nsga2__mutation_prob_0.1,x,\n")
    assert df["f"].iloc[0] == 0.1 + 0.2  # the caller's frame is not changed


def test_verify_compares_in_the_form_the_writer_publishes(tmp_path):
    df = frame(VALUES)
    write_csv(df, tmp_path / "t.csv")
    published = pd.read_csv(tmp_path / "t.csv", dtype=str, keep_default_na=False)
    assert verify._as_written(frame(perturbed(VALUES, 2))).equals(published)


def test_the_committed_tables_hold_no_float_with_more_significant_digits():
    # a table rebuilt by a writer that skips the rounding fails here
    number = re.compile(r"^-?\d*\.?\d+(e[-+]?\d+)?$")
    stale = []
    for path in sorted((REPO / "tables").glob("*.csv")):
        with open(path, newline="") as fh:
            for row in list(csv.reader(fh))[1:]:
                stale += [(path.name, cell) for cell in row if number.match(cell) and ("." in cell or "e" in cell)
                          and cell != repr(float(f"{float(cell):.{PUBLISHED_FLOAT_DIGITS}g}"))]
    assert not stale, stale[:5]
