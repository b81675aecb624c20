"""Validating loader of a kernel folder's `spec.yaml` (workflow/kernels/README.md).

Every field of the contract is checked; an error names the file and the field. Size,
shape, scalar-value, problem-size and memory expressions are evaluated with the
restricted evaluator of analysis.sweep.expr (memory may use `bytes(T)`), constraints
are parsed by analysis.spaces.constraints, never by `eval`.
"""

from __future__ import annotations

import itertools
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import yaml

from analysis import paths
from analysis.errors import InputError
from analysis.spaces import constraints as cons
from analysis.sweep import expr
from analysis.sweep.precision import FLOAT_TYPES, INT_TYPES

ROOT = paths.REPO
KERNELS_DIR = paths.KERNELS
COMMON_DIR = KERNELS_DIR / "common"
FILES = ("spec.yaml", "reference.py", "kernel.cu", "kernel.cpp")
TARGETS = ("cpu", "cuda")
REQUIRED_SIZES = ("tiny", "cpu", "gpu")
ROLES = ("input", "output", "scalar")
TOP_KEYS = ("name", "title", "summary", "function", "seed", "sizes", "arguments", "precision", "error_note",
            "memory", "tolerance", "targets")
OPTIONAL_KEYS = ("reference_params", "paper")
# The execution-policy precision parameter (seed 002 §IV): 0 accurate, 1 fast, 2 approx
# (workflow/kernels/common/precision.h); its reference value is 0, a type's is double.
POLICY = "exec_policy"
POLICIES = (0, 1, 2)
# seed 002 Table II, per kernel (the spec's optional `paper` mapping)
PAPER_KEYS = ("precision_params", "precision_combinations", "optimisation_params", "optimisation_combinations",
              "configurations")
TARGET_KEYS = {
    "cpu": {"required": ("tune_params", "constraints"), "optional": ()},
    "cuda": {"required": ("tune_params", "constraints", "problem_size"),
             "optional": ("grid_div_x", "grid_div_y", "grid_div_z", "block_size_names")},
}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SpecError(InputError):
    """A kernel spec (or a kernel folder) breaks the contract of workflow/kernels/README.md."""


@dataclass(frozen=True)
class Argument:
    """One kernel argument in call order."""

    name: str
    role: str  # input, output or scalar
    type: str  # a precision parameter name or a fixed type
    shape: tuple[str, ...] = ()  # expressions over size names (arrays)
    value: str | None = None  # expression over size names (scalars)

    @property
    def is_array(self) -> bool:
        """Input and output arguments are arrays; scalars are passed by value."""
        return self.role != "scalar"


