"""LavaMD: the reference against brute-force loops and a finite-difference gradient, the C++ port against the
reference."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from analysis.sweep import harness

K = "lavamd"


def brute_force(pos: np.ndarray, q: np.ndarray, nb: int, ppb: int) -> np.ndarray:
    """Plain loops over all particle pairs; neighbours found from box coordinates of the storage index."""
    n = len(q)
    out = np.zeros((n, 4))

    def box(p):
        b = p // ppb
        return b % nb, (b // nb) % nb, b // (nb * nb)

    for i, j in itertools.product(range(n), range(n)):
        if max(abs(u - w) for u, w in zip(box(i), box(j))) > 1:
            continue
        d = [pos[i, c] - pos[j, c] for c in range(3)]
        v = math.exp(-0.5 * sum(x * x for x in d))
        out[i, 0] += q[j] * v
        for c in range(3):
            out[i, 1 + c] += q[j] * 2.0 * v * d[c]
    return out


def test_inputs_lie_in_their_boxes():
    size = harness.load_spec(K).size("cpu")
    pos = harness.make_inputs(K, "cpu")["pos"]
    corner = np.floor(pos).astype(int)
    b = np.arange(size["n"]) // size["ppb"]
    nb = size["nb"]
    assert np.array_equal(corner, np.stack([b % nb, (b // nb) % nb, b // (nb * nb)], axis=1))


def test_reference_matches_brute_force_loops():
    size = harness.load_spec(K).size("tiny")
    inputs = harness.make_inputs(K, "tiny")
    ref = harness.reference_outputs(K, "tiny")["fv"]
    np.testing.assert_allclose(ref, brute_force(inputs["pos"], inputs["q"], size["nb"], size["ppb"]),
                               rtol=1e-12, atol=1e-12)


def test_force_is_minus_twice_the_potential_gradient():
    """f_i = q_j 2 v (r_i - r_j) = -2 d/dr_i (q_j v): checked by central differences of the reference."""
    spec = harness.load_spec(K)
    size = spec.size("tiny")
    ref = harness.load_reference(K)
    inputs = {k: v.copy() for k, v in harness.make_inputs(K, "tiny").items()}
    base = ref.reference(inputs, size)["fv"]
    h = 1e-6
    for i in (0, 13, 161):
        for c in range(3):
            plus = {k: v.copy() for k, v in inputs.items()}
            minus = {k: v.copy() for k, v in inputs.items()}
            plus["pos"][i, c] += h
            minus["pos"][i, c] -= h
            grad = (ref.reference(plus, size)["fv"][i, 0] - ref.reference(minus, size)["fv"][i, 0]) / (2 * h)
            assert base[i, 1 + c] == pytest.approx(-2.0 * grad, rel=1e-6, abs=1e-6)


def _config(t_pos, t_q, t_acc, t_out, ipt=1, threads=1, exec_policy=0):
    return {"threads": threads, "ipt": ipt, "T_pos": t_pos, "T_q": t_q, "T_acc": t_acc, "T_out": t_out,
            "exec_policy": exec_policy}


@pytest.mark.parametrize("ipt", [1, 4])  # ppb = 6 at the tiny size: ipt 4 exercises the padded pass
def test_cpu_all_double_matches_reference(ipt):
    ref = harness.reference_outputs(K, "tiny")["fv"]
    out = harness.run_cpu(K, _config("double", "double", "double", "double", ipt=ipt, threads=2), "tiny")["fv"]
    assert np.max(np.abs(out - ref)) <= 1e-12 * np.max(np.abs(ref))
    spec = harness.load_spec(K)
    assert max(harness.error_metrics(out, ref).values()) <= spec.tolerance


def test_cpu_precisions_give_ordered_plausible_errors():
    ref = harness.reference_outputs(K, "tiny")["fv"]

    def nmae(*types, ipt=2):
        out = harness.run_cpu(K, _config(*types, ipt=ipt), "tiny")["fv"]
        assert np.all(np.isfinite(out)), types
        return harness.error_metrics(out, ref)["nmae"]

    single = nmae("float", "float", "float", "float")
    half = nmae("half", "half", "half", "half", ipt=4)
    bf16 = nmae("bfloat16", "bfloat16", "bfloat16", "bfloat16")
    half_pos_only = nmae("half", "half", "double", "double")
    assert 1e-9 < single < 1e-5
    assert 1e-5 < half < 1e-1
    assert half < bf16 < 0.5
    # 16-bit particle data with a double accumulator sits between float and all-half
    assert single < half_pos_only < half
    # positions and charges are separate knobs: 16-bit charges alone (relative error
    # 2^-11 per term, no cancellation) cost less than 16-bit positions, whose absolute
    # rounding of coordinates up to nb is amplified in the force differences
    half_q_only = nmae("double", "half", "double", "double")
    assert single < half_q_only < half_pos_only


def test_cpu_exec_policy_changes_only_float_and_16_bit_exponentials():
    ref = harness.reference_outputs(K, "tiny")["fv"]

    def run(*types, policy):
        out = harness.run_cpu(K, _config(*types, ipt=2, exec_policy=policy), "tiny")["fv"]
        assert np.all(np.isfinite(out)), (types, policy)
        return out

    double = [run("double", "double", "double", "double", policy=p) for p in (0, 1, 2)]
    assert np.array_equal(double[0], double[1]) and np.array_equal(double[0], double[2])
    single = [run("float", "float", "float", "float", policy=p) for p in (0, 1, 2)]
    assert not np.array_equal(single[0], single[1])
    assert np.array_equal(single[1], single[2])  # float has no approx form of its own
    e0, e1 = (harness.error_metrics(o, ref)["nmae"] for o in single[:2])
    assert e1 < 1e-5 and e0 < 1e-5  # the fast exponential is about as accurate as float itself
    half = [run("float", "float", "half", "half", policy=p) for p in (0, 1, 2)]
    assert not np.array_equal(half[1], half[2])
    errors = [harness.error_metrics(o, ref)["nmae"] for o in half]
    assert max(errors) < 1e-1
    # the 16-bit approximate exponential (about 1e-3 relative) adds error to an all-half sum
    assert errors[2] > 0.5 * errors[0]


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH")
@pytest.mark.parametrize("config", [
    {"block_size_x": 64, "ipt": 8, "use_shared": 1, "exec_policy": 2,
     "T_pos": "half", "T_q": "bfloat16", "T_acc": "half", "T_out": "bfloat16"},
    {"block_size_x": 512, "ipt": 2, "use_shared": 0, "exec_policy": 1,
     "T_pos": "bfloat16", "T_q": "double", "T_acc": "float", "T_out": "half"},
])
def test_nvcc_compiles(config):
    harness.nvcc_compile(K, config)
