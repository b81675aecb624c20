"""Config validation: typos, missing keys and wrong types are errors that name the key."""

from __future__ import annotations

import pytest

from analysis import config as cfg
from analysis.errors import ConfigError
from helpers import REPO

SPACE = {"kernel": "k", "device": "d", "source": "data/x.json"}


def test_both_configs_validate():
    full = cfg.load(REPO / "config" / "config.yaml")
    tiny = cfg.load(REPO / "config" / "test.yaml")
    # 12 benchmark_hub + 14 benchmark_hub_more (1 excluded) + 9 host-CPU spaces + 1 CUDA space (data/sweeps/cuda/)
    assert len(full["spaces"]) == 36
    assert list(cfg.excluded_spaces(full)) == ["RTX_3060_laptop/gemm"]
    assert tiny["output_root"] != "."  # the tiny study never overwrites published artifacts
    cfg.check_files(full, REPO)
    cfg.check_files(tiny, REPO)


def test_misspelt_key_is_rejected_and_named():
    with pytest.raises(ConfigError, match="unknown key 'objectve_sets'") as exc:
        cfg.validate({"spaces": [SPACE], "objectve_sets": {}}, "my.yaml")
    assert exc.value.path == "my.yaml" and exc.value.field == "objectve_sets"


def test_misspelt_nested_key_is_named_with_its_path():
    with pytest.raises(ConfigError) as exc:
        cfg.validate({"spaces": [{**SPACE, "defintion": "x"}]})
    assert exc.value.field == "spaces[0].defintion"


def test_missing_required_key():
    with pytest.raises(ConfigError, match="required") as exc:
        cfg.validate({"spaces": [{"kernel": "k", "device": "d"}]})
    assert exc.value.field == "spaces[0].source"
    with pytest.raises(ConfigError) as exc:
        cfg.validate({})
    assert exc.value.field == "spaces"


def test_wrong_type():
    with pytest.raises(ConfigError, match="expected string") as exc:
        cfg.validate({"spaces": [{**SPACE, "kernel": 3}]})
    assert exc.value.field == "spaces[0].kernel"


def test_unknown_objective_in_a_set():
    with pytest.raises(ConfigError, match="memroy"):
        cfg.validate({"spaces": [SPACE], "objective_sets": {"O3": ["time", "memroy"]}})


def test_duplicate_space_and_missing_file():
    with pytest.raises(ConfigError, match="listed twice"):
        cfg.validate({"spaces": [SPACE, dict(SPACE)]})
    c = cfg.validate({"spaces": [SPACE]})
    with pytest.raises(ConfigError, match="file not found") as exc:
        cfg.check_files(c, REPO)
    assert exc.value.field == "spaces[0].source"
    real = {"kernel": "bessel", "device": "d", "source": "data/sweeps/cpu/amd-epyc-vm/bessel.json.gz",
            "compile_times": ["data/sweeps/cpu/amd-epyc-vm/compile/bessel.json.gz", "nowhere/x.json.gz"]}
    with pytest.raises(ConfigError, match="file not found: nowhere/x.json.gz") as exc:
        cfg.check_files(cfg.validate({"spaces": [real]}), REPO)
    assert exc.value.field == "spaces[0].compile_times[1]"


def test_tuned_grid_must_tune_the_algorithm_or_its_unaware_twin():
    def config(algorithm):
        return {"spaces": [SPACE], "simulation": {"algorithms": {"a": {"algorithm": algorithm, "tuned": "nsga2"}}},
                "hyperparameters": {"kernels": ["k"]}}

    c = cfg.validate(config("nsga2_unaware"))  # the ablation takes its aware twin's picks
    assert c["simulation"]["algorithms"]["a"]["tuned"] == "nsga2"
    with pytest.raises(ConfigError, match="tunes nsga2, not nsga3") as exc:
        cfg.validate(config("nsga3"))
    assert exc.value.field == "simulation.algorithms.a.tuned"


def test_defaults_are_filled():
    c = cfg.validate({"spaces": [SPACE]})
    assert c["output_root"] == "." and set(c["objective_sets"]) == {"O3", "O5", "time"}
    assert c["spaces"][0]["format"] == "auto" and c["spaces"][0]["objectives"] == {}


def _properties(schema, where="config"):
    for name, sub in schema.get("properties", {}).items():
        yield f"{where}.{name}", name in schema.get("required", []), sub
        yield from _properties(sub, f"{where}.{name}")
        if isinstance(sub.get("items"), dict):
            yield from _properties(sub["items"], f"{where}.{name}[]")


