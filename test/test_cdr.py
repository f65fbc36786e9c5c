"""The raw CDR codec (sysid_ros._src.cdr) against an independent reference: rclpy's own
serialisation (``serialize_message`` / ``deserialize_message``, Fast CDR through rmw_fastrtps)
and the rclpy-message path ``messages.joint_state_arrays``. Decoding random messages gives the
same arrays or the same error as the message path; encoded bytes deserialise with rclpy to the
intended message; truncated or mutated bytes never crash and are either refused with a
MessageError or decoded exactly as rclpy reads the same bytes."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sysid_ros._src.cdr import (CdrError, ClockEncoder, Float64ArrayEncoder, ImuEncoder,
                                 JointStateDecoder, JointStateEncoder, JointStateError,
                                 MessageError, float64_multi_array_data, imu_reading)
from sysid_ros._src.nodes.messages import joint_state_arrays

rclpy_serialization = pytest.importorskip("rclpy.serialization")
serialize, deserialize = rclpy_serialization.serialize_message, rclpy_serialization.deserialize_message

ROBOT = ("joint_1", "j2", "a_longer_joint_name_3")
NAMES = st.sampled_from([*ROBOT, "x", "", "ü", "j"])
FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# one decoder per effort mode across all examples: its name cache sees many name blocks
DECODERS = {need: JointStateDecoder(ROBOT, need_effort=need) for need in (True, False)}


def _outcome(fn, *args):
    """("ok", arrays…) or (error class, message)."""
    try:
        out = fn(*args)
    except MessageError as err:
        return type(err), str(err)
    return ("ok", *out)


def _same(a, b) -> bool:
    if a[0] != "ok" or b[0] != "ok":
        return a == b
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a[1:], b[1:]))


@st.composite
def joint_states(draw):
    from sensor_msgs.msg import JointState
    msg = JointState()
    msg.header.stamp.sec = draw(st.integers(-2**31, 2**31 - 1))
    msg.header.stamp.nanosec = draw(st.integers(0, 999_999_999))
    msg.header.frame_id = draw(st.sampled_from(["", "a", "base_link", "wörld"]))
    # mostly the robot's joints in a random order (accepted), sometimes anything (refused)
    if draw(st.booleans()):
        names = draw(st.permutations([*ROBOT, *draw(st.lists(NAMES, max_size=2, unique=True))]))
        names = list(dict.fromkeys(names))
    else:
        names = draw(st.lists(NAMES, max_size=5))
    n = len(names)
    msg.name = names
    length = st.sampled_from([n, n, n, 0, n + 1, max(n - 1, 0)])
    values = st.lists(st.floats(-1e3, 1e3) | FLOATS, min_size=1, max_size=1)
    for field in ("position", "velocity", "effort"):
        k = draw(length)
        setattr(msg, field, [draw(values)[0] for _ in range(k)])
    return msg


@SETTINGS
@given(joint_states(), st.booleans())
def test_decoder_matches_the_rclpy_message_path(msg, need_effort):
    data = serialize(msg)
    mine = _outcome(lambda: DECODERS[need_effort].decode(data))
    ref = _outcome(joint_state_arrays, deserialize(data, type(msg)), list(ROBOT), need_effort)
    if mine[0] == "ok":
        assert ref[0] == "ok", ref
        assert mine[1] == msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        assert _same(("ok", *mine[2:]), ref)
        assert all(a.dtype == np.float64 and a.shape == (len(ROBOT),) for a in mine[2:])
    else:
        assert mine == ref      # same error class, same words


def _robot_msg(order=ROBOT, effort=True):
    from sensor_msgs.msg import JointState
    rng = np.random.default_rng(len(order))
    msg = JointState(name=list(order))
    msg.position, msg.velocity = rng.normal(size=(2, len(order))).tolist()
    msg.effort = rng.normal(size=len(order)).tolist() if effort else []
    msg.header.stamp.sec, msg.header.stamp.nanosec = 12, 345
    return msg


def test_name_orders_alternating_reuse_the_cache_and_stay_right():
    dec = JointStateDecoder(ROBOT)
    msgs = [_robot_msg(), _robot_msg(ROBOT[::-1]), _robot_msg((ROBOT[1], ROBOT[0], ROBOT[2]))]
    for _ in range(3):
        for m in msgs:
            s = dec.decode(serialize(m))
            for a, b in zip(s[1:], joint_state_arrays(m, ROBOT)):
                np.testing.assert_array_equal(a, b)
    assert len(dec._cache) == 3   # one entry per order, whatever the padding bytes hold


def test_big_endian_decodes_like_little_endian():
    from rosbags.typesys import Stores, get_typestore
    ts = get_typestore(Stores.ROS2_JAZZY)
    msg = _robot_msg(ROBOT[::-1])
    ros = ts.deserialize_cdr(bytes(serialize(msg)), "sensor_msgs/msg/JointState")
    big = bytes(ts.serialize_cdr(ros, "sensor_msgs/msg/JointState", little_endian=False))
    assert big[:2] == b"\x00\x00"
    little, be = JointStateDecoder(ROBOT).decode(serialize(msg)), JointStateDecoder(ROBOT).decode(big)
    assert little.stamp_ns == be.stamp_ns
    for a, b in zip(little[1:], be[1:]):
        np.testing.assert_array_equal(a, b)
        assert b.dtype == np.float64 and b.dtype.isnative


@pytest.mark.parametrize("head", [b"\x00\x02", b"\x00\x03", b"\x00\x07", b"\x00\x11", b"\x01\x01"])
def test_unsupported_encapsulations_are_refused_by_name(head):
    data = head + serialize(_robot_msg())[2:]
    with pytest.raises(CdrError, match="unsupported CDR encapsulation 0x"):
        JointStateDecoder(ROBOT).decode(data)


def test_missing_joints_nan_and_no_velocity_errors_match_the_message_path():
    cases = [_robot_msg(ROBOT[:2]), _robot_msg(effort=False)]
    nan = _robot_msg()
    nan.velocity = [0.0, math.nan, math.inf]
    novel = _robot_msg()
    novel.velocity = []
    for msg in [*cases, nan, novel]:
        with pytest.raises(JointStateError) as mine:
            JointStateDecoder(ROBOT).decode(serialize(msg))
        with pytest.raises(JointStateError) as ref:
            joint_state_arrays(msg, ROBOT)
        assert str(mine.value) == str(ref.value)
    # without effort the effort-less message is fine, τ reads as zeros
    s = JointStateDecoder(ROBOT, need_effort=False).decode(serialize(_robot_msg(effort=False)))
    np.testing.assert_array_equal(s.tau, np.zeros(3))


# -- encoders ---------------------------------------------------------------------------------
@SETTINGS
@given(st.lists(FLOATS, max_size=12), st.sampled_from([None, "e,de", "", "ü"]))
def test_float64_array_encoder_is_what_rclpy_reads(values, label):
    from std_msgs.msg import Float64MultiArray
    data = Float64ArrayEncoder(label).encode(np.array(values, dtype=float))
    msg = deserialize(data, Float64MultiArray)
    np.testing.assert_array_equal(np.array(msg.data), np.array(values, dtype=float))
    dims = [(d.label, d.size, d.stride) for d in msg.layout.dim]
    assert dims == ([] if label is None else [(label, len(values), len(values))])
    np.testing.assert_array_equal(float64_multi_array_data(data), np.array(values, dtype=float))


@SETTINGS
@given(st.lists(st.tuples(st.text(max_size=5), st.integers(0, 2**32 - 1),
                          st.integers(0, 2**32 - 1)), max_size=3),
       st.integers(0, 2**32 - 1), st.lists(FLOATS, max_size=9))
def test_float64_multi_array_decoder_reads_what_rclpy_writes(dims, offset, values):
    from std_msgs.msg import Float64MultiArray, MultiArrayDimension
    msg = Float64MultiArray(data=values)
    msg.layout.dim = [MultiArrayDimension(label=lab, size=a, stride=b) for lab, a, b in dims]
    msg.layout.data_offset = offset
    np.testing.assert_array_equal(float64_multi_array_data(serialize(msg)),
                                  np.array(values, dtype=float))


@SETTINGS
@given(st.integers(0, 2**31 * 10**9 - 1), st.integers(0, 8), st.booleans(),
       st.sampled_from(["", "base", "ü_frame"]))
def test_joint_state_and_clock_encoders_are_what_rclpy_reads(stamp_ns, n, velocity, frame):
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    rng = np.random.default_rng(n)
    names = [f"joint_{'ü' * (i % 3)}{i}" for i in range(n)]
    q, dq, tau = rng.normal(size=(3, n))
    msg = deserialize(JointStateEncoder(names, frame).encode(stamp_ns, q, dq if velocity else None,
                                                              tau), JointState)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == divmod(stamp_ns, 10**9)
    assert msg.header.frame_id == frame and list(msg.name) == names
    np.testing.assert_array_equal(msg.position, q)
    np.testing.assert_array_equal(msg.velocity, dq if velocity else [])
    np.testing.assert_array_equal(msg.effort, tau)
    clock = deserialize(ClockEncoder.encode(stamp_ns), Clock).clock
    assert (clock.sec, clock.nanosec) == divmod(stamp_ns, 10**9)


def test_imu_encoder_is_what_rclpy_reads():
    from sensor_msgs.msg import Imu
    o, w, a = np.array([0.1, 0.2, 0.3, 0.9]), np.array([1.0, -2.0, 3.0]), np.array([0, 0, 9.81])
    for frame in ("", "imu", "trunk_imu_link"):
        msg = deserialize(ImuEncoder(frame).encode(5 * 10**9 + 7, o, w, a), Imu)
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id) == (5, 7, frame)
        q, av, la = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        np.testing.assert_array_equal([q.x, q.y, q.z, q.w], o)
        np.testing.assert_array_equal([av.x, av.y, av.z], w)
        np.testing.assert_array_equal([la.x, la.y, la.z], a)
        for cov in (msg.orientation_covariance, msg.angular_velocity_covariance,
                    msg.linear_acceleration_covariance):
            np.testing.assert_array_equal(cov, np.zeros(9))


@SETTINGS
@given(st.lists(FLOATS, min_size=37, max_size=37), st.sampled_from(["", "imu", "trunk_imu_lnk"]),
       st.integers(0, 2**31 - 1), st.integers(0, 999_999_999), st.integers(0, 400))
def test_imu_reading_matches_rclpy_and_refuses_truncation(values, frame, sec, nanosec, cut):
    from sensor_msgs.msg import Imu
    msg = Imu()
    msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id = sec, nanosec, frame
    o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
    o.x, o.y, o.z, o.w = values[:4]
    w.x, w.y, w.z = values[4:7]
    a.x, a.y, a.z = values[7:10]
    data = serialize(msg)
    stamp, gyro, force = imu_reading(data)
    assert stamp == sec * 10**9 + nanosec
    np.testing.assert_array_equal(gyro, values[4:7])
    np.testing.assert_array_equal(force, values[7:10])
    short = data[:max(len(data) - cut, 0)]
    if len(short) < len(data) - 4:       # past rmw_serialize's spare bytes: into the vectors
        with pytest.raises(CdrError):
            imu_reading(short)


# -- fuzz: truncated and mutated bytes ---------------------------------------------------------
@st.composite
def damaged(draw):
    """A valid JointState's bytes cut short, or with a few bytes overwritten (often a count or
    a string length), or both."""
    data = bytearray(serialize(draw(joint_states())))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data) - 1))
        if draw(st.booleans()):          # a plausible small count / length, little-endian
            word = draw(st.integers(0, 12)).to_bytes(4, "little")
            data[at:at + 4] = word[:len(data) - at]
        else:
            data[at] = draw(st.integers(0, 255))
    cut = draw(st.integers(0, len(data)))
    return bytes(data[:cut] if draw(st.booleans()) else data)


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged(), st.booleans())
def test_damaged_bytes_are_refused_or_decoded_exactly_as_rclpy_reads_them(data, need_effort):
    from sensor_msgs.msg import JointState
    try:
        sample = DECODERS[need_effort].decode(data)
    except MessageError as err:
        assert str(err)
        return
    # accepted: rclpy reads the same bytes as the same values (only asked now, when the
    # lengths are known to fit the bytes: Fast CDR allocates a sequence before reading it)
    ref = joint_state_arrays(deserialize(data, JointState), list(ROBOT), need_effort)
    for a, b in zip(sample[1:], ref):
        assert a.shape == (len(ROBOT),)
        np.testing.assert_array_equal(a, b)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(FLOATS, max_size=8), st.integers(0, 60), st.binary(min_size=1, max_size=4),
       st.integers(0, 40))
def test_damaged_commands_are_refused_or_read_as_rclpy_reads_them(values, at, patch, cut):
    from std_msgs.msg import Float64MultiArray
    data = bytearray(Float64ArrayEncoder("label").encode(np.array(values, dtype=float)))
    data[at:at + len(patch)] = patch
    data = bytes(data[:len(data) - cut])
    try:
        got = float64_multi_array_data(data)
    except CdrError as err:
        assert str(err)
        return
    np.testing.assert_array_equal(got, np.array(deserialize(data, Float64MultiArray).data))
