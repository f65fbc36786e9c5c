"""Real recorder and replay processes over DDS (loopback, own domain id from conftest)."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from .processes import finish, spin_until, start, start_node, stop
import yaml

from sysid_ros._src.bagio import read_joint_states

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


def _publish_to_recorder(node, ex, pub, n: int, seed: int) -> np.ndarray:
    """Once the recorder has subscribed, ``n`` JointStates 2 ms apart; returns their
    (n, 3, 7) position/velocity/effort rows."""
    _wait_subscribed(node, ex, pub)
    rng = np.random.default_rng(seed)
    sent = []
    for k in range(n):
        msg, vals = _joint_state(node, k, rng)
        pub.publish(msg)
        sent.append(vals)
        time.sleep(0.002)
    time.sleep(0.3)
    return np.asarray(sent)


def test_recorder_records_published_joint_states(tmp_path, ros_node):
    from sensor_msgs.msg import JointState

    node, ex = ros_node
    pub = node.create_publisher(JointState, "/joint_states", 10)  # reliable → nothing lost
    bag = tmp_path / "rec"
    proc = start("sysid_ros._src.nodes.recorder", "-o", str(bag), "--topics", "/joint_states",
                  "--chunk-seconds", "0.3")
    try:
        sent = _publish_to_recorder(node, ex, pub, 200, seed=0)
    finally:
        proc.send_signal(signal.SIGINT)
        out = finish(proc, 10)
    assert proc.returncode == 0, out
    s = read_joint_states(bag, joint_names=NAMES)
    np.testing.assert_array_equal(s.position, sent[:, 0])
    np.testing.assert_array_equal(s.velocity, sent[:, 1])
    np.testing.assert_array_equal(s.effort, sent[:, 2])


def test_sigkilled_recorder_leaves_readable_chunks(tmp_path, ros_node):
    from sensor_msgs.msg import JointState

    node, ex = ros_node
    pub = node.create_publisher(JointState, "/joint_states", 10)
    bag = tmp_path / "rec"
    proc = start("sysid_ros._src.nodes.recorder", "-o", str(bag), "--topics", "/joint_states",
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
        finish(proc, 10)
    assert chunks_before >= 3
    s = read_joint_states(bag, joint_names=NAMES)
    assert len(s) >= count_before > 0
    sent = np.asarray(sent)
    np.testing.assert_array_equal(s.position, sent[: len(s), 0])


def _write_joint_states(bag: Path, times: np.ndarray, seed: int) -> None:
    """JointStates with log time = header stamp = ``times`` (ns)."""
    from sysid_ros._src.bagio import BagWriter, default_typestore

    T = default_typestore().types
    rng = np.random.default_rng(seed)
    with BagWriter(bag) as w:
        for t in times.astype(np.int64).tolist():
            stamp = T["builtin_interfaces/msg/Time"](sec=t // 10**9, nanosec=t % 10**9)
            msg = T["sensor_msgs/msg/JointState"](
                header=T["std_msgs/msg/Header"](stamp=stamp, frame_id=""), name=NAMES,
                position=rng.normal(size=7), velocity=rng.normal(size=7),
                effort=rng.normal(size=7))
            w.write("/joint_states", msg, t)


def test_replay_timing_matches_original(tmp_path, ros_node):
    from sensor_msgs.msg import JointState

    # 1.5 s of irregularly spaced messages (bag times) to replay at rate 1.0.
    rng = np.random.default_rng(2)
    gaps = rng.uniform(0.005, 0.025, size=100)
    times = 5 * 10**9 + np.concatenate(([0], np.cumsum(gaps)))[:100] * 1e9
    bag = tmp_path / "orig"
    _write_joint_states(bag, times, seed=2)
    node, ex = ros_node
    got: list[tuple[float, int]] = []
    node.create_subscription(JointState, "/joint_states",
                             lambda m: got.append((time.monotonic(), m.header.stamp.nanosec)), 200)
    proc = start("sysid_ros._src.nodes.replay", str(bag), "--rate", "1.0", "--wait-subscribers", "1")
    try:
        assert spin_until(ex, lambda: len(got) >= 100, 15.0), f"got {len(got)} messages"
    finally:
        proc.send_signal(signal.SIGINT)
        out = finish(proc, 10)
    recv = np.array([g[0] for g in got])
    orig = (times - times[0]) * 1e-9
    measured = recv - recv[0]
    duration_err = abs(measured[-1] - orig[-1]) / orig[-1]
    assert duration_err < 0.05, (measured[-1], orig[-1])
    # Each message's offset from the start within 5 % of the bag duration.
    assert np.max(np.abs(measured - orig)) < 0.05 * orig[-1], out


def test_replay_loops_with_clock_from_the_bag_times(tmp_path, ros_node):
    """--loop --clock: /clock carries bag times (throttled to clock_hz in bag time) and jumps
    back to the bag start at each pass; every JointState of a pass arrives, in order."""
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    from sysid_ros._src.nodes.qos import CLOCK_QOS

    times = 7 * 10**9 + np.arange(40) * 10_000_000          # 0.39 s of bag time, 10 ms apart
    bag = tmp_path / "loop"
    _write_joint_states(bag, times, seed=3)
    node, ex = ros_node
    clock: list[int] = []
    stamps: list[int] = []
    node.create_subscription(Clock, "/clock",
                             lambda m: clock.append(m.clock.sec * 10**9 + m.clock.nanosec),
                             CLOCK_QOS)
    node.create_subscription(JointState, "/joint_states",
                             lambda m: stamps.append(m.header.stamp.sec * 10**9
                                                     + m.header.stamp.nanosec), 200)
    proc = start("sysid_ros._src.nodes.replay", str(bag), "--loop", "--clock", "--clock-hz", "40",
                 "--rate", "2.0", "--wait-subscribers", "1")
    try:
        assert spin_until(ex, lambda: len(stamps) >= 2 * len(times) + 5, 20.0), len(stamps)
    finally:
        out = stop(proc)
    bag_times = times.tolist()
    first = stamps.index(bag_times[0])
    assert stamps[first:first + 2 * len(times)] == bag_times * 2, out
    # /clock: bag times, one per 25 ms of bag time within a pass, back to the start at once.
    c = np.array(clock)
    assert set(c.tolist()) <= set(bag_times)
    jumps = np.flatnonzero(np.diff(c) < 0) + 1
    assert len(jumps) >= 1 and all(c[j] == bag_times[0] for j in jumps), c
    steps = np.diff(c[jumps[0]:])
    assert np.all(steps[steps > 0] >= 25_000_000) and np.all(steps[steps > 0] <= 30_000_000)


def test_replay_refuses_bad_parameters_by_name(tmp_path):
    """A value outside the table's range is refused whether given as a ROS parameter or a CLI
    option, and a start offset past the bag's end is an error, not a silent no-op."""
    times = 7 * 10**9 + np.arange(5) * 10_000_000
    bag = tmp_path / "short"
    _write_joint_states(bag, times, seed=4)
    cases = [((str(bag), "--ros-args", "-p", "rate:=0.0"), "rate"),
             ((str(bag), "--clock-hz", "-5"), "clock_hz"),
             (("--ros-args", "-p", "rate:=2.0"), "no bag given"),
             ((str(bag), "--start-offset", "1.0"), "nothing to play from start_offset")]
    procs = [(start("sysid_ros._src.nodes.replay", *args), what) for args, what in cases]
    for proc, what in procs:
        out = finish(proc)
        assert proc.returncode == 1 and what in out, (what, out)


def test_recorder_takes_its_parameters_from_the_table(tmp_path, ros_node):
    """config/recorder.yaml + ``-p`` overrides: storage sqlite3 gives a .db3 bag holding what
    was published; an unknown storage is refused naming the parameter."""
    from sensor_msgs.msg import JointState

    bad = start("sysid_ros._src.nodes.recorder", "--ros-args", "-p", "storage:=zip",
                "-p", f"output:={tmp_path / 'bad'}")
    node, ex = ros_node
    pub = node.create_publisher(JointState, "/joint_states", 10)
    bag = tmp_path / "db"
    proc = start_node("recorder", f"output:={bag}", "storage:=sqlite3", "topics:=[/joint_states]")
    try:
        sent = _publish_to_recorder(node, ex, pub, 30, seed=5)
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out
    assert list(bag.glob("*.db3")) and not list(bag.glob("*.mcap"))
    np.testing.assert_array_equal(read_joint_states(bag, joint_names=NAMES).position,
                                  sent[:, 0])
    bad_out = finish(bad)
    assert bad.returncode == 1 and "storage" in bad_out and "mcap, sqlite3" in bad_out, bad_out
    assert not (tmp_path / "bad").exists()