def test_every_key_documented_and_optional_keys_defaulted():
    props = list(_properties(cfg.load_schema()))
    assert len(props) > 8
    for where, required, sub in props:
        assert sub.get("description"), f"{where} has no description"
        if not required:
            assert "default" in sub, f"{where} has no default"


# Issue #21: bad input ends in an error naming the config file and the field, never a silent result.

TEST_YAML = REPO / "config" / "test.yaml"


def _tiny(tmp_path, old, new, name="bad.yaml"):
    """config/test.yaml with `old` replaced by `new`, written to tmp_path/name; its path."""
    text = TEST_YAML.read_text()
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


def _error(path, workdir=REPO):
    with pytest.raises(ConfigError) as exc:
        cfg.load(path, workdir=workdir)
    assert str(exc.value).startswith(f"{path}: ")
    return exc.value


NSGA2_UNAWARE = "{popsize: 10, mutation_prob: 0.1}"


@pytest.mark.parametrize("options,field,words", [
    ("{popsize: ten, mutation_prob: 0.1}", "popsize", "must be an int >= 2, found str 'ten'"),
    ("{popsize: 10, mutation_prob: 7.5}", "mutation_prob", "must be a number in [0, 1], found float 7.5"),
    ("{popsize: true, mutation_prob: 0.1}", "popsize", "found bool True"),  # bool is no int
    ("{popsize: 10.0}", "popsize", "must be an int >= 2, found float 10.0"),
    ("{popsize: 1}", "popsize", "int >= 2"),
    ("{mutation_eta: 0}", "mutation_eta", "number > 0"),
    ("{crossover_prob: .nan}", "crossover_prob", "nan"),
    ("{crossover_operator: three-point-crossover}", "crossover_operator",
     "one of: uniform-crossover, single-point-crossover, two-point-crossover"),
    ("{popsize: 10, mutaton_prob: 0.1}", "mutaton_prob", "unknown option(s) ['mutaton_prob']"),
])
def test_comparison_option_of_wrong_type_or_range_names_file_and_field(tmp_path, options, field, words):
    error = _error(_tiny(tmp_path, NSGA2_UNAWARE, options))
    assert error.field == f"simulation.algorithms.nsga2_unaware.options.{field}"
    assert words in error.detail


def test_grid_values_and_fixed_options_are_checked_one_by_one(tmp_path):
    grid = "options: {popsize: [6, 10], mutation_prob: [0.1, 0.2]}"
    error = _error(_tiny(tmp_path, grid, "options: {popsize: [6, 10], mutation_prob: [0.1, 1.2]}"))
    assert error.field == "hyperparameters.grids.nsga2.options.mutation_prob[1]" and "[0, 1]" in error.detail
    error = _error(_tiny(tmp_path, grid, "options: {popsize: [6, '10']}"))
    assert error.field == "hyperparameters.grids.nsga2.options.popsize[1]"
    error = _error(_tiny(tmp_path, grid, grid + "\n      fixed: {crossover_prob: 2}"))
    assert error.field == "hyperparameters.grids.nsga2.fixed.crossover_prob"
    error = _error(_tiny(tmp_path, grid, grid + "\n      fixed: {popsize: 8}"))
    assert error.field == "hyperparameters.grids.nsga2.fixed.popsize" and "both varied" in error.detail
    error = _error(_tiny(tmp_path, grid, "options: {popsize: [6, 6]}"))  # a repeat would run once, silently
    assert error.field == "hyperparameters.grids.nsga2.options.popsize"


@pytest.mark.parametrize("old,new,field,words", [
    ("F: 0.7", "F: 2.5", "de.options.F", "number in [0, 2]"),
    ("CR: 0.6", "CR: -0.1", "de.options.CR", "number in [0, 1]"),
    ("method: best1bin", "method: best3bin", "de.options.method", "one of: best1bin"),
    ("method: single_point", "method: one_point", "ga.options.method", "single_point, two_point"),
    ("maxiter: 20", "maxiter: 0", "ga.options.maxiter", "int >= 1"),
    ("mutation_chance: 5", "mutation_chance: 0.5", "ga.options.mutation_chance", "int >= 1"),
])
def test_constraint_aware_strategy_options_are_checked(tmp_path, old, new, field, words):
    error = _error(_tiny(tmp_path, old, new))
    assert error.field == f"constraint_aware.strategies.{field}" and words in error.detail