@dataclass(frozen=True)
class Target:
    """Launch set-up of one target (cpu or cuda)."""

    name: str
    own_params: dict[str, list]
    constraints: list[str]
    problem_size: tuple[str, ...] = ()
    grid_div: dict[str, list[str]] = field(default_factory=dict)
    block_size_names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class KernelSpec:
    """A validated kernel spec."""

    name: str
    title: str
    summary: str
    function: str
    seed: int
    sizes: dict[str, dict[str, int]]
    arguments: tuple[Argument, ...]
    precision: dict[str, list]  # type parameters (lists of types) and, optionally, exec_policy (integers)
    error_note: str
    memory: str
    targets: dict[str, Target]
    path: Path
    reference_params: dict[str, Any] = field(default_factory=dict)
    tolerance: float = 0.0  # the correctness gate: worst error metric of the reference configuration
    paper: dict[str, int] = field(default_factory=dict)  # seed 002 Table II counts

    @property
    def folder(self) -> Path:
        """The kernel's folder."""
        return self.path.parent

    def reference_value(self, param: str) -> Any:
        """The value of a precision parameter in the reference configuration: double, or policy 0."""
        return 0 if param == POLICY else "double"

    def precision_combinations(self, target: str) -> int:
        """Distinct precision settings among the valid configurations of `target`."""
        return len({tuple(c[p] for p in self.precision) for c in self.valid_configs(target)})

    def optimisation_combinations(self, target: str) -> int:
        """Distinct settings of the optimisation (non-precision) parameters among the valid configurations."""
        own = list(self.target(target).own_params)
        return len({tuple(c[p] for p in own) for c in self.valid_configs(target)})

    def tune_params(self, target: str) -> dict[str, list]:
        """Every tunable parameter of `target`: its own parameters, then the precision parameters."""
        return {**self.target(target).own_params, **self.precision}

    def constraints(self, target: str) -> list[str]:
        """Restriction expressions of `target` (Kernel Tuner syntax, restricted subset)."""
        return list(self.target(target).constraints)

    def target(self, target: str) -> Target:
        """The launch set-up of `target`."""
        if target not in self.targets:
            raise SpecError(self.path, f"unknown target '{target}' (known: {', '.join(self.targets)})", field="targets")
        return self.targets[target]

    def size(self, size_name: str) -> dict[str, int]:
        """The named problem size."""
        if size_name not in self.sizes:
            raise SpecError(self.path, f"unknown size '{size_name}' (known: {', '.join(self.sizes)})", field="sizes")
        return dict(self.sizes[size_name])

    def shape(self, arg: Argument, size_name: str) -> tuple[int, ...]:
        """Array shape of `arg` at a size."""
        size = self.size(size_name)
        return tuple(int(expr.evaluate(e, size)) for e in arg.shape)

    def scalar_value(self, arg: Argument, size_name: str) -> int | float:
        """Value of a scalar argument at a size."""
        return expr.evaluate(arg.value, self.size(size_name))

    def arg_type(self, arg: Argument, params: Mapping[str, Any]) -> str:
        """Concrete element type of `arg` for a configuration."""
        return str(params[arg.type]) if arg.type in self.precision else arg.type

    def argument_precision_params(self) -> list[str]:
        """Precision parameters that type an argument (they change the arrays passed to the kernel)."""
        return [p for p in self.precision if any(a.type == p for a in self.arguments)]

    def memory_bytes(self, params: Mapping[str, Any], size_name: str) -> float:
        """Bytes of every input/output buffer of a configuration at a size (the spec's formula)."""
        env = {**self.size(size_name), **params}
        try:
            return float(expr.evaluate(self.memory, env))
        except expr.ExpressionError as exc:
            raise SpecError(self.path, str(exc), field="memory") from None

    def problem_size(self, size_name: str) -> list[int]:
        """CUDA problem size at a size."""
        size = self.size(size_name)
        return [int(expr.evaluate(e, size)) for e in self.target("cuda").problem_size]

    def valid_configs(self, target: str, tune_params: Mapping[str, list] | None = None) -> list[dict[str, Any]]:
        """Every configuration of `target` that satisfies its constraints, in Kernel Tuner's (product) order.

        `tune_params` narrows the value lists (same names, values from the spec's lists).
        """
        params = self.tune_params(target) if tune_params is None else dict(tune_params)
        names = list(params)
        rows = list(itertools.product(*params.values()))
        if not rows:
            return []
        columns = {n: np.array([r[i] for r in rows], dtype=object if isinstance(rows[0][i], str) else None)
                   for i, n in enumerate(names)}
        parsed = cons.parse_all(self.constraints(target), names)
        try:
            ok = cons.satisfied(parsed, columns, len(rows))
        except cons.ConstraintEvaluationError as exc:
            raise SpecError(self.path, str(exc), field=f"targets.{target}.constraints") from None
        return [dict(zip(names, r)) for r, good in zip(rows, ok) if good]


def kernel_dir(kernel: str) -> Path:
    """The folder of a kernel."""
    return KERNELS_DIR / kernel


def list_kernels() -> list[str]:
    """Names of every kernel folder with a spec.yaml, sorted."""
    return sorted(p.parent.name for p in KERNELS_DIR.glob("*/spec.yaml"))


def kernels_with_target(target: str) -> list[str]:
    """Names of every kernel whose spec defines `target` (cpu or cuda), sorted."""
    return [k for k in list_kernels() if target in load_spec(k).targets]


