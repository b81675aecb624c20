"""Sweep harness: the spec loader's errors, safe expressions, precision encoding, error metrics."""

from __future__ import annotations

import shutil

import ml_dtypes
import numpy as np
import pytest
import yaml

from analysis.errors import InputError
from analysis.sweep import expr, harness, metrics, precision
from analysis.sweep.spec import SpecError, load_spec
from helpers import REPO

BESSEL = REPO / "workflow" / "kernels" / "bessel" / "spec.yaml"


def _spec_with(tmp_path, change):
    doc = yaml.safe_load(BESSEL.read_text())
    change(doc)
    folder = tmp_path / "bessel"
    folder.mkdir(exist_ok=True)
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _set(doc, dotted, value):
    keys = dotted.split(".")
    for k in keys[:-1]:
        doc = doc[int(k)] if isinstance(doc, list) else doc[k]
    if value is KeyError:
        del doc[keys[-1]]
    elif isinstance(doc, list):
        doc[int(keys[-1])] = value
    else:
        doc[keys[-1]] = value


@pytest.mark.parametrize("dotted,value,field,words", [
    ("function", "bessel-i0", "function", "identifier"),
    ("seed", -1, "seed", "non-negative"),
    ("name", "other", "name", "folder"),
    ("title", KeyError, "title", "missing"),
    ("sizes.tiny", {"m": 3}, "sizes.tiny", "differ"),
    ("sizes.cpu", KeyError, "sizes", "'cpu' is required"),
    ("precision.T_x", ["double", "fp16"], "precision.T_x", "unknown type"),
    ("arguments.0.role", "inout", "arguments[0].role", "must be one of"),
    ("arguments.0.type", "T_w", "arguments[0].type", "neither"),
    ("precision.exec_policy", [1, 2], "precision.exec_policy", "including 0"),
    ("precision.exec_policy", [0, 3], "precision.exec_policy", "distinct policies"),
    ("tolerance", KeyError, "tolerance", "missing"),
    ("tolerance", 0, "tolerance", "in (0, 1)"),
    ("paper", {"configurations": 3}, "paper", "positive integer"),
    ("arguments.0.shape", ["n + q"], "arguments[0].shape", "unknown name 'q'"),
    ("arguments.0.shape", ["__import__('os')"], "arguments[0].shape", "not allowed"),
    ("arguments.2.value", "n.real", "arguments[2].value", "not allowed"),
    ("memory", "n * bytes(T_x) + open('x')", "memory", "not allowed"),
    ("memory", "n * bytes(T_w)", "memory", "unknown"),
    ("targets.cpu.tune_params.elems_per_iter", [], "targets.cpu.tune_params.elems_per_iter", "non-empty"),
    ("targets.cpu.tune_params.exec_policy", [0], "targets.cpu.tune_params.exec_policy", "not"),
    ("targets.cpu.constraints", ["elems_per_iter >"], "targets.cpu.constraints[0]", "not an expression"),
    ("targets.cpu.constraints", ["elems_per_iter > 100"], "targets.cpu.constraints", "no configuration"),
    ("targets.cuda.problem_size", KeyError, "targets.cuda.problem_size", "missing"),
    ("targets.cuda.grid_div_y", "block_size_x", "targets.cuda.grid_div_y", "list"),
    ("targets.gpu", {}, "targets.gpu", "unknown key"),
    ("reference_params", {"elems_per_iter": 3}, "reference_params.elems_per_iter", "not in"),
    ("extra", 1, "extra", "unknown key"),
])
def test_spec_errors_name_file_and_field(tmp_path, dotted, value, field, words):
    path = _spec_with(tmp_path, lambda d: _set(d, dotted, value))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.path == str(path)
    assert info.value.field == field
    assert words in info.value.detail
    assert isinstance(info.value, InputError)


def test_spec_not_yaml_and_missing(tmp_path):
    (tmp_path / "bessel").mkdir()
    bad = tmp_path / "bessel" / "spec.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(bad)
    with pytest.raises(SpecError, match="cannot be read"):
        load_spec(tmp_path / "nothing" / "spec.yaml")


def test_bessel_spec_contents():
    spec = harness.load_spec("bessel")
    assert list(spec.tune_params("cpu")) == ["threads", "elems_per_iter", "dyn_chunk", "T_x", "T_q", "T_term", "T_sum",
                                             "T_y"]
    assert spec.argument_precision_params() == ["T_x", "T_y"]
    config = {"threads": 1, "elems_per_iter": 1, "T_x": "half", "T_q": "float", "T_term": "float", "T_sum": "double",
              "T_y": "double"}
    assert spec.memory_bytes(config, "tiny") == 2048 * (2 + 8)
    assert spec.problem_size("gpu") == [16777216]
    valid = spec.valid_configs("cpu")
    # one thread: 4 elements per iteration; two: 4 x 2 schedules
    assert len(valid) == (4 + 4 * 2) * 220 and spec.precision_combinations("cuda") == 220
    narrower = {("double", "float"), ("double", "half"), ("double", "bfloat16"), ("float", "half"),
                ("float", "bfloat16")}
    assert all(c["T_term"] == c["T_sum"] or (c["T_sum"], c["T_term"]) in narrower for c in valid)
    assert spec.paper["precision_params"] == len(spec.precision) == 5


