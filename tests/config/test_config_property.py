"""Property: a corrupted config/test.yaml is either genuinely valid or a config error naming the file.

Random corruptions (a key deleted, a value of another type, an unknown key inserted, a number
pushed out of range, a bad string) must never end in a traceback that names no file, nor be
accepted with a meaning the config does not state: an accepted config conforms to the schema,
every algorithm option to the registry's declared type and range, and the corrupted value is kept
exactly as written (no conversion).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from analysis import config as cfg
from analysis.errors import ConfigError
from analysis.simulate.registry import get_algorithm
from helpers import REPO

TEST_YAML = REPO / "config" / "test.yaml"
LABEL = "config/test.yaml"
BASE = cfg.read_yaml(TEST_YAML)
NAN = float("nan")


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path into `node` (keys and list indices), the root () included."""
    out = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*path, i))
    return out


def _get(node: Any, path: tuple) -> Any:
    for step in path:
        node = node[step]
    return node


PATHS = _paths(BASE)
NODES = [p for p in PATHS if p]
CONTAINERS = [p for p in PATHS if isinstance(_get(BASE, p), dict)]
KEYS = [p for p in NODES if isinstance(p[-1], str)]
NUMBERS = [p for p in NODES if isinstance(_get(BASE, p), (int, float)) and not isinstance(_get(BASE, p), bool)]
STRINGS = [p for p in NODES if isinstance(_get(BASE, p), str)]

ODD_STRINGS = ["", "ten", "besel", "/", ".", "./", "..", "tables", "data/x", "a b", "x/../..", "two-point",
               "O3 ", "rs", "nsga2", "time", "bessel", "single_point"]
ODD_VALUES = [True, False, None, [], {}, [1, 2], ["time"], {"zzz": 1}, -1, 0, 1, 2, 7.5, -3.5, 0.5, 1e9, NAN,
              float("inf"), *ODD_STRINGS]
# keys no mapping of the config has, and optional keys that test.yaml leaves to their defaults
NEW_KEYS = ["zzz", "besel", "popsz", "O3", "constraint_aware", "rs", "tuned", "options", "fixed", "proposal_cap",
            "cutoff_margin", "cutoff_percentile", "beta", "error", "seed", "budgets", "format", "definition",
            "objective_sets", "space", "random_search", "baseline", "mutation_eta", "crossover_operator", "group",
            "excluded"]


def _pick(draw, paths: list[tuple]) -> tuple:
    """A path from `paths`: first its top-level section, uniformly, then a path within it, so that the
    small sections (output_root, thresholds, the grid) are hit as often as the long spaces list."""
    sections = sorted({p[:1] for p in paths}, key=str)
    section = draw(st.sampled_from(sections))
    return draw(st.sampled_from([p for p in paths if p[:1] == section]))


def _number_edits(x: float) -> list[Any]:
    return [-x, x * 1000, x + 0.5, 0, -1, x / 1000, float(x), NAN, float("inf"), True]


def corrupt(kind: str, path: tuple, arg: Any) -> tuple[tuple | None, Any, dict]:
    """Apply one corruption to a copy of test.yaml's config: (path of the value written or None, that
    value, the config). delete: remove `path`; rename: move its value to key `arg`; replace, insert,
    number, string: write `arg` at `path`."""
    config = copy.deepcopy(BASE)
    parent = _get(config, path[:-1])
    if kind == "delete":
        del parent[path[-1]]
        return None, None, config
    if kind == "rename":  # a misspelt or other key, keeping the value
        if arg in parent:
            return None, None, config
        parent[arg] = parent.pop(path[-1])
        return (*path[:-1], arg), copy.deepcopy(parent[arg]), config
    parent[path[-1]] = copy.deepcopy(arg)
    return path, arg, config


@st.composite
def corruptions(draw) -> tuple[str, tuple, Any]:
    """(kind, path, argument) of a random corruption, for `corrupt`."""
    kind = draw(st.sampled_from(["delete", "rename", "replace", "insert", "number", "string"]))
    if kind == "delete":
        return kind, _pick(draw, NODES), None
    if kind == "rename":
        path = _pick(draw, KEYS)
        key = path[-1]
        return kind, path, draw(st.sampled_from([key[:-1], key + "s", key.upper(), key[0] + key, *NEW_KEYS]))
    if kind == "insert":
        return kind, (*_pick(draw, CONTAINERS), draw(st.sampled_from(NEW_KEYS))), draw(st.sampled_from(ODD_VALUES))
    if kind == "number":
        path = _pick(draw, NUMBERS)
        return kind, path, draw(st.sampled_from(_number_edits(_get(BASE, path))))
    if kind == "string":
        return kind, _pick(draw, STRINGS), draw(st.sampled_from(ODD_STRINGS))
    return kind, _pick(draw, NODES), draw(st.sampled_from(ODD_VALUES))


