"""ROS 2 install smoke test: two rclpy nodes in two processes exchange a JointState over DDS."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.ros

PUBLISHER = textwrap.dedent("""
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = Node("smoke_publisher")
    pub = node.create_publisher(JointState, "smoke_joint_states", 10)
    def tick():
        msg = JointState()
        msg.header.stamp = node.get_clock().now().to_msg()
        msg.name = ["joint_1", "joint_2"]
        msg.position, msg.velocity, msg.effort = [0.25, -1.5], [0.1, 0.2], [3.0, 4.0]
        pub.publish(msg)
    node.create_timer(0.05, tick)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
""")


def test_joint_state_crosses_processes_over_dds():
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    proc = subprocess.Popen([sys.executable, "-c", PUBLISHER])
    received: list[JointState] = []
    rclpy.init()
    try:
        node = Node("smoke_subscriber")
        node.create_subscription(JointState, "smoke_joint_states", received.append, 10)
        deadline = time.monotonic() + 20.0
        while not received and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        node.destroy_node()
    finally:
        rclpy.shutdown()
        proc.terminate()
        proc.wait(timeout=10)
    assert received, "no JointState arrived over DDS within 20 s"
    msg = received[0]
    assert list(msg.name) == ["joint_1", "joint_2"]
    assert list(msg.position) == [0.25, -1.5] and list(msg.effort) == [3.0, 4.0]
