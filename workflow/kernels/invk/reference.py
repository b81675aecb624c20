"""InvK inputs and float64 reference: analytic inverse kinematics of a 3-link planar arm.

Links L1, L2, L3 join the base, two elbows and the end effector (four joint
positions). A target is the end effector's position and orientation (x, y, phi); the
joint angles (th1, th2, th3) with th2 in [0, pi] (one elbow branch) follow in closed form:

    wrist  w  = (x - L3 cos phi, y - L3 sin phi),  r = |w|
    th2 = acos(clamp((r^2 - L1^2 - L2^2) / (2 L1 L2)))
    th1 = acos(clamp(w_x / r)) - acos(clamp((L1 + L2 cos th2) / r))   (w_y >= 0 for every target)
    th3 = phi - th1 - th2
"""

from __future__ import annotations

import numpy as np

L1, L2, L3 = 1.0, 0.8, 0.5
TH1_RANGE = (0.0, np.pi / 2)  # base joint, as AxBench's data generator draws its angles
TH2_RANGE = (0.3, 2.4)        # elbow, kept away from the stretched/folded singularities
TH3_RANGE = (-np.pi / 2, np.pi / 2)


def joint_angles(size: dict[str, int], seed: int) -> np.ndarray:
    """(n, 3) joint angles the targets are generated from (the exact solution)."""
    rng = np.random.default_rng(seed)
    lo, hi = np.array([TH1_RANGE, TH2_RANGE, TH3_RANGE]).T
    return lo + (hi - lo) * rng.random((size["n"], 3))


def forward(theta: np.ndarray) -> np.ndarray:
    """(n, 3) end-effector pose (x, y, phi) of joint angles (n, 3)."""
    a1 = theta[:, 0]
    a2 = a1 + theta[:, 1]
    a3 = a2 + theta[:, 2]
    x = L1 * np.cos(a1) + L2 * np.cos(a2) + L3 * np.cos(a3)
    y = L1 * np.sin(a1) + L2 * np.sin(a2) + L3 * np.sin(a3)
    return np.stack([x, y, a3], axis=1)


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Targets (x, y, phi): the forward kinematics of uniformly drawn joint angles."""
    return {"target": forward(joint_angles(size, seed))}


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """theta (n, 3): the joint angles solved in float64 with the kernels' formulas."""
    t = np.asarray(inputs["target"], dtype=np.float64).reshape(-1, 3)
    x, y, phi = t[:, 0], t[:, 1], t[:, 2]
    wx = x - L3 * np.cos(phi)
    wy = y - L3 * np.sin(phi)
    r2 = wx * wx + wy * wy
    c2 = np.clip((r2 - (L1 * L1 + L2 * L2)) * (0.5 / (L1 * L2)), -1.0, 1.0)
    th2 = np.arccos(c2)
    r = np.sqrt(r2)
    th1 = np.arccos(np.clip(wx / r, -1.0, 1.0)) - np.arccos(np.clip((L1 + L2 * c2) / r, -1.0, 1.0))
    th3 = phi - th1 - th2
    return {"theta": np.stack([th1, th2, th3], axis=1)}