UNAWARE = ("simulation", "algorithms", "nsga2_unaware", "options")
# The cases of issue #21 and their kin, always run before the random ones.
ISSUE_CASES = [
    ("replace", (*UNAWARE, "popsize"), "ten"),
    ("replace", (*UNAWARE, "mutation_prob"), 7.5),
    ("replace", (*UNAWARE, "popsize"), True),
    ("replace", (*UNAWARE, "popsize"), 10.0),
    ("rename", ("constraint_aware", "thresholds", "bessel"), "besel"),
    ("replace", ("simulation", "algorithms"), {}),
    ("replace", ("hyperparameters", "grids"), {}),
    ("replace", ("hyperparameters", "grids", "nsga2", "options", "popsize"), []),
    ("replace", ("hyperparameters", "grids", "nsga2", "options", "mutation_prob", 1), 1.5),
    ("replace", ("constraint_aware", "strategies", "de", "options", "F"), 2.5),
    ("replace", ("output_root",), "/"),
    ("replace", ("output_root",), "."),
    ("delete", ("output_root",), None),
    ("replace", ("constraint_aware", "thresholds", "bessel", "tau"), NAN),
    ("replace", ("simulation", "repetitions"), 3.0),
    ("insert", ("spaces", 0, "objective_sets"), []),
    ("insert", ("hyperparameters", "budgets"), []),
]


def _option_sites(config: dict) -> list[tuple[str, dict]]:
    """(algorithm, options) of every setting: comparison, each grid point's values and fixed, strategies."""
    sites = [(s["algorithm"], s["options"]) for s in config["simulation"]["algorithms"].values()]
    for grid in config["hyperparameters"]["grids"].values():
        sites.append((grid["algorithm"], grid["fixed"]))
        sites += [(grid["algorithm"], {name: v}) for name, values in grid["options"].items() for v in values]
    sites += [(s["algorithm"], s["options"]) for s in config["constraint_aware"]["strategies"].values()]
    return sites


def _assert_genuinely_valid(config: dict) -> None:
    """What every accepted config satisfies, checked apart from the validator's own traversal."""
    assert not list(cfg._Validator(cfg.load_schema()).iter_errors(config))
    for algorithm, options in _option_sites(config):
        table = get_algorithm(algorithm).options
        for name, value in options.items():
            assert name in table and table[name].problem(value) is None, (algorithm, name, value)
    kernels = {s["kernel"] for s in config["spaces"]} | {s["kernel"] for s in config["sweeps"] if s["space"]}
    assert set(config["constraint_aware"]["thresholds"]) <= kernels
    assert config["simulation"]["algorithms"] and config["simulation"]["budgets"]
    assert config["simulation"]["objective_sets"] and config["hyperparameters"]["grids"]
    out = (REPO / config["output_root"]).resolve()
    assert out != REPO.resolve() and out != Path("/")
    assert not any(out == REPO / d or REPO / d in out.parents for d in cfg.PUBLISHED)
    for path in _paths(config):
        value = _get(config, path)
        assert not (isinstance(value, float) and not math.isfinite(value)), path


def _kept(written: Any, used: Any) -> bool:
    """`used` is `written` as written: equal and of the same type all the way down (1 is not True, 20 is
    not 20.0), where a mapping may have gained only the schema's defaults for keys it left out."""
    if type(written) is not type(used):
        return False
    if isinstance(written, dict):
        return all(k in used and _kept(v, used[k]) for k, v in written.items())
    if isinstance(written, list):
        return len(written) == len(used) and all(_kept(x, y) for x, y in zip(written, used))
    return written == used


def _cases(test):
    for case in ISSUE_CASES:
        test = example(case)(test)
    return test


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(corruptions())
@_cases
def test_corrupted_test_config_is_valid_or_an_error_naming_the_file(corruption) -> None:
    kind, path, arg = corruption
    written, value, config = corrupt(kind, path, arg)
    try:
        accepted = cfg.validate(config, LABEL, files=[TEST_YAML], workdir=REPO)
        cfg.check_files(accepted, REPO, LABEL)
    except ConfigError as exc:
        event(f"{kind}: config error")
        assert exc.path == LABEL and str(exc).startswith(f"{LABEL}: "), str(exc)
        return
    event(f"{kind}: accepted")
    assert corruption not in ISSUE_CASES, f"accepted {corruption}"
    _assert_genuinely_valid(accepted)
    if written is not None:  # the value written is the value used
        assert _kept(value, _get(accepted, written)), (written, value, _get(accepted, written))


def test_the_uncorrupted_config_is_accepted_as_written() -> None:
    accepted = cfg.validate(copy.deepcopy(BASE), LABEL, files=[TEST_YAML], workdir=REPO)
    _assert_genuinely_valid(accepted)
    assert _kept(BASE, accepted)
