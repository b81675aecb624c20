"""Config validation: typos, missing keys and wrong types are errors that name the key."""

from __future__ import annotations

import pytest

from analysis import config as cfg
from analysis.errors import ConfigError
from conftest import REPO

SPACE = {"kernel": "k", "device": "d", "source": "data/x.json"}


def test_both_configs_validate():
    full = cfg.load(REPO / "config" / "config.yaml")
    tiny = cfg.load(REPO / "config" / "test.yaml")
    assert len(full["spaces"]) == 21  # 12 benchmark_hub + 9 host-CPU spaces
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


def test_tuned_grid_must_tune_the_algorithm_or_its_unaware_twin():
    def config(algorithm):
        return {"spaces": [SPACE], "simulation": {"algorithms": {"a": {"algorithm": algorithm, "tuned": "nsga2"}}}}

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
