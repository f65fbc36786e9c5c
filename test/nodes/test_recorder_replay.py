"""Real recorder and replay processes over DDS (loopback, own domain id from conftest)."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from .processes import spin_until, start
import yaml

from sysid_ros.bagio import read_joint_states

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[2]
NAMES = [f"joint_{i}" for i in range(1, 8)]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _joint_state(pub_node, k: int, rng):
    from sensor_msgs.msg import JointState

    msg = JointState()
    t = 1_000_000_000 + k * 2_000_000
    msg.header.stamp.sec, msg.header.stamp.nanosec = t // 10**9, t % 10**9
    msg.name = list(NAMES)
    vals = rng.normal(size=(3, 7))
    msg.position, msg.velocity, msg.effort = (list(map(float, v)) for v in vals)
    return msg, vals


def _wait_subscribed(node, ex, pub, timeout=10.0):
    assert spin_until(ex, lambda: pub.get_subscription_count() > 0, timeout), "recorder never subscribed"
    time.sleep(0.3)  # let the recorder's reader be fully matched


def test_recorder_records_published_joint_states(tmp_path, ros_node):
    from sensor_msgs.msg import JointState

    node, ex = ros_node
    pub = node.create_publisher(JointState, "/joint_states", 10)  # reliable → nothing lost
    bag = tmp_path / "rec"
    proc = start("sysid_ros.nodes.recorder", "-o", str(bag), "--topics", "/joint_states",
                  "--chunk-seconds", "0.3")
    try:
        _wait_subscribed(node, ex, pub)
        rng = np.random.default_rng(0)
        sent = []
        for k in range(200):
            msg, vals = _joint_state(node, k, rng)
            pub.publish(msg)
            sent.append(vals)
            time.sleep(0.002)
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0, out
    s = read_joint_states(bag, joint_names=NAMES)
    sent = np.asarray(sent)
    np.testing.assert_array_equal(s.position, sent[:, 0])
    np.testing.assert_array_equal(s.velocity, sent[:, 1])
    np.testing.assert_array_equal(s.effort, sent[:, 2])


def test_sigkilled_recorder_leaves_readable_chunks(tmp_path, ros_node):
    from sensor_msgs.msg import JointState

    node, ex = ros_node
    pub = node.create_publisher(JointState, "/joint_states", 10)
    bag = tmp_path / "rec"
    proc = start("sysid_ros.nodes.recorder", "-o", str(bag), "--topics", "/joint_states",
                  "--chunk-seconds", "0.2")
    try:
        _wait_subscribed(node, ex, pub)
        rng = np.random.default_rng(1)
        sent = []
        end = time.monotonic() + 1.2
        k = 0
        while time.monotonic() < end:
            msg, vals = _joint_state(node, k, rng)
            pub.publish(msg)
            sent.append(vals)
            k += 1
            time.sleep(0.002)
        meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
        chunks_before = len(meta["relative_file_paths"])
        count_before = meta["message_count"]
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
    assert chunks_before >= 3
    s = read_joint_states(bag, joint_names=NAMES)
    assert len(s) >= count_before > 0
    sent = np.asarray(sent)
    np.testing.assert_array_equal(s.position, sent[: len(s), 0])


def test_replay_timing_matches_original(tmp_path, ros_node):
    from sensor_msgs.msg import JointState

    from sysid_ros.bagio import BagWriter, default_typestore

    ts = default_typestore()
    T = ts.types

    def joint_state(t, names, q, dq, tau):
        stamp = T["builtin_interfaces/msg/Time"](sec=t // 10**9, nanosec=t % 10**9)
        return T["sensor_msgs/msg/JointState"](
            header=T["std_msgs/msg/Header"](stamp=stamp, frame_id=""),
            name=names, position=q, velocity=dq, effort=tau)

    # 1.5 s of irregularly spaced messages (bag times) to replay at rate 1.0.
    rng = np.random.default_rng(2)
    gaps = rng.uniform(0.005, 0.025, size=100)
    times = 5 * 10**9 + np.concatenate(([0], np.cumsum(gaps)))[:100] * 1e9
    bag = tmp_path / "orig"
    with BagWriter(bag) as w:
        for t in times.astype(np.int64):
            w.write("/joint_states", joint_state(int(t), NAMES, rng.normal(size=7),
                                                  rng.normal(size=7), rng.normal(size=7)), int(t))
    node, ex = ros_node
    got: list[tuple[float, int]] = []
    node.create_subscription(JointState, "/joint_states",
                             lambda m: got.append((time.monotonic(), m.header.stamp.nanosec)), 200)
    proc = start("sysid_ros.nodes.replay", str(bag), "--rate", "1.0", "--wait-subscribers", "1")
    try:
        assert spin_until(ex, lambda: len(got) >= 100, 15.0), f"got {len(got)} messages"
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=10)
    recv = np.array([g[0] for g in got])
    orig = (times - times[0]) * 1e-9
    measured = recv - recv[0]
    duration_err = abs(measured[-1] - orig[-1]) / orig[-1]
    assert duration_err < 0.05, (measured[-1], orig[-1])
    # Each message's offset from the start within 5 % of the bag duration.
    assert np.max(np.abs(measured - orig)) < 0.05 * orig[-1], out
