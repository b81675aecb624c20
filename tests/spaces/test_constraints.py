"""Constraint expressions: a safe subset, evaluated vectorised with Python's semantics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from analysis.spaces.constraints import ConstraintEvaluationError, ConstraintSyntaxError, parse, satisfied

PARAMS = ["bx", "by", "tx", "sx"]
GRID = list(itertools.product([1, 2, 4, 32, 64], [1, 8, 32], [1, 2, 3], [0, 1]))
EXPRESSIONS = [
    "32 <= bx * by <= 1024",
    "tx > 1 or sx == 0",
    "use == 0 or bx % 32 != 0".replace("use", "sx"),
    "not (bx * tx > 64) and by // 8 >= 1",
    "max(bx, by) in (4, 8, 64)",
    "bx ** 2 - by / 2 >= -abs(tx - 3)",
    "(bx if sx else by) < 16",
    "bx not in [1, 2]",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_matches_python_semantics(expr):
    columns = {p: np.array([g[i] for g in GRID]) for i, p in enumerate(PARAMS)}
    got = parse(expr, PARAMS).evaluate(columns)
    # Oracle: Python itself on each row, in a namespace with only the parameters (test-only use).
    want = [bool(eval(expr, {"__builtins__": {"max": max, "abs": abs}}, dict(zip(PARAMS, g)))) for g in GRID]
    assert got.tolist() == want


@pytest.mark.parametrize("expr", [
    "__import__('os').system('true')", "bx.real > 0", "[x for x in (1,)]", "lambda: 1",
    "open('f')", "bx[0] > 1", "unknown > 1", "bx = 1",
])
def test_rejects_anything_outside_the_subset(expr):
    with pytest.raises(ConstraintSyntaxError, match="constraint"):
        parse(expr, PARAMS)


def test_satisfied_combines_all():
    cs = [parse(e, PARAMS) for e in EXPRESSIONS[:2]]
    cols = {"bx": np.array([1, 4, 64]), "by": np.array([32, 8, 32]), "tx": np.array([1, 2, 1]),
            "sx": np.array([0, 1, 1])}
    assert satisfied(cs, cols, 3).tolist() == [True, True, False]


# Integer arithmetic beyond int64: Python's exact result, never a wrap-around (issue #21).
BIG = [
    "bx * 2**62 > 0",
    "bx * 2**64 > 2**64",
    "bx - 2**63 < 0",
    "(bx * 2**62) // 2**62 == bx",
    "bx * 3037000500 * 3037000500 > 9 * 10**18",
    "bx ** 40 % 7 == 1",
    "2**-1 * bx == bx / 2",
    "-(bx * 2**63) < 0",
    "max(bx * 2**62, 2**63) > 2**63",
]


@pytest.mark.parametrize("expr", BIG)
def test_integer_arithmetic_is_exact(expr):
    columns = {p: np.array([g[i] for g in GRID]) for i, p in enumerate(PARAMS)}
    got = parse(expr, PARAMS).evaluate(columns)
    want = [bool(eval(expr, {"__builtins__": {"max": max, "abs": abs}}, dict(zip(PARAMS, g)))) for g in GRID]
    assert got.tolist() == want


def test_block_size_times_two_to_the_62_is_positive():
    c = parse("block_size_x * 2**62 > 0", ["block_size_x"])
    values = np.array([1, 2, 3, 16, 32, 64, 128, 256, 512, 1024])
    assert c.evaluate({"block_size_x": values}).all()  # int64 would wrap 2, 4, ... to 0 or negative


def test_unevaluable_constraint_is_a_clear_error():
    with pytest.raises(ConstraintEvaluationError, match="constraint 'bx \\*\\* 5000 > 0'.*too large"):
        parse("bx ** 5000 > 0", PARAMS).evaluate({"bx": np.array([2, 3])})
    with pytest.raises(ConstraintEvaluationError, match="constraint 'sx > 1' cannot be evaluated"):
        parse("sx > 1", PARAMS).evaluate({"sx": np.array(["a", "b"])})
