"""Error metrics of a kernel's outputs computed where the outputs are: on the GPU, with CuPy.

Kernel Tuner's default path copies every output of every configuration to the host for its
output observers (at the `gpu` sizes 16-200 million values per output). Here the float64
reference lives on the device once per kernel, the outputs stay there (Kernel Tuner keeps a
CuPy argument on the device: `retrieve_results_to_host` copies it with `cupy.copyto`), and
the observer reduces them to the three numbers and the non-finite count that the cache records.

The formulas are analysis.sweep.metrics' (seed 000 §5, seed 002 §IV), in float64:

* MRE   = mean(|y - y'| / max(|y'|, 1e-8))
* NRMSE = sqrt(mean((y - y')^2)) / |mean(y')|
* NMAE  = sum(|y - y'|) / sum(|y'|)

and NaN or infinity in an output propagates into them, as on the host. The code is written
against an array module `xp` (cupy on a GPU, numpy in the tests, which compare it with
analysis.sweep.metrics on the same data; only the order of summation differs).

Storage on the device: double and float as float64 / float32, half as float16, bfloat16 as
its 16 bits in uint16 (CuPy has no bfloat16 dtype before version 14); `decode` turns each
into float64 (bfloat16: the bits shifted into the high half of a float32).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from analysis.sweep.metrics import ATOL, METRICS, worst
from analysis.sweep.precision import encode

NONFINITE_FIELD = "nonfinite_values"  # = analysis.spaces.space.NONFINITE_FIELD (not imported: that loads pandas)
STORAGE = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "uint16"}


def storage(values: np.ndarray, type_name: str) -> np.ndarray:
    """Host storage of `values` in `type_name` (floats rounded; bfloat16 as uint16 bits; integer types as they are)."""
    out = encode(values, type_name, for_c=type_name == "bfloat16")
    if type_name in STORAGE and np.dtype(out.dtype).name != STORAGE[type_name]:
        raise AssertionError(f"{type_name} stored as {out.dtype}")
    return out


def type_of(array: Any) -> str:
    """The precision type an output array's dtype stores (the inverse of STORAGE)."""
    name = np.dtype(array.dtype).name
    for t, s in STORAGE.items():
        if s == name:
            return t
    raise TypeError(f"an output of dtype {name} holds none of {', '.join(STORAGE)}")


def decode(xp, array: Any) -> Any:
    """float64 values of a device (or host) array in its storage."""
    t = type_of(array)
    a = array.ravel()
    if t == "bfloat16":
        return (a.astype(xp.uint32) << 16).view(xp.float32).astype(xp.float64)
    return a.astype(xp.float64)


class DeviceReference:
    """One output's float64 reference on the device with what every configuration's metrics reuse."""

    def __init__(self, xp, reference: np.ndarray):
        self.xp = xp
        self.r = xp.asarray(np.ascontiguousarray(np.asarray(reference, dtype=np.float64).ravel()))
        self.abs = xp.abs(self.r)
        self.floor = xp.maximum(self.abs, ATOL)
        self.sum_abs = float(self.abs.sum())
        self.abs_mean = abs(float(self.r.mean()))
        self.size = int(self.r.size)

    def metrics(self, array: Any) -> tuple[dict[str, float], int]:
        """({mre, nrmse, nmae}, non-finite count) of one output array against this reference."""
        xp = self.xp
        y = decode(xp, xp.asarray(array))  # an output that reached the host is moved back, not mixed with the device
        if int(y.size) != self.size:
            raise ValueError(f"output has {int(y.size)} values, reference {self.size}")
        nonfinite = self.size - int(xp.count_nonzero(xp.isfinite(y)))
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            d = xp.abs(y - self.r)
            del y
            mre = float(xp.mean(d / self.floor))
            sq = float(xp.mean(d * d))
            total = float(d.sum())
            # float64 divisions with NumPy's semantics (x/0 = inf, 0/0 = NaN), as analysis.sweep.metrics
            nrmse = float(np.sqrt(np.float64(sq)) / np.float64(self.abs_mean))
            nmae = float(np.float64(total) / np.float64(self.sum_abs))
        return {"mre": mre, "nrmse": nrmse, "nmae": nmae}, nonfinite


def output_metrics(references: Mapping[int, DeviceReference], outputs: Sequence[Any]) -> dict[str, Any]:
    """Worst metrics over the outputs (by argument position) and their total non-finite count."""
    per, nonfinite = [], 0
    for i, ref in references.items():
        m, n = ref.metrics(outputs[i])
        per.append(m)
        nonfinite += n
    return {**worst(per), NONFINITE_FIELD: nonfinite}


def make_observer(references: Mapping[int, DeviceReference]):
    """A Kernel Tuner output observer recording mre, nrmse, nmae and nonfinite_values on the device.

    Kernel Tuner calls `process_output(answer, outputs)` once per configuration, in its check run
    (the answer list only marks which arguments are outputs), and `get_results()` after benchmarking.
    `seconds` accumulates the time the metrics took (the benchmark's metrics stage).
    """
    import time

    from kernel_tuner.observers.observer import OutputObserver

    class DeviceErrorObserver(OutputObserver):
        def __init__(self):
            self.result: dict[str, Any] = {}
            self.seconds = 0.0
            self.count = 0
            self.host_outputs = 0  # outputs that arrived as NumPy arrays (copied to the host)

        def process_output(self, answer, output):
            start = time.perf_counter()
            self.host_outputs += sum(isinstance(output[i], np.ndarray) for i in references)
            self.result = output_metrics(references, output)
            self.seconds += time.perf_counter() - start
            self.count += 1

        def get_results(self):
            return dict(self.result)

    return DeviceErrorObserver()


def poison(xp, arrays: Sequence[Any]) -> None:
    """Fill arrays with all-ones bits: NaN in every float type (and 0xFFFF in a bfloat16's uint16)."""
    for a in arrays:
        a.view(xp.uint8).fill(255)


__all__ = ["METRICS", "NONFINITE_FIELD", "DeviceReference", "decode", "make_observer", "output_metrics", "poison",
           "storage", "type_of"]
