"""Export a stored space back to a Kernel Tuner cache document (for Kernel Tuner's simulation mode)."""

from __future__ import annotations

import math
from typing import Any

from analysis.objectives import EVALUATION_TIME_COLUMNS
from analysis.spaces.space import KT_ERRORS, STATUS_INVALID_OUTPUT, STATUS_OK, Space, plain

_STATUS_TO_KT = {status: marker for marker, status in KT_ERRORS.items() if status is not None}
# a tuner meets a configuration with NaN/inf output as one that failed when run
_STATUS_TO_KT[STATUS_INVALID_OUTPUT] = "RuntimeFailedConfig"


def to_kt_cache(space: Space) -> dict[str, Any]:
    """A cache dict as `tune_kernel(cache=…)` writes it: objective fields under their objective names.

    Failed configurations carry Kernel Tuner's error marker in every objective field; the
    evaluation-time fields keep what was recorded, so simulation charges them as measured.
    """
    names = list(space.parameters)
    table = space.table
    params = {p: [plain(v) for v in table[p].to_numpy()] for p in names}
    objectives = {o.name: table[o.column].to_numpy(dtype=float) for o in space.objectives}
    times = {kt: table[col].to_numpy(dtype=float) for kt, col in EVALUATION_TIME_COLUMNS.items()}
    status = table["status"].to_numpy()
    cache: dict[str, dict[str, Any]] = {}
    for i in range(len(table)):
        entry: dict[str, Any] = {p: params[p][i] for p in names}
        if status[i] == STATUS_OK:
            entry.update({name: _number(v[i]) for name, v in objectives.items()})
        else:
            marker = _STATUS_TO_KT[str(status[i])]
            entry.update({name: marker for name in objectives})
        entry.update({kt: float(v[i]) for kt, v in times.items()})
        entry.update(strategy_time=0, framework_time=0, timestamp="")
        cache[",".join(str(entry[p]) for p in names)] = entry
    info = space.meta.get("source_info", {})
    return {
        "device_name": info.get("device_name", space.device),
        "kernel_name": info.get("kernel_name", space.kernel),
        "problem_size": info.get("problem_size", []),
        "tune_params_keys": names,
        "tune_params": {p: list(v) for p, v in space.parameters.items()},
        "objective": space.objectives[0].name,
        "cache": cache,
    }


def _number(v: float) -> float | str:
    return float(v) if math.isfinite(v) else str(v)
