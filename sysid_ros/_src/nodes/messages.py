"""Conversions between ROS 2 messages and the numpy quantities of the math packages.

One place for the wire formats of docs/theory/ros-interfaces.md#topics-types-and-qos so every
node reads and writes them the
same way:

- ``/sysid/payload_bounds``: ``std_msgs/Float64MultiArray`` with layout
  dims ``[bound: 3 (lower, nominal, upper), parameter: 10 (m, mcx, …, Izz)]``; the labels carry the
  names (``"bound:lower,nominal,upper"``, ``"parameter:m,mcx,...,Izz"``) so a reader can check them.
- ``geometry_msgs/InertiaStamped``: mass, centre of mass and inertia **about the centre of mass**
  (ROS convention), converted to and from θ (inertia about the frame origin).
- ``sensor_msgs/JointState``: arrays reordered by ``JointState.name``, never by position.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Inertia, InertiaStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from sysid_ros._src.control.admission import KNOWN_CHECKS, Certificate, box_digest
from sysid_ros._src.control.trajectory import JointTrajectoryArrays
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.errors import BoxError
from sysid_ros._src.model.parameters import PARAM_NAMES, com_inertia_from_theta, theta_from_com_inertia
from sysid_ros._src.nodes._common import ns_to_stamp_fields
from sysid_ros._src.cdr import (JointStateError, MessageError, check_lengths, name_order,
                                 ordered_arrays)

__all__ = ["BOUND_LABELS", "JointStateError", "MessageError", "bounds_from_msg",
           "bounds_to_msg", "diagnostics_msg", "inertia_from_theta", "joint_state_arrays",
           "theta_from_inertia", "trajectory_from_msg", "trajectory_msg"]

if TYPE_CHECKING:      # the planning package is heavy; only the planner node needs it
    from sysid_ros._src.planning import QuinticTrajectory

BOUND_LABELS = ("lower", "nominal", "upper")


def bounds_to_msg(box: ParameterBox) -> Float64MultiArray:
    """A θ_e box (names ``PARAM_NAMES``, else MessageError) → the ``/sysid/payload_bounds``
    layout. The wire format carries no frame or units: they are fixed by the names."""
    if box.names != PARAM_NAMES:
        raise MessageError(f"payload bounds: parameters {list(box.names)} != {list(PARAM_NAMES)}")
    msg = Float64MultiArray()
    msg.layout.dim = [
        MultiArrayDimension(label="bound:" + ",".join(BOUND_LABELS), size=3, stride=30),
        MultiArrayDimension(label="parameter:" + ",".join(PARAM_NAMES), size=10, stride=10),
    ]
    msg.layout.data_offset = 0
    msg.data = np.concatenate([box.lower, box.nominal, box.upper]).astype(float).tolist()
    return msg


def bounds_from_msg(msg: Float64MultiArray, frame: str = "") -> ParameterBox:
    """Parse and validate a bounds message into a θ_e box expressed in ``frame`` (the
    receiver's end-effector joint; the message does not carry it). Raises MessageError with the
    reason — naming the parameter — if malformed (nominal outside the box included)."""
    dims = msg.layout.dim
    if len(dims) != 2 or dims[0].size != 3 or dims[1].size != 10:
        raise MessageError("payload bounds: expected layout [bound: 3][parameter: 10]")
    labels = dims[1].label.split(":", 1)[-1].split(",")
    if tuple(labels) != PARAM_NAMES:
        raise MessageError(f"payload bounds: parameter labels {labels} != {list(PARAM_NAMES)}")
    data = np.asarray(msg.data, float)
    off = msg.layout.data_offset
    if data.size < off + 30:
        raise MessageError(f"payload bounds: {data.size} values, expected {off + 30}")
    block = data[off:off + 30].reshape(3, 10)
    try:
        return theta_e_box(block[0], block[2], block[1], frame=frame)
    except BoxError as exc:
        raise MessageError(f"payload bounds: {exc}") from exc


def inertia_from_theta(theta: np.ndarray) -> Inertia:
    """θ (inertia about the frame origin) → geometry_msgs/Inertia (inertia about the COM)."""
    m, c, i_c = com_inertia_from_theta(theta)
    out = Inertia()
    out.m = m
    out.com.x, out.com.y, out.com.z = (float(x) for x in c)
    out.ixx, out.ixy, out.ixz = float(i_c[0, 0]), float(i_c[0, 1]), float(i_c[0, 2])
    out.iyy, out.iyz, out.izz = float(i_c[1, 1]), float(i_c[1, 2]), float(i_c[2, 2])
    return out


def theta_from_inertia(msg: Inertia | InertiaStamped) -> np.ndarray:
    """geometry_msgs/Inertia(Stamped) → θ in Pinocchio order (inertia about the frame origin).

    Duck-typed, so it also reads ``rosbags``-deserialised messages."""
    inertia = msg.inertia if hasattr(msg, "inertia") else msg
    i_c = np.array([[inertia.ixx, inertia.ixy, inertia.ixz],
                    [inertia.ixy, inertia.iyy, inertia.iyz],
                    [inertia.ixz, inertia.iyz, inertia.izz]])
    return theta_from_com_inertia(inertia.m, np.array([inertia.com.x, inertia.com.y,
                                                      inertia.com.z]), i_c)


def joint_state_arrays(msg: JointState, joint_names: tuple[str, ...] | list[str],
                       need_effort: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, q̇, τ) ordered as ``joint_names``, matched by name. Raises JointStateError (the checks
    of the raw-bytes path, :class:`sysid_ros._src.cdr.JointStateDecoder`, which shares them)."""
    names = list(msg.name)
    check_lengths(len(names), len(msg.position), len(msg.velocity), len(msg.effort), need_effort)
    order = name_order(names, joint_names)
    return ordered_arrays(order, np.asarray(msg.position, float), np.asarray(msg.velocity, float),
                          np.asarray(msg.effort, float), joint_names, need_effort)


def trajectory_from_msg(msg: JointTrajectory,
                        robot_joint_names: tuple[str, ...] | list[str]) -> JointTrajectoryArrays:
    """JointTrajectory → validated arrays in the robot's joint order. Raises
    ``sysid_ros._src.control.errors.TrajectoryError`` naming the field (the certificate in
    ``header.frame_id`` is read by the controller's admission, not here)."""
    from sysid_ros._src.control.errors import TrajectoryError
    names = list(msg.joint_names)
    pts = list(msg.points)
    if not pts:
        raise TrajectoryError("trajectory has no points")
    cols = {}
    for label in ("positions", "velocities", "accelerations"):
        rows = [list(getattr(p, label)) for p in pts]
        bad = [k for k, row in enumerate(rows) if len(row) != len(names)]
        if bad:
            what = "no" if not rows[bad[0]] else f"{len(rows[bad[0]])}"
            raise TrajectoryError(f"point {bad[0]} has {what} {label} for {len(names)} joints "
                                  "(positions, velocities and accelerations are all required)")
        cols[label] = rows
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in pts]
    start = (int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)) * 1e-9
    return JointTrajectoryArrays.from_arrays(times, cols["positions"], cols["velocities"],
                                             cols["accelerations"], names, robot_joint_names,
                                             start)


