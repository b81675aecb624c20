"""InvK: the reference against forward kinematics and the generating angles, the C++ port against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.sweep import harness

K = "invk"


def end_effector(theta: np.ndarray) -> np.ndarray:
    """Forward kinematics with complex numbers: (x, y, phi) of joint angles (n, 3)."""
    a = np.cumsum(theta, axis=1)
    tip = (np.array([1.0, 0.8, 0.5]) * np.exp(1j * a)).sum(axis=1)
    return np.stack([tip.real, tip.imag, a[:, 2]], axis=1)


@pytest.mark.parametrize("size_name", ["tiny", "cpu"])
def test_reference_reaches_the_targets(size_name):
    target = harness.make_inputs(K, size_name)["target"]
    theta = harness.reference_outputs(K, size_name)["theta"]
    assert theta.shape == target.shape
    np.testing.assert_allclose(end_effector(theta), target, rtol=0, atol=1e-12)
    # one elbow branch: th2 in (0, pi), so the solution is unique and equals the drawn angles
    spec = harness.load_spec(K)
    drawn = harness.load_reference(K).joint_angles(spec.size(size_name), spec.seed)
    np.testing.assert_allclose(theta, drawn, rtol=0, atol=1e-12)


def test_targets_stay_in_16bit_range_and_away_from_singularities():
    target = harness.make_inputs(K, "cpu")["target"]
    theta = harness.reference_outputs(K, "cpu")["theta"]
    assert np.abs(target).max() < 6
    assert theta[:, 1].min() > 0.29 and theta[:, 1].max() < 2.41
    assert theta[:, 2].min() < 0 < theta[:, 2].max()  # th3 crosses zero: NMAE, not MRE


ALL = ("T_in", "T_wrist", "T_angle", "T_out")


def _out(ppt=2, threads=1, exec_policy=0, size_name="tiny", dyn_chunk=0, **types):
    config = {"threads": threads, "ppt": ppt, "dyn_chunk": dyn_chunk, "exec_policy": exec_policy,
              **{p: "double" for p in ALL}, **types}
    return harness.run_cpu(K, config, size_name)["theta"]


def _nmae(**kw):
    out = _out(**kw)
    assert np.all(np.isfinite(out)), kw
    return harness.error_metrics(out, harness.reference_outputs(K, "tiny")["theta"])["nmae"]


@pytest.mark.parametrize("ppt", [1, 4])
def test_cpu_all_double_matches_reference(ppt):
    ref = harness.reference_outputs(K, "tiny")["theta"]
    out = _out(ppt=ppt, threads=2)
    assert np.max(np.abs(out - ref)) <= 1e-12 * np.max(np.abs(ref))
    assert max(harness.error_metrics(out, ref).values()) <= harness.load_spec(K).tolerance


def test_cpu_precisions_give_ordered_plausible_errors():
    def same(t):
        return _nmae(**{p: t for p in ALL})

    single, half, bf16 = same("float"), same("half"), same("bfloat16")
    assert 1e-9 < single < 1e-5
    assert 1e-4 < half < 1e-2
    assert half < bf16 < 1e-1
    # 16-bit storage with double intermediates is more accurate than 16-bit arithmetic
    half_storage = _nmae(T_in="half", T_out="half")
    assert single < half_storage < half


def test_wrist_and_angle_stages_each_carry_error():
    # each stage in half alone loses accuracy, and together they lose more than either
    wrist_and_angle = _nmae(T_wrist="half", T_angle="half")
    angle_only = _nmae(T_angle="half")
    float_wrist = _nmae(T_wrist="float", T_angle="half")
    assert 1e-4 < angle_only < wrist_and_angle
    assert angle_only <= float_wrist < wrist_and_angle
    # the wrist stage in float under double angles stays at float's accuracy
    assert 1e-9 < _nmae(T_wrist="float", T_angle="float") < 1e-5


@pytest.mark.parametrize("t", ["float", "half", "bfloat16"])
def test_exec_policy_changes_narrow_wrist_stages_and_stays_finite(t):
    base = _out(T_wrist=t, T_angle=t, T_out=t)
    # fast float functions change float results; in 16-bit they mostly round to the same
    # value, so there the 16-bit approximations (policy 2) must change the result
    changing = 1 if t == "float" else 2
    for p in ([1] if t == "float" else [1, 2]):
        out = _out(T_wrist=t, T_angle=t, T_out=t, exec_policy=p)
        assert np.all(np.isfinite(out)), (t, p)
        if p == changing:
            assert not np.array_equal(out, base), (t, p)
    if t != "float":  # approximations of 16-bit accuracy stay within a few times the 16-bit error
        assert _nmae(T_wrist=t, T_angle=t, T_out=t, exec_policy=2) < 4 * _nmae(T_wrist=t, T_angle=t, T_out=t)
    # a double wrist stage ignores the policy (and the constraints exclude it)
    np.testing.assert_array_equal(_out(exec_policy=1), _out())


def test_cpu_tail_threads_and_schedule_do_not_change_results():
    # tiny n = 2045: a padded tail after the blocks, and the last 512-target dynamic chunk is short
    ref = _out(ppt=1, threads=1, T_wrist="float", T_angle="half")
    for ppt, threads, dyn_chunk in ((2, 2, 0), (4, 1, 0), (4, 2, 0), (1, 2, 512), (4, 2, 512)):
        np.testing.assert_array_equal(_out(ppt=ppt, threads=threads, dyn_chunk=dyn_chunk, T_wrist="float",
                                           T_angle="half"), ref)


@pytest.mark.parametrize("types", [
    {"T_in": "double", "T_wrist": "double", "T_angle": "double", "T_out": "double", "exec_policy": 0},
    {"T_in": "bfloat16", "T_wrist": "half", "T_angle": "half", "T_out": "bfloat16", "exec_policy": 2},
    {"T_in": "half", "T_wrist": "float", "T_angle": "half", "T_out": "double", "exec_policy": 1},
])
def test_optimisation_variants_give_identical_results(types):
    """Every valid (threads, ppt, dyn_chunk) variant gives the bits of the default one at the cpu size."""
    spec = harness.load_spec(K)
    variants = [c for c in spec.valid_configs("cpu") if all(c[p] == v for p, v in types.items())]
    assert len(variants) == spec.optimisation_combinations("cpu") == 9
    assert {c["dyn_chunk"] for c in variants if c["threads"] == 1} == {0}  # one thread: nothing to schedule
    base = harness.run_cpu(K, {"threads": 1, "ppt": 1, "dyn_chunk": 0, **types}, "cpu")["theta"]
    for c in variants:
        np.testing.assert_array_equal(harness.run_cpu(K, c, "cpu")["theta"], base, err_msg=str(c))


@pytest.mark.skipif(not harness.nvcc_available(), reason="nvcc is not on the PATH")
@pytest.mark.parametrize("config", [
    {"block_size_x": 512, "ppt": 8, "exec_policy": 2, "T_in": "half", "T_wrist": "bfloat16", "T_angle": "bfloat16",
     "T_out": "half"},
    {"block_size_x": 32, "ppt": 1, "exec_policy": 1, "T_in": "bfloat16", "T_wrist": "float", "T_angle": "half",
     "T_out": "double"},
    {"block_size_x": 128, "ppt": 4, "exec_policy": 0, "T_in": "double", "T_wrist": "double", "T_angle": "double",
     "T_out": "double"},
])
def test_nvcc_compiles(config):
    harness.nvcc_compile(K, config)
