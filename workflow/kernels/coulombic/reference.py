"""Coulombic potential on a 2-D grid: deterministic float64 inputs and the float64 reference.

Grid point (i, j), 0 <= i < nx, 0 <= j < ny, sits at ((i + 1/2) h, (j + 1/2) h, 0) with
h = 1/nx (the unit square for nx = ny); atom a sits at (x_a, y_a, z_a) with x, y ~ U[0, 1)
and height z ~ U[0.05, 0.5] above the grid plane, charge q ~ U[0.1, 1]. The potential is
V(i, j) = sum_a q_a / sqrt((gx_i - x_a)^2 + (gy_j - y_a)^2 + z_a^2). Unit-sized
coordinates keep r^2 <= 2.25 and 1/r <= 20, and positive charges keep V > 0 (MRE is
meaningful).
"""

from __future__ import annotations

import numpy as np

XY_RANGE = (0.0, 1.0)
Z_RANGE = (0.05, 0.5)
Q_RANGE = (0.1, 1.0)


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """atoms (3, natoms): rows x, y, z; charge (natoms,)."""
    na = int(size["natoms"])
    rng = np.random.default_rng(seed)
    xy = rng.uniform(*XY_RANGE, size=(2, na))
    z = rng.uniform(*Z_RANGE, size=(1, na))
    q = rng.uniform(*Q_RANGE, size=na)
    return {"atoms": np.concatenate([xy, z]), "charge": q}


def grid_coordinates(size: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """x coordinates (nx,) and y coordinates (ny,) of the grid points."""
    nx, ny = int(size["nx"]), int(size["ny"])
    return (np.arange(nx) + 0.5) / nx, (np.arange(ny) + 0.5) / nx


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """potential (ny, nx), row-major with x fastest.

    Blocked over grid rows and atoms so that the float64 temporaries stay in cache
    (about 2 MB); the paper-sized gpu problem (4e6 points x 1e4 atoms) takes minutes.
    """
    x, y, z = (np.asarray(r, dtype=np.float64) for r in inputs["atoms"])
    q = np.asarray(inputs["charge"], dtype=np.float64)
    gx, gy = grid_coordinates(size)
    nx, ny, na = gx.size, gy.size, x.size
    dx2 = np.square(gx[:, None] - x[None, :])  # (nx, natoms)
    dyz2 = np.square(gy[:, None] - y[None, :]) + np.square(z)[None, :]  # (ny, natoms)
    out = np.zeros((ny, nx))
    block = 1 << 18
    cols = max(1, min(na, block // nx))  # atoms per chunk
    rows = max(1, block // (nx * cols))  # grid rows per chunk
    buf = np.empty((rows, nx, cols))
    for a0 in range(0, na, cols):
        a1 = min(na, a0 + cols)
        for j0 in range(0, ny, rows):
            j1 = min(ny, j0 + rows)
            r = buf[: j1 - j0, :, : a1 - a0]
            np.add(dx2[None, :, a0:a1], dyz2[j0:j1, None, a0:a1], out=r)
            np.sqrt(r, out=r)
            np.divide(1.0, r, out=r)
            out[j0:j1] += r @ q[a0:a1]
    return {"potential": out}
