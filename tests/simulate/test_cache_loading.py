"""The engine's cache loader (orjson where it agrees with json, json elsewhere) gives what json.loads gives."""

from __future__ import annotations

import gzip
import json
import math
import random
from pathlib import Path

import pytest

from analysis.kt import space as space_module
from analysis.kt.space import load_cache_file
from helpers import REPO

HUB = REPO / "data" / "benchmark_hub" / "cachefiles"


def typed(value):
    """A value with every number tagged by its exact type and bits, so int 1 and float 1.0 (or -0.0 and 0.0) differ."""
    if isinstance(value, dict):
        return ("dict", [(k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value.hex())
    return (type(value).__name__, value)


def json_reference(path: Path) -> dict:
    """What the loader did before orjson: json.loads of the stripped text, closed if unfinished."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        text = fh.read().strip()
    if text and text[-3:] not in ("}\n}", "}}}"):
        text = text.rstrip(",") + "}\n}"
    return json.loads(text)


@pytest.mark.parametrize("cache", sorted(HUB.glob("*/A100.json.gz")), ids=lambda p: p.parent.name)
def test_published_caches_load_as_json_loads_them(cache):
    assert typed(load_cache_file(cache)) == typed(json_reference(cache))


def _write(tmp_path: Path, text: str, name: str = "cache.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def _cache_text(entries: str) -> str:
    return '{\n"device_name": "d", "tune_params_keys": ["x"],\n"cache": {\n' + entries + "\n}\n}"


def test_floats_round_as_json_rounds_them(tmp_path):
    """Random doubles written with up to 20 significant digits, subnormals and extremes: bit-identical floats."""
    rng = random.Random(7)
    numbers = []
    for _ in range(3000):
        x = rng.uniform(-1, 1) * 10 ** rng.randint(-320, 308)
        numbers.append(f"{x:.{rng.randint(1, 18)}g}")
        numbers.append(repr(x))
    numbers += ["5e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "-0.0", "0.1", "1e22", "1E+2"]
    text = _cache_text(",\n".join(f'"{i}": {{"x": {i}, "time": {n}}}' for i, n in enumerate(numbers)))
    path = _write(tmp_path, text)
    assert typed(load_cache_file(path)) == typed(json.loads(text))


@pytest.mark.parametrize("number", ["123456789012345678901234567890", "-9223372036854775809",
                                    "18446744073709551616", "0.1000000000000000055511151231257827"])
def test_long_digit_runs_are_read_by_json(tmp_path, number):
    """orjson turns integers beyond 64 bits into floats; such files go to json, which keeps them exact."""
    text = _cache_text(f'"1": {{"x": 1, "time": {number}}}')
    loaded = load_cache_file(_write(tmp_path, text))
    assert typed(loaded) == typed(json.loads(text))
    assert type(loaded["cache"]["1"]["time"]) is type(json.loads(number))


def test_nan_and_infinity_as_kernel_tuner_writes_them(tmp_path):
    text = _cache_text('"1": {"x": 1, "time": NaN},\n"2": {"x": 2, "time": Infinity},\n'
                       '"3": {"x": 3, "time": -Infinity}')
    loaded = load_cache_file(_write(tmp_path, text))
    assert math.isnan(loaded["cache"]["1"]["time"])
    assert loaded["cache"]["2"]["time"] == math.inf and loaded["cache"]["3"]["time"] == -math.inf


def test_unfinished_gzipped_crlf_and_repeated_keys(tmp_path):
    """An unclosed cache (Kernel Tuner's while tuning) is closed; CRLF files read as text; the last repeated key
    wins."""
    entries = '"1": {"x": 1, "time": 1.5},\n"2": {"x": 2, "time": 2.5},\n"2": {"x": 2, "time": 3.5},'
    unfinished = '{\n"device_name": "d", "tune_params_keys": ["x"],\n"cache": {\n' + entries
    for name, text in (("a.json", unfinished), ("b.json", unfinished.replace("\n", "\r\n")),
                       ("c.json", _cache_text(entries.rstrip(",")).replace("\n", "\r\n"))):
        path = _write(tmp_path, text, name)
        assert typed(load_cache_file(path)) == typed(json_reference(path))
        assert load_cache_file(path)["cache"]["2"]["time"] == 3.5
    gz = tmp_path / "d.json.gz"
    gz.write_bytes(gzip.compress(unfinished.encode()))
    assert typed(load_cache_file(gz)) == typed(json_reference(gz))


@pytest.mark.parametrize("content", [_cache_text('"1": {"x": 1, "time": 1.5,}').encode(), b'{"cache": "\xff"}'],
                         ids=["malformed JSON", "not UTF-8"])
def test_unreadable_file_is_an_input_error_naming_it(tmp_path, content):
    """The error names the file and carries the message json gives for it."""
    from analysis.errors import InputError

    path = tmp_path / "cache.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as loaded:
        load_cache_file(path)
    with pytest.raises((json.JSONDecodeError, UnicodeDecodeError)) as json_side:
        json_reference(path)
    assert loaded.value.path == str(path) and str(json_side.value) in str(loaded.value)


def test_digit_table_marks_only_digits():
    table = space_module._DIGITS_AS_NINES
    assert [b for b in range(256) if table[b] == ord("9")] == list(range(ord("0"), ord("9") + 1))
