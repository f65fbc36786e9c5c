"""Hypothesis fuzz of the message decoders (sysid_ros._src.nodes.messages): any JointState,
bounds array or JointTrajectory either decodes into values the math can use (finite, right
shape, in the robot's joint order) or raises the package's own error naming the problem —
never another exception, never garbage accepted."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sysid_ros._src.control.errors import TrajectoryError
from sysid_ros._src.nodes.messages import (MessageError, bounds_from_msg, bounds_to_msg,
                                      joint_state_arrays, trajectory_from_msg)

NAMES = [f"j{i}" for i in range(1, 5)]
FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def joint_states(draw):
    from sensor_msgs.msg import JointState
    names = draw(st.lists(st.sampled_from(NAMES + ["x", ""]), max_size=6))
    n = len(names)
    size = st.integers(0, n + 1)
    msg = JointState()
    msg.name = names
    msg.position = draw(st.lists(FLOATS, min_size=draw(size), max_size=n + 1))
    msg.velocity = draw(st.lists(FLOATS, min_size=draw(size), max_size=n + 1))
    msg.effort = draw(st.lists(FLOATS, min_size=draw(size), max_size=n + 1))
    return msg


@SETTINGS
@given(joint_states(), st.booleans())
def test_joint_state_decoder(msg, need_effort):
    try:
        q, dq, tau = joint_state_arrays(msg, NAMES, need_effort=need_effort)
    except MessageError as err:
        assert str(err)
        return
    # accepted: every robot joint exactly once, values taken by name, all finite
    assert sorted(set(msg.name) & set(NAMES)) == sorted(NAMES) and len(set(msg.name)) == len(msg.name)
    idx = [list(msg.name).index(j) for j in NAMES]
    np.testing.assert_array_equal(q, np.asarray(msg.position)[idx])
    np.testing.assert_array_equal(dq, np.asarray(msg.velocity)[idx])
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(dq)) and np.all(np.isfinite(tau))


@st.composite
def bounds_msgs(draw):
    from std_msgs.msg import Float64MultiArray, MultiArrayDimension

    from sysid_ros._src.model.parameters import PARAM_NAMES
    msg = Float64MultiArray()
    ndim = draw(st.integers(0, 3))
    labels = st.sampled_from(["parameter:" + ",".join(PARAM_NAMES), "bound:lower,nominal,upper",
                              "parameter:m", "x"])
    msg.layout.dim = [MultiArrayDimension(label=draw(labels), size=draw(st.sampled_from([3, 10, 0, 7])),
                                          stride=draw(st.integers(0, 40)))
                      for _ in range(ndim)]
    msg.layout.data_offset = draw(st.integers(0, 5))
    msg.data = draw(st.lists(st.floats(-1e3, 1e3) | FLOATS, min_size=0, max_size=40))
    return msg


@SETTINGS
@given(bounds_msgs())
def test_bounds_decoder(msg):
    try:
        b = bounds_from_msg(msg)
    except MessageError as err:
        assert str(err).startswith("payload bounds")
        return
    off = msg.layout.data_offset
    block = np.asarray(msg.data[off:off + 30]).reshape(3, 10)
    np.testing.assert_array_equal(np.stack([b.lower, b.nominal, b.upper]), block)
    assert np.all(np.isfinite(block)) and np.all(b.lower <= b.nominal) and np.all(b.nominal <= b.upper)


@SETTINGS
@given(st.lists(st.floats(-1e6, 1e6), min_size=30, max_size=30), st.sampled_from(["", "joint_7"]))
def test_bounds_round_trip_keeps_the_box_by_name(values, frame):
    """ParameterBox → Float64MultiArray → ParameterBox is the identity (values bit for bit, the
    θ_e names and units, the receiver's frame); a box over other names is refused."""
    from sysid_ros._src.model.box import PARAM_UNITS, ParameterBox, theta_e_box
    from sysid_ros._src.model.parameters import PARAM_NAMES
    lo, nom, hi = np.sort(np.asarray(values).reshape(10, 3), axis=1).T    # lower ≤ nominal ≤ upper
    box = theta_e_box(lo, hi, nom, frame=frame)
    back = bounds_from_msg(bounds_to_msg(box), frame=frame)
    assert back == box and back.names == PARAM_NAMES and back.units == PARAM_UNITS
    np.testing.assert_array_equal(np.stack([back.lower, back.nominal, back.upper]),
                                  np.stack([lo, nom, hi]))
    other = ParameterBox(tuple(reversed(PARAM_NAMES)), lower=lo, nominal=nom, upper=hi)
    try:
        bounds_to_msg(other)
    except MessageError as err:
        assert "parameters" in str(err)
    else:
        raise AssertionError("a box over reordered names was encoded by position")


def test_bounds_decoder_names_the_parameter_whose_nominal_is_outside():
    from sysid_ros._src.model.box import theta_e_box
    box = theta_e_box(np.zeros(10), np.ones(10))
    msg = bounds_to_msg(box)
    data = list(msg.data)
    data[10 + 4] = 2.0                                  # nominal Ixx above its upper bound
    msg.data = data
    try:
        bounds_from_msg(msg)
    except MessageError as err:
        assert "'Ixx'" in str(err) and "nominal > upper" in str(err)
    else:
        raise AssertionError("a nominal outside the box was accepted")


@st.composite
def trajectories(draw):
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory()
    msg.joint_names = draw(st.permutations(NAMES) | st.lists(st.sampled_from(NAMES), max_size=5))
    n = len(msg.joint_names)
    for _ in range(draw(st.integers(0, 4))):
        p = JointTrajectoryPoint()
        for field in ("positions", "velocities", "accelerations"):
            setattr(p, field, draw(st.lists(FLOATS, min_size=draw(st.sampled_from([0, n, n + 1])) % (n + 2),
                                            max_size=n + 1)))
        p.time_from_start.sec = draw(st.integers(0, 3))
        p.time_from_start.nanosec = draw(st.integers(0, 999_999_999))
        msg.points.append(p)
    msg.header.stamp.sec = draw(st.integers(0, 2**31 - 1))
    return msg


@SETTINGS
@given(trajectories())
def test_trajectory_decoder(msg):
    try:
        traj = trajectory_from_msg(msg, NAMES)
    except TrajectoryError as err:
        assert str(err)
        return
    assert sorted(msg.joint_names) == sorted(NAMES)
    order = [list(msg.joint_names).index(j) for j in NAMES]
    pos = np.array([list(p.positions) for p in msg.points])[:, order]
    np.testing.assert_array_equal(traj.positions, pos)
    assert np.all(np.diff(traj.times) > 0) and np.all(np.isfinite(traj.velocities))
    assert np.all(np.isfinite(traj.accelerations)) and traj.times[0] >= 0
