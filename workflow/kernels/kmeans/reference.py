"""K-Means distance step: float64 inputs and reference (squared distances of n points to 40 centers, 15 features)."""

from __future__ import annotations

import numpy as np

NFEAT = 15  # features per point (seed 002 §IV: D = 15)
NCLUST = 40  # cluster centers (K = 40)


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Features U[0,1) stored feature-major (NFEAT, n); centers U[0,1) of shape (NCLUST, NFEAT), drawn apart from the points."""
    rng = np.random.default_rng(seed)
    n = size["n"]
    features = rng.random((NFEAT, n))
    centers = rng.random((NCLUST, NFEAT))
    return {"features": features, "centers": centers}


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """dist[c, i] = sum_j (features[j, i] - centers[c, j])^2, center-major (NCLUST, n)."""
    n = size["n"]
    features = np.asarray(inputs["features"], dtype=np.float64).reshape(NFEAT, n)
    centers = np.asarray(inputs["centers"], dtype=np.float64).reshape(NCLUST, NFEAT)
    dist = np.zeros((NCLUST, n))
    for j in range(NFEAT):
        d = features[j][None, :] - centers[:, j][:, None]
        dist += d * d
    return {"dist": dist}
