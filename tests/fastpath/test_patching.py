"""analysis.fastpath.patching: library attributes swapped while a context is active, and a module with overrides."""

import types

import numpy as np
import pytest

from analysis.fastpath.patching import ModuleWith, swapped


def test_swapped_sets_and_restores_even_when_the_body_raises():
    owner = types.SimpleNamespace(a=1, b="x")
    with swapped(owner, a=2, b="y"):
        assert (owner.a, owner.b) == (2, "y")
    assert (owner.a, owner.b) == (1, "x")
    with pytest.raises(RuntimeError), swapped(owner, a=3):
        assert owner.a == 3
        raise RuntimeError
    assert owner.a == 1
    with pytest.raises(AttributeError):  # only existing attributes are swapped
        with swapped(owner, c=0):
            pass
    assert not hasattr(owner, "c")


def test_module_with_overrides_only_what_it_is_given():
    fake = ModuleWith(np, savez_compressed=np.savez, linalg=ModuleWith(np.linalg, solve=len))
    assert fake.savez_compressed is np.savez and fake.load is np.load and fake.ndarray is np.ndarray
    assert fake.linalg.solve is len and fake.linalg.norm is np.linalg.norm
