"""Black-Scholes inputs and float64 reference (European call and put, CND by Abramowitz-Stegun 26.2.17).

Inputs follow NVIDIA's cuda-samples BlackScholes: S ~ U[5, 30], X ~ U[1, 100],
T ~ U[0.25, 10] years; the riskless rate R = 0.02 and volatility V = 0.30 are scalars.
The reference evaluates the same five-term polynomial CND as the kernels (its error
against the exact normal CDF is below 7.5e-8), so an all-double kernel matches it to
rounding.
"""

from __future__ import annotations

import numpy as np

RISKFREE = 0.02
VOLATILITY = 0.30
_A = (0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429)
_RSQRT2PI = 0.39894228040143267794


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Stock price S, strike X and years to expiry T, all float64."""
    n = int(size["n"])
    rng = np.random.default_rng(seed)
    return {
        "S": rng.uniform(5.0, 30.0, n),
        "X": rng.uniform(1.0, 100.0, n),
        "T": rng.uniform(0.25, 10.0, n),
    }


def cnd(d: np.ndarray) -> np.ndarray:
    """Cumulative normal distribution by the Abramowitz-Stegun polynomial."""
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = k * (_A[0] + k * (_A[1] + k * (_A[2] + k * (_A[3] + k * _A[4]))))
    tail = _RSQRT2PI * np.exp(-0.5 * d * d) * poly
    return np.where(d > 0, 1.0 - tail, tail)


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """Call and put prices in float64."""
    s, x, t = inputs["S"], inputs["X"], inputs["T"]
    r, v = RISKFREE, VOLATILITY
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    c1, c2 = cnd(d1), cnd(d2)
    disc_x = x * np.exp(-r * t)
    return {
        "call": s * c1 - disc_x * c2,
        "put": disc_x * (1.0 - c2) - s * (1.0 - c1),
    }
