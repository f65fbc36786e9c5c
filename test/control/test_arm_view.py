"""The fixed-base arm view of the B1 + Z1 against the floating-base Pinocchio model (oracle), and
its base-disturbance bound against Pinocchio's exact fictitious torques and a MuJoCo run of the
standing robot."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.control.arm_view import (
    TrunkMotionBound, arm_view, base_disturbance_bound, interval_alpha, trunk_motion_report,
)
from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.model.errors import RobotConfigError
from sysid_ros._src.model.robots import load_robot


@pytest.fixture(scope="module")
def b1_z1():
    return load_robot("b1_z1")


@pytest.fixture(scope="module")
def view(b1_z1):
    return arm_view(b1_z1)


def _full_state(robot, q_arm, rng, level=True):
    """Full configuration: trunk at a random place, yawed only when ``level`` (gravity along
    the trunk's −z), legs anywhere."""
    q = robot.random_configuration(rng)
    yaw = rng.uniform(-np.pi, np.pi) if level else 0.0
    rot = pin.utils.rpyToMatrix(0.0, 0.0, yaw) if level else pin.Quaternion(
        q[6], q[3], q[4], q[5]).toRotationMatrix()
    q[3:7] = pin.Quaternion(rot).coeffs()
    arm = [robot.joint_names.index(n) for n in robot.config["arm_joints"]]
    q[robot.q_index[arm]] = q_arm
    return q, np.array(robot.v_index[arm])


def test_arm_view_dynamics_equal_the_floating_models_arm_block(b1_z1, view):
    """Trunk at rest and level: M, the bias torques and the torque regressor of the view equal
    the arm rows/block of the floating-base model (Pinocchio), at random arm and leg states."""
    rng = np.random.default_rng(0)
    full, vd = b1_z1.model, b1_z1.model.createData()
    m, d = view.model, view.model.createData()
    assert view.nj == 6 and not view.floating_base and view.tool_frame == b1_z1.tool_frame
    for _ in range(20):
        qa = view.random_configuration(rng)
        dqa, ddqa = rng.normal(size=6), rng.normal(size=6)
        q, cols = _full_state(b1_z1, qa, rng)
        v, a = np.zeros(b1_z1.nv), np.zeros(b1_z1.nv)
        v[cols], a[cols] = dqa, ddqa
        mf = pin.crba(full, vd, q)
        mf = np.triu(mf) + np.triu(mf, 1).T
        ma = pin.crba(m, d, qa)
        ma = np.triu(ma) + np.triu(ma, 1).T
        np.testing.assert_allclose(ma, mf[np.ix_(cols, cols)], atol=1e-12)
        np.testing.assert_allclose(pin.rnea(m, d, qa, dqa, ddqa),
                                   pin.rnea(full, vd, q, v, a)[cols], atol=1e-10)
        yf = pin.computeJointTorqueRegressor(full, vd, q, v, a)
        ya = pin.computeJointTorqueRegressor(m, d, qa, dqa, ddqa)
        arm_bodies = [full.getJointId(n) - 1 for n in view.joint_names]
        yf_arm = yf[cols].reshape(6, -1, 10)[:, arm_bodies].reshape(6, -1)
        np.testing.assert_allclose(ya, yf_arm, atol=1e-10)
    # the per-joint facts are the arm's rows of the robot file
    arm = [b1_z1.joint_names.index(n) for n in view.joint_names]
    np.testing.assert_array_equal(view.limits.tau_max, b1_z1.limits.tau_max[arm])
    np.testing.assert_array_equal(view.friction.nominal, b1_z1.friction.nominal[arm])
    assert np.all(view.limits.dq_max <= b1_z1.limits.dq_max[arm])
    np.testing.assert_allclose(view.theta_e(), b1_z1.theta_e())


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_the_view_carries_the_disturbance_in_its_beta_box(b1_z1, view):
    arm = [b1_z1.joint_names.index(n) for n in view.joint_names]
    d_bar = base_disturbance_bound(b1_z1, TrunkMotionBound.from_robot(b1_z1))
    np.testing.assert_allclose(view.friction.radius[:, 3], b1_z1.friction.radius[arm, 3] + d_bar)
    np.testing.assert_allclose(view.config["arm_view"]["base_disturbance_Nm"], d_bar)
    # zero motion → zero disturbance; the bound grows with every motion term
    assert np.all(base_disturbance_bound(b1_z1, TrunkMotionBound(0, 0, 0, 0)) == 0)
    for k in range(4):
        args = [0.0] * 4
        args[k] = 0.1
        assert np.all(base_disturbance_bound(b1_z1, TrunkMotionBound(*args)) > 0)


def _fictitious(b1_z1, view, q, v, a, cols):
    """d = τ_view − τ_floating (arm rows) at the same arm acceleration: the torque the trunk's
    motion adds to the view's dynamics, exactly (Pinocchio)."""
    qa, dqa, ddqa = q[b1_z1.q_index[[b1_z1.joint_names.index(n) for n in view.joint_names]]], \
        v[cols], a[cols]
    return (pin.rnea(view.model, view.model.createData(), qa, dqa, ddqa)
            - pin.rnea(b1_z1.model, b1_z1.model.createData(), q, v, a)[cols])


def _random_motion(rng, bound: TrunkMotionBound, scale: float = 1.0):
    def vec(norm):
        u = rng.normal(size=3)
        return u / np.linalg.norm(u) * norm * rng.uniform(0.5, 1.0) ** 0.1
    tilt = scale * bound.tilt * rng.uniform(0.5, 1.0) ** 0.1
    axis = np.array([np.cos(t := rng.uniform(0, 2 * np.pi)), np.sin(t), 0.0])
    rot = pin.exp3(axis * tilt) @ pin.utils.rpyToMatrix(0, 0, rng.uniform(-np.pi, np.pi))
    return rot, vec(scale * bound.accel), vec(scale * bound.omega), vec(scale * bound.alpha)


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_bound_holds_for_every_sampled_trunk_motion_and_fails_outside_it(b1_z1, view):
    """Pinocchio's exact fictitious torque for random trunk motions inside the bound, arm speeds
    within the view's limits and the end-effector body anywhere in its prior box: never above
    d̄. Ten times the assumed motion does exceed it (the assumption is what carries it)."""
    rng = np.random.default_rng(1)
    bound = TrunkMotionBound.from_robot(b1_z1)
    d_bar = base_disturbance_bound(b1_z1, bound)
    from sysid_ros._src.control.prior import prior_box
    prior = prior_box(b1_z1)
    np.testing.assert_array_equal(base_disturbance_bound(b1_z1, bound, prior), d_bar)   # default
    point = ParameterBox.point(prior.names, prior.lower, units=prior.units, frame=prior.frame)
    assert np.all(base_disturbance_bound(b1_z1, bound, point) <= d_bar)      # a smaller θ_e box
    model = b1_z1.model.copy()
    ee = b1_z1.ee_joint_id
    worst = np.zeros(6)
    exceeded = False
    for k in range(300):
        theta_e = rng.uniform(prior.lower, prior.upper)
        try:
            model.inertias[ee] = pin.Inertia.FromDynamicParameters(theta_e)
        except Exception:
            continue
        b1 = _with_model(b1_z1, model)
        vw = _with_model(view, _view_model(view, theta_e))
        qa = view.random_configuration(rng)
        q, cols = _full_state(b1_z1, qa, rng, level=True)
        scale = 10.0 if k % 3 == 2 else 1.0
        rot, acc, omega, alpha = _random_motion(rng, bound, scale)
        q[3:7] = pin.Quaternion(rot).coeffs()
        v, a = np.zeros(b1_z1.nv), np.zeros(b1_z1.nv)
        v[cols] = rng.uniform(-1, 1, 6) * view.limits.dq_max
        a[cols] = rng.normal(size=6)
        # trunk (free-flyer) twist and acceleration in its own frame; gravity tilt via rot
        v[3:6] = omega
        v[:3] = rng.normal(size=3) * 0.1
        a[3:6] = alpha
        a[:3] = acc - np.cross(omega, v[:3])      # classical acceleration of the origin = acc
        d = _fictitious(b1, vw, q, v, a, cols)
        if scale == 1.0:
            worst = np.maximum(worst, np.abs(d) / d_bar)
        else:
            exceeded |= bool(np.any(np.abs(d) > d_bar))
    assert np.all(worst <= 1.0), worst
    assert worst.max() > 0.1             # loose (triangle inequalities), not vacuous
    assert exceeded


def _with_model(robot, model):
    from dataclasses import replace
    return replace(robot, model=model)


def _view_model(view, theta_e):
    m = view.model.copy()
    m.inertias[view.ee_joint_id] = pin.Inertia.FromDynamicParameters(theta_e)
    return m


def test_standing_b1_stays_inside_the_assumed_trunk_motion_and_disturbance(b1_z1, view):
    """MuJoCo: the Z1 swings as the planner's motions do (up to 0.35 rad, joint speeds ≤ 0.4
    rad/s) while the B1 stands; the IMU's trunk motion stays inside ``arm_view.trunk_motion``
    and the true fictitious torque (Pinocchio on the simulator's exact states, accelerations of
    the Euler step) stays below d̄."""
    from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec

    sim = Simulator(SimulatorSpec(b1_z1, config=SimConfig(physics_dt=1e-3), seed=0))
    sim.step(None, n_steps=1000)
    arm = np.array([b1_z1.joint_names.index(n) for n in view.joint_names])
    cols = b1_z1.v_index[arm]
    dofs = sim.mj.dof_adr[arm]
    q0 = sim.q[arm]
    amp = 0.44 * np.array([0.8, 0.4, -0.4, 0.5, 0.5, 0.8])
    w = 2 * np.pi / 6.0
    kp, kd = np.array([60.0, 80, 60, 30, 20, 10]), np.array([2.0, 3, 2, 1, 0.5, 0.3])
    bound = TrunkMotionBound.from_robot(b1_z1)
    d_bar = base_disturbance_bound(b1_z1, bound)
    h = sim.physics_dt
    states, imu = [], []
    for k in range(2000):
        t = k * h
        qd, dqd = q0 + amp * np.sin(w * t), amp * w * np.cos(w * t)
        tau = kp * (qd - sim.q[arm]) + kd * (dqd - sim.dq[arm]) + sim.data.qfrc_bias[dofs]
        states.append(sim.state())
        m = sim.measure()
        imu.append((m.t, m.imu.orientation_xyzw, m.imu.angular_velocity,
                    m.imu.linear_acceleration))
        sim.step(tau, n_steps=1)
    t, quat, gyro, acc = (np.array(x) for x in zip(*imu))
    report = trunk_motion_report(t, quat, gyro, acc, bound)
    assert report.violations == []
    assert report.omega > 0 and report.alpha > 0
    worst = 0.0
    for s0, s1 in zip(states[:-1], states[1:]):
        a = (s1.v - s0.v) / h
        worst = max(worst, float(np.max(np.abs(_fictitious(b1_z1, view, s0.q, s0.v, a, cols))
                                        / d_bar)))
    assert 0.0 < worst <= 1.0


def test_interval_alpha_sees_an_alternation_central_differences_cancel():
    """A trunk rate alternating at the sample rate (the B1 stance ringing at 500 Hz in a 1 kHz
    log): each interval's mean α is its full size, central differences read 0; a dropped
    sample lengthens the interval and the report carries it."""
    t = np.arange(9) * 1e-3
    gyro = np.zeros((9, 3))
    gyro[1::2, 0] = 1e-3                                    # rad/s, every other sample
    assert np.abs(np.gradient(gyro, t, axis=0)[1:-1]).max() == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(np.abs(interval_alpha(t, gyro)[:, 0]), 1.0)   # rad/s², exact
    bound = TrunkMotionBound(0.5, 0.05, 0.5, np.deg2rad(0.5))
    level, f = np.tile([0.0, 0.0, 0.0, 1.0], (9, 1)), np.tile([0, 0, 9.81], (9, 1))
    rep = trunk_motion_report(t, level, gyro, f, bound)
    assert rep.alpha == pytest.approx(1.0) and any("alpha" in v for v in rep.violations)
    keep = np.arange(9) != 4                                # one sample dropped
    gap = trunk_motion_report(t[keep], level[keep], gyro[keep], f[keep], bound)
    assert gap.max_step == pytest.approx(2e-3) and rep.max_step == pytest.approx(1e-3)


def test_trunk_motion_report_flags_a_violation():
    bound = TrunkMotionBound(0.5, 0.05, 2.0, np.deg2rad(0.5))
    t = np.arange(5) * 1e-3
    level = np.tile([0.0, 0.0, 0.0, 1.0], (5, 1))
    still = trunk_motion_report(t, level, np.zeros((5, 3)), np.tile([0, 0, 9.81], (5, 1)), bound)
    assert still.violations == [] and still.accel == pytest.approx(0.0, abs=1e-12)
    tilted = np.tile([np.sin(0.01), 0.0, 0.0, np.cos(0.01)], (5, 1))   # 1.15° roll
    gyro = np.zeros((5, 3))
    gyro[2] = [0.0, 0.2, 0.0]
    rep = trunk_motion_report(t, tilted, gyro, np.tile([0, 0, 9.81], (5, 1)), bound)
    assert any("tilt" in v for v in rep.violations)
    assert any("omega" in v for v in rep.violations) and any("alpha" in v for v in rep.violations)


def test_bad_arm_view_config_names_the_field(b1_z1):
    from dataclasses import replace
    cfg = dict(b1_z1.config)
    cfg["arm_view"] = {"trunk_motion": {"accel_max": 0.5, "omega_max": -1, "alpha_max": 1,
                                        "tilt_max_deg": 1}}
    with pytest.raises(RobotConfigError, match="arm_view.trunk_motion.omega_max"):
        arm_view(replace(b1_z1, config=cfg))
    cfg["arm_view"] = {"joint_speed_max": [1.0, 2.0]}
    with pytest.raises(RobotConfigError, match="arm_view"):
        arm_view(replace(b1_z1, config=cfg))
    cfg.pop("arm_view")
    with pytest.raises(RobotConfigError, match="arm_view.trunk_motion"):
        arm_view(replace(b1_z1, config=cfg))


def test_planner_and_controller_accept_the_view(view):
    from sysid_ros._src.control.controller import RobustController, gains_from_config
    from sysid_ros._src.control.prior import prior_box
    from sysid_ros._src.planning.planner import PlannerConfig

    ctl = RobustController(view, gains_from_config(view), prior=prior_box(view))
    out = ctl.compute(0.0, view.neutral(), np.zeros(6), view.neutral(), np.zeros(6), np.zeros(6))
    assert out.tau.shape == (6,)
    assert PlannerConfig.from_robot(view).obstacles
    assert load_robot("z1") is not None and arm_view(load_robot("z1")).name == "z1"


def test_calibrated_link_box_is_cut_to_the_arm_bodies(b1_z1):
    """A calibrated θ_r box (robot.theta_r_box) keeps, in the view, exactly the arm bodies'
    columns: its centre is the view's own nominal θ_r and its width follows it."""
    from dataclasses import replace
    theta_r = b1_z1.theta_r()
    width = 0.1 * np.abs(theta_r) + 1e-3
    view = arm_view(replace(b1_z1, theta_r_box=(theta_r - width, theta_r + width)))
    lower, upper = view.theta_r_box
    np.testing.assert_allclose(0.5 * (lower + upper), view.theta_r(), atol=1e-12)
    np.testing.assert_allclose(0.5 * (upper - lower), 0.1 * np.abs(view.theta_r()) + 1e-3,
                               atol=1e-12)


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_a_wider_calibrated_link_box_widens_the_disturbance_bound(b1_z1):
    """The bound takes the links at the top of their box: a calibrated box twice as wide as
    links_rel gives a larger d̄ on every joint with links outward of it."""
    from dataclasses import replace
    theta_r = b1_z1.theta_r()
    bound = TrunkMotionBound.from_robot(b1_z1)
    same = np.abs(theta_r) * b1_z1.links_rel_uncertainty
    wide = 2.0 * same
    d_same = base_disturbance_bound(replace(b1_z1, theta_r_box=(theta_r - same, theta_r + same)),
                                    bound)
    np.testing.assert_allclose(d_same, base_disturbance_bound(b1_z1, bound), rtol=1e-12)
    d_wide = base_disturbance_bound(replace(b1_z1, theta_r_box=(theta_r - wide, theta_r + wide)),
                                    bound)
    assert np.all(d_wide[:-1] > d_same[:-1]) and np.all(d_wide >= d_same)


def test_the_workspace_limits_the_view_and_tightens_the_bound(b1_z1, view):
    """``arm_view.workspace`` becomes the view's position limits (what the planner certifies and
    the controller admits); over it d̄ is never above the closed form and below it on joint 1
    (the enclosure, test/planning/test_disturbance.py); without a workspace d̄ is the closed
    form. A workspace outside the limits, or malformed, is refused naming the field."""
    from dataclasses import replace
    from sysid_ros._src.control.arm_view import workspace
    ws = b1_z1.config["arm_view"]["workspace"]
    np.testing.assert_array_equal(view.limits.q_lower, ws["lower"])
    np.testing.assert_array_equal(view.limits.q_upper, ws["upper"])
    bound = TrunkMotionBound.from_robot(b1_z1)
    cfg = dict(b1_z1.config)
    cfg["arm_view"] = {k: v for k, v in b1_z1.config["arm_view"].items() if k != "workspace"}
    free = replace(b1_z1, config=cfg)
    d_ws, d_free = base_disturbance_bound(b1_z1, bound), base_disturbance_bound(free, bound)
    assert np.all(d_ws <= d_free) and d_ws[-1] < 0.9 * d_free[-1]      # rated prior: the wrist
    demo = b1_z1.config["demo"]["prior_box"]
    lo, hi = np.array(demo["lower"]), np.array(demo["upper"])
    dumbbell = ParameterBox(tuple(f"p{i}" for i in range(10)), lower=lo, nominal=0.5 * (lo + hi),
                            upper=hi)
    d_ws, d_free = (base_disturbance_bound(r, bound, dumbbell) for r in (b1_z1, free))
    assert np.all(d_ws <= d_free) and d_ws[0] < 0.9 * d_free[0]          # 1 kg class: joint 1
    arm = [b1_z1.joint_names.index(n) for n in view.joint_names]
    np.testing.assert_array_equal(workspace(free)[0], b1_z1.limits.q_lower[arm])
    for bad in ({"lower": ws["upper"], "upper": ws["lower"]},          # empty
                {"lower": [-9.0] * 6, "upper": ws["upper"]},              # outside the limits
                {"lower": ws["lower"][:3], "upper": ws["upper"]},         # wrong length
                [0.0, 1.0]):
        cfg["arm_view"] = {**b1_z1.config["arm_view"], "workspace": bad}
        with pytest.raises(RobotConfigError, match="arm_view.workspace"):
            arm_view(replace(b1_z1, config=cfg))
