"""The same floating-point operations on every x86-64 machine the study runs on.

Two libraries under numpy pick their code by processor when they load, and the picks round differently:

- OpenBLAS (numpy's and scipy's) picks a kernel per processor family: on a processor with AVX-512 (an
  Intel Xeon, an AMD EPYC of the Zen 4 generation) its `ddot` sums in another order than on one
  without (an earlier EPYC). Kernel Tuner's firefly algorithm measures the distance between two
  fireflies with `np.linalg.norm`, which is `ddot`; a distance one unit in the last place apart gives
  an attractiveness that rounds a position to another configuration, and the run goes elsewhere (one
  of A100/dedispersion's 100 Firefly runs, at its 512th step: issue #50).
- numpy dispatches its ufuncs (`np.exp` among them: Firefly's attractiveness, simulated annealing's
  acceptance) to an AVX-512 loop where the processor has it, and that loop is not the AVX2 one.

Both read their choice from the environment when they load, so `pin()` sets it before numpy is
imported: OpenBLAS's Haswell kernels (AVX2 and FMA) and numpy's loops up to X86_V3 (AVX2, FMA), which
every x86-64-v3 processor runs. `analysis/__init__.py` calls it, so each `python -m analysis.cli`
job of the workflow is pinned, and the Snakemake process passes the variables on to every job. On a
processor without AVX2 and FMA, or not x86-64, nothing is pinned and `state()` says so; the command
line logs `describe()` at its start (a warning where the kernels are not the pinned ones).
`TSB_NUMERICS=native` in the environment leaves the machine's own choice (to show the difference).

Kernel Tuner's and pymoo's code is not changed: the same strategies, with the rounding of one kind of
processor. This module imports only the standard library: numpy must not load before `pin()`.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import Any

# OpenBLAS's kernel family for every x86-64-v3 processor (AVX2 + FMA); on one with AVX-512 OpenBLAS
# would pick SkylakeX (or Cooperlake, SapphireRapids), whose ddot sums in another order.
OPENBLAS_CORETYPE = "Haswell"
# The processor flags that kernel family needs (Linux /proc/cpuinfo's names); without them nothing is pinned.
REQUIRED_FLAGS = frozenset({"avx2", "fma"})
# numpy's dispatch targets above X86_V3 (numpy 2.4's names; `numpy._core._multiarray_umath.__cpu_dispatch__`).
NUMPY_DISABLED = ("X86_V4", "AVX512_ICL", "AVX512_SPR")
# The highest numpy dispatch target left on.
NUMPY_TARGET = "X86_V3"


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str] | None:
    """The processor's flags from /proc/cpuinfo (its first `flags` line), or None where it cannot be read."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return None


def pinned_environment(environ: MutableMapping[str, str], machine: str, flags: Iterable[str] | None) -> bool:
    """Set OPENBLAS_CORETYPE and NPY_DISABLE_CPU_FEATURES in `environ` for an x86-64 processor with
    REQUIRED_FLAGS; return whether it did. A value the user set for OPENBLAS_CORETYPE is replaced (the
    study's numbers need the one kernel family); features already in NPY_DISABLE_CPU_FEATURES stay off."""
    if environ.get("TSB_NUMERICS") == "native":
        return False
    if machine.lower() not in ("x86_64", "amd64") or flags is None or not REQUIRED_FLAGS <= set(flags):
        return False
    environ["OPENBLAS_CORETYPE"] = OPENBLAS_CORETYPE
    disabled = environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()
    environ["NPY_DISABLE_CPU_FEATURES"] = " ".join(dict.fromkeys([*disabled, *NUMPY_DISABLED]))
    return True


def pin() -> bool:
    """Pin this process's (and its children's) numeric kernels where numpy has not loaded yet; return
    whether the variables are set. Where numpy is loaded already they are set for child processes only."""
    return pinned_environment(os.environ, platform.machine(), cpu_flags())


def state() -> dict[str, Any]:
    """What this process runs: OpenBLAS's kernel family per library, numpy's highest dispatch target that is
    on, and whether both are the pinned ones (`pinned`). Loads numpy and threadpoolctl."""
    import numpy  # noqa: F401  (loads the BLAS libraries threadpoolctl reports)
    import threadpoolctl
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    blas = sorted({f"{i.get('internal_api')}:{i.get('architecture')}"
                   for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"})
    on = [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]
    top = on[-1] if on else "baseline"
    pinned = bool(blas) and all(b == f"openblas:{OPENBLAS_CORETYPE}" for b in blas) and top == NUMPY_TARGET
    return {"blas": blas, "numpy_dispatch": top, "pinned": pinned, "numpy_loaded_first": _numpy_before_pin}


def describe(s: dict[str, Any]) -> str:
    """One line for a log: the numeric kernels of `state()`."""
    where = "pinned" if s["pinned"] else "NOT the pinned ones (bytes may differ from the published study)"
    return f"numeric kernels: BLAS {', '.join(s['blas']) or 'none found'}, numpy up to {s['numpy_dispatch']}: {where}"


# Whether numpy had loaded before this module (analysis/__init__.py imports it first, then calls pin()).
_numpy_before_pin = "numpy" in sys.modules
