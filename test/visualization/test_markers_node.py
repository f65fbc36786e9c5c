"""The real `markers` node beside the real `sim` node over DDS (loopback, own domain id from
test/conftest.py), seen by a real subscriber: every MarkerArray topic arrives with the expected
namespaces and counts, and the drawn spheres are where Pinocchio's forward kinematics puts them."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

# test/nodes/processes.py (pytest puts test/ on sys.path)
from nodes.processes import spin_until, start_node, stop

from sysid_ros._src.model.robots import load_robot

pytestmark = pytest.mark.ros


def _fk_centres(robot, q: np.ndarray) -> np.ndarray:
    """Sphere centres straight from Pinocchio (independent of sysid_ros._src.visualization)."""
    data = robot.model.createData()
    pin.forwardKinematics(robot.model, data, q)
    return np.array([data.oMi[s.joint_id].act(np.asarray(s.offset)) for s in robot.spheres])


def _by_ns(arr) -> dict[str, list]:
    from visualization_msgs.msg import Marker

    out: dict[str, list] = {}
    for m in arr.markers:
        if m.action == Marker.ADD:
            out.setdefault(m.ns, []).append(m)
    return out


def _pos(m) -> np.ndarray:
    return np.array([m.pose.position.x, m.pose.position.y, m.pose.position.z])


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_markers_on_the_sim_graph(ros_node):
    from builtin_interfaces.msg import Duration
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from visualization_msgs.msg import Marker, MarkerArray

    from sysid_ros._src.nodes.qos import LATCHED_QOS, SENSOR_QOS, TRAJECTORY_QOS
    from sysid_ros._src.model.box import theta_e_box
    from sysid_ros._src.nodes.messages import bounds_to_msg, joint_state_arrays
    from sysid_ros._src.planning.planner import controller_model
    from sysid_ros._src.simulation import dumbbell_for, true_theta_e
    from sysid_ros._src.visualization.geometry import com_box, sphere_margins

    node, ex = ros_node
    robot = load_robot("gen3")
    n_sph = len(robot.spheres)
    got: dict[str, list] = {k: [] for k in ("obstacles", "robot", "plan", "payload", "js")}
    for key in ("obstacles", "robot", "plan", "payload"):
        node.create_subscription(MarkerArray, f"/sysid/markers/{key}", got[key].append,
                                 LATCHED_QOS if key != "robot" else 10)
    node.create_subscription(JointState, "joint_states", got["js"].append, SENSOR_QOS)
    bounds_pub = node.create_publisher(Float64MultiArray, "/sysid/payload_bounds", LATCHED_QOS)
    traj_pub = node.create_publisher(JointTrajectory, "/sysid/desired_trajectory", TRAJECTORY_QOS)
    theta = true_theta_e(robot, dumbbell_for(robot, 3.63))
    box = theta_e_box(theta - 0.02 * np.abs(theta) - 1e-3, theta + 0.02 * np.abs(theta) + 1e-3,
                      theta)
    bounds_pub.publish(bounds_to_msg(box))

    # a slow sim (200 Hz) and a fast view (50 Hz) keep the two cores free for the rest
    sim = start_node("sim", "rate_hz:=200.0", "payload_mass:=3.63")
    view = start_node("markers", "rate_hz:=50.0", "plan_samples:=5", "path_samples:=20")
    try:
        assert spin_until(ex, lambda: got["robot"] and got["payload"] and got["obstacles"],
                          30.0), stop(view) + stop(sim)
        # obstacles: latched, one cube + one name per box of planner.obstacles
        obst = _by_ns(got["obstacles"][-1])
        boxes = robot.config["planner"]["obstacles"]
        assert len(obst["obstacles"]) == len(obst["obstacle_names"]) == len(boxes) == 2
        for m, b in zip(sorted(obst["obstacles"], key=lambda m: m.id), boxes):
            assert m.type == Marker.CUBE and m.header.frame_id == "gen3_base_link"
            np.testing.assert_allclose(_pos(m), b["center"], atol=1e-12)
            np.testing.assert_allclose([m.scale.x, m.scale.y, m.scale.z],
                                       2 * np.array(b["half_extents"]), atol=1e-12)

        # robot: the spheres of one received joint state, matched by its stamp
        got["js"].clear()
        got["robot"].clear()

        def stamps(msgs):
            return {(m.header.stamp.sec, m.header.stamp.nanosec) for m in msgs}

        def matched_one():
            # best-effort joint_states: under load the probe misses some, so wait until at least
            # one drawn robot array has the stamp of a state the probe also received
            drawn = {(a.markers[0].header.stamp.sec, a.markers[0].header.stamp.nanosec)
                     for a in got["robot"] if a.markers}
            return len(got["robot"]) >= 3 and bool(drawn & stamps(got["js"]))

        assert spin_until(ex, matched_one, 30.0)
        states = {(m.header.stamp.sec, m.header.stamp.nanosec): m for m in got["js"]}
        matched = 0
        for arr in got["robot"]:
            spheres = _by_ns(arr)["collision_spheres"]
            assert len(spheres) == n_sph and len(arr.markers) == n_sph
            stamp = (spheres[0].header.stamp.sec, spheres[0].header.stamp.nanosec)
            if stamp not in states:
                continue          # best-effort joint_states: the probe may have missed that one
            matched += 1
            q, _, _ = joint_state_arrays(states[stamp], robot.joint_names)
            want = _fk_centres(robot, q)
            for m in spheres:
                np.testing.assert_allclose(_pos(m), want[m.id], atol=1e-9)
                assert m.scale.x == pytest.approx(2 * robot.spheres[m.id].radius)
        assert matched >= 1

        # plan: on-arrival trajectory (stamp 0) from the current pose → drawn at the next state
        q0 = q
        k = np.array([0.3, -0.2, 0.1, 0.2, 0.0, -0.1, 0.4])
        msg = JointTrajectory(joint_names=list(robot.joint_names))
        msg.points = [JointTrajectoryPoint(positions=q0.tolist(), velocities=[0.0] * 7,
                                           accelerations=[0.0] * 7,
                                           time_from_start=Duration()),
                      JointTrajectoryPoint(positions=(q0 + k).tolist(), velocities=[0.0] * 7,
                                           accelerations=[0.0] * 7,
                                           time_from_start=Duration(sec=3))]
        traj_pub.publish(msg)
        assert spin_until(ex, lambda: got["plan"], 10.0), stop(view)
        plan = got["plan"][-1]
        assert plan.markers[0].action == Marker.DELETEALL
        layers = _by_ns(plan)
        assert len(layers["plan_spheres"]) == 5 * n_sph
        assert len(layers["plan_tool_path"]) == 1 and len(layers["plan_tool_path"][0].points) == 20
        margin = sphere_margins(robot, controller_model(robot).e_max)
        assert margin.min() > 0
        ends = {0: _fk_centres(robot, q0), 4: _fk_centres(robot, q0 + k)}  # samples 0 and 4
        for m in layers["plan_spheres"]:
            sample, s = divmod(m.id, n_sph)
            assert m.scale.x == pytest.approx(2 * (robot.spheres[s].radius + margin[s]))
            if sample in ends:
                np.testing.assert_allclose(_pos(m), ends[sample][s], atol=1e-9)

        # payload: the box centre's ellipsoid at the EE pose, CoM box, mass glyph, label
        pay = got["payload"][-1]
        layers = _by_ns(pay)
        assert {k: len(v) for k, v in layers.items()} == {
            "payload_ellipsoid": 1, "payload_com": 1, "payload_com_box": 1, "payload_mass": 2,
            "payload_label": 1}
        stamp = layers["payload_com"][0].header.stamp
        js = states.get((stamp.sec, stamp.nanosec)) or got["js"][-1]
        q, _, _ = joint_state_arrays(js, robot.joint_names)
        data = robot.model.createData()
        pin.forwardKinematics(robot.model, data, q)
        ee = data.oMi[robot.ee_joint_id]
        centre = box.centre
        # the arm holds still under the sim's hold controller: encoder-level agreement
        np.testing.assert_allclose(_pos(layers["payload_com"][0]),
                                   ee.act(centre[1:4] / centre[0]), atol=2e-3)
        lo, hi = com_box(box.lower, box.upper)
        np.testing.assert_allclose(_pos(layers["payload_com_box"][0]), ee.act(0.5 * (lo + hi)),
                                   atol=2e-3)
        assert f"[{box.lower[0]:.2f}, {box.upper[0]:.2f}] kg" in layers["payload_label"][0].text
    finally:
        out_view = stop(view)
        out_sim = stop(sim)
    assert view.returncode == 0, out_view
    assert sim.returncode == 0, out_sim
