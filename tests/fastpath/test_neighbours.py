"""The engine's Hamming, strictly-adjacent and adjacent neighbour indexes answer exactly what Kernel Tuner computes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from kernel_tuner.searchspace import Searchspace

from analysis.fastpath import neighbours
from analysis.fastpath.neighbours import AdjacentIndex, HammingIndex, StrictlyAdjacentIndex
from helpers import REPO

HUB = REPO / "data" / "benchmark_hub"
INDEXES = {"Hamming": HammingIndex, "strictly-adjacent": StrictlyAdjacentIndex, "adjacent": AdjacentIndex}

# Small spaces with the corner cases of Kernel Tuner's index arithmetic: a parameter with a single
# value, values at either end of a list, values no valid configuration has ("b" = 4, "a" >= 40),
# non-numeric values, and a 300-value parameter of which only indices < 40 are valid: the index array
# is int8, so a configuration's index difference to the valid rows wraps in strictly-adjacent (e.g.
# a = 167 is "adjacent" to a = 39, a = 255 to a = 0) and passes the int8 extremes in adjacent.
TINY_SPACES = {
    "tiny": ({"a": [1, 2, 3, 4, 5, 6], "b": [1, 2, 4, 8, 16], "c": [0, 1]}, ["a * b <= 24"]),
    "absent values": ({"a": [1, 2, 3, 4, 5, 6], "b": [1, 2, 4, 8, 16], "c": [7], "d": [0.5, 1.5, 2.5]},
                      ["a * b <= 24", "b != 4", "d < 2 or a > 2"]),
    "int8 wrap": ({"a": list(range(300)), "b": [7], "c": [0, 1, 2, 3], "d": ["x", "y"]}, ["a < 40", "c != 1"]),
    "strings": ({"a": ["p", "q", "r", "s"], "b": [1, 2, 4, 8], "c": [True, False]},
                ["a != 'q' or b < 4", "c or b > 1"]),
}


def assert_matches_kernel_tuner(searchspace: Searchspace, configs: list[tuple]) -> None:
    """Each index's answer for each configuration equals Kernel Tuner's: same positions and dtype, or same error."""
    for method, index_class in INDEXES.items():
        index = index_class(searchspace)
        for config in configs:
            try:
                expected = searchspace.get_neighbors_indices_no_cache(config, method)
            except Exception as error:  # noqa: BLE001 - the index must raise the same
                with pytest.raises(type(error)) as raised:
                    index.neighbours(config)
                assert str(raised.value) == str(error), (method, config)
                continue
            got = index.neighbours(config)
            assert np.array_equal(expected, got) and expected.dtype == got.dtype, (method, config, expected, got)


def random_configs(searchspace: Searchspace, count: int, seed: int) -> list[tuple]:
    """Configurations of random values from each parameter's list: mostly outside the space."""
    rng = np.random.default_rng(seed)
    return [tuple(values[rng.integers(len(values))] for values in searchspace.params_values) for _ in range(count)]


@pytest.mark.parametrize("name", sorted(TINY_SPACES))
def test_adjacency_indexes_match_kernel_tuner_on_tiny_spaces(name: str) -> None:
    """Every combination of parameter values, in the space or not, and values outside the lists (errors)."""
    params, restrictions = TINY_SPACES[name]
    searchspace = Searchspace(params, restrictions, 1024)
    configs = list(itertools.product(*params.values()))
    assert 0 < searchspace.size < len(configs)
    first = tuple(values[0] for values in params.values())
    configs += [(-1,) + first[1:], first[:-1] + ("not a value",), first[:1] + (3,) + first[2:]]
    assert_matches_kernel_tuner(searchspace, configs)


def test_int8_wrap_space_has_the_corner_cases() -> None:
    """The "int8 wrap" space does reach the index arithmetic's corner cases the test above relies on."""
    params, restrictions = TINY_SPACES["int8 wrap"]
    searchspace = Searchspace(params, restrictions, 1024)
    assert searchspace.get_list_param_indices_numpy().dtype == np.int8
    strictly, adjacent = StrictlyAdjacentIndex(searchspace), AdjacentIndex(searchspace)
    rows = lambda positions: sorted(searchspace.list[i] for i in positions)  # noqa: E731
    assert rows(strictly.neighbours((255, 7, 0, "x"))) == [(0, 7, 0, "x"), (0, 7, 0, "y")]  # 0 - 255 wraps to 1
    assert rows(strictly.neighbours((167, 7, 0, "x"))) == [(39, 7, 0, "x"), (39, 7, 0, "y")]  # |-128| is -128
    assert rows(adjacent.neighbours((150, 7, 0, "x"))) == [(39, 7, c, d) for c in (0, 2) for d in "xy"]
    assert rows(adjacent.neighbours((200, 7, 0, "x"))) == []  # the nearest index below, 39, is beyond -128


@pytest.mark.skipif(not (HUB / "cachefiles" / "convolution_milo" / "A100.json.gz").exists(),
                    reason="benchmark_hub data not available")
def test_adjacency_indexes_match_kernel_tuner_on_a_real_space() -> None:
    """Every configuration of a real 4362-configuration space and 1000 random ones outside it."""
    from analysis.simulate import KernelTunerSpace
    from analysis.simulate.setup import fresh_searchspace

    space = KernelTunerSpace.from_cache_file(HUB / "cachefiles" / "convolution_milo" / "A100.json.gz",
                                      HUB / "kernels" / "convolution_milo.json", ["time"], None)
    searchspace = fresh_searchspace(space)
    outside = [c for c in random_configs(searchspace, 1000, seed=5) if searchspace.get_param_config_index(c) is None]
    assert len(outside) > 500
    assert_matches_kernel_tuner(searchspace, [tuple(c) for c in searchspace.list] + outside)



@pytest.fixture(params=["int64 keys", "Python-integer keys"])
def hamming_keys(request, monkeypatch):
    """Run a test with the Hamming index's mixed-radix keys in int64 and, forced, as Python integers (its path for
    spaces whose product of value-list lengths passes int64)."""
    if request.param == "Python-integer keys":
        monkeypatch.setattr(neighbours, "_INT64_KEYS_BELOW", 1)
    return request.param


@pytest.mark.parametrize("name", list(TINY_SPACES))
def test_hamming_index_key_types_on_tiny_spaces(name, hamming_keys) -> None:
    params, restrictions = TINY_SPACES[name]
    searchspace = Searchspace(params, restrictions, 1024)
    configs = list(itertools.product(*params.values())) + [(999,) * len(params)]
    for config in configs:
        try:
            expected = searchspace.get_neighbors_indices_no_cache(config, "Hamming")
        except Exception as error:  # noqa: BLE001 - the index must raise the same
            with pytest.raises(type(error)):
                HammingIndex(searchspace).neighbours(config)
            continue
        got = HammingIndex(searchspace).neighbours(config)
        assert np.array_equal(expected, got) and expected.dtype == got.dtype, (name, config)

