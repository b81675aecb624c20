"""Constraint expressions from data files, parsed to a restricted AST and evaluated vectorised.

Expressions are never handed to `eval`. Only arithmetic, comparisons (chained too),
boolean operators, conditional expressions, membership in literal tuples/lists, the
parameter names and numeric/string literals, and the functions `min`, `max`, `abs`
are accepted; anything else is an error naming the expression and the offending part.

Integer arithmetic is exact, as in Python (and in Kernel Tuner, which evaluates the same
strings with Python integers): an integer sum, difference, product or power whose size
could leave int64 is computed on Python integers (object arrays) instead of wrapping
around. An expression that cannot be evaluated (e.g. comparing a string parameter with a
number, dividing by zero in exact arithmetic) raises ConstraintEvaluationError.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_BINOPS = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.mod,
    ast.Pow: np.power,
}
# the same operators on Python integers (exact, Python's semantics), for integer scalars
_PY_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMPOPS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_FUNCS = {"min": np.minimum, "max": np.maximum, "abs": np.abs}
# int64 results are exact below this magnitude; above it (by a float64 estimate) Python integers are used
_INT64_SAFE = 2.0 ** 62
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1
_MAX_EXACT_EXPONENT = 4096  # larger integer powers of |base| > 1 are refused (their size is unbounded)


class ConstraintSyntaxError(ValueError):
    """A constraint expression uses something outside the accepted subset."""


class ConstraintEvaluationError(ValueError):
    """A constraint expression cannot be evaluated on the given values."""


@dataclass(frozen=True)
class Constraint:
    """One parsed constraint expression and the parameter names it reads."""

    expression: str
    tree: ast.Expression
    names: tuple[str, ...]

    def evaluate(self, columns: Mapping[str, Any]) -> np.ndarray:
        """Boolean array: which rows of `columns` (name -> array) satisfy the constraint."""
        try:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return _truth(_eval(self.tree.body, columns))
        except ConstraintEvaluationError as exc:
            raise ConstraintEvaluationError(f"constraint '{self.expression}': {exc}") from None
        except (ArithmeticError, TypeError, ValueError) as exc:
            raise ConstraintEvaluationError(
                f"constraint '{self.expression}' cannot be evaluated ({type(exc).__name__}: {exc})") from None


def parse(expression: str, parameters: Sequence[str]) -> Constraint:
    """Parse `expression`, checking every node and name against the accepted subset."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ConstraintSyntaxError(f"constraint '{expression}': not an expression ({exc.msg})") from None
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in _FUNCS:
                continue
            if node.id not in parameters:
                raise ConstraintSyntaxError(
                    f"constraint '{expression}': unknown name '{node.id}' (parameters: {', '.join(parameters)})"
                )
            names.append(node.id)
        elif isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS) or node.keywords:
                raise ConstraintSyntaxError(
                    f"constraint '{expression}': call '{ast.unparse(node)}' not allowed (only {', '.join(_FUNCS)})"
                )
        elif isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float, str, bool)):
                raise ConstraintSyntaxError(f"constraint '{expression}': literal {node.value!r} not allowed")
        elif not isinstance(
            node,
            (
                ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
                ast.BinOp, ast.Compare, ast.IfExp, ast.Tuple, ast.List, ast.Load, ast.In, ast.NotIn,
                *_BINOPS, *_CMPOPS,
            ),
        ):
            raise ConstraintSyntaxError(
                f"constraint '{expression}': '{type(node).__name__}' not allowed in constraints"
            )
    return Constraint(expression, tree, tuple(dict.fromkeys(names)))


def parse_all(expressions: Sequence[str], parameters: Sequence[str]) -> list[Constraint]:
    """Parse several expressions."""
    return [parse(e, parameters) for e in expressions]


def satisfied(constraints: Sequence[Constraint], columns: Mapping[str, Any], n: int) -> np.ndarray:
    """Boolean array of length `n`: rows that satisfy every constraint."""
    ok = np.ones(n, dtype=bool)
    for c in constraints:
        ok &= np.broadcast_to(c.evaluate(columns), (n,))
    return ok


