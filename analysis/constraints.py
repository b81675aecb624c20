"""Constraint expressions from data files, parsed to a restricted AST and evaluated vectorised.

Expressions are never handed to `eval`. Only arithmetic, comparisons (chained too),
boolean operators, conditional expressions, membership in literal tuples/lists, the
parameter names and numeric/string literals, and the functions `min`, `max`, `abs`
are accepted; anything else is an error naming the expression and the offending part.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

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
_CMPOPS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_FUNCS = {"min": np.minimum, "max": np.maximum, "abs": np.abs}


class ConstraintSyntaxError(ValueError):
    """A constraint expression uses something outside the accepted subset."""


@dataclass(frozen=True)
class Constraint:
    """One parsed constraint expression and the parameter names it reads."""

    expression: str
    tree: ast.Expression
    names: tuple[str, ...]

    def evaluate(self, columns: Mapping[str, Any]) -> np.ndarray:
        """Boolean array: which rows of `columns` (name -> array) satisfy the constraint."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _truth(_eval(self.tree.body, columns))


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
        values = [_truth(_eval(v, env)) for v in node.values]
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        out = values[0]
        for v in values[1:]:
            out = combine(out, v)
        return out
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return np.logical_not(_truth(operand))
        return np.negative(operand) if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.Compare):
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
    if isinstance(node, ast.IfExp):
        return np.where(_truth(_eval(node.test, env)), _eval(node.body, env), _eval(node.orelse, env))
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_eval(e, env) for e in node.elts]
    if isinstance(node, ast.Call):
        args = [_eval(a, env) for a in node.args]
        fn = _FUNCS[node.func.id]  # type: ignore[attr-defined]
        if fn is np.abs:
            return fn(*args)
        out = args[0]
        for a in args[1:]:
            out = fn(out, a)
        return out
    raise ConstraintSyntaxError(f"cannot evaluate '{ast.unparse(node)}'")  # pragma: no cover - parse() rejects it
