"""Simulated sensors, torque limits, payload truth, hold/posture controllers, bad input."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.model.parameters import is_physically_consistent
from sysid_ros._src.simulation import (
    DUMBBELLS_KG, CommandError, Payload, PayloadError, SimConfig, SimConfigError, Simulator,
    SimulatorSpec, dumbbell_for, true_theta_e,
)




def test_torque_sensor_reports_command_exactly_without_noise(gen3):
    sim = Simulator(SimulatorSpec(gen3, config=SimConfig(noise_tau=0.0), seed=0))
    tau = 0.2 * gen3.limits.tau_max * np.linspace(-1, 1, gen3.nj)
    sim.step(tau, n_steps=4)
    m = sim.measure()
    np.testing.assert_array_equal(m.tau_measured, tau)
    assert not m.clipped.any()
    assert m.t == pytest.approx(4 * sim.physics_dt)


def test_torque_sensor_noise_is_bounded_and_present(gen3):
    noise = np.array([0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05])
    sim = Simulator(SimulatorSpec(gen3, config=SimConfig(noise_tau=noise), seed=3))
    tau = 0.1 * gen3.limits.tau_max
    errs = []
    for _ in range(400):
        sim.step(tau)
        errs.append(sim.measure().tau_measured - tau)
    errs = np.abs(np.array(errs))
    assert np.all(errs <= noise)
    assert np.all(errs.max(axis=0) > 0.9 * noise)   # the bound is actually used (uniform)


def test_clipping_to_torque_limit_sets_flag(gen3):
    sim = Simulator(SimulatorSpec(gen3, seed=0))
    tau = np.zeros(gen3.nj)
    tau[1], tau[5] = 1e3, -1e3
    sim.step(tau)
    m = sim.measure()
    assert m.tau_measured[1] == gen3.limits.tau_max[1]
    assert m.tau_measured[5] == -gen3.limits.tau_max[5]
    np.testing.assert_array_equal(m.clipped, np.arange(gen3.nj) % 4 == 1)
    sim.step(np.zeros(gen3.nj))
    assert not sim.measure().clipped.any()


def test_encoder_quantisation(gen3):
    sim = Simulator(SimulatorSpec(gen3, seed=0))
    sim.step(0.3 * gen3.limits.tau_max, n_steps=200)
    res = np.deg2rad([0.02] * 4 + [0.011] * 3)
    q_meas = sim.measure().q
    assert np.all(np.abs(q_meas - sim.q) <= res / 2 + 1e-15)
    np.testing.assert_allclose(q_meas / res, np.round(q_meas / res), atol=1e-9)
    assert np.any(q_meas != sim.q)
    exact = Simulator(SimulatorSpec(gen3, config=SimConfig(quantize=False), seed=0))
    exact.step(0.3 * gen3.limits.tau_max, n_steps=200)
    np.testing.assert_array_equal(exact.measure().q, exact.q)


def test_hold_controller_keeps_position_and_uses_last_position(gen3):
    sim = Simulator(SimulatorSpec(gen3, dumbbell_for(gen3, 3.63), seed=0))
    sim.step(None, n_steps=4000)  # 1 s with the heaviest dumbbell
    assert np.abs(sim.q - sim.home).max() < 1e-3
    sim.step(0.3 * gen3.limits.tau_max, n_steps=400)
    moved = sim.q.copy()
    assert np.abs(moved - sim.home).max() > 1e-3
    sim.step(None, n_steps=8000)
    np.testing.assert_allclose(sim.hold_target, moved)
    assert np.abs(sim.q - moved).max() < 0.02
    assert np.abs(sim.dq).max() < 0.02


@pytest.mark.parametrize("mass", DUMBBELLS_KG)
def test_dumbbells_are_physical_and_gripped_at_grip_point(gen3, mass):
    p = dumbbell_for(gen3, mass)
    np.testing.assert_allclose(p.com, [0.0, 0.0, -0.1915])
    theta = true_theta_e(gen3, p)
    assert theta[0] == pytest.approx(gen3.theta_e()[0] + mass)
    assert is_physically_consistent(theta)
    np.testing.assert_allclose(theta - gen3.theta_e(), pin.Inertia(
        mass, p.com, p.inertia_com).toDynamicParameters())
    # handle along y: the axial moment is the smallest principal moment
    eig = np.diag(p.inertia_com)
    assert eig[1] < eig[0] and eig[1] < eig[2]


@pytest.mark.parametrize("kwargs, match", [
    (dict(mass=-1.0, com=np.zeros(3), inertia_com=np.eye(3) * 1e-3), "mass"),
    (dict(mass=1.0, com=np.zeros(2), inertia_com=np.eye(3) * 1e-3), "com"),
    (dict(mass=1.0, com=np.zeros(3), inertia_com=np.diag([1e-3, 1e-3, 1.0])), "triangle"),
    (dict(mass=1.0, com=np.zeros(3), inertia_com=np.array([[1, 2, 0], [0, 1, 0], [0, 0, 1.0]])),
     "symmetric"),
])
def test_bad_payload_is_rejected(kwargs, match):
    with pytest.raises(PayloadError, match=match):
        Payload(**kwargs)
    with pytest.raises(PayloadError, match="handle"):
        Payload.dumbbell(0.1)


def test_bad_commands_and_config_are_rejected(gen3):
    sim = Simulator(SimulatorSpec(gen3, seed=0))
    with pytest.raises(CommandError, match="entries"):
        sim.step(np.zeros(3))
    with pytest.raises(CommandError, match="non-finite"):
        sim.step(np.full(gen3.nj, np.nan))
    with pytest.raises(SimConfigError, match="physics_dt"):
        Simulator(SimulatorSpec(gen3, config=SimConfig(physics_dt=2e-3)))
    with pytest.raises(SimConfigError, match="noise_tau"):
        Simulator(SimulatorSpec(gen3, config=SimConfig(noise_tau=[0.1, 0.2])))
    with pytest.raises(SimConfigError, match="q0"):
        sim.reset(np.zeros(3))


def test_b1_stands_and_arm_takes_commands(b1_z1):
    sim = Simulator(SimulatorSpec(b1_z1, seed=0))
    z0 = sim.state().q[2]
    heights = []
    for _ in range(40):          # 2 s, arm holding
        sim.step(None, n_steps=200)
        heights.append(sim.state().q[2])
    heights = np.array(heights)
    assert heights.min() > 0.8 * z0 and heights.max() < z0 + 0.01
    st = sim.state()
    assert np.linalg.norm(st.v) < 0.05
    arm = np.array([b1_z1.joint_names.index(n) for n in b1_z1.config["arm_joints"]])
    legs_before = sim.q[:12].copy()
    arm_before = sim.q[arm].copy()
    cmd = np.zeros(6)
    cmd[0] = 5.0   # yaw the arm
    sim.step(cmd, n_steps=1000)
    assert sim.q[arm[0]] - arm_before[0] > 0.05
    assert np.abs(sim.q[:12] - legs_before).max() < 0.05
    full = np.zeros(b1_z1.nj)
    full[:12] = 50.0   # leg entries of a full-length command are ignored (posture PD owns them)
    sim.step(full)
    np.testing.assert_allclose(sim.measure().tau_measured[arm], 0.0, atol=0)


def test_b1_imu_matches_base_state(b1_z1):
    sim = Simulator(SimulatorSpec(b1_z1, seed=0))
    sim.step(None, n_steps=2000)
    sim.step(np.array([5.0, 0, 0, 0, 0, 0]), n_steps=200)
    m = sim.measure()
    st = sim.state()
    # the IMU mount of the B1 URDF is aligned with the base frame
    q_imu = m.imu.orientation_xyzw
    assert min(np.abs(q_imu - st.q[3:7]).max(), np.abs(q_imu + st.q[3:7]).max()) < 1e-9
    np.testing.assert_allclose(m.imu.angular_velocity, st.v[3:6], atol=1e-9)
    assert m.imu.linear_acceleration[2] == pytest.approx(9.81, abs=0.5)
