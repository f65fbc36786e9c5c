"""The B1 + Z1 standing in the simulator, against MuJoCo's own state (truth): the trunk holds its
height and attitude on real foot contacts, the Z1 tracks while the legs stand, the IMU reads
gravity at rest, and the standing controller refuses a stance it cannot compute."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from sysid_ros._src.simulation import SimConfig, SimulationError, Simulator, SimulatorSpec
from sysid_ros._src.simulation.standing import QuasiStaticStance

# Stated bounds of the standing B1 (docs/theory/simulation.md, config/b1_z1.yaml `arm_view`).
HEIGHT_TOL = 0.005        # m: trunk height within this of its settled height
TILT_HOLD_DEG = 0.3       # roll/pitch while the arm holds
TILT_MOVE_DEG = 1.0       # roll/pitch while the arm moves (0.5 Hz swing below)
SLIP_TOL = 0.003          # m: horizontal travel of each foot's contact point
LEG_POSTURE_TOL = 0.005   # rad: legs at their posture (the PD alone sags ~0.06 rad)



def _roll_pitch_deg(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q[3:7]
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    return np.degrees([roll, pitch])


def _feet_in_contact(sim: Simulator) -> set[int]:
    """Foot geoms with a ground contact pushing up (normal force > 0) — MuJoCo's contacts."""
    d = sim.data
    out = set()
    force = np.zeros(6)
    for i in range(d.ncon):
        c = d.contact[i]
        mujoco.mj_contactForce(sim.model, d, i, force)
        if force[0] > 0.0:
            out |= {int(c.geom1), int(c.geom2)} & set(sim.mj.contact_geoms.tolist())
    return out


def _foot_xy(sim: Simulator) -> np.ndarray:
    return sim.data.geom_xpos[sim.mj.contact_geoms, :2].copy()


def _settled(robot, physics_dt: float = 1e-3, arm_q: list[float] | None = None) -> Simulator:
    sim = Simulator(SimulatorSpec(robot, config=SimConfig(physics_dt=physics_dt), seed=0))
    if arm_q is not None:
        q0 = sim.home.copy()
        q0[12:] = arm_q
        sim.reset(q0)
    sim.step(None, n_steps=int(round(1.0 / physics_dt)))      # 1 s to land and settle
    return sim


@pytest.mark.parametrize("physics_dt", [1e-3, pytest.param(2.5e-4, marks=pytest.mark.slow)])
def test_b1_stands_level_on_four_feet_without_sagging(b1_z1, physics_dt):
    sim = _settled(b1_z1, physics_dt)
    z0, feet0 = sim.state().q[2], _foot_xy(sim)
    posture = np.asarray(b1_z1.config["leg_standing_posture"])
    per_ms = int(round(1e-3 / physics_dt))
    for _ in range(200):                                          # 2 s, arm holding
        sim.step(None, n_steps=10 * per_ms)
        st = sim.state()
        assert abs(st.q[2] - z0) < HEIGHT_TOL
        assert np.all(np.abs(_roll_pitch_deg(st.q)) < TILT_HOLD_DEG)
        assert _feet_in_contact(sim) == set(sim.mj.contact_geoms.tolist())
        assert np.abs(sim.q[:12] - posture).max() < LEG_POSTURE_TOL
    assert np.abs(_foot_xy(sim) - feet0).max() < SLIP_TOL
    assert np.linalg.norm(sim.state().v[:6]) < 0.01


def test_posture_pd_alone_sags(b1_z1):
    """The feed-forward is what keeps the legs at their posture: without it the same PD sags
    by more than the bound above (so the test above can fail)."""
    sim = Simulator(SimulatorSpec(b1_z1, config=SimConfig(physics_dt=1e-3), seed=0))
    sim._stance = None                                            # PD only
    sim.step(None, n_steps=2000)
    posture = np.asarray(b1_z1.config["leg_standing_posture"])
    assert np.abs(sim.q[:12] - posture).max() > 5 * LEG_POSTURE_TOL


def test_z1_tracks_a_commanded_motion_while_the_legs_stand(b1_z1):
    """The arm swings (0.5 Hz, up to 0.8 rad) under the test's own computed-torque commands at
    1 kHz (PD + bias + arm-block inertia + the simulated friction law); it follows, the trunk
    stays level and the feet stay put (MuJoCo truth)."""
    sim = _settled(b1_z1, arm_q=[0.0, 1.0, -1.2, 0.2, 0.0, 0.0])   # room to swing both ways
    arm = np.array([b1_z1.joint_names.index(n) for n in b1_z1.config["arm_joints"]])
    dofs = sim.mj.dof_adr[arm]
    q0, z0, feet0 = sim.q[arm], sim.state().q[2], _foot_xy(sim)
    amp = np.array([0.8, 0.4, -0.4, 0.5, 0.5, 0.8])
    kp, kd = np.array([60.0, 80, 60, 30, 20, 10]), np.array([2.0, 3, 2, 1, 0.5, 0.3])
    fc, fv = b1_z1.friction.nominal[arm, 0], b1_z1.friction.nominal[arm, 1]
    mass = np.zeros((sim.model.nv, sim.model.nv))
    err = []
    for k in range(2000):                                         # one period
        t = k * 1e-3
        qd = q0 + amp * np.sin(np.pi * t)
        dqd = amp * np.pi * np.cos(np.pi * t)
        ddqd = -amp * np.pi ** 2 * np.sin(np.pi * t)
        mujoco.mj_fullM(sim.model, sim.data, mass)
        tau = (kp * (qd - sim.q[arm]) + kd * (dqd - sim.dq[arm]) + sim.data.qfrc_bias[dofs]
               + mass[np.ix_(dofs, dofs)] @ ddqd + fc * np.sign(dqd) + fv * dqd)
        sim.step(tau, n_steps=1)
        st = sim.state()
        err.append(np.abs(sim.q[arm] - qd).max())
        assert abs(st.q[2] - z0) < HEIGHT_TOL
        assert np.all(np.abs(_roll_pitch_deg(st.q)) < TILT_MOVE_DEG)
    assert max(err) < 0.06
    np.testing.assert_allclose(sim.measure().tau_measured[arm],
                               np.clip(tau, -b1_z1.limits.tau_max[arm], b1_z1.limits.tau_max[arm]))
    assert np.abs(_foot_xy(sim) - feet0).max() < SLIP_TOL
    assert _feet_in_contact(sim) == set(sim.mj.contact_geoms.tolist())


