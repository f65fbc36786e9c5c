"""Momentum windows against data from forward dynamics (pin.aba + RK4), not from the regressors."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.identification import MomentumRows, MomentumWindows, PayloadProblem, SampleError, \
    load_identification_config

from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.simulation import dumbbell_for, random_hardware_truth

from .conftest import payload_rows
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate


@pytest.mark.parametrize("robot_name", ["gen3", "z1"])
def test_rows_hold_for_true_parameters(robot_name, request):
    """Noise-free torques, θ_r and friction exact: Y θ_true − U is within the radius, and the
    radius is tiny (only the quadrature allowance and a negligible noise bound remain)."""
    robot = request.getfixturevalue(robot_name)
    rng = np.random.default_rng(3)
    theta = robot.theta_e() + random_payload_theta(rng, mass_max=2.0,
                                                   com_lower=(-0.03,) * 3, com_upper=(0.03,) * 3)
    # Coulomb friction off: RK4 on the discontinuous sign law chatters around q̇ = 0 (many sign
    # changes per step), violating the identifier's stated sign assumption; that is an
    # integrator artefact, not a property of the identifier. Fv, Ia (Gen3) stay on.
    friction = robot.friction.nominal.copy()
    friction[:, 0] = 0.0
    run = simulate(robot, rng, theta_e=theta, duration=0.6, robot_rel=0.0,
                   friction_true=friction)
    cfg = load_identification_config(robot, friction="config", torque_noise_abs=1e-9, torque_noise_rel=0.0,
                                     robot_uncertainty_rel=0.0)
    cfg = cfg.with_overrides(friction_radius=np.zeros_like(cfg.friction_radius),
                             friction_nominal=friction)
    win = MomentumWindows(robot, cfg)
    rows = PayloadProblem(robot, cfg).rows(win.extend(run.t, run.q, run.dq, run.tau))
    plan = win.plan
    assert plan is not None and plan.window == 400 and plan.stride == 100   # 4 kHz, 0.1 s
    assert len(rows) == robot.nj * ((len(run.t) - plan.window - 1) // plan.stride + 1)
    # x = [θ_e | torque-timing unknowns (0: these torques are sampled, not held)]
    assert rows.A.shape[1] == 10 + robot.nj
    resid = rows.A[:, :10] @ theta - rows.c
    assert np.all(np.abs(resid) <= rows.r)
    # Not vacuous: the residual is tiny compared with the size of the equation's terms...
    assert np.max(np.abs(resid)) < 1e-4 * np.max(np.abs(rows.c))
    # ...and a wrong payload mass violates the rows by far.
    wrong = theta.copy()
    wrong[0] += 0.1
    assert np.max(np.abs(rows.A[:, :10] @ wrong - rows.c) - rows.r) > 1e-3


def test_batches_give_the_same_rows(gen3):
    rng = np.random.default_rng(4)
    run = simulate(gen3, rng, theta_e=gen3.theta_e(), duration=0.4, noise_rel=0.02)
    cfg = load_identification_config(gen3, friction="config", torque_noise_rel=0.02)
    whole = MomentumWindows(gen3, cfg, rate_hz=4000.0).extend(run.t, run.q, run.dq, run.tau_meas)
    win = MomentumWindows(gen3, cfg, rate_hz=4000.0)
    cuts = np.sort(rng.choice(np.arange(1, len(run.t)), 25, replace=False))
    parts = [win.extend(run.t[a:b], run.q[a:b], run.dq[a:b], run.tau_meas[a:b])
             for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(run.t)])]
    pieces = MomentumRows.concat([p for p in parts if len(p)])
    for f in ("W", "tau", "tau_abs", "fric", "sign_rad", "quad_tau", "quad_W", "t_start"):
        np.testing.assert_allclose(getattr(pieces, f), getattr(whole, f), rtol=1e-9, atol=1e-12)
    assert win.n_windows == len(whole) // gen3.nj
    # Memory stays flat: only checkpoints of windows not yet closed are kept.
    assert len(win._checkpoints) <= win.plan.window // win.plan.stride + 1


def test_quadrature_allowance_grows_with_coarse_sampling(gen3):
    rng = np.random.default_rng(5)
    fine = simulate(gen3, rng, theta_e=gen3.theta_e(), duration=0.5, rate_hz=4000)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=1e-9)
    rows_f = payload_rows(gen3, cfg, fine.t, fine.q, fine.dq, fine.tau)
    off = cfg.with_overrides(quadrature_safety=0.0)
    rows_0 = payload_rows(gen3, off, fine.t, fine.q, fine.dq, fine.tau)
    q_f = rows_f.r - rows_0.r
    assert np.all(q_f >= 0) and np.any(q_f > 0)
    sub = slice(None, None, 4)   # 1 kHz: quadrature error ~16x larger
    cfg4 = cfg.with_overrides(window=100, stride=50)
    rows_c = payload_rows(gen3, cfg4, fine.t[sub], fine.q[sub], fine.dq[sub], fine.tau[sub])
    rows_c0 = payload_rows(gen3, cfg4.with_overrides(quadrature_safety=0.0), fine.t[sub],
                           fine.q[sub], fine.dq[sub], fine.tau[sub])
    assert np.median(rows_c.r - rows_c0.r) > 4 * np.median(q_f)


def test_bad_samples_are_rejected_without_changing_state(gen3):
    cfg = load_identification_config(gen3, friction="config")
    win = MomentumWindows(gen3, cfg, rate_hz=1000.0)
    n = 10
    t = np.arange(n) * 1e-3
    z = np.zeros((n, 7))
    win.extend(t, z, z, z)
    with pytest.raises(SampleError, match="non-finite"):
        bad = z.copy()
        bad[3, 2] = np.nan
        win.extend(t + 1, bad, z, z)
    with pytest.raises(SampleError, match="increasing"):
        win.extend(t, z, z, z)               # stamps repeat the past
    with pytest.raises(SampleError, match="shape"):
        win.extend(t + 1, z[:, :6], z, z)
    assert win.n_samples == n
    win.extend(t + 1, z, z, z)
    assert win.n_samples == 2 * n


def test_floating_base_needs_the_imu():
    """B1 + Z1: rows of the arm joints only, and never without the trunk's base motion."""
    from sysid_ros._src.identification import SampleError
    from sysid_ros._src.model.robots import load_robot
    robot = load_robot("b1_z1")
    win = MomentumWindows(robot, load_identification_config(robot, friction="config"),
                          rate_hz=500.0)
    assert [robot.joint_names[j] for j in win.row_joints] == robot.config["arm_joints"]
    n = 40
    z = np.zeros((n, robot.nj))
    with pytest.raises(SampleError, match="IMU"):
        win.extend(np.arange(n) * 2e-3, z, z, z)


