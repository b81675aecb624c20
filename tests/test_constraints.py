"""Constraint expressions: a safe subset, evaluated vectorised with Python's semantics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from analysis.constraints import ConstraintSyntaxError, parse, satisfied

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