def test_every_default_option_passes_its_rule_and_the_listing_shows_the_rules():
    from analysis.simulate.registry import ALGORITHMS, options_markdown, resolve_options

    for name, algorithm in ALGORITHMS.items():
        assert resolve_options(name, {}) == {k: o.default for k, o in algorithm.options.items()}
        for option in algorithm.options.values():
            assert option.problem(option.default) is None and option.rule
    text = options_markdown()
    assert "| `popsize` | Initial population size | int >= 2 | `20` |" in text
    assert "| `mutation_prob` | Mutation probability | number in [0, 1] | `0.1` |" in text
    assert "| `constraint_aware` | constraint-aware optimization (True/False) | bool | `True` |" in text


def test_threshold_must_name_a_kernel_of_the_study(tmp_path):
    error = _error(_tiny(tmp_path, "bessel: {tau: -3.5}", "besel: {tau: -3.5}"))
    assert error.field == "constraint_aware.thresholds.besel"
    assert "kernels: bessel, convolution, dedispersion" in error.detail


def test_training_kernel_typo_is_an_error(tmp_path):
    error = _error(_tiny(tmp_path, "kernels: [convolution]", "kernels: [convolutoin]"))
    assert error.field == "hyperparameters.kernels[0]"


@pytest.mark.parametrize("old,new,field", [
    ("""  algorithms:
    rs: {algorithm: rs}
    nsga2: {algorithm: nsga2, tuned: nsga2}
    nsga3: {algorithm: nsga3, options: {popsize: 10}}
    nsga2_unaware: {algorithm: nsga2_unaware, options: {popsize: 10, mutation_prob: 0.1}}
    ga_aware: {algorithm: genetic_algorithm, options: {constraint_aware: true}}
    # a user's strategy from its file (docs/your-tuner.md): Optuna's TPE sampler through the ask/tell adapter
    optuna: {algorithm: examples/optuna_sampler.py, options: {n_startup_trials: 5}}""", "  algorithms: {}",
     "simulation.algorithms"),
    ("""  grids:
    nsga2:
      algorithm: nsga2
      objective_set: time
      options: {popsize: [6, 10], mutation_prob: [0.1, 0.2]}""", "  grids: {}", "hyperparameters.grids"),
    ("options: {popsize: [6, 10], mutation_prob: [0.1, 0.2]}", "options: {}", "hyperparameters.grids.nsga2.options"),
    ("options: {popsize: [6, 10], mutation_prob: [0.1, 0.2]}", "options: {popsize: []}",
     "hyperparameters.grids.nsga2.options.popsize"),
    ("  objective_sets: [time]\n  algorithms", "  objective_sets: []\n  algorithms", "simulation.objective_sets"),
    ("  budgets: [20]", "  budgets: []", "simulation.budgets"),
    ("  repetitions: 2\n", "  repetitions: 2\n  budgets: []\n", "hyperparameters.budgets"),
])
def test_empty_collections_are_config_errors(tmp_path, old, new, field):
    error = _error(_tiny(tmp_path, old, new))
    assert error.field == field and ("must not be empty" in error.detail or "should be non-empty" in error.detail)


def test_yaml_syntax_error_names_file_line_and_column(tmp_path):
    path = _tiny(tmp_path, "  budgets: [20]", "  budgets: [20")
    line = TEST_YAML.read_text().splitlines().index("  budgets: [20]") + 1
    error = _error(path)
    assert error.field is None
    assert f"line {line + 1}, column 17: not valid YAML: expected ',' or ']'" in error.detail
    assert f"flow sequence at line {line}, column 12" in error.detail


def test_key_given_twice_is_an_error_not_the_last_one_silently(tmp_path):
    path = _tiny(tmp_path, "tables:\n", "tables:\n  bootstrap_resamples: 500\n")
    error = _error(path)
    line = TEST_YAML.read_text().splitlines().index("tables:") + 1
    assert f"line {line + 2}, column 3" in error.detail and "'bootstrap_resamples' is given twice" in error.detail


