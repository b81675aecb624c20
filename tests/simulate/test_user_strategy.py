"""A user's own strategy module (a .py path or a dotted path): loading, its contract, options, identity with
tune_kernel on the original cache, config checks, display names and figure styles."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from analysis.config import load as load_config
from analysis.errors import ConfigError
from analysis.figures import style
from analysis.names import DISPLAY, display_name
from analysis.simulate import KernelTunerSpace, derive_seed, get_algorithm, resolve_options, seed_name, simulate_run
from analysis.simulate.jobs import run_identity
from analysis.simulate.reference import tune_kernel_trace
from analysis.simulate.registry import ALGORITHMS, OptionError, strategy_source
from helpers import REPO, tiny_space

HUB = REPO / "data" / "benchmark_hub"

# A first-improvement hill climber over Hamming neighbours, written as any Kernel Tuner strategy is.
CLIMBER = textwrap.dedent('''
    """First-improvement hill climbing from random starts (a test strategy)."""
    from kernel_tuner.strategies import common
    from kernel_tuner.strategies.common import CostFunc
    from kernel_tuner.util import StopCriterionReached

    _options = dict(restarts=("random starts", 50), neighbor=("neighbour method", "Hamming"),
                    constraint_aware=("repair infeasible proposals", True))
    display_name = "Climber"


    def tune(searchspace, runner, tuning_options):
        restarts, neighbor, _ = common.get_options(tuning_options.strategy_options, _options)
        cost_func = CostFunc(searchspace, tuning_options, runner)
        try:
            for _ in range(restarts):
                current = list(searchspace.get_random_sample(1)[0])
                best = cost_func(current, check_restrictions=False)
                improved = True
                while improved:
                    improved = False
                    for candidate in searchspace.get_neighbors(tuple(current), neighbor_method=neighbor):
                        cost = cost_func(list(candidate), check_restrictions=False)
                        if cost < best:
                            current, best, improved = list(candidate), cost, True
                            break
        except StopCriterionReached:
            pass
        return cost_func.results
''')

# Several objectives: a uniform sample, its costs tuples.
SAMPLER = textwrap.dedent('''
    from kernel_tuner.strategies.common import CostFunc
    from kernel_tuner.util import StopCriterionReached

    _options = {"batch": ("configurations per call", 5)}
    multi_objective = True


    def tune(searchspace, runner, tuning_options):
        cost_func = CostFunc(searchspace, tuning_options, runner)
        try:
            while True:
                for cost in cost_func.eval_all(searchspace.get_random_sample(tuning_options.strategy_options.get(
                        "batch", 5)), check_restrictions=False):
                    assert isinstance(cost, (list, tuple)) and len(cost) == len(tuning_options.objective)
        except StopCriterionReached:
            pass
        return cost_func.results
''')


@pytest.fixture
def climber(tmp_path: Path) -> str:
    path = tmp_path / "climber.py"
    path.write_text(CLIMBER)
    return str(path)


@pytest.fixture
def sampler(tmp_path: Path) -> str:
    path = tmp_path / "sampler.py"
    path.write_text(SAMPLER)
    return str(path)


def hub_space(objectives=("time",), directions=None) -> tuple[KernelTunerSpace, Path]:
    kernel = HUB / "kernels" / "convolution_milo.json"
    cache = HUB / "cachefiles" / "convolution_milo" / "A100.json.gz"
    return KernelTunerSpace.from_cache_file(cache, kernel, list(objectives), directions), cache


def test_a_file_and_a_dotted_path_load_as_algorithms(climber: str) -> None:
    entry = get_algorithm(climber)
    assert entry.user and entry.display == "Climber" and not entry.multi_objective
    assert list(entry.options) == ["restarts", "neighbor", "constraint_aware"]
    assert get_algorithm(climber) is entry  # loaded once per process
    kt = get_algorithm("kernel_tuner.strategies.greedy_ils")
    assert kt.user and kt.display == "greedy_ils" and "neighbor" in kt.options
    assert display_name(climber) == "Climber" and display_name("nsga2") == "NSGA-II"
    # registered names never go through the module loader
    assert not get_algorithm("nsga2").user and set(DISPLAY) == set(ALGORITHMS)


def test_options_are_checked_against_the_modules_table(climber: str) -> None:
    assert resolve_options(climber, {"restarts": 3}) == {"restarts": 3, "neighbor": "Hamming",
                                                         "constraint_aware": True}
    with pytest.raises(OptionError, match=r"unknown option\(s\) \['restart'\].*valid options: restarts, neighbor, "
                                          "constraint_aware"):
        resolve_options(climber, {"restart": 3})
    with pytest.raises(OptionError, match="option 'restarts' .* must be an int"):
        resolve_options(climber, {"restarts": 2.5})
    with pytest.raises(OptionError, match="must be a string"):
        resolve_options(climber, {"neighbor": 1})
    with pytest.raises(OptionError, match="unknown option"):  # the budget is the suite's to set
        resolve_options(climber, {"max_fevals": 10})


@pytest.mark.parametrize(("source", "message"), [
    ("_options = {}\n", "has no function tune"),
    ("def tune(s, r, t):\n    return []\n", "has no _options table"),
    ("_options = {'a': 1}\ndef tune(s, r, t):\n    return []\n", r"_options\['a'\] must be a \(description, default\)"),
    ("_options = {'max_fevals': ('n', 1)}\ndef tune(s, r, t):\n    return []\n", "which the suite sets itself"),
    ("_options = {}\nmulti_objective = 'yes'\ndef tune(s, r, t):\n    return []\n", "multi_objective must be"),
    ("import no_such_package_here\n", "failed to import: ModuleNotFoundError"),
])
def test_a_module_that_breaks_the_convention_is_named(tmp_path: Path, source: str, message: str) -> None:
    path = tmp_path / "broken.py"
    path.write_text(source)
    with pytest.raises(ValueError, match=message) as err:
        get_algorithm(str(path))
    assert str(path) in str(err.value)


def test_option_rules_tighten_the_types_of_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "ruled.py"
    path.write_text(CLIMBER + '_option_rules = {"restarts": {"kind": "int", "low": 1}, '
                              '"neighbor": {"kind": "choice", "choices": ["Hamming", "adjacent"]}}\n')
    name = str(path)
    assert get_algorithm(name).options["restarts"].rule == "int >= 1"
    with pytest.raises(OptionError, match=r"option 'restarts' .* must be an int >= 1, found int 0"):
        resolve_options(name, {"restarts": 0})
    with pytest.raises(OptionError, match="must be one of: Hamming, adjacent"):
        resolve_options(name, {"neighbor": "strictly-adjacent"})
    for rules, message in [('{"nope": {"kind": "int"}}', "names 'nope', which is not in its _options"),
                           ('{"restarts": {"kind": "int", "low": 100}}', "default of option 'restarts' breaks"),
                           ('{"restarts": {"kind": "integer"}}', "unknown kind 'integer'"),
                           ('{"restarts": {"minimum": 1}}', r"_option_rules\['restarts'\] must be a rule")]:
        bad = tmp_path / f"bad{abs(hash(rules))}.py"
        bad.write_text(CLIMBER + f"_option_rules = {rules}\n")
        with pytest.raises(ValueError, match=message):
            get_algorithm(str(bad))


def test_unknown_names_say_what_is_accepted(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="valid algorithms: rs, .*or a user strategy as a path to a .py file"):
        get_algorithm("hill_climb")
    with pytest.raises(ValueError, match="does not exist"):
        get_algorithm(str(tmp_path / "missing.py"))
    with pytest.raises(ValueError, match="cannot be imported"):
        get_algorithm("no_such_package.strategy")


@pytest.mark.skipif(not (HUB / "kernels").exists(), reason="benchmark_hub data not available")
def test_a_user_strategy_runs_as_tune_kernel_runs_it_on_the_original_cache(climber: str, tmp_path: Path) -> None:
    space, cache = hub_space()
    # tune_kernel opens the user's own cache file, tune_params in the file's order
    assert list(space.tune_params) == json.loads(gzip.decompress(cache.read_bytes()))["tune_params_keys"]
    cache_json = tmp_path / "A100.json"
    cache_json.write_bytes(gzip.decompress(cache.read_bytes()))
    for options in ({}, {"constraint_aware": False, "restarts": 4}):
        for seed in (5, 6):
            engine = simulate_run(space, climber, options, 40, seed)
            reference = tune_kernel_trace(space, cache_json, climber, options, 40, seed)
            assert engine.comparable() == reference.comparable(), (options, seed)
            assert engine.meta["algorithm"] == climber


@pytest.mark.skipif(not (HUB / "kernels").exists(), reason="benchmark_hub data not available")
def test_a_multi_objective_user_strategy_gets_cost_tuples(sampler: str, climber: str, tmp_path: Path) -> None:
    space, cache = hub_space(("time", "compile_time"), ["min", "min"])
    cache_json = tmp_path / "A100.json"
    cache_json.write_bytes(gzip.decompress(cache.read_bytes()))
    engine = simulate_run(space, sampler, {"batch": 7}, 30, 11)
    assert engine.evaluations_spent == 30
    assert engine.comparable() == tune_kernel_trace(space, cache_json, sampler, {"batch": 7}, 30, 11).comparable()
    with pytest.raises(ValueError, match="declares multi_objective = True"):
        simulate_run(space, climber, {}, 30, 11)


def test_the_same_run_in_two_processes(climber: str) -> None:
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(REPO / "tests")!r})
        from helpers import tiny_space
        from analysis.simulate import simulate_run
        print(repr(simulate_run(tiny_space(1), {climber!r}, {{"restarts": 5}}, 20, 99).comparable()))
    ''')
    outs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True,
                           env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}).stdout
            for seed in ("1", "2")]
    assert outs[0] == outs[1] and outs[0].startswith("(")


def test_a_strategy_files_seeds_follow_its_name_not_its_path(climber: str, tmp_path: Path, monkeypatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "climber.py").write_text(CLIMBER + "\n# edited\n")
    (elsewhere / "hill.py").write_text(CLIMBER)
    monkeypatch.chdir(tmp_path)
    space = SimpleNamespace(device="GPU", kernel="k")
    seeds = {name: derive_seed(**run_identity(space, "time", name, {"restarts": 5}, 20, 0))
             for name in (climber, "climber.py", "./elsewhere/climber.py", str(elsewhere / "climber.py"),
                          "elsewhere/hill.py", "nsga2")}
    assert seed_name(climber) == "file:climber" and seed_name("nsga2") == "nsga2"
    assert seed_name("kernel_tuner.strategies.greedy_ils") == "kernel_tuner.strategies.greedy_ils"
    same = {seeds[n] for n in (climber, "climber.py", "./elsewhere/climber.py", str(elsewhere / "climber.py"))}
    assert len(same) == 1 and seeds["elsewhere/hill.py"] not in same and seeds["nsga2"] not in same
    # the same run from two spellings of one file's path
    runs = [simulate_run(tiny_space(1), name, {"restarts": 5}, 20, seeds[name]).comparable()
            for name in (climber, str(elsewhere / "climber.py"))]
    assert runs[0] == runs[1]


def test_strategy_source_is_tracked_only_under_the_working_directory(climber: str, monkeypatch) -> None:
    assert strategy_source("nsga2") is None
    assert strategy_source(climber) == climber
    assert strategy_source("kernel_tuner.strategies.mls") is None  # an installed package's
    monkeypatch.chdir(REPO)
    assert strategy_source("analysis.simulate.unaware") == "analysis/simulate/unaware.py"


def _config(tmp_path: Path, edit) -> Path:
    config = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    config["output_root"] = str(tmp_path / "out")
    edit(config)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_config_checks_a_user_strategy_where_it_is_named(tmp_path: Path, climber: str, sampler: str) -> None:
    def setting(options=None, name=climber):
        return lambda c: c["simulation"]["algorithms"].update(mine={"algorithm": name, "options": options or {}})

    load_config(_config(tmp_path, setting()))  # time only: a single-objective strategy runs
    with pytest.raises(ConfigError, match=r"valid options: restarts, neighbor, constraint_aware") as err:
        load_config(_config(tmp_path, setting({"restart": 2})))
    assert err.value.field == "simulation.algorithms.mine.options.restart"
    with pytest.raises(ConfigError, match="does not exist") as err:
        load_config(_config(tmp_path, setting(name=str(tmp_path / "nope.py"))))
    assert err.value.field == "simulation.algorithms.mine.algorithm"

    def multi(c):
        c["objective_sets"]["two"] = ["time", "memory"]
        c["simulation"]["objective_sets"] = ["two"]
        c["simulation"]["algorithms"] = {"rs": {"algorithm": "rs"}, "mine": {"algorithm": climber}}
        c["hyperparameters"]["kernels"] = []
        c["constraint_aware"]["spaces"] = ["host-cpu/bessel"]

    with pytest.raises(ConfigError, match="does not declare multi_objective = True") as err:
        load_config(_config(tmp_path, multi))
    assert err.value.field == "simulation.algorithms.mine.algorithm"

    def multi_sampler(c):
        multi(c)
        c["simulation"]["algorithms"]["mine"] = {"algorithm": sampler}

    load_config(_config(tmp_path, multi_sampler))


def test_the_constraint_aware_study_takes_a_user_strategy_with_the_option(tmp_path: Path, climber: str,
                                                                          sampler: str) -> None:
    def ca(name):
        return lambda c: c["constraint_aware"]["strategies"].update(mine={"algorithm": name, "options": {}})

    load_config(_config(tmp_path, ca(climber)))
    with pytest.raises(ConfigError, match="has no constraint_aware option in its _options") as err:
        load_config(_config(tmp_path, ca(sampler)))
    assert err.value.field == "constraint_aware.strategies.mine.algorithm"


def test_user_strategies_get_stable_distinct_styles(climber: str, sampler: str) -> None:
    registered = set(style.COLOURS.values())
    a, b = "examples/one.py", "kernel_tuner.strategies.mls"
    assert style.colour(a) not in registered and style.marker(a) not in style.MARKERS.values()
    assert style.colour(a) == style.colour(a) == style.extra_styles([a, "nsga2"])[a][0]
    # two that hash to one slot get different ones, whatever else is drawn
    names = [f"s{i}.py" for i in range(40)]
    clash = next((x, y) for x in names for y in names if x < y and style._slot(x) == style._slot(y))
    styles = style.extra_styles(clash)
    assert styles[clash[0]] != styles[clash[1]]
    settings = {"rs": "rs", "mine": climber, "other": b, "nsga2": "nsga2"}
    drawn = style.setting_styles(settings)
    assert list(drawn) == ["rs", "nsga2", *(["mine", "other"] if climber < b else ["other", "mine"])]
    assert drawn["mine"]["label"] == "Climber" and drawn["other"]["label"] == "mls" and drawn["rs"]["label"] == "RS"
    assert drawn["mine"]["color"] not in registered and drawn["mine"]["color"] != drawn["other"]["color"]
    assert style.ordered([b, "pso", climber, "rs"]) == ["rs", "pso", *sorted([b, climber])]


def test_a_user_strategy_is_named_without_loading_the_registry(tmp_path: Path) -> None:
    """analysis.names shows a user's strategy by its module's display_name, loading only that module: neither the
    registry nor Kernel Tuner (a table or figure job names strategies, it runs none)."""
    strategy = tmp_path / "named_tuner.py"
    strategy.write_text('display_name = "Named tuner"\n_options = {}\n\n\ndef tune(searchspace, runner, options):\n'
                        '    return []\n')
    unnamed = tmp_path / "plain_tuner.py"
    unnamed.write_text("_options = {}\n\n\ndef tune(searchspace, runner, options):\n    return []\n")
    code = ("import sys; from analysis.names import display_name; "
            f"print(display_name({str(strategy)!r}), display_name({str(unnamed)!r}), "
            "'analysis.simulate.registry' in sys.modules, 'kernel_tuner' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["Named", "tuner", "plain_tuner", "False", "False"], out.stderr[-2000:]
