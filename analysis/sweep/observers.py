"""Kernel Tuner observers of a sweep shard: the error metrics of the worst output (mre, nrmse, nmae),
the count of non-finite output values and, on cuda where NVML answers, the energy.

Every observer of one check reads one OutputMemo, so each output is decoded and compared with
its reference once per configuration.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from analysis.spaces.space import NONFINITE_FIELD
from analysis.sweep.metrics import METRICS, error_metrics, worst
from analysis.sweep.precision import decode

log = logging.getLogger(__name__)


def _kt():
    from kernel_tuner.accuracy import AccuracyObserver

    return AccuracyObserver


def _decoded(answers, outputs, output_types: Sequence[str] | None):
    """(reference, float64 output) of every output argument (those with an answer), in order.

    With `output_types` (C backend, where 16-bit outputs come back as uint16) outputs are
    decoded by position among the outputs, otherwise from their NumPy dtype.
    """
    k = 0
    for answer, output in zip(answers, outputs):
        if answer is None:
            continue
        yield answer, decode(output, output_types[k]) if output_types else np.asarray(output).astype(np.float64)
        k += 1


class OutputMemo:
    """The decoded error metrics and non-finite count of one kernel output, computed once.

    Kernel Tuner hands the same list of outputs to every output observer of a check; the
    first observer computes every metric and the count, the others read them. The memo keeps
    a reference to that list, so `is` cannot match a later list at a reused address.
    """

    def __init__(self, output_types: Sequence[str] | None):
        self.output_types = output_types
        self.outputs: Any = None
        self.metrics: dict[str, float] = {}
        self.nonfinite = 0

    def of(self, answers, outputs) -> OutputMemo:
        if self.outputs is not outputs:
            decoded = list(_decoded(answers, outputs, self.output_types))
            self.metrics = worst([error_metrics(values, answer) for answer, values in decoded])
            self.nonfinite = sum(int(np.size(values) - np.count_nonzero(np.isfinite(values))) for _, values in decoded)
            self.outputs = outputs
        return self


def make_error_observer(output_types: Sequence[str] | None, metric: str, memo: OutputMemo | None = None):
    """An AccuracyObserver recording `metric` (mre, nrmse or nmae) of the worst output.

    Outputs are decoded to float64 first: with `output_types` (C backend, where 16-bit
    outputs come back as uint16) by position, otherwise from their NumPy dtype. Observers
    sharing `memo` compute the metrics once per check.
    """
    AccuracyObserver: type = _kt()
    shared = memo or OutputMemo(output_types)

    class ErrorObserver(AccuracyObserver):
        def process_output(self, answers, outputs):
            self.result = shared.of(answers, outputs).metrics[metric]

    return ErrorObserver(metric=lambda a, b: 0.0, key=metric)


def make_nonfinite_observer(output_types: Sequence[str] | None, memo: OutputMemo | None = None):
    """An observer recording `nonfinite_values`: how many output values are NaN or infinite.

    The importer marks a configuration with a positive count as `invalid_output` (kept in the
    space and counted, excluded from every objective set, as seed 002 §IV excludes them).
    """
    AccuracyObserver: type = _kt()
    shared = memo or OutputMemo(output_types)

    class NonfiniteObserver(AccuracyObserver):
        def process_output(self, answers, outputs):
            self.result = shared.of(answers, outputs).nonfinite

    return NonfiniteObserver(metric=lambda a, b: 0.0, key=NONFINITE_FIELD)



def shard_observers(target: str, out_types: Sequence[str] | None) -> list:
    """The observers of one tune_kernel call: error metrics and non-finite count sharing one memo, plus
    Kernel Tuner's NVML energy observer on cuda (left out with a warning where pynvml or NVML is missing)."""
    memo = OutputMemo(out_types)
    observers = [make_error_observer(out_types, m, memo) for m in METRICS] + [make_nonfinite_observer(out_types, memo)]
    if target == "cuda":
        try:
            from kernel_tuner.observers.nvml import NVMLObserver

            observers.append(NVMLObserver(["nvml_energy"]))
        except Exception as exc:  # pynvml missing or no NVML device: energy is optional
            log.warning("no NVML energy observer (%s); energy not recorded", exc)
    return observers
