"""The real `sim` node over DDS (loopback, own domain id from conftest) seen by a real subscriber."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from .processes import spin_until, start_node, stop

from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import dumbbell_for, true_theta_e

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[2]


def _stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def _subscribe(node, store: dict, imu: bool = False) -> None:
    from geometry_msgs.msg import InertiaStamped
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, JointState

    from sysid_ros._src.nodes.qos import CLOCK_QOS, LATCHED_QOS, SENSOR_QOS

    for key in ("js", "clock", "truth", "imu"):
        store.setdefault(key, [])
    node.create_subscription(JointState, "joint_states", store["js"].append, SENSOR_QOS)
    node.create_subscription(Clock, "/clock", store["clock"].append, CLOCK_QOS)
    node.create_subscription(InertiaStamped, "/sim/payload_truth", store["truth"].append,
                             LATCHED_QOS)
    if imu:
        node.create_subscription(Imu, "imu", store["imu"].append, SENSOR_QOS)


def _stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def _published(robot, settings, last_ns: int) -> dict:
    """What the node publishes without commands, from the same runtime in-process (the node is
    deterministic then): joint_states stamp (ns) → JointSample, up to ``last_ns``."""
    from sysid_ros._src.simulation import RuntimeSettings, SimRuntime

    rt = SimRuntime(robot, RuntimeSettings(**settings))
    out = {}
    while True:
        pub = rt.advance()
        if pub.joint_states is not None:
            out[pub.joint_states.stamp_ns] = pub.joint_states
        if pub.stamp_ns >= last_ns:
            return out


def _assert_received_were_published(js: list, published: dict) -> None:
    """Every received joint_states is one the node published (a lost one is DDS's business:
    best effort on a busy machine), bit for bit, in order."""
    stamps = [_stamp_ns(m) for m in js]
    assert all(b > a for a, b in zip(stamps, stamps[1:]))
    for m, t in zip(js, stamps):
        assert t in published, f"stamp {t} ns was never published"
        np.testing.assert_array_equal(np.array(m.position), published[t].q)
        np.testing.assert_array_equal(np.array(m.effort), published[t].effort)
        if published[t].dq is None:
            assert len(m.velocity) == 0
        else:
            np.testing.assert_array_equal(np.array(m.velocity), published[t].dq)


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_gen3_realtime_publishes_holds_and_follows_commands(ros_node):
    """Asserts what holds however loaded the machine is (no message counts, no rates): received
    messages are published ones on the 1 ms sim-time grid; commands act, then time out."""
    from std_msgs.msg import Float64MultiArray

    from sysid_ros._src.nodes.qos import COMMAND_QOS
    from sysid_ros._src.nodes.messages import joint_state_arrays, theta_from_inertia

    node, ex = ros_node
    robot = load_robot("gen3")
    got: dict = {}
    _subscribe(node, got)
    cmd_pub = node.create_publisher(Float64MultiArray, "/effort_controller/commands", COMMAND_QOS)
    # wait_subscribers: sim time stays 0 until this probe listens (the reference starts at 0)
    proc = start_node("sim", "payload_mass:=2.27", "noise_tau:=0.1", "rate_hz:=1000.0",
                      "wait_subscribers:=1")
    try:
        _spin(ex, 30.0, until=lambda: len(got["js"]) >= 100 and got["truth"])
        assert len(got["js"]) >= 100, stop(proc)
        js = list(got["js"])
        # no command: the hold controller keeps the home posture (gravity + payload compensated)
        published = _published(robot, dict(payload_mass=2.27, noise_tau=0.1, rate_hz=1000.0),
                               _stamp_ns(js[-1]))
        _assert_received_were_published(js, published)
        assert np.all(np.array([_stamp_ns(m) for m in js]) % 1_000_000 == 0)
        clock = np.array([c.clock.sec * 1_000_000_000 + c.clock.nanosec for c in got["clock"]])
        assert clock.size and np.all(clock % 1_000_000 == 0) and np.all(np.diff(clock) > 0)
        np.testing.assert_allclose(theta_from_inertia(got["truth"][0]),
                                   true_theta_e(robot, dumbbell_for(robot, 2.27)), atol=1e-9)
        assert got["truth"][0].header.frame_id == "joint_7"
        home = np.array(robot.config["simulation"]["home"])
        assert np.abs(joint_state_arrays(js[-1], robot.joint_names)[0] - home).max() < 2e-3
        # commands: a torque that does not hold the arm → it moves; the sensor reports it ± noise
        cmd = np.array([3.0, 0.0, 0.0, 0.0, 0.0, 0.0, -2.0])
        following: list[float] = []

        def follow() -> bool:
            cmd_pub.publish(Float64MultiArray(data=cmd.tolist()))
            for m in got["js"]:
                if np.all(np.abs(np.array(m.effort) - cmd) <= 0.1 + 1e-12):
                    following.append(_stamp(m))
            got["js"].clear()
            return bool(following) and following[-1] - following[0] >= 0.8   # sim seconds

        got["js"].clear()
        end = time.monotonic() + 60.0
        while not follow() and time.monotonic() < end:
            _spin(ex, 0.02)
        assert following and following[-1] - following[0] >= 0.8, stop(proc)
        _spin(ex, 30.0, until=lambda: bool(got["js"]))
        q_moved = joint_state_arrays(got["js"][-1], robot.joint_names)[0]
        assert np.abs(q_moved - home).max() > 0.05
        # commands stop → after command_timeout (0.1 s sim) the hold controller is back
        t_stop = _stamp(got["js"][-1])
        _spin(ex, 60.0, until=lambda: bool(got["js"]) and _stamp(got["js"][-1]) > t_stop + 1.0)
        _, _, tau = joint_state_arrays(got["js"][-1], robot.joint_names)
        assert np.abs(tau - cmd).max() > 1.0
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_lockstep_waits_for_the_controller(ros_node):
    """Lock-step: every period's command is applied (efforts equal each reply ± noise) and the
    simulation does not run ahead of a controller that replies to each joint_states."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from sysid_ros._src.nodes.qos import COMMAND_QOS, SENSOR_QOS

    node, ex = ros_node
    cmd_pub = node.create_publisher(Float64MultiArray, "/effort_controller/commands", COMMAND_QOS)
    seen: list = []

    def reply(msg: JointState) -> None:
        t = _stamp(msg)
        seen.append((t, np.array(msg.effort)))
        # command encodes the stamp it answers, so each published effort names its command
        cmd_pub.publish(Float64MultiArray(data=[t, 0, 0, 0, 0, 0, 0]))

    node.create_subscription(JointState, "joint_states", reply, SENSOR_QOS)
    # The probe (publisher and subscriber in one participant) is discovered before the first
    # step (wait_subscribers), so the sim never runs ahead unanswered; a generous lockstep_wait
    # keeps a reply delayed by a busy machine from being given up on (a later reply would then
    # answer the next state: a command does not say which state it answers).
    proc = start_node("sim", "mode:=lockstep", "noise_tau:=0.0", "lockstep_wait:=5.0",
                      "rate_hz:=1000.0", "wait_subscribers:=1")
    try:
        _spin(ex, 30.0, until=lambda: len(seen) > 50)
        assert seen, stop(proc)
        seen.clear()
        _spin(ex, 60.0, until=lambda: len(seen) > 50)   # a count, not a rate: busy CI is slow
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out
    stamps = np.array([s[0] for s in seen])
    effort0 = np.array([s[1][0] for s in seen])
    assert len(seen) > 50
    # the torque measured at t_k is the reply to the joint_states of t_{k-1}: nothing skipped
    np.testing.assert_allclose(effort0[1:], stamps[:-1], atol=1e-9)
    np.testing.assert_allclose(np.diff(stamps), 1e-3, atol=1e-9)