def _truth(value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind in "iuf":
        return arr != 0
    return arr.astype(bool)


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return np.asarray(env[node.id])
    if isinstance(node, ast.BoolOp):
        return _eval_boolop(node, env)
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return np.logical_not(_truth(operand))
        return np.negative(operand) if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        return _binop(node.op, _eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.Compare):
        return _eval_compare(node, env)
    if isinstance(node, ast.IfExp):
        return np.where(_truth(_eval(node.test, env)), _eval(node.body, env), _eval(node.orelse, env))
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_eval(e, env) for e in node.elts]
    if isinstance(node, ast.Call):
        return _eval_call(node, env)
    raise ConstraintSyntaxError(f"cannot evaluate '{ast.unparse(node)}'")  # pragma: no cover - parse() rejects it


def _eval_boolop(node: ast.BoolOp, env: Mapping[str, Any]) -> Any:
    """`a and b and ...` / `a or b or ...`, elementwise on the operands' truth (every operand evaluated)."""
    values = [_truth(_eval(v, env)) for v in node.values]
    combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
    out = values[0]
    for v in values[1:]:
        out = combine(out, v)
    return out


def _eval_compare(node: ast.Compare, env: Mapping[str, Any]) -> Any:
    """A chained comparison `a < b <= c ...` (with `in`, `not in`), elementwise: every link's result and-ed."""
    left = _eval(node.left, env)
    out: Any = True
    for op, right_node in zip(node.ops, node.comparators):
        right = _eval(right_node, env)
        if isinstance(op, (ast.In, ast.NotIn)):
            hit = np.isin(left, np.asarray(right))
            result = hit if isinstance(op, ast.In) else ~hit
        else:
            result = _CMPOPS[type(op)](np.asarray(left), right)
        out = np.logical_and(out, result)
        left = right
    return out


def _eval_call(node: ast.Call, env: Mapping[str, Any]) -> Any:
    """A call of an allowed function: abs of its argument, or the function folded over the arguments."""
    args = [_eval(a, env) for a in node.args]
    fn = _FUNCS[node.func.id]  # type: ignore[attr-defined]
    if fn is np.abs:
        return fn(*args)
    out = args[0]
    for a in args[1:]:
        out = fn(out, a)
    return out

def _is_int(x: Any) -> bool:
    """An integer scalar or integer array (booleans excluded)."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    return isinstance(x, np.ndarray) and x.dtype.kind in "iu"


def _fits_int64(x: Any) -> bool:
    """Whether numpy would hold `x` as int64 without loss (uint64 and big Python ints do not)."""
    if isinstance(x, int) and not isinstance(x, np.integer):
        return _INT64_MIN <= x <= _INT64_MAX
    return np.asarray(x).dtype.kind == "i"


def _exact(x: Any) -> Any:
    """`x` as Python integers: an object array or a Python int."""
    if isinstance(x, np.ndarray):
        return x.astype(object) if x.ndim else int(x)
    return int(x)


def _binop(op: ast.operator, left: Any, right: Any) -> Any:
    """left op right; integer operands never wrap around int64 (Python integers where it could)."""
    fn = _BINOPS[type(op)]
    if not (_is_int(left) and _is_int(right)):
        return fn(left, right)
    if _fits_int64(left) and _fits_int64(right):
        if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)):
            return fn(left, right)  # |result| <= |operands|: no overflow
        negative_power = isinstance(op, ast.Pow) and bool(np.any(np.asarray(right) < 0))
        if not negative_power:
            estimate = fn(np.asarray(left, dtype=float), np.asarray(right, dtype=float))
            if bool(np.all(np.abs(estimate) < _INT64_SAFE)):
                return fn(left, right)
    if isinstance(op, ast.Pow) and bool(np.any(np.abs(np.asarray(right, dtype=float)) > _MAX_EXACT_EXPONENT)) \
            and bool(np.any(np.abs(np.asarray(left, dtype=float)) > 1)):
        raise ConstraintEvaluationError(f"integer power with an exponent above {_MAX_EXACT_EXPONENT} "
                                        "is too large to evaluate exactly")
    left, right = _exact(left), _exact(right)
    if isinstance(left, int) and isinstance(right, int):
        return _PY_BINOPS[type(op)](left, right)
    return fn(left, right)
