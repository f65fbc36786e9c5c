"""The real exciting_planner process over DDS: publishes certified plans for a real subscriber;
with an obstacle that blocks every k it publishes nothing and says why on /diagnostics."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from .processes import spin_until, start_node, stop
import yaml

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[2]
HOME = [0.0, 0.26, 3.14, -2.27, 0.0, 0.96, 1.57]
NAMES = [f"joint_{i}" for i in range(1, 8)]






@pytest.fixture
def graph():
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory

    from sysid_ros._src.model.robots import load_robot
    from sysid_ros._src.nodes.qos import DIAGNOSTICS_QOS, LATCHED_QOS, SENSOR_QOS, TRAJECTORY_QOS
    from sysid_ros._src.model.box import theta_e_box
    from sysid_ros._src.nodes.messages import bounds_to_msg

    rclpy.init()
    node = rclpy.create_node(f"test_planner_{os.getpid()}")
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    got = {"traj": [], "diag": []}
    node.create_subscription(JointTrajectory, "/sysid/desired_trajectory",
                             got["traj"].append, TRAJECTORY_QOS)
    node.create_subscription(
        DiagnosticArray, "/diagnostics",
        lambda m: got["diag"].extend(s for s in m.status if s.name == "exciting_planner"),
        DIAGNOSTICS_QOS)
    js_pub = node.create_publisher(JointState, "joint_states", SENSOR_QOS)
    bounds_pub = node.create_publisher(Float64MultiArray, "/sysid/payload_bounds", LATCHED_QOS)
    theta = load_robot("gen3").theta_e().copy()
    theta[0] += 2.27
    theta[3] += 2.27 * -0.1915
    rad = 0.05 * np.abs(theta) + 0.005
    bounds_pub.publish(bounds_to_msg(theta_e_box(theta - rad, theta + rad, theta)))

    def publish_js():
        msg = JointState(name=NAMES, position=HOME, velocity=[0.0] * 7, effort=[0.0] * 7)
        msg.header.stamp = node.get_clock().now().to_msg()
        js_pub.publish(msg)

    node.create_timer(0.02, publish_js)
    yield node, ex, got
    node.destroy_node()
    ex.shutdown()
    rclpy.try_shutdown()




def _values(status) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


@pytest.mark.slow
def test_publishes_certified_plan_from_joint_states(graph):
    node, ex, got = graph
    proc = start_node("exciting_planner", "t_p:=1.3", "max_solve_time:=1.1", "max_trajectories:=2")
    try:
        ok = spin_until(ex, lambda: len(got["traj"]) >= 2, 90.0)
    finally:
        out = stop(proc)
    assert ok, f"no trajectories; diagnostics={[s.message for s in got['diag']]}\n{out}"
    first, second = got["traj"][:2]
    assert list(first.joint_names) == NAMES and len(first.points) == 2
    np.testing.assert_allclose(first.points[0].positions, HOME, atol=1e-9)
    end = np.array(first.points[1].positions)
    assert np.all(np.abs(end - HOME) <= np.pi / 6 + 1e-6)
    assert np.allclose(first.points[1].velocities, 0) and np.allclose(first.points[1].accelerations, 0)
    assert first.points[1].time_from_start.sec == 3
    # receding horizon: the second plan starts where the first one is at its start time
    t0 = first.header.stamp.sec + 1e-9 * first.header.stamp.nanosec
    t1 = second.header.stamp.sec + 1e-9 * second.header.stamp.nanosec
    assert t1 - t0 >= 1.3 - 1e-6
    from sysid_ros._src.planning import QuinticTrajectory
    p0 = first.points[0]
    traj = QuinticTrajectory(np.array(p0.positions), np.array(p0.velocities),
                             np.array(p0.accelerations), 3.0)
    q, dq, ddq = traj.state_at(t1 - t0, end - np.array(HOME))
    np.testing.assert_allclose(second.points[0].positions, q, atol=1e-6)
    np.testing.assert_allclose(second.points[0].velocities, dq, atol=1e-6)
    ok_diag = [_values(s) for s in got["diag"] if _values(s).get("verified") == "true"]
    assert ok_diag and float(ok_diag[0]["solve_time"]) > 0 and "iterations" in ok_diag[0]
    assert float(ok_diag[0]["objective"]) > 1.0


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_all_blocking_obstacle_publishes_nothing_and_says_why(graph, tmp_path):
    node, ex, got = graph
    # a box around the gripper at HOME: every trajectory starts in collision
    cage = tmp_path / "cage.yaml"
    cage.write_text(yaml.safe_dump({"obstacles": [
        {"name": "cage", "center": [0.5, 0.0, 0.45], "half_extents": [0.15, 0.15, 0.15]}]}))
    proc = start_node("exciting_planner", "t_p:=1.2", "max_solve_time:=1.0", f"obstacles:={cage}")
    try:
        failed = lambda: [s for s in got["diag"] if _values(s).get("verified") == "false"  # noqa
                          and "collision" in _values(s).get("reason", "")]
        ok = spin_until(ex, lambda: len(failed()) >= 2, 90.0)
    finally:
        out = stop(proc)
    assert ok, f"diagnostics={[(s.message, _values(s)) for s in got['diag']]}\n{out}"
    assert got["traj"] == []
    assert "cage" in _values(failed()[0])["reason"]