@pytest.mark.slow
def test_b1_z1_stands_and_publishes_imu(ros_node):
    from sysid_ros._src.nodes.messages import joint_state_arrays

    node, ex = ros_node
    robot = load_robot("b1_z1")
    got: dict = {}
    _subscribe(node, got, imu=True)
    # wait_subscribers: a short lock-step run may otherwise end before discovery on a busy machine
    proc = start_node("sim", "robot:=b1_z1", "mode:=lockstep", "duration:=2.5",
                      "wait_subscribers:=1")
    try:
        _spin(ex, 30.0, until=lambda: proc.poll() is not None)
        _spin(ex, 0.3)
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out
    assert got["js"] and got["imu"], out
    assert _stamp(got["js"][-1]) == pytest.approx(2.5, abs=1e-6)
    q, _, _ = joint_state_arrays(got["js"][-1], robot.joint_names)
    legs = np.array(robot.config["leg_standing_posture"])
    assert np.abs(q[:12] - legs).max() < 0.2
    for imu in got["imu"][len(got["imu"]) // 2:]:
        o = imu.orientation
        assert abs(o.w) > 0.99                        # level within ~16°
        assert imu.linear_acceleration.z == pytest.approx(9.81, abs=1.0)


def test_hardware_like_publishes_at_the_profile_rate_with_drops(ros_node, tmp_path):
    """hardware_like:=true with a profile from an edited robot file (robot_config): every
    received joint_states is one the publication model published (500 Hz grid, stamps up to 0.2
    periods late, no velocity), never one of the slots it dropped; how many it drops is checked
    without DDS in test/simulation/test_sim_runtime.py."""
    import yaml

    from sysid_ros._src.nodes.messages import theta_from_inertia

    node, ex = ros_node
    cfg = yaml.safe_load((ROOT / "config" / "gen3.yaml").read_text())
    cfg["simulation"]["hardware_like"]["profile"].update(
        rate_hz=500.0, jitter=0.2, drop_prob=0.2, velocity="missing", velocity_lag=0.0)
    path = tmp_path / "gen3_hardware_like.yaml"
    path.write_text(yaml.safe_dump(cfg))
    got: dict = {}
    _subscribe(node, got)
    proc = start_node("sim", "robot:=gen3", f"robot_config:={path}", "hardware_like:=true",
                      "hardware_seed:=3", "payload_mass:=2.27", "wait_subscribers:=1")
    try:
        _spin(ex, 30.0, until=lambda: len(got["js"]) >= 100 and got["truth"])
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out
    js = list(got["js"])
    assert len(js) >= 100, out
    published = _published(load_robot("gen3", path), dict(hardware_like=True, hardware_seed=3,
                                                           payload_mass=2.27), _stamp_ns(js[-1]))
    _assert_received_were_published(js, published)
    assert all(len(m.velocity) == 0 and len(m.effort) == 7 for m in js)
    period = 1.0 / 500.0
    stamps = np.array([_stamp(m) for m in js])
    late = stamps - np.floor(stamps / period + 1e-6) * period     # true instant → stamp
    assert late.max() <= 0.2 * period + 2e-9 and late.max() > 0.05 * period
    # the payload truth is still the EE body + dumbbell (the drawn truth leaves the EE link)
    robot = load_robot("gen3")
    np.testing.assert_allclose(theta_from_inertia(got["truth"][0]),
                               true_theta_e(robot, dumbbell_for(robot, 2.27)), atol=1e-9)


def _dds_thread_names(pid: int) -> list[str]:
    return sorted(Path(t, "comm").read_text().strip() for t in Path(f"/proc/{pid}/task").iterdir())


@pytest.mark.slow
def test_sim_writes_asynchronously_unless_the_user_chose(ros_node, monkeypatch):
    """The simulator's writers are asynchronous "
    "(docs/theory/ros-interfaces.md#topics-types-and-qos: its pacing thread must not
    deliver to every reader itself): its process runs a Fast DDS delivery thread for them
    (``dds.asyn.0.1``, next to the participant's own ``dds.asyn.0.0``), read from /proc. A user's
    RMW_FASTRTPS_PUBLICATION_MODE wins: SYNCHRONOUS gives no such thread."""
    from sysid_ros._src.nodes.qos import PUBLICATION_MODE_ENV

    node, ex = ros_node
    monkeypatch.delenv(PUBLICATION_MODE_ENV, raising=False)
    threads = {}
    for mode in ("SYNCHRONOUS", None):
        proc = start_node("sim", "mode:=lockstep", "lockstep_wait:=0.05",
                          env_extra={PUBLICATION_MODE_ENV: mode} if mode else None)
        try:
            assert spin_until(ex, lambda: node.count_publishers("/joint_states") > 0, 30.0), \
                stop(proc)
            spin_until(ex, None, 0.5)       # every writer exists once joint_states is seen
            threads[mode] = _dds_thread_names(proc.pid)
        finally:
            out = stop(proc)
        assert "Traceback" not in out, out
        assert spin_until(ex, lambda: node.count_publishers("/joint_states") == 0, 20.0)
    assert "dds.asyn.0.1" in threads[None], threads
    assert "dds.asyn.0.1" not in threads["SYNCHRONOUS"], threads
    assert "dds.asyn.0.0" in threads["SYNCHRONOUS"], threads    # the names are what we think


def test_a_sentinel_value_is_refused_by_name():
    """physics_dt 0 (the old "robot file" sentinel) is out of range: absent means the robot
    file's step; the node exits with an error naming the parameter."""
    proc = start_node("sim", "physics_dt:=0.0")
    try:
        proc.wait(timeout=30)
    finally:
        out = stop(proc)
    assert proc.returncode != 0 and "physics_dt" in out, out


def _spin(ex, seconds: float, until=None) -> None:
    spin_until(ex, until, seconds)
