"""MuJoCo (the simulator) against Pinocchio (the identifier's model), independent engines."""
from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import (
    DUMBBELLS_KG, SimConfig, Simulator, SimulatorSpec, build_mujoco_model, dumbbell_for, true_theta_e,
)

from .mujoco_bodies import mj_body_theta




def _pin_with_ee(robot, theta_e: np.ndarray) -> pin.Model:
    model = robot.model.copy()
    model.inertias[robot.ee_joint_id] = pin.Inertia.FromDynamicParameters(theta_e)
    return model


def _mj_mass_bias(mjr, q: np.ndarray, dq: np.ndarray):
    m = mjr.model
    d = mujoco.MjData(m)
    d.qpos[mjr.qpos_adr], d.qvel[mjr.dof_adr] = q, dq
    mujoco.mj_forward(m, d)
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    idx = mjr.dof_adr
    return full[np.ix_(idx, idx)] - np.diag(m.dof_armature[idx]), d.qfrc_bias[idx].copy()


@pytest.mark.parametrize("name", ["gen3", "z1", "b1_z1"])
def test_lumped_end_effector_body_equals_pinocchio(name):
    robot = load_robot(name)
    mjr = build_mujoco_model(robot)
    np.testing.assert_allclose(mj_body_theta(mjr.model, mjr.ee_body), robot.theta_e(),
                               atol=1e-12)
    assert mjr.model.body_mass.sum() == pytest.approx(
        sum(robot.model.inertias[i].mass for i in range(1, robot.model.njoints)), abs=1e-9)


@pytest.mark.parametrize("fixture", ["gen3", "z1"])
def test_mass_matrix_and_bias_match_pinocchio(fixture, request):
    robot = request.getfixturevalue(fixture)
    mjr = build_mujoco_model(robot)
    data = robot.model.createData()
    rng = np.random.default_rng(1)
    for q in robot.random_configuration(rng, 5):
        dq = rng.uniform(-1, 1, robot.nv)
        mass, bias = _mj_mass_bias(mjr, q, dq)
        np.testing.assert_allclose(mass, pin.crba(robot.model, data, q), atol=1e-10)
        np.testing.assert_allclose(bias, pin.nonLinearEffects(robot.model, data, q, dq),
                                   atol=1e-9)
        np.testing.assert_allclose(mjr.model.dof_armature[mjr.dof_adr], robot.friction.nominal[:, 2])


@pytest.mark.parametrize("fixture", ["gen3", "z1"])
def test_payload_truth_is_what_mujoco_simulates(fixture, request):
    """MuJoCo with the dumbbell equals Pinocchio with θ_e := true_theta_e, and differs from
    Pinocchio with the nominal θ_e (so this check can fail)."""
    robot = request.getfixturevalue(fixture)
    payload = dumbbell_for(robot, DUMBBELLS_KG[-1])
    mjr = build_mujoco_model(robot, payload)
    truth = _pin_with_ee(robot, true_theta_e(robot, payload))
    d_truth, d_nom = truth.createData(), robot.model.createData()
    np.testing.assert_allclose(mj_body_theta(mjr.model, mjr.ee_body),
                               true_theta_e(robot, payload), atol=1e-12)
    rng = np.random.default_rng(2)
    for q in robot.random_configuration(rng, 4):
        dq = rng.uniform(-1, 1, robot.nv)
        mass, bias = _mj_mass_bias(mjr, q, dq)
        np.testing.assert_allclose(mass, pin.crba(truth, d_truth, q), atol=1e-10)
        np.testing.assert_allclose(bias, pin.nonLinearEffects(truth, d_truth, q, dq), atol=1e-9)
        assert np.abs(bias - pin.nonLinearEffects(robot.model, d_nom, q, dq)).max() > 1.0


def _pin_forward(robot, model, data, q, dq, tau, h=None):
    """(H + Ia) q̈ = τ − C q̇ − g − Fv q̇ − Fc sign q̇ − β; with h, the damping is implicit
    ((H + Ia + h·Fv) q̈ = … − Fv q̇), which is MuJoCo's Euler scheme."""
    fc, fv, ia, beta = robot.friction.nominal.T
    mass = pin.crba(model, data, q) + np.diag(ia + (0.0 if h is None else h * fv))
    rhs = tau - pin.nonLinearEffects(model, data, q, dq) - fv * dq - fc * np.sign(dq) - beta
    return np.linalg.solve(mass, rhs)


