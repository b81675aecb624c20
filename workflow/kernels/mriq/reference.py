"""MRI-Q inputs and float64 reference (Parboil's Q matrix of an inverse non-uniform DFT).

Voxels lie on a g x g x g grid (g = numX ** (1/3)) covering a field of view of FOV mm
in every size, so the phases k.x reach the same magnitude (up to 48 turns) at the tiny,
cpu and gpu sizes; the k-space samples are random (non-Cartesian) up to the Nyquist
frequency of a 64-voxel grid.
"""

from __future__ import annotations

import numpy as np

FOV_MM = 230.0                 # field of view (mm): voxel spacings are not powers of two
KMAX = 0.5 * 64 / FOV_MM       # cycles/mm: Nyquist of a 64-voxel grid over the FOV
CHUNK = 4096                   # voxels per block of the vectorised reference


def grid_side(num_x: int) -> int:
    """Side g of the cubic voxel grid with g**3 == num_x."""
    g = int(round(num_x ** (1.0 / 3.0)))
    if g**3 != num_x:
        raise ValueError(f"numX={num_x} is not a cube")
    return g


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """k-space trajectory, |phi|^2 and voxel positions, all float64."""
    num_k, num_x = int(size["numK"]), int(size["numX"])
    g = grid_side(num_x)
    rng = np.random.default_rng(seed)
    kx, ky, kz = rng.uniform(-KMAX, KMAX, size=(3, num_k))
    phi_r, phi_i = rng.uniform(-1.0, 1.0, size=(2, num_k))
    axis = (np.arange(g) - g // 2) * (FOV_MM / g)
    z, y, x = np.meshgrid(axis, axis, axis, indexing="ij")
    return {
        "kx": kx, "ky": ky, "kz": kz,
        "phiMag": phi_r * phi_r + phi_i * phi_i,
        "x": x.ravel(), "y": y.ravel(), "z": z.ravel(),
    }


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """Qr, Qi = sum_k phiMag_k * (cos, sin)(2 pi k.x) in float64, in voxel chunks."""
    k = np.stack([inputs["kx"], inputs["ky"], inputs["kz"]])          # (3, K)
    pos = np.stack([inputs["x"], inputs["y"], inputs["z"]], axis=1)   # (X, 3)
    mag = inputs["phiMag"]
    qr = np.empty(pos.shape[0])
    qi = np.empty(pos.shape[0])
    for start in range(0, pos.shape[0], CHUNK):
        arg = (2.0 * np.pi) * (pos[start:start + CHUNK] @ k)
        qr[start:start + CHUNK] = np.cos(arg) @ mag
        qi[start:start + CHUNK] = np.sin(arg) @ mag
    return {"Qr": qr, "Qi": qi}
