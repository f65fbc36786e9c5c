"""Soundness of the planner's enclosures against independent references (dense sampling).

For random k, random θ in the box and random tracking errors within the controller's bound, the
true positions, velocities, sphere centres (Pinocchio forward kinematics) and motor torques
(Pinocchio RNEA in passivity form + friction with random coefficients in their box) along the
trajectory must all lie inside the computed enclosures; any miss fails.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.enclosures.affine import Affine, affine_cos_sin
from sysid_ros._src.enclosures.chain import SerialChain, body_regressor, passivity_torque, reference_torque
from sysid_ros._src.enclosures.interval import Interval, cos_sin
from sysid_ros._src.planning.obstacles import obstacles_from_config
from sysid_ros._src.planning.reachability import Reachability
from sysid_ros._src.planning.trajectory import QuinticTrajectory

from .conftest import HOME

N_INTERVALS = 128


def _sample_times(rng, t_f, n):
    """Dense times plus every sub-interval edge (the extremes often sit there)."""
    return np.sort(np.concatenate([rng.uniform(0, t_f, n), np.linspace(0, t_f, N_INTERVALS + 1)]))


def _interval_index(t, t_f):
    return np.clip((t / t_f * N_INTERVALS).astype(int), 0, N_INTERVALS - 1)


def test_trajectory_boundary_conditions_and_exact_ranges():
    rng = np.random.default_rng(0)
    for _ in range(20):
        q0, dq0, ddq0 = rng.normal(size=(3, 7))
        traj = QuinticTrajectory(q0, dq0, ddq0, 3.0)
        k = rng.uniform(-0.6, 0.6, 7)
        q, dq, ddq = traj.sample(np.array([0.0, 3.0]), k)
        np.testing.assert_allclose(q, [q0, q0 + k], atol=1e-12)
        np.testing.assert_allclose(dq, [dq0, np.zeros(7)], atol=1e-12)
        np.testing.assert_allclose(ddq, [ddq0, np.zeros(7)], atol=1e-12)
        enc = traj.enclose(k, N_INTERVALS)
        t = np.linspace(0, 3.0, 40001)
        idx = _interval_index(t, 3.0)
        for box, vals in zip((enc.q, enc.dq, enc.ddq), traj.sample(t, k)):
            assert np.all(vals >= box.lo[idx]) and np.all(vals <= box.hi[idx])
            # exact, not just sound: sampled extremes reach the bounds up to the sample spacing
            lo = np.full((N_INTERVALS, 7), np.inf)
            hi = np.full((N_INTERVALS, 7), -np.inf)
            np.minimum.at(lo, idx, vals)
            np.maximum.at(hi, idx, vals)
            scale = np.abs(vals).max() + 1.0
            assert np.max(lo - box.lo) < 1e-3 * scale and np.max(box.hi - hi) < 1e-3 * scale


def test_interval_and_affine_primitives_are_sound():
    rng = np.random.default_rng(1)
    mid, rad = rng.normal(size=(2, 500)) * 3
    rad = np.abs(rad)
    a = Interval(mid, rad)
    b = Interval(rng.normal(size=500), np.abs(rng.normal(size=500)))
    x = mid + rad * rng.uniform(-1, 1, (200, 500))
    y = b.mid + b.rad * rng.uniform(-1, 1, (200, 500))
    for box, vals in ((a * b, x * y), (a + b, x + y), (a - b, x - y)):
        assert np.all(box.contains(vals))
    c, s = cos_sin(a)
    assert np.all(c.contains(np.cos(x))) and np.all(s.contains(np.sin(x)))
    # affine: two quantities sharing a symbol keep their correlation (x − x = 0 exactly)
    ax = Affine.from_interval(Interval(mid[:5], 0.1 + 0 * mid[:5]), np.zeros(5, int), 1)
    assert np.all((ax - ax).to_interval().rad < 1e-12)
    eps = rng.uniform(-1, 1, 1000)
    ca, sa = affine_cos_sin(ax)
    prod = ca * sa
    vals = mid[:5, None] + 0.1 * eps
    for form, truth in ((ca, np.cos(vals)), (sa, np.sin(vals)), (prod, np.cos(vals) * np.sin(vals))):
        box = form.to_interval()
        assert np.all(box.lo[:, None] <= truth) and np.all(truth <= box.hi[:, None])


@pytest.mark.parametrize("name", ["gen3", "z1"])
def test_chain_matches_pinocchio(name):
    from sysid_ros._src.model.robots import load_robot
    robot = load_robot(name)
    chain = SerialChain.from_robot(robot)
    rng = np.random.default_rng(2)
    q = robot.random_configuration(rng, 6)
    dq, dqa, ddqa = rng.normal(size=(3, 6, robot.nv))
    theta = robot.theta()
    cs = [(np.cos(q[:, j]), np.sin(q[:, j])) for j in range(robot.nj)]
    th = [tuple(theta[10 * i:10 * i + 10]) for i in range(robot.nj)]
    tau = np.array(passivity_torque(chain, cs, list(dq.T), list(dqa.T), list(ddqa.T), th)).T
    ref = np.array([reference_torque(robot, q[n], dq[n], dqa[n], ddqa[n], theta) for n in range(6)])
    np.testing.assert_allclose(tau, ref, atol=1e-10)
    reg = Regressors(robot)
    y_ref = reg.split(reg.Y(q, dq, ddqa))[0]
    y = body_regressor(chain, cs, list(dq.T), list(ddqa.T), robot.ee_joint_id - 1)
    np.testing.assert_allclose(y, y_ref, atol=1e-10)


@pytest.fixture(scope="module")
def reach(gen3, gen3_controller):
    obstacles = obstacles_from_config(gen3.config["planner"]["obstacles"])
    return Reachability(gen3, gen3_controller, obstacles, N_INTERVALS)


def _true_samples(gen3, ctrl, traj, k, t, rng):
    """Actual states with tracking errors inside the bound (extremes included)."""
    qd, dqd, ddqd = traj.sample(t, k)
    n = t.size
    e = ctrl.e_max * rng.choice([-1.0, 1.0, 0.0, 0.5], size=(n, 7)) * rng.uniform(0.9, 1, (n, 7))
    de = ctrl.de_max * rng.choice([-1.0, 1.0, 0.3], size=(n, 7)) * rng.uniform(0.9, 1, (n, 7))
    q, dq = qd - e, dqd - de
    dq_a, ddq_a = dqd + ctrl.Kr * e, ddqd + ctrl.Kr * de
    return q, dq, dq_a, ddq_a


def test_reachable_sets_contain_true_states_spheres_and_torques(gen3, gen3_controller, reach,
                                                                payload_box):
    rng = np.random.default_rng(3)
    lo, hi, _ = payload_box
    ctrl = gen3_controller
    data = gen3.model.createData()
    theta_nom = gen3.theta()
    n_checked = 0
    for trial in range(3):
        q0 = HOME + rng.uniform(-0.2, 0.2, 7)
        traj = QuinticTrajectory(q0, rng.uniform(-0.2, 0.2, 7), rng.uniform(-0.2, 0.2, 7), 3.0)
        k = rng.uniform(-0.5, 0.5, 7)
        rs = reach.reach(traj, k, lo, hi)
        t = _sample_times(rng, 3.0, 700)
        m = _interval_index(t, 3.0)
        q, dq, dq_a, ddq_a = _true_samples(gen3, ctrl, traj, k, t, rng)
        assert np.all(rs.q.lo[m] <= q) and np.all(q <= rs.q.hi[m])
        assert np.all(rs.dq.lo[m] <= dq) and np.all(dq <= rs.dq.hi[m])
        fr_lo, fr_hi = gen3.friction.lower, gen3.friction.upper
        for n in range(t.size):
            pin.forwardKinematics(gen3.model, data, q[n])
            for s, sph in enumerate(gen3.spheres):
                c = data.oMi[sph.joint_id].act(sph.offset)
                box = rs.centres[s]
                for x in range(3):
                    assert box[x].lo[m[n]] <= c[x] <= box[x].hi[m[n]], (trial, n, s, x)
            theta = theta_nom * (1 + gen3.links_rel_uncertainty * rng.uniform(-1, 1, 70))
            theta[60:70] = rng.uniform(lo, hi)
            fr = rng.uniform(fr_lo, fr_hi)
            v_f = dq[n] if rng.random() < 0.5 else dq_a[n]
            tau = (reference_torque(gen3, q[n], dq[n], dq_a[n], ddq_a[n], theta)
                   + fr[:, 0] * np.sign(v_f) + fr[:, 1] * v_f + fr[:, 2] * ddq_a[n] + fr[:, 3])
            assert np.all(rs.tau.lo[m[n]] <= tau) and np.all(tau <= rs.tau.hi[m[n]]), (trial, n)
            n_checked += 1
    assert n_checked > 2000


@pytest.mark.parametrize("nominal", ["centre", "estimate"])
def test_robust_input_bound_dominates_the_controllers_input(gen3, gen3_controller, payload_box,
                                                            nominal):
    """The real RobustController's τ₀ and robust input λ = ‖v‖, at reachable states with V ≤ V_max
    (true mass matrix) and with ANY box nested in the planner's (the identifier's later boxes)
    and a truth inside it, stay inside the planner's enclosure and robust-input bound. With
    τ₀ at the box centre the planner may use the box radius; with τ₀ at a point estimate
    (``nominal="estimate"``, estimate at a random point of the box) it needs the full width."""
    from dataclasses import replace

    from sysid_ros._src.control.controller import ControllerGains, RobustController
    from sysid_ros._src.model.box import theta_e_box

    rng = np.random.default_rng(4)
    lo, hi, _ = payload_box
    ctrl = replace(gen3_controller, nominal_at_centre=(nominal == "centre"))
    reach = Reachability(gen3, ctrl, obstacles_from_config(gen3.config["planner"]["obstacles"]),
                         N_INTERVALS)
    traj = QuinticTrajectory(HOME, np.zeros(7), np.zeros(7), 3.0)
    k = rng.uniform(-0.5, 0.5, 7)
    rs = reach.reach(traj, k, lo, hi)
    t = _sample_times(rng, 3.0, 150)
    m = _interval_index(t, 3.0)
    q, dq, dq_a, ddq_a = _true_samples(gen3, ctrl, traj, k, t, rng)
    qd, dqd, ddqd = traj.sample(t, k)
    gains = ControllerGains(ctrl.Kr, ctrl.alpha, ctrl.V_max)
    model0 = gen3.model.copy()
    model0.gravity.setZero()
    data0 = model0.createData()
    worst = 0.0
    for n in range(t.size):
        a, b = np.sort(rng.uniform(lo, hi, (2, 10)), axis=0)        # nested box
        box = theta_e_box(a, b, rng.uniform(a, b))
        ctl = RobustController(gen3, gains, prior=box, nominal=nominal)
        theta = gen3.theta() * (1 + gen3.links_rel_uncertainty * rng.uniform(-1, 1, 70))
        theta[60:70] = rng.uniform(a, b)
        ia = rng.uniform(gen3.friction.lower[:, 2], gen3.friction.upper[:, 2])
        e, de = qd[n] - q[n], dqd[n] - dq[n]
        r = de + ctrl.Kr * e
        h_r = pin.computeJointTorqueRegressor(model0, data0, q[n], np.zeros(7), r) @ theta
        v_true = 0.5 * (r @ h_r + ia @ (r * r))
        s = min(1.0, np.sqrt(ctrl.V_max / v_true))                    # V ≤ V_max (assumed)
        out = ctl.compute(0.0, qd[n] - s * e, dqd[n] - s * de, qd[n], dqd[n], ddqd[n])
        assert np.all(rs.tau.lo[m[n]] <= out.tau0) and np.all(out.tau0 <= rs.tau.hi[m[n]]), n
        # identity metric: every joint's bound is ‖v‖'s (ARMOUR); per joint in general
        assert np.all(np.abs(out.v) <= rs.robust[m[n]]), (n, out.v, rs.robust[m[n]])
        assert out.lam <= rs.robust[m[n]].min(), (n, out.lam, rs.robust[m[n]])
        worst = max(worst, out.lam / rs.robust[m[n]].min())
    assert worst > 0.2          # the bound is exercised, not vacuous


def test_violated_assumption_escapes_the_enclosure(gen3, gen3_controller, reach, payload_box):
    """The torque enclosure is only as good as its assumption θ_e ∈ box: a payload twice as heavy
    as the box allows produces torques outside it, and the test sees it."""
    rng = np.random.default_rng(5)
    lo, hi, theta_e = payload_box
    traj = QuinticTrajectory(HOME, np.zeros(7), np.zeros(7), 3.0)
    k = np.full(7, 0.3)
    rs = reach.reach(traj, k, lo, hi)
    theta = gen3.theta()
    theta[60:70] = theta_e * 2.0
    t = np.linspace(0, 3.0, 200)
    m = _interval_index(t, 3.0)
    q, dq, ddq = traj.sample(t, k)
    fr = gen3.friction.nominal
    outside = 0
    for n in range(t.size):
        tau = (reference_torque(gen3, q[n], dq[n], dq[n], ddq[n], theta) + fr[:, 1] * dq[n]
               + fr[:, 2] * ddq[n])
        outside += int(np.any((tau < rs.tau.lo[m[n]]) | (tau > rs.tau.hi[m[n]])))
    assert outside > 0
    del rng
