"""LavaMD inputs and float64 reference: Gaussian pair potential over a box and its 26 neighbours.

Particles live in an nb x nb x nb grid of unit boxes, ppb per box, stored box by box
(box b = (bz*nb + by)*nb + bx holds particles b*ppb ... b*ppb + ppb - 1).  For every
particle i and every particle j of i's box and of its existing neighbour boxes
(non-periodic; j = i included, as in Rodinia):

    r2 = |r_i - r_j|^2,  v = exp(-A2 * r2),
    f[i] += q_j * (v, 2 v (x_i - x_j), 2 v (y_i - y_j), 2 v (z_i - z_j)).
"""

from __future__ import annotations

import numpy as np

A2 = 0.5  # 2 * alpha^2 with Rodinia's alpha = 0.5
_PAIRS_PER_CHUNK = 1 << 22  # bounds the temporary arrays of the vectorised reference


def box_offsets(nb: int) -> np.ndarray:
    """(nb^3, 3) integer box coordinates (x, y, z) in storage order."""
    b = np.arange(nb**3)
    return np.stack([b % nb, (b // nb) % nb, b // (nb * nb)], axis=1)


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Positions: box corner + U[0,1)^3 (absolute coordinates in [0, nb)); charges U[0.1, 1]."""
    nb, ppb = size["nb"], size["ppb"]
    n = nb**3 * ppb
    if size.get("n", n) != n:
        raise ValueError(f"size n={size['n']} is not nb^3 * ppb = {n}")
    rng = np.random.default_rng(seed)
    pos = np.repeat(box_offsets(nb), ppb, axis=0).astype(np.float64) + rng.random((n, 3))
    q = rng.uniform(0.1, 1.0, n)
    return {"pos": pos, "q": q}


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """fv (n, 4): potential sum and force x, y, z per particle, float64."""
    nb, ppb = size["nb"], size["ppb"]
    nboxes = nb**3
    pos = inputs["pos"].reshape(nboxes, ppb, 3)
    q = inputs["q"].reshape(nboxes, ppb)
    out = np.zeros((nboxes, ppb, 4))
    coords = box_offsets(nb)
    chunk = max(1, _PAIRS_PER_CHUNK // (ppb * ppb))
    for d in [(dx, dy, dz) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]:
        nc = coords + np.array(d)
        ok = np.all((nc >= 0) & (nc < nb), axis=1)
        home = np.nonzero(ok)[0]
        nbr = ((nc[ok, 2] * nb + nc[ok, 1]) * nb + nc[ok, 0])
        for s in range(0, len(home), chunk):
            h, g = home[s:s + chunk], nbr[s:s + chunk]
            diff = pos[h][:, :, None, :] - pos[g][:, None, :, :]  # (boxes, i, j, 3)
            v = np.exp(-A2 * np.einsum("bijk,bijk->bij", diff, diff))
            qv = q[g][:, None, :] * v
            out[h, :, 0] += qv.sum(axis=2)
            out[h, :, 1:] += 2.0 * np.einsum("bij,bijk->bik", qv, diff)
    return {"fv": out.reshape(nboxes * ppb, 4)}