def trajectory_msg(traj: QuinticTrajectory, k: np.ndarray, joint_names: Sequence[str],
                   start_ns: int,
                   box: ParameterBox | None = None) -> JointTrajectory:
    """The plan as a two-point JointTrajectory (quintic interpolation reproduces it exactly).
    ``box`` = the θ_e box it was verified for: written as the certificate in
    ``header.frame_id`` (``sysid_ros._src.control.admission``)."""
    msg = JointTrajectory()
    msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp_fields(start_ns)
    if box is not None:
        msg.header.frame_id = Certificate(box_digest(box.lower, box.upper),
                                          KNOWN_CHECKS[0]).to_frame_id()
    msg.joint_names = list(joint_names)
    p0 = JointTrajectoryPoint(positions=traj.q0.tolist(), velocities=traj.dq0.tolist(),
                              accelerations=traj.ddq0.tolist(), time_from_start=Duration())
    sec = int(traj.t_f)
    p1 = JointTrajectoryPoint(positions=(traj.q0 + k).tolist(), velocities=[0.0] * len(k),
                              accelerations=[0.0] * len(k),
                              time_from_start=Duration(sec=sec,
                                                       nanosec=int(round((traj.t_f - sec) * 1e9))))
    msg.points = [p0, p1]
    return msg


_DIAG_LEVEL = {"ok": DiagnosticStatus.OK, "warn": DiagnosticStatus.WARN,
               "error": DiagnosticStatus.ERROR}


def diagnostics_msg(name: str, hardware_id: str, level: str, message: str,
                    values: dict[str, str], stamp: Time) -> DiagnosticArray:
    """One-status ``/diagnostics`` message; ``level`` is ok | warn | error (the runtimes' words)."""
    status = DiagnosticStatus(name=name, hardware_id=hardware_id, message=message,
                              level=_DIAG_LEVEL[level])
    status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
    arr = DiagnosticArray(status=[status])
    arr.header.stamp = stamp
    return arr