def test_expressions_are_safe_and_typed():
    assert expr.evaluate("n * (bytes(T_x) + bytes(double))", {"n": 10, "T_x": "half"}) == 100
    assert expr.evaluate("max(n // 4, 3) if n > 2 else 1", {"n": 20}) == 5
    for bad in ("__import__('os').system('true')", "n.bit_length()", "[x for x in n]", "lambda: 1", "n[0]"):
        with pytest.raises(expr.ExpressionError):
            expr.evaluate(bad, {"n": 4})
    with pytest.raises(expr.ExpressionError, match="unknown type"):
        expr.evaluate("bytes(T)", {"T": "fp16"})


@pytest.mark.parametrize("type_name,tol", [("double", 0), ("float", 2**-24), ("half", 2**-11), ("bfloat16", 2**-8)])
def test_encode_decode_round_trip(type_name, tol):
    rng = np.random.default_rng(0)
    x = rng.uniform(-100, 100, 1000)
    for for_c in (False, True):
        stored = precision.encode(x, type_name, for_c=for_c)
        if for_c and type_name in ("half", "bfloat16"):
            assert stored.dtype == np.uint16
        else:
            assert stored.dtype == precision.dtype(type_name)
        back = precision.decode(stored, type_name)
        assert back.dtype == np.float64
        np.testing.assert_allclose(back, x, rtol=tol, atol=0)
        # a second round trip is exact: decoded values are representable
        np.testing.assert_array_equal(precision.decode(precision.encode(back, type_name, for_c=for_c), type_name), back)


def test_bfloat16_bits_are_ml_dtypes_bits():
    x = np.array([1.0, 3.140625, -2.5e38, 1e-40])
    bits = precision.encode(x, "bfloat16", for_c=True)
    np.testing.assert_array_equal(bits, x.astype(ml_dtypes.bfloat16).view(np.uint16))
    assert bits[0] == 0x3F80
    with pytest.raises(ValueError):
        precision.decode(np.zeros(3, np.float32), "double")


def test_error_metrics_by_hand():
    ref = np.array([1.0, 2.0, 4.0, 0.0])
    out = np.array([1.1, 1.8, 4.0, 1e-9])
    m = metrics.error_metrics(out, ref)
    assert m["mre"] == pytest.approx((0.1 / 1 + 0.2 / 2 + 0 + 1e-9 / 1e-8) / 4)
    assert m["nrmse"] == pytest.approx(np.sqrt((0.01 + 0.04 + 1e-18) / 4) / (7 / 4))
    assert m["nmae"] == pytest.approx((0.1 + 0.2 + 1e-9) / 7)
    assert metrics.error_metrics(ref, ref) == {"mre": 0.0, "nrmse": 0.0, "nmae": 0.0}
    assert np.isinf(metrics.error_metrics(np.array([np.inf, 1, 1, 0]), ref)["mre"])
    assert metrics.worst([{"mre": 1, "nrmse": 2, "nmae": 3}, {"mre": 2, "nrmse": float("nan"), "nmae": 0}]) == \
        pytest.approx({"mre": 2, "nrmse": float("nan"), "nmae": 3}, nan_ok=True)


def test_covering_sample_covers_every_value():
    spec = harness.load_spec("bessel")
    for target in ("cpu", "cuda"):
        sample = harness.covering_sample("bessel", target)
        valid = spec.valid_configs(target)
        assert all(c in valid for c in sample)
        for p, values in spec.tune_params(target).items():
            assert {c[p] for c in sample} == set(values)
        assert len(sample) <= max(len(v) for v in spec.tune_params(target).values()) + 2


def test_unreachable_value_is_named(tmp_path, monkeypatch):
    folder = tmp_path / "kernels" / "bessel"
    shutil.copytree(BESSEL.parent, folder)
    doc = yaml.safe_load(BESSEL.read_text())
    # a new list: the spec shares one constraint list between its targets (a YAML anchor)
    doc["targets"]["cpu"]["constraints"] = [*doc["targets"]["cpu"]["constraints"], "elems_per_iter == 1"]
    (folder / "spec.yaml").write_text(yaml.safe_dump(doc))
    monkeypatch.setattr(harness, "kernel_dir", lambda k: tmp_path / "kernels" / k)
    monkeypatch.setattr(harness, "load_spec", lambda k: load_spec(tmp_path / "kernels" / k / "spec.yaml"))
    with pytest.raises(SpecError) as info:
        harness.covering_sample("bessel", "cpu")
    assert info.value.field == "targets.cpu.tune_params.elems_per_iter"


def test_run_cpu_reports_compiler_errors_and_missing_parameters():
    with pytest.raises(ValueError, match="lacks parameters"):
        harness.run_cpu("bessel", {"elems_per_iter": 8})
    bad = harness.all_double_config("bessel", "cpu") | {"T_sum": "no_such_type"}
    with pytest.raises(RuntimeError, match="g\\+\\+ failed"):
        harness.run_cpu("bessel", bad)