def test_window_plan_follows_the_streams_rate(gen3):
    """Online, the plan comes from the stream's own median step: the first samples are held
    until the rate is known, then laid out in windows of window_s seconds."""
    rng = np.random.default_rng(6)
    run = simulate(gen3, rng, theta_e=gen3.theta_e(), duration=1.0, rate_hz=500.0)
    cfg = load_identification_config(gen3, friction="config")
    win = MomentumWindows(gen3, cfg)
    assert len(win.extend(run.t[:10], run.q[:10], run.dq[:10], run.tau[:10])) == 0
    assert win.plan is None and win.n_samples == 0          # held, not yet integrated
    rows = win.extend(run.t[10:], run.q[10:], run.dq[10:], run.tau[10:])
    assert win.plan is not None and win.n_samples == len(run.t)
    assert (win.plan.window, win.plan.stride) == (48, 12)   # 0.1 s / 0.025 s at 500 Hz
    assert len(rows) > 0
    assert np.allclose(rows.t_end - rows.t_start, 0.096, rtol=0.25)


@pytest.mark.parametrize("robot_name", ["gen3", "z1"])
def test_velocity_noise_radius_bounds_the_momentum_error(robot_name, request):
    """vel_rad ≥ |H(q_a)·e_a − H(q_b)·e_b| for every velocity error |e| ≤ ε at a window's two
    ends, i.e. Σ_i ε_i·(|H_ji(q_a)| + |H_ji(q_b)|), with H from Pinocchio's CRBA of robots drawn
    inside the identifier's boxes (links ±5 %, dumbbells inside the prior); and equal to it when
    the boxes are the drawn robot itself (θ_r exact, the prior a point): the bound is the
    worst case, not a loose one. With ``velocity_noise_scope: payload`` it is the same for the
    payload's share, H(q; with payload) − H(q; unloaded)."""
    robot = request.getfixturevalue(robot_name)
    rng = np.random.default_rng(5)
    eps = np.linspace(0.01, 0.03, robot.nj)
    cfg = load_identification_config(robot, friction="config", velocity_noise_abs=eps)
    t = np.arange(0.0, 0.4, 1e-3)
    q = 0.3 + 0.6 * np.sin(np.outer(t, 1.0 + np.arange(robot.nj)))
    dq = np.gradient(q, t, axis=0)

    def rows_and_worst(config, truth):
        rows = MomentumWindows(robot, config, rate_hz=1000.0).extend(t, q, dq, np.zeros_like(q))
        model = truth.pinocchio_model(robot)
        data = model.createData()
        worst = np.zeros(len(rows))
        for end in (rows.t_start, rows.t_end):
            H = np.stack([pin.crba(model, data, q[s]) for s in np.searchsorted(t, end)])
            H = np.triu(H) + np.swapaxes(np.triu(H, 1), 1, 2) - np.diag(model.armature)[None]
            worst += np.abs(H[np.arange(len(rows)), rows.joint]) @ eps
        return rows, worst

    for k in range(3):
        payload = dumbbell_for(robot, 0.5 + 0.5 * k)
        truth = random_hardware_truth(robot, rng, link_rel=0.05, payload=payload)
        assert cfg.prior.contains(truth.theta_e)
        rows, worst = rows_and_worst(cfg, truth)
        assert len(rows) and np.all(worst <= rows.vel_rad * (1 + 1e-9))
        exact = random_hardware_truth(robot, rng, link_rel=0.0, payload=payload)
        point = cfg.with_overrides(robot_uncertainty_rel=0.0,
                                   prior=theta_e_box(exact.theta_e - 1e-12, exact.theta_e + 1e-12))
        rows, worst = rows_and_worst(point, exact)
        np.testing.assert_allclose(rows.vel_rad, worst, rtol=1e-6)
        # velocity_noise_scope 'payload' (a calibrated robot): only the payload's share,
        # |(H(q; θ_e) − H(q; θ_ee))·e| with θ_ee the unloaded body, here exact
        share = point.with_overrides(velocity_noise_scope="payload", calibrated=True)
        rows, worst = rows_and_worst(share, exact)
        payload_only = np.zeros(len(rows))
        for end in (rows.t_start, rows.t_end):
            idx = np.searchsorted(t, end)
            dH = []
            for model in (exact.pinocchio_model(robot), robot.model):
                data = model.createData()
                H = np.stack([pin.crba(model, data, q[s]) for s in idx])
                dH.append(np.triu(H) + np.swapaxes(np.triu(H, 1), 1, 2)
                          - np.diag(model.armature)[None])
            payload_only += np.abs((dH[0] - dH[1])[np.arange(len(rows)), rows.joint]) @ eps
        np.testing.assert_allclose(rows.vel_rad, payload_only, rtol=1e-6, atol=1e-12)
        assert np.all(rows.vel_rad < worst)