def load_spec(kernel: str | Path) -> KernelSpec:
    """Read and validate a kernel's spec.yaml (by kernel name or by path to the file)."""
    path = Path(kernel) if str(kernel).endswith((".yaml", ".yml")) else kernel_dir(str(kernel)) / "spec.yaml"
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise SpecError(path, f"cannot be read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise SpecError(path, f"is not valid YAML ({exc})") from None
    return parse_spec(doc, path)


def parse_spec(doc: Any, path: Path) -> KernelSpec:
    """Validate a spec document read from `path`."""
    v = _Validator(path)
    if not isinstance(doc, dict):
        raise SpecError(path, "must be a mapping")
    v.keys(doc, TOP_KEYS, TOP_KEYS + OPTIONAL_KEYS, "")
    name = v.string(doc, "name")
    if name != path.parent.name:
        raise SpecError(path, f"'{name}' differs from the folder name '{path.parent.name}'", field="name")
    title, summary, error_note = v.string(doc, "title"), v.string(doc, "summary"), v.string(doc, "error_note")
    function = v.string(doc, "function")
    if not _IDENT.match(function):
        raise SpecError(path, f"'{function}' is not a C identifier", field="function")
    seed = doc["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SpecError(path, f"must be a non-negative integer, not {seed!r}", field="seed")
    sizes = v.sizes(doc["sizes"])
    size_names = list(next(iter(sizes.values())))
    precision = v.precision(doc["precision"], size_names)
    arguments = v.arguments(doc["arguments"], sizes, precision)
    targets = v.targets(doc["targets"], sizes, precision)
    memory = doc["memory"]
    _check_memory(memory, sizes, size_names, precision, targets, path)
    tolerance = doc["tolerance"]
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 < tolerance < 1:
        raise SpecError(path, f"must be a number in (0, 1), not {tolerance!r}", field="tolerance")
    paper = doc.get("paper", {})
    if "paper" in doc and not isinstance(paper, dict) or set(paper) not in (set(), set(PAPER_KEYS)) or not all(
            isinstance(paper[k], int) and not isinstance(paper[k], bool) and paper[k] > 0 for k in PAPER_KEYS):
        raise SpecError(path, f"must map each of {', '.join(PAPER_KEYS)} to a positive integer", field="paper")
    reference_params = doc.get("reference_params") or {}
    _check_reference_params(reference_params, targets, path)
    spec = KernelSpec(name, title, summary, function, seed, sizes, arguments, precision, error_note, str(memory),
                      targets, path, dict(reference_params), float(tolerance), dict(paper))
    for t in targets:
        if not spec.valid_configs(t):
            raise SpecError(path, "no configuration satisfies the constraints", field=f"targets.{t}.constraints")
    return spec


def _check_memory(memory: Any, sizes: dict[str, dict[str, int]], size_names: list[str], precision: dict[str, list],
                  targets: dict[str, Target], path: Path) -> None:
    """The spec's `memory`: an expression over the sizes, precision and tunable parameters that gives a positive
    number at every size (parameters at their first values)."""
    all_params = size_names + list(precision) + sorted({p for t in targets.values() for p in t.own_params})
    try:
        expr.check(memory, all_params)
        for size in sizes.values():
            first = {p: vals[0] for t in targets.values() for p, vals in {**t.own_params, **precision}.items()}
            value = expr.evaluate(memory, {**size, **first})
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise expr.ExpressionError(f"'{memory}' gives {value!r}, not a positive number")
    except expr.ExpressionError as exc:
        raise SpecError(path, str(exc), field="memory") from None


def _check_reference_params(reference_params: Any, targets: dict[str, Target], path: Path) -> None:
    """The spec's `reference_params`: a mapping of tunable parameters of some target to values in their lists."""
    if not isinstance(reference_params, dict):
        raise SpecError(path, "must be a mapping of parameter -> value", field="reference_params")
    for p, val in reference_params.items():
        lists = [t.own_params[p] for t in targets.values() if p in t.own_params]
        if not lists:
            raise SpecError(path, "not a tunable parameter of any target", field=f"reference_params.{p}")
        if not all(val in vals for vals in lists):
            raise SpecError(path, f"value {val!r} is not in the parameter's value list", field=f"reference_params.{p}")


class _Validator:
    def __init__(self, path: Path):
        self.path = path

    def fail(self, message: str, fld: str) -> NoReturn:
        raise SpecError(self.path, message, field=fld)

    def keys(self, doc: dict, required, allowed, where: str) -> None:
        for k in doc:
            if k not in allowed:
                self.fail(f"unknown key (allowed: {', '.join(allowed)})", f"{where}{k}")
        for k in required:
            if k not in doc:
                self.fail("required key is missing", f"{where}{k}")

    def string(self, doc: dict, key: str) -> str:
        value = doc[key]
        if not isinstance(value, str) or not value.strip():
            self.fail(f"must be a non-empty string, not {value!r}", key)
        return value.strip()

    def sizes(self, sizes: Any) -> dict[str, dict[str, int]]:
        if not isinstance(sizes, dict) or not sizes:
            self.fail("must be a mapping of size name -> {name: integer}", "sizes")
        for req in REQUIRED_SIZES:
            if req not in sizes:
                self.fail(f"size '{req}' is required (every kernel has {', '.join(REQUIRED_SIZES)})", "sizes")
        names = None
        for sname, values in sizes.items():
            if not isinstance(values, dict) or not values:
                self.fail("must be a mapping of name -> integer", f"sizes.{sname}")
            for k, val in values.items():
                if not isinstance(k, str) or not _IDENT.match(k) or keyword.iskeyword(k):
                    self.fail("not an identifier", f"sizes.{sname}.{k}")
                if isinstance(val, bool) or not isinstance(val, int) or val <= 0:
                    self.fail(f"must be a positive integer, not {val!r}", f"sizes.{sname}.{k}")
            if names is None:
                names = list(values)
            elif sorted(values) != sorted(names):
                self.fail(f"names {sorted(values)} differ from the first size's {sorted(names)}", f"sizes.{sname}")
        assert names is not None  # sizes is a non-empty mapping (checked above)
        return {s: {k: sizes[s][k] for k in names} for s in sizes}

    def precision(self, precision: Any, size_names: list[str]) -> dict[str, list]:
        if not isinstance(precision, dict) or not precision:
            self.fail("must be a mapping of parameter -> list of types", "precision")
        for p, values in precision.items():
            if not isinstance(p, str) or not _IDENT.match(p):
                self.fail("not an identifier", f"precision.{p}")
            if p in size_names:
                self.fail("name is also a size name", f"precision.{p}")
            if not isinstance(values, list) or not values:
                self.fail("must be a non-empty list of types", f"precision.{p}")
            if p == POLICY:
                if (any(isinstance(x, bool) or x not in POLICIES for x in values) or 0 not in values
                        or len(set(values)) != len(values)):
                    self.fail(f"must be a list of distinct policies from {list(POLICIES)} including 0 (accurate)",
                              f"precision.{p}")
                continue
            for t in values:
                if t not in FLOAT_TYPES:
                    self.fail(f"unknown type {t!r} (allowed: {', '.join(FLOAT_TYPES)})", f"precision.{p}")
            if len(set(values)) != len(values):
                self.fail("lists a type twice", f"precision.{p}")
        return {p: list(v) for p, v in precision.items()}

    def arguments(self, arguments: Any, sizes: dict, precision: dict) -> tuple[Argument, ...]:
        if not isinstance(arguments, list) or not arguments:
            self.fail("must be a non-empty list", "arguments")
        out: list[Argument] = []
        seen: set[str] = set()
        size_names = list(next(iter(sizes.values())))
        for i, a in enumerate(arguments):
            out.append(self.argument(a, f"arguments[{i}]", seen, sizes, precision, size_names))
        if not any(a.role == "output" for a in out):
            self.fail("no argument has role 'output'", "arguments")
        return tuple(out)

    def argument(self, a: Any, where: str, seen: set[str], sizes: dict, precision: dict,
                 size_names: list[str]) -> Argument:
        """One argument: a known role, a new identifier, a precision parameter's or a fixed type, and its value
        (a scalar) or shape (an array) valid at every size; its name is added to `seen`."""
        if not isinstance(a, dict):
            self.fail("must be a mapping", where)
        role = a.get("role")
        if role not in ROLES:
            self.fail(f"must be one of {', '.join(ROLES)}, not {role!r}", f"{where}.role")
        shape_key = "value" if role == "scalar" else "shape"
        self.keys(a, ("name", "role", "type", shape_key), ("name", "role", "type", shape_key), f"{where}.")
        name = a["name"]
        if not isinstance(name, str) or not _IDENT.match(name):
            self.fail(f"{name!r} is not an identifier", f"{where}.name")
        if name in seen:
            self.fail(f"argument '{name}' appears twice", f"{where}.name")
        seen.add(name)
        typ = a["type"]
        fixed = FLOAT_TYPES[:2] + INT_TYPES
        if typ == POLICY or (typ not in precision and typ not in fixed):
            self.fail(f"{typ!r} is neither a precision parameter ({', '.join(precision)}) nor one of "
                      f"{', '.join(fixed)}", f"{where}.type")
        try:
            if role == "scalar":
                return self.scalar_argument(a, where, name, typ, sizes, precision)
            return self.array_argument(a, where, name, role, typ, sizes, size_names)
        except expr.ExpressionError as exc:
            self.fail(str(exc), f"{where}.{shape_key}")

    def scalar_argument(self, a: dict, where: str, name: str, typ: str, sizes: dict, precision: dict) -> Argument:
        """A scalar argument: a fixed type, its value a number at every size (else expr.ExpressionError)."""
        if typ in precision:
            self.fail("a scalar has a fixed type (double, float or an integer type)", f"{where}.type")
        for size in sizes.values():
            val = expr.evaluate(a["value"], size)
            if isinstance(val, bool) or not isinstance(val, (int, float)):
                raise expr.ExpressionError(f"'{a['value']}' gives {val!r}, not a number")
        return Argument(name, "scalar", typ, value=str(a["value"]))

    def array_argument(self, a: dict, where: str, name: str, role: str, typ: str, sizes: dict,
                       size_names: list[str]) -> Argument:
        """An array argument: its shape expressions over size names, each a positive integer at every size (else
        expr.ExpressionError)."""
        shape = a["shape"]
        if not isinstance(shape, list) or not shape:
            self.fail("must be a non-empty list of expressions over size names", f"{where}.shape")
        for e in shape:
            expr.check(e, size_names)
            for size in sizes.values():
                val = expr.evaluate(e, size)
                if isinstance(val, bool) or not isinstance(val, int) or val <= 0:
                    raise expr.ExpressionError(f"'{e}' gives {val!r}, not a positive integer")
        return Argument(name, role, typ, shape=tuple(str(e) for e in shape))

    def targets(self, targets: Any, sizes: dict, precision: dict) -> dict[str, Target]:
        if not isinstance(targets, dict):
            self.fail("must be a mapping with cpu and cuda", "targets")
        self.keys(targets, TARGETS, TARGETS, "targets.")
        size_names = list(next(iter(sizes.values())))
        out = {}
        for tname in TARGETS:
            out[tname] = self.target(tname, targets[tname], sizes, precision, size_names)
        return out

    def target(self, tname: str, t: Any, sizes: dict, precision: dict, size_names: list[str]) -> Target:
        """Target `tname` (cpu or cuda): its keys, tunable parameters, constraints and, for cuda, its launch."""
        where = f"targets.{tname}"
        if not isinstance(t, dict):
            self.fail("must be a mapping", where)
        keys = TARGET_KEYS[tname]
        self.keys(t, keys["required"], keys["required"] + keys["optional"], f"{where}.")
        tp = t["tune_params"]
        self.tune_params(tp, where, precision, size_names)
        exprs = t["constraints"]
        if exprs is None:
            exprs = []
        if not isinstance(exprs, list) or not all(isinstance(e, str) for e in exprs):
            self.fail("must be a list of expression strings", f"{where}.constraints")
        names = list(tp) + list(precision)
        for j, e in enumerate(exprs):
            try:
                cons.parse(e, names)
            except cons.ConstraintSyntaxError as exc:
                self.fail(str(exc), f"{where}.constraints[{j}]")
        kwargs: dict[str, Any] = {}
        if tname == "cuda":
            kwargs = self.cuda_launch(t, where, sizes, names)
        return Target(tname, {p: list(v) for p, v in tp.items()}, list(exprs), **kwargs)

    def tune_params(self, tp: Any, where: str, precision: dict, size_names: list[str]) -> None:
        """A target's tune_params: identifiers of its own (no precision parameter, size name or the execution
        policy), each with a non-empty list of distinct numbers or strings."""
        if not isinstance(tp, dict):
            self.fail("must be a mapping of parameter -> list of values", f"{where}.tune_params")
        for p, values in tp.items():
            if not isinstance(p, str) or not _IDENT.match(p):
                self.fail("not an identifier", f"{where}.tune_params.{p}")
            if p in precision or p in size_names:
                self.fail("name is also a precision parameter or size name", f"{where}.tune_params.{p}")
            if p == POLICY:
                self.fail("the execution policy is a precision parameter, not a target's: declare it under "
                          "precision", f"{where}.tune_params.{p}")
            if not isinstance(values, list) or not values:
                self.fail("must be a non-empty list", f"{where}.tune_params.{p}")
            if not all(isinstance(x, (int, float, str)) and not isinstance(x, bool) for x in values):
                self.fail("values must be numbers or strings", f"{where}.tune_params.{p}")
            if len(set(values)) != len(values):
                self.fail("lists a value twice", f"{where}.tune_params.{p}")

    def cuda_launch(self, t: dict, where: str, sizes: dict, names: list) -> dict[str, Any]:
        """The cuda target's Target fields: problem_size (1 to 3 positive integer expressions at every size),
        grid_div_x/y/z (expressions over the parameters) and block_size_names (tunable parameters)."""
        kwargs: dict[str, Any] = {}
        ps = t["problem_size"]
        if not isinstance(ps, list) or not 1 <= len(ps) <= 3:
            self.fail("must be a list of 1 to 3 expressions over size names", f"{where}.problem_size")
        try:
            for e in ps:
                for size in sizes.values():
                    val = expr.evaluate(e, size)
                    if isinstance(val, bool) or not isinstance(val, int) or val <= 0:
                        raise expr.ExpressionError(f"'{e}' gives {val!r}, not a positive integer")
        except expr.ExpressionError as exc:
            self.fail(str(exc), f"{where}.problem_size")
        kwargs["problem_size"] = tuple(str(e) for e in ps)
        kwargs["grid_div"] = self.grid_div(t, where, names)
        if "block_size_names" in t:
            bsn = t["block_size_names"]
            if not isinstance(bsn, list) or not all(isinstance(b, str) and b in names for b in bsn):
                self.fail("must be a list of tunable parameter names", f"{where}.block_size_names")
            kwargs["block_size_names"] = tuple(bsn)
        return kwargs

    def grid_div(self, t: dict, where: str, names: list) -> dict[str, list]:
        """The cuda target's grid_div_x/y/z that it gives: lists of expressions over the parameters."""
        grid_div = {}
        for axis in ("x", "y", "z"):
            key = f"grid_div_{axis}"
            if key in t:
                gd = t[key]
                if not isinstance(gd, list) or not all(isinstance(g, str) for g in gd):
                    self.fail("must be a list of parameter names or expressions", f"{where}.{key}")
                for g in gd:
                    try:
                        expr.check(g, names)
                    except expr.ExpressionError as exc:
                        self.fail(str(exc), f"{where}.{key}")
                grid_div[key] = list(gd)
        return grid_div
