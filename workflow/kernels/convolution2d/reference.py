"""Convolution2D: float64 inputs and reference (17x17 filter, "valid" correlation over a padded image)."""

from __future__ import annotations

import numpy as np

FW = 17  # filter width and height; the image is padded by FW - 1 pixels in each dimension


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Image pixels U[0,1) of shape (h+16, w+16); positive weights U[0.25,1) normalised to sum 1."""
    rng = np.random.default_rng(seed)
    h, w = size["h"], size["w"]
    image = rng.random((h + FW - 1, w + FW - 1))
    weights = rng.uniform(0.25, 1.0, (FW, FW))
    return {"image": image, "filter": weights / weights.sum()}


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """output[y, x] = sum_{i,j} image[y+i, x+j] * filter[i, j], accumulated tap by tap in float64."""
    h, w = size["h"], size["w"]
    image = np.asarray(inputs["image"], dtype=np.float64)
    weights = np.asarray(inputs["filter"], dtype=np.float64).reshape(FW, FW)
    out = np.zeros((h, w))
    for i in range(FW):
        for j in range(FW):
            out += weights[i, j] * image[i:i + h, j:j + w]
    return {"output": out}
