"""Library code replaced by an exact equivalent while a context is active, and restored after.

The engine and the scoring swap a library's attribute (a Kernel Tuner function, a pymoo class, the
`np` a module sees) for an equivalent that gives the same results faster or reproducibly; the
library itself is not edited. `swapped` is the one way they do it, `ModuleWith` the stand-in module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def swapped(owner: Any, **replacements: Any) -> Iterator[None]:
    """Set each named attribute of `owner` (a module or class) to its replacement while active; restore the
    originals afterwards, also when the body raises."""
    originals = {name: getattr(owner, name) for name in replacements}
    for name, replacement in replacements.items():
        setattr(owner, name, replacement)
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(owner, name, original)


class ModuleWith:
    """`module` as attribute look-ups see it, except for the attributes given here."""

    def __init__(self, module: Any, **overrides: Any) -> None:
        self._module = module
        self.__dict__.update(overrides)

    def __getattr__(self, name: str) -> Any:  # only called for names not overridden
        return getattr(self._module, name)
