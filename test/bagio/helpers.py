"""Builders of rosbags-typestore JointState/Imu messages for the bag tests."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sysid_ros._src.bagio import BagWriter, default_typestore

TS = default_typestore()
JointState = TS.types["sensor_msgs/msg/JointState"]
Imu = TS.types["sensor_msgs/msg/Imu"]
Header = TS.types["std_msgs/msg/Header"]
Time = TS.types["builtin_interfaces/msg/Time"]
Vector3 = TS.types["geometry_msgs/msg/Vector3"]
Quaternion = TS.types["geometry_msgs/msg/Quaternion"]
RECEIVE_T0 = 1_800_000_000 * 10**9
NAMES = [f"joint_{i}" for i in range(1, 8)]


def joint_state(stamp_ns: int, names: Sequence[str], q, dq, tau) -> object:
    return JointState(
        header=Header(stamp=Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id=""),
        name=list(names),
        position=np.asarray(q, dtype=np.float64),
        velocity=np.asarray(dq, dtype=np.float64),
        effort=np.asarray(tau, dtype=np.float64),
    )


def sample_arrays(n: int, nj: int = 7, seed: int = 0):
    rng = np.random.default_rng(seed)
    stamps = 1_700_000_000 * 10**9 + np.arange(n, dtype=np.int64) * 1_000_000 + 17
    return stamps, rng.normal(size=(n, nj)), rng.normal(size=(n, nj)), rng.normal(size=(n, nj))


def write_joint_states(path: Path, stamps, q, dq, tau, *, names=NAMES, storage="mcap",
                       topic="/joint_states", permute=None, **kw) -> Path:
    """Write rows as JointStates; ``permute(i)`` may return a column order for message i.

    Bag (receive) timestamps increase with the row index whatever the header stamps are, as a
    recorder's would, so readers keep the row order.
    """
    with BagWriter(path, storage=storage, **kw) as w:
        for i, s in enumerate(stamps):
            order = permute(i) if permute else None
            if order is None:
                order = list(range(len(names)))
            w.write(topic, joint_state(int(s), [names[k] for k in order], q[i][order],
                                       dq[i][order], tau[i][order]), RECEIVE_T0 + 1_000_000 * i)
    return path


def imu(stamp_ns: int, vals) -> object:
    return Imu(
        header=Header(stamp=Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id="imu"),
        orientation=Quaternion(x=vals[0], y=vals[1], z=vals[2], w=vals[3]),
        orientation_covariance=np.zeros(9),
        angular_velocity=Vector3(x=vals[4], y=vals[5], z=vals[6]),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=Vector3(x=vals[7], y=vals[8], z=vals[9]),
        linear_acceleration_covariance=np.zeros(9),
    )
