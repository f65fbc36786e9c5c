"""Marker geometry (no ROS): forward kinematics, the sound plan margin, the controller's
interpolation, the equivalent ellipsoid and the CoM box."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.control.trajectory import JointTrajectoryArrays, TrajectoryQueue
from sysid_ros._src.model.parameters import theta_from_com_inertia
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.visualization.geometry import (RobotGeometry, base_frame, chain_lengths, com_box,
                                              equivalent_ellipsoid, sample_trajectory,
                                              sphere_margins)


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


def test_base_frames():
    assert base_frame(load_robot("gen3")) == "gen3_base_link"
    assert base_frame(load_robot("z1")) == "world"          # the Z1 URDF's root link
    b1 = load_robot("b1_z1")
    assert base_frame(b1) == "base"                         # the trunk, drawn at the identity
    g = RobotGeometry(b1)
    assert g.sphere_centres(np.zeros(b1.nj)).shape == (len(b1.spheres), 3)


def test_sphere_centres_are_pinocchio_fk(gen3):
    g = RobotGeometry(gen3)
    rng = np.random.default_rng(0)
    qs = gen3.random_configuration(rng, 5)
    got = g.sphere_centres(qs)
    data = gen3.model.createData()
    for q, centres in zip(qs, got):
        pin.forwardKinematics(gen3.model, data, q)
        for s, c in zip(gen3.spheres, centres):
            np.testing.assert_allclose(c, data.oMi[s.joint_id].act(s.offset), atol=1e-12)
    tool = g.tool_positions(qs[:1])[0]
    pin.framesForwardKinematics(gen3.model, data, qs[0])
    np.testing.assert_allclose(tool, data.oMf[gen3.model.getFrameId(gen3.tool_frame)].translation,
                               atol=1e-12)


@pytest.mark.parametrize("name", ["gen3", "z1"])
def test_margin_encloses_every_tracking_error(name):
    """Centres with |q − q_d| ≤ e_max stay within the drawn margin (corners, random points)."""
    robot = load_robot(name)
    g = RobotGeometry(robot)
    rng = np.random.default_rng(1)
    e_max = rng.uniform(0.005, 0.05, robot.nj)
    margin = sphere_margins(robot, e_max)
    worst = np.zeros(len(robot.spheres))
    for qd in robot.random_configuration(rng, 6):
        c0 = g.sphere_centres(qd)
        signs = np.vstack([rng.choice([-1.0, 1.0], (40, robot.nj)),
                           rng.uniform(-1, 1, (40, robot.nj))])
        for s in signs:
            worst = np.maximum(worst, np.linalg.norm(g.sphere_centres(qd + s * e_max) - c0,
                                                     axis=1))
    assert np.all(worst <= margin + 1e-12)
    assert np.all(margin < 10 * worst + 1e-3)      # sound, not absurd
    # a sphere is moved only by the joints above it
    L = chain_lengths(robot)
    first = robot.spheres[0]
    below = [k for k, j in enumerate(robot.joint_ids) if j > first.joint_id]
    assert np.all(L[0, below] == 0)
    assert np.all(sphere_margins(robot, None) == 0)


def test_samples_are_the_controllers_reference(gen3):
    rng = np.random.default_rng(2)
    times = np.array([0.0, 1.2, 3.0])
    pos, vel, acc = (rng.normal(size=(3, 7)) for _ in range(3))
    ts, q = sample_trajectory(times, pos, vel, acc, 9)
    assert ts[0] == 0.0 and ts[-1] == 3.0 and q.shape == (9, 7)
    queue = TrajectoryQueue(7)
    queue.push(JointTrajectoryArrays.from_arrays(times, pos, vel, acc, gen3.joint_names,
                                                 gen3.joint_names, 10.0), now=0.0)
    for t, qk in zip(ts[:-1], q[:-1]):
        np.testing.assert_allclose(qk, queue.sample(10.0 + t).q, atol=1e-10)
    np.testing.assert_allclose(q[-1], pos[-1], atol=1e-10)
    one_t, one_q = sample_trajectory(times[:1], pos[:1], vel[:1], acc[:1], 5)
    assert one_q.shape == (1, 7)


def test_equivalent_ellipsoid_round_trip():
    rng = np.random.default_rng(3)
    m, axes_len = 2.5, np.array([0.12, 0.07, 0.03])
    rot = pin.rpy.rpyToMatrix(*rng.uniform(-1, 1, 3))
    moments = m / 5.0 * np.array([axes_len[1] ** 2 + axes_len[2] ** 2,
                                  axes_len[0] ** 2 + axes_len[2] ** 2,
                                  axes_len[0] ** 2 + axes_len[1] ** 2])
    com = np.array([0.01, -0.02, -0.15])
    theta = theta_from_com_inertia(m, com, rot @ np.diag(moments) @ rot.T)
    e = equivalent_ellipsoid(theta)
    assert e.consistent and e.mass == pytest.approx(m)
    np.testing.assert_allclose(e.com, com, atol=1e-12)
    order = np.argsort(e.semi_axes)[::-1]
    np.testing.assert_allclose(e.semi_axes[order], axes_len, rtol=1e-9)
    for k, a in zip(order, range(3)):    # same principal directions (up to sign)
        assert abs(e.rotation[:, k] @ rot[:, a]) == pytest.approx(1.0, abs=1e-9)
    assert np.linalg.det(e.rotation) == pytest.approx(1.0)
    # a box centre can be unphysical: a thin "rod" whose moment sum breaks I1 <= I2 + I3
    bad = theta_from_com_inertia(1.0, com, np.diag([0.05, 0.01, 0.01]))
    assert not equivalent_ellipsoid(bad).consistent


def test_com_box_contains_every_com(gen3):
    theta = gen3.theta_e()
    lo, hi = theta - 0.1 * np.abs(theta) - 0.01, theta + 0.1 * np.abs(theta) + 0.01
    box = com_box(lo, hi)
    assert box is not None
    rng = np.random.default_rng(4)
    for _ in range(500):
        t = rng.uniform(lo, hi)
        c = t[1:4] / t[0]
        assert np.all(c >= box[0] - 1e-12) and np.all(c <= box[1] + 1e-12)
    lo[0] = 0.0
    assert com_box(lo, hi) is None
