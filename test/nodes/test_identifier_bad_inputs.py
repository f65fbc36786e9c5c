"""The real `identifier` node given bad inputs. The joint set of its stream changes for good (a
test publisher over DDS, loopback): the messages are dropped and counted by kind (the first ones
as ``missing_joint``, from the persistent one on as ``joint_set_changed``), the diagnostic is an
ERROR that names the change while it lasts, and the robot's joints coming back clear it. A
calibration file cut short: the node refuses to start, naming the file and the key."""
from __future__ import annotations

import time

import pytest

from .processes import finish, start_node, stop

from sysid_ros._src.calibration.document import write_calibration
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.sample_screen import PERSISTENT

pytestmark = pytest.mark.ros


def test_identifier_node_reports_a_changed_joint_set(ros_node):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from sensor_msgs.msg import JointState

    from sysid_ros._src.nodes.qos import DIAGNOSTICS_QOS

    node, ex = ros_node
    robot = load_robot("gen3")
    diags: list = []
    node.create_subscription(DiagnosticArray, "/diagnostics", diags.append, DIAGNOSTICS_QOS)
    pub = node.create_publisher(JointState, "joint_states", 50)
    ident = start_node("identifier", "update_period:=0.2")
    stamp = [1000.0]

    def publish(names):
        stamp[0] += 0.002
        msg = JointState()
        msg.header.stamp.sec = int(stamp[0])
        msg.header.stamp.nanosec = int(round((stamp[0] % 1) * 1e9))
        msg.name = list(names)
        n = len(names)
        msg.position, msg.velocity, msg.effort = [0.1] * n, [0.0] * n, [1.0] * n
        pub.publish(msg)

    def status():
        for arr in reversed(diags):
            for st in arr.status:
                if st.name == "sysid_ros/identifier":
                    return st, {kv.key: kv.value for kv in st.values}
        return None, {}

    def stream(names, seconds, until):
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            for _ in range(5):
                publish(names)
            ex.spin_once(timeout_sec=0.01)

    other = [*robot.joint_names[:6], "gripper_finger"]     # joint_7 gone for good
    try:
        stream(robot.joint_names, 20, lambda: int(status()[1].get("received", 0)) > 50)
        assert status()[0] is not None, stop(ident)
        stream(other, 30, lambda: "joint set changed" in (status()[0].message or ""))
        st, values = status()
        assert st.level == DiagnosticStatus.ERROR, (st, values)
        assert "joint set changed" in st.message and "joint_7" in st.message, st.message
        assert int(values["rejected: joint_set_changed"]) >= 1, values
        assert 1 <= int(values["rejected: missing_joint"]) <= PERSISTENT - 1, values
        # the robot's joints back: no longer an error
        stream(robot.joint_names, 30, lambda: "joint set changed" not in status()[0].message)
        st, values = status()
        assert "joint set changed" not in st.message and st.level != DiagnosticStatus.ERROR, st
        assert ident.poll() is None
    finally:
        out = stop(ident)
    assert "Traceback" not in out, out


def test_the_identifier_node_refuses_a_calibration_cut_short(tmp_path):
    robot = load_robot("gen3")
    nom = robot.friction.nominal
    table = {k: nom[:, i].tolist() for i, k in enumerate(("Fc", "Fv", "Ia", "beta"))}
    path = write_calibration(tmp_path / "calib.yaml", {
        "sysid_calibration": 1, "robot": "gen3",
        "friction": {"nominal": table, "lower": table, "upper": table},
        "identification": {"torque_noise_abs": [0.1] * robot.nj, "window_s": 0.4,
                           "stride_s": 0.1}})
    path.write_text(path.read_text().replace("complete: true\n", ""))
    node = start_node("identifier", f"calibration:={path}")
    out = finish(node, timeout=60)
    assert node.returncode != 0, out
    assert str(path) in out and "complete: missing" in out, out