@pytest.mark.parametrize("fixture", ["gen3", "z1"])
def test_instantaneous_forward_dynamics_match(fixture, request):
    robot = request.getfixturevalue(fixture)
    sim = Simulator(SimulatorSpec(robot, config=SimConfig(quantize=False), seed=0))
    data = robot.model.createData()
    rng = np.random.default_rng(3)
    m, d = sim.model, sim.data
    fc, _, _, beta = robot.friction.nominal.T
    for q in robot.random_configuration(rng, 5):
        dq = rng.uniform(-1, 1, robot.nv)
        tau = rng.uniform(-0.5, 0.5) * robot.limits.tau_max
        sim.reset(q, dq)
        d.qfrc_applied[sim.mj.dof_adr] = tau - fc * np.sign(dq) - beta
        mujoco.mj_forward(m, d)
        expected = _pin_forward(robot, robot.model, data, q, dq, tau)
        np.testing.assert_allclose(d.qacc[sim.mj.dof_adr], expected, rtol=1e-9, atol=1e-9)


def test_gen3_trajectory_matches_pinocchio_same_scheme(gen3):
    """0.2 s under a varying torque with a 2.27 kg dumbbell: the Simulator's whole step path
    against Pinocchio (θ_e := true_theta_e) integrated with the same semi-implicit Euler scheme
    (implicit damping). Fc = 0 on the Gen3, so the law is smooth and agreement is to rounding."""
    payload = dumbbell_for(gen3, 2.27)
    sim = Simulator(SimulatorSpec(gen3, payload, SimConfig(quantize=False), seed=0))
    model = _pin_with_ee(gen3, true_theta_e(gen3, payload))
    data = model.createData()
    h = sim.physics_dt
    q, dq = sim.home.copy(), np.full(gen3.nj, 0.3)
    sim.reset(q, dq)
    for k in range(int(round(0.2 / h))):
        tau = 0.3 * gen3.limits.tau_max * np.sin(2 * np.pi * 2.0 * k * h + np.arange(gen3.nj))
        sim.step(tau)
        dq = dq + h * _pin_forward(gen3, model, data, q, dq, tau, h=h)
        q = q + h * dq
    assert sim.time == pytest.approx(0.2)
    np.testing.assert_allclose(sim.q, q, atol=1e-9)
    np.testing.assert_allclose(sim.dq, dq, atol=1e-8)
    assert np.abs(sim.q - sim.home).max() > 1e-3   # it really moved


def test_z1_sliding_coulomb_friction_is_fc_sign(z1):
    """While every joint slides (no velocity reversal), the simulated Coulomb friction is
    exactly Fc·sign(q̇): 0.2 s against Pinocchio with the plain sign law."""
    sim = Simulator(SimulatorSpec(z1, config=SimConfig(quantize=False), seed=0))
    data = z1.model.createData()
    fc, fv = z1.friction.nominal[:, 0], z1.friction.nominal[:, 1]
    h = sim.physics_dt
    dq0 = np.array([0.8, -0.6, 0.7, -0.9, 0.8, -1.0])
    q, dq = sim.home.copy(), dq0.copy()
    sim.reset(q, dq)
    for _ in range(int(round(0.2 / h))):
        # gravity compensation plus a push along the initial velocity keeps every joint sliding
        tau = pin.computeGeneralizedGravity(z1.model, data, q) + np.sign(dq0) * (fc + fv * 0.9)
        sim.step(tau)
        dq = dq + h * _pin_forward(z1, z1.model, data, q, dq, tau, h=h)
        q = q + h * dq
        assert np.all(np.sign(dq) == np.sign(dq0))   # precondition of this check
    np.testing.assert_allclose(sim.q, q, atol=1e-9)
    np.testing.assert_allclose(sim.dq, dq, atol=1e-8)


def test_z1_stiction_holds_below_fc_and_slides_above(z1):
    """At rest a joint sticks while the net torque is below Fc and slides once it exceeds it
    (no chattering: the velocity stays exactly 0 while stuck)."""
    data = z1.model.createData()
    fc = z1.friction.nominal[:, 0]
    for scale, moves in ((0.8, False), (1.5, True)):
        sim = Simulator(SimulatorSpec(z1, config=SimConfig(quantize=False), seed=0))
        for _ in range(800):
            tau = pin.computeGeneralizedGravity(z1.model, data, sim.q)
            tau[5] += scale * fc[5]
            sim.step(tau)
        assert (abs(sim.q[5] - sim.home[5]) > 1e-2) == moves
        if not moves:
            assert abs(sim.dq[5]) < 1e-6