def test_top_level_must_be_a_mapping(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- spaces\n")
    assert "must be a mapping" in _error(path).detail


@pytest.mark.parametrize("root,words", [
    ("/", "filesystem root"),
    (".", "is the repository"),
    ("./", "is the repository"),
    ("config/..", "is the repository"),
    ("tables", "lies in the published tables/"),
    ("figures/tiny", "lies in the published figures/"),
    ("data/out", "lies in the published data/"),
])
def test_output_root_never_overwrites_the_published_study(tmp_path, root, words):
    error = _error(_tiny(tmp_path, "output_root: .test-output", f"output_root: {root}"))
    assert error.field == "output_root" and words in error.detail
    # not set: the default "." is the repository too
    error = _error(_tiny(tmp_path, "output_root: .test-output\n", "", name="unset.yaml"))
    assert "not set, so it is '.' (the default)" in error.detail


def test_output_root_rule_follows_the_working_directory_and_spares_the_full_study(tmp_path):
    path = _tiny(tmp_path, "output_root: .test-output", "output_root: .")
    assert cfg.load(path, workdir=tmp_path)["output_root"] == "."  # "." elsewhere publishes nothing
    assert cfg.load(REPO / "config" / "config.yaml", workdir=REPO)["output_root"] == "."
    with pytest.raises(ConfigError, match="filesystem root"):  # not even the full study
        cfg.validate({"spaces": [SPACE], "output_root": "/"}, "c.yaml", files=[REPO / "config" / "config.yaml"])
    for root, prefix in ((".", ""), ("./", ""), ("out/", "out/"), ("a/./b", "a/b/"), ("/tmp/x/", "/tmp/x/")):
        assert cfg.output_prefix(root) == prefix


def test_workflow_check_reads_each_file_strictly_and_names_it_relative_to_the_workdir(tmp_path):
    path = _tiny(tmp_path, "tables:\n", "tables:\n  bootstrap_resamples: 500\n")
    config = cfg.read_yaml(TEST_YAML)  # what Snakemake's loader made of it, as far as it goes
    with pytest.raises(ConfigError, match=r"^bad\.yaml: line \d+, column 3: .*given twice"):
        cfg.check_workflow_config(config, [path], REPO, workdir=tmp_path)


def test_check_config_command_names_file_and_field(tmp_path):
    from analysis.cli import main

    path = _tiny(tmp_path, NSGA2_UNAWARE, "{popsize: ten}")
    log = tmp_path / "check.log"
    assert main(["--log", str(log), "check-config", str(TEST_YAML)]) == 0
    assert main(["--log", str(log), "check-config", str(path)]) == 2
    assert (f"{path}: field 'simulation.algorithms.nsga2_unaware.options.popsize': option 'popsize' of algorithm "
            "'nsga2_unaware' must be an int >= 2, found str 'ten'") in log.read_text()


def test_integral_float_is_no_integer_and_nan_or_inf_no_number():
    with pytest.raises(ConfigError, match="expected integer, found float 3.0") as exc:
        cfg.validate({"spaces": [SPACE], "simulation": {"repetitions": 3.0}})
    assert exc.value.field == "simulation.repetitions"
    with pytest.raises(ConfigError, match="expected a finite number, found nan") as exc:
        cfg.validate({"spaces": [SPACE], "constraint_aware": {"thresholds": {"k": {"tau": float("nan")}}}})
    assert exc.value.field == "constraint_aware.thresholds.k.tau"
    with pytest.raises(ConfigError, match="finite") as exc:
        cfg.validate({"spaces": [SPACE], "simulation": {"proposal_cap": float("inf")}})


# A space's group (constraint-aware tables) and its exclusion from both studies.

def test_group_and_excluded_default_to_null_and_take_a_label_or_a_reason():
    c = cfg.validate({"spaces": [SPACE, {**SPACE, "device": "e", "group": "more", "excluded": "incomplete sweep"}]})
    assert (c["spaces"][0]["group"], c["spaces"][0]["excluded"]) == (None, None)
    assert (c["spaces"][1]["group"], c["spaces"][1]["excluded"]) == ("more", "incomplete sweep")
    assert cfg.excluded_spaces(c) == {"e/k": "incomplete sweep"}


@pytest.mark.parametrize("key,value,words", [
    ("group", 3, "expected ['string', 'null'], found int 3"),
    ("excluded", True, "expected ['string', 'null'], found bool True"),
    ("group", "", "''"),
    ("excluded", "", "''"),
    ("group", "all", "names a row set of tables/constraint_aware_gains.csv"),
    ("group", "GPU tuned on time", "names a row set of tables/constraint_aware_gains.csv"),
])
def test_bad_group_or_exclusion_names_the_field(key, value, words):
    with pytest.raises(ConfigError) as exc:
        cfg.validate({"spaces": [{**SPACE, key: value}, {**SPACE, "device": "e"}]})
    assert exc.value.field == f"spaces[0].{key}" and words in exc.value.detail


def test_reserved_group_names_are_the_gains_tables_row_sets():
    from analysis.tables.constraint_aware import ALL_GROUP, GPU_GROUP

    assert cfg.RESERVED_GROUPS == (ALL_GROUP, GPU_GROUP)


def test_constraint_aware_study_must_not_name_an_excluded_space(tmp_path):
    path = _tiny(tmp_path, "spaces: [A100/dedispersion, host-cpu/bessel]",
                 "spaces: [A100/dedispersion, A4000/convolution, host-cpu/bessel]")
    error = _error(path)
    assert error.field == "constraint_aware.spaces[1]"
    assert "'A4000/convolution' is excluded from the studies (CI: a space kept out" in error.detail


def _excluding(kernel="k", **extra):
    """A config whose space of `kernel` is excluded, beside a studied space of kernel j."""
    return {"spaces": [{**SPACE, "kernel": kernel, "excluded": "incomplete"}, {**SPACE, "kernel": "j"}], **extra}


@pytest.mark.parametrize("config,field,words", [
    (_excluding(hyperparameters={"kernels": ["k"]}), "hyperparameters.kernels[0]",
     "every space of kernel 'k' is excluded"),
    (_excluding("bessel"), "hyperparameters.kernels",  # the default training kernels, all of them excluded
     "every space of the training kernels (bessel) is excluded from the studies, so the grid would have no "
     "training space left"),
    (_excluding(constraint_aware={"thresholds": {"k": {"tau": -3}}}), "constraint_aware.thresholds.k",
     "not a kernel of any space of the study (excluded spaces aside)"),
    ({"spaces": [{**SPACE, "excluded": "incomplete"}]}, "spaces", "every space is excluded"),
])
def test_exclusions_that_leave_a_study_part_without_spaces_are_errors(config, field, words):
    with pytest.raises(ConfigError) as exc:
        cfg.validate(config, "my.yaml")
    assert exc.value.field == field and words in exc.value.detail and str(exc.value).startswith("my.yaml: ")


def test_the_default_training_kernels_skip_an_excluded_space_of_one_of_them():
    c = cfg.validate({"spaces": [{**SPACE, "kernel": "bessel", "excluded": "incomplete"},
                                 {**SPACE, "kernel": "mriq"}]})
    assert cfg.excluded_spaces(c) == {"d/bessel": "incomplete"}


def test_every_complete_cuda_sweep_is_in_the_study():
    """A kernel's CUDA space merged whole from the GPU visits (data/sweeps/cuda/<gpu>/<kernel>.json.gz) is a
    space of the full study, with its compile times; a partial one (<kernel>.partial.json.gz) is at most imported
    and listed with its coverage, excluded from both studies."""
    full = cfg.load(REPO / "config" / "config.yaml")
    sources = {s["source"]: s for s in full["spaces"]}
    merged = sorted(p for p in (REPO / "data" / "sweeps" / "cuda").glob("*/*.json.gz"))
    assert merged
    for path in merged:
        rel = path.relative_to(REPO).as_posix()
        if path.name.endswith(".partial.json.gz"):
            assert rel not in sources or sources[rel].get("excluded"), f"{rel} is partial: it must be excluded"
            continue
        assert rel in sources, f"{rel} is not a space of config/config.yaml"
        assert sources[rel]["compile_times"] == [rel.replace(path.name, f"compile/{path.name}")]


def test_the_studied_spaces_are_the_listed_and_swept_ones_without_the_excluded():
    """The tiny config lists three spaces (A4000/convolution excluded) and sweeps host-cpu/bessel into a space."""
    tiny = cfg.load(REPO / "config/test.yaml")
    assert cfg.studied_space_keys(tiny) == [("A100", "convolution"), ("A100", "dedispersion"), ("host-cpu", "bessel")]
    full = cfg.load(REPO / "config/config.yaml")
    keys = cfg.studied_space_keys(full)
    assert len(keys) == len(set(keys)) and ("RTX_3060_laptop", "gemm") not in keys  # the excluded incomplete sweep
