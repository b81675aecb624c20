"""Final hypervolume of a run's points in the normalised objective space, computed by moocore.

The reference point is HV_REFERENCE in every normalised objective: the true front's nadir is 1 there,
so a point at the nadir still adds volume, and a point beyond HV_REFERENCE in any objective adds none.
Registered as `hv` in `analysis.indicators.registry` (a final indicator: one value per run).
"""

from __future__ import annotations

import moocore
import numpy as np

HV_REFERENCE = 1.1  # in every normalised objective


def hypervolume(points: np.ndarray, reference: np.ndarray) -> float:
    """Hypervolume dominated by the valid rows of `points` (n x m, normalised, all minimised) up to the point
    HV_REFERENCE in every objective; 0 when no row is valid.

    Rows with any non-finite value are invalid evaluations and are left out. `reference`, the normalised
    true front, is not used: it is there for the signature every indicator shares.
    """
    points = np.asarray(points, dtype=float)
    valid = points[np.isfinite(points).all(axis=1)]
    if not len(valid):
        return 0.0
    return float(moocore.hypervolume(valid, ref=np.full(points.shape[1], HV_REFERENCE)))