def test_imu_reads_gravity_at_rest(b1_z1):
    """Specific force = R_imuᵀ (0, 0, +g): +g up in the IMU frame, as a real accelerometer
    reports at rest; R from MuJoCo's IMU site, g from the model."""
    sim = _settled(b1_z1)
    sim.step(None, n_steps=1000)
    m = sim.measure()
    site = sim.model.site("imu_site").id
    rot = sim.data.site_xmat[site].reshape(3, 3)
    g = -sim.model.opt.gravity
    np.testing.assert_allclose(m.imu.linear_acceleration, rot.T @ g, atol=0.05)
    np.testing.assert_allclose(m.imu.angular_velocity, 0.0, atol=5e-3)
    x, y, z, w = m.imu.orientation_xyzw
    np.testing.assert_allclose(np.array([w, x, y, z]),
                               _site_quat(sim, site), atol=1e-9)


def _site_quat(sim: Simulator, site: int) -> np.ndarray:
    out = np.empty(4)
    mujoco.mju_mat2Quat(out, sim.data.site_xmat[site])
    return out if out[0] >= 0 else -out


def test_feed_forward_carries_the_weight(b1_z1):
    """At rest the stance's contact forces add up to the robot's weight (vertical) and match
    MuJoCo's contact forces in sum."""
    sim = _settled(b1_z1)
    sim.step(None, n_steps=500)
    weight = float(np.sum(sim.model.body_mass)) * 9.81
    f = sim._stance.forces
    assert f[:, 2].sum() == pytest.approx(weight, rel=1e-3)
    assert np.all(f[:, 2] > 0) and np.abs(f[:, :2]).max() < 0.05 * f[:, 2].min()
    total = np.zeros(6)
    force = np.zeros(6)
    for i in range(sim.data.ncon):
        mujoco.mj_contactForce(sim.model, sim.data, i, force)
        total[:3] += sim.data.contact[i].frame.reshape(3, 3).T @ force[:3]
    assert total[2] == pytest.approx(weight, rel=0.01)


def test_stance_refuses_feet_that_cannot_hold_the_trunk(b1_z1):
    """Two feet (a line) cannot balance the trunk's six degrees of freedom: a loud error, not a
    made-up torque."""
    sim = _settled(b1_z1)
    legs = sim.mj.dof_adr[:12]
    two = QuasiStaticStance(sim.model, sim.mj.free_dof, legs, sim.mj.contact_geoms[:2])
    with pytest.raises(SimulationError, match="three non-collinear feet"):
        two.torques(sim.data)


def _trunk_alpha_after_step(robot, feed_forward: bool) -> float:
    """Largest ‖α‖ of the trunk (MuJoCo's exact angular velocity, differences over the 1 ms
    step) in the 30 ms after the arm's joints 1-3 get a torque step of 2 N·m each (the size of
    the controller's Coulomb feed-forward switching on), the arm holding with PD + bias before
    and after. ``feed_forward=False`` withholds the arm's command from the stance (the stance
    then only reacts through its PD)."""
    sim = Simulator(SimulatorSpec(robot, config=SimConfig(physics_dt=1e-3), seed=0))
    sim.step(None, n_steps=800)
    if not feed_forward:
        sim._arm_force = lambda q, dq: None              # type: ignore[method-assign]
    arm = np.arange(12, 18)
    hold = sim.q[arm].copy()
    dofs = sim.mj.dof_adr[arm]
    kp, kd = np.array([60.0, 80, 60, 30, 20, 10]), np.array([2.0, 3, 2, 1, 0.5, 0.3])
    omega = []
    for k in range(60):
        tau = kp * (hold - sim.q[arm]) - kd * sim.dq[arm] + sim.data.qfrc_bias[dofs]
        if k >= 30:
            tau[:3] += 2.0
        sim.step(tau, n_steps=1)
        omega.append(sim.state().v[3:6].copy())
    alpha = np.linalg.norm(np.diff(np.array(omega), axis=0), axis=1) / 1e-3
    return float(alpha[29:].max())


def test_feeding_the_arms_reaction_forward_calms_the_trunk(b1_z1):
    """The stance feeds the arm's commanded torque's reaction to the feet (standing.py): a torque
    step of the arm moves the trunk far less than when the stance only reacts through its PD.
    Reference: MuJoCo's exact trunk velocity under both stances, same step."""
    with_ff = _trunk_alpha_after_step(b1_z1, True)
    without = _trunk_alpha_after_step(b1_z1, False)
    assert with_ff < 0.5 * without, (with_ff, without)
