"""What Kernel Tuner 1.5.0's `pyatf_strategies` needs to run pyATF 0.0.13 (the newest pyATF on PyPI).

Three things, applied only around a run of that strategy (`analysis.simulate.engine`):

- Kernel Tuner's `Searchspace.get_tune_params_pyatf` builds each tuning parameter as
  `TP(name, values, constraint, constraint_source)`; pyATF 0.0.13's `TP` takes no fourth argument, so
  every run fails with a TypeError. `compatible_tp` passes the first three on, which is all 0.0.13's
  `TP` stores (it keeps no constraint source); a pyATF whose `TP` accepts the fourth is left alone.
- The strategy creates `./pyatf_searchspace_caches` in the working directory on every run (even with
  its cache off); the run is made in a temporary working directory so that nothing is left in the
  user's folder.
- Kernel Tuner prints the source of every restriction it compiles for pyATF to standard output; the
  run's standard output is discarded (logs and a command's output stay readable).

None touches a search technique or Kernel Tuner's cost function: the proposals are pyATF's.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import tempfile
from collections.abc import Iterator


def needs_tp_adapter(tp: type) -> bool:
    """Whether pyATF's `TP` lacks the fourth positional parameter Kernel Tuner 1.5.0 passes."""
    # the class's own __init__ (inspect.signature(tp) could answer from a __new__ instead), which mypy calls
    # unsound on an instance: tp is a class here
    init = tp.__init__  # type: ignore[misc]
    parameters = [p for p in inspect.signature(init).parameters.values() if p.name != "self"]
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) < 4 and not any(p.kind == p.VAR_POSITIONAL for p in parameters)


@contextlib.contextmanager
def compatible_tp() -> Iterator[None]:
    """pyATF's `TP` accepting (and dropping) the constraint source, while the context lasts."""
    import pyatf

    original: type = pyatf.TP
    if not needs_tp_adapter(original):
        yield
        return

    class TP(original):  # noqa: N801 (pyATF's own name)
        def __init__(self, name, values, constraint=None, constraint_source=None):
            super().__init__(name, values, constraint)

    pyatf.TP = TP
    try:
        yield
    finally:
        pyatf.TP = original


@contextlib.contextmanager
def scratch_directory() -> Iterator[None]:
    """A temporary working directory for the run (the strategy writes `./pyatf_searchspace_caches`)."""
    previous = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="tsb-pyatf-") as tmp:
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(previous)


@contextlib.contextmanager
def pyatf_run() -> Iterator[None]:
    """All of the above."""
    with compatible_tp(), scratch_directory(), open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        yield
