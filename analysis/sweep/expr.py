"""Scalar expressions of kernel specs (sizes, shapes, memory), evaluated on a restricted AST.

Accepted: integer/float/string literals, names from the given environment, + - * / // % **,
unary minus, comparisons, conditional expressions and the functions min, max, abs and
bytes(T) (the size in bytes of a type name or of a precision parameter's value). Nothing
is handed to `eval`.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from analysis.sweep.precision import TYPE_BYTES

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_CMPOPS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_FUNCS = ("min", "max", "abs", "bytes")
# the functions of _FUNCS that evaluate their arguments (bytes reads a type name)
_FUNCTIONS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": abs}


class ExpressionError(ValueError):
    """An expression is malformed, uses something outside the accepted subset, or fails to evaluate."""


def check(expression: Any, names: Sequence[str]) -> ast.Expression:
    """Parse `expression` and check every node and name; return the tree."""
    if isinstance(expression, bool) or not isinstance(expression, (str, int, float)):
        raise ExpressionError(f"expected an expression, found {type(expression).__name__} {expression!r}")
    text = str(expression).strip()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"'{text}' is not an expression ({exc.msg})") from None
    type_args = {id(c.args[0]) for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                 and c.func.id == "bytes" and len(c.args) == 1 and isinstance(c.args[0], ast.Name)
                 and c.args[0].id in TYPE_BYTES}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id not in names and node.id not in _FUNCS and id(node) not in type_args:
                raise ExpressionError(f"'{text}': unknown name '{node.id}' (known: {', '.join(names) or 'none'})")
        elif isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS) or node.keywords:
                raise ExpressionError(f"'{text}': call '{ast.unparse(node)}' not allowed (only {', '.join(_FUNCS)})")
            if node.func.id == "bytes" and len(node.args) != 1:
                raise ExpressionError(f"'{text}': bytes() takes one type")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float, str)):
                raise ExpressionError(f"'{text}': literal {node.value!r} not allowed")
        elif not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Compare,
                                   ast.IfExp, ast.BoolOp, ast.And, ast.Or, ast.Not, ast.Load,
                                   *_BINOPS, *_CMPOPS)):
            raise ExpressionError(f"'{text}': '{type(node).__name__}' not allowed")
    return tree


def evaluate(expression: Any, env: Mapping[str, Any]) -> Any:
    """Check and evaluate `expression` with the values in `env`."""
    tree = check(expression, list(env))
    try:
        return _eval(tree.body, env)
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise ExpressionError(f"'{str(expression).strip()}' cannot be evaluated ({exc})") from None


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not v
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BoolOp):
        vals = [_eval(v, env) for v in node.values]
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, env) if _eval(node.test, env) else _eval(node.orelse, env)
    if isinstance(node, ast.Call):
        name = node.func.id  # type: ignore[attr-defined]
        if name == "bytes":
            arg = node.args[0]
            type_name = arg.id if isinstance(arg, ast.Name) and arg.id not in env else _eval(arg, env)
            if type_name not in TYPE_BYTES:
                raise ValueError(f"bytes({type_name!r}): unknown type (known: {', '.join(TYPE_BYTES)})")
            return TYPE_BYTES[type_name]
        args = [_eval(a, env) for a in node.args]
        return _FUNCTIONS[name](*args)
    raise ValueError(f"cannot evaluate '{ast.unparse(node)}'")  # pragma: no cover - check() rejects it
