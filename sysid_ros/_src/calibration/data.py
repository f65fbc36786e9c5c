"""Joint-state recordings as the calibration reads them (from bags or from memory)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sysid_ros._src.sample_screen import SkipLog
from sysid_ros._src.calibration.errors import CalibrationInputError
from sysid_ros._src.model.robots import Robot

__all__ = ["Recording", "read_recording"]


@dataclass(frozen=True, eq=False)
class Recording:
    """One joint-state log in the robot's joint order.

    Attributes:
        t: (N,) stamps (s), strictly increasing.
        q: (N, nj) positions (rad).
        dq: (N, nj) velocities (rad/s), or None when the log has none.
        tau: (N, nj) measured joint torques (N·m).
        name: where it came from (bag path), for messages and provenance.
        velocity_source: ``measured`` or the state estimator that produced ``dq``.
        payload_theta: (10,) a known payload the end effector carried in this log (Pinocchio
            order, end-effector joint frame), or None. Logs with and without it side by side
            measure the torque reading's gain (:mod:`.rows`).
        payload_radius: (10,) how far the payload's parameters may be from ``payload_theta``
            (≥ 0; None: known exactly).
    """

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray | None
    tau: np.ndarray
    name: str = "<memory>"
    velocity_source: str = "measured"
    payload_theta: np.ndarray | None = None
    payload_radius: np.ndarray | None = None

    def __post_init__(self) -> None:
        t = np.asarray(self.t, float).reshape(-1)
        if self.payload_theta is not None:
            p = np.asarray(self.payload_theta, float).reshape(-1)
            if p.shape != (10,) or not np.all(np.isfinite(p)):
                raise CalibrationInputError(f"{self.name}: payload: expected 10 finite "
                                            "parameters")
            object.__setattr__(self, "payload_theta", p)
        if self.payload_radius is not None:
            r = np.asarray(self.payload_radius, float).reshape(-1)
            if self.payload_theta is None or r.shape != (10,) or not np.all(np.isfinite(r)) \
                    or np.any(r < 0):
                raise CalibrationInputError(f"{self.name}: payload radius: expected 10 finite "
                                            "values >= 0 with a payload")
            object.__setattr__(self, "payload_radius", r)
        if t.size < 2:
            raise CalibrationInputError(f"{self.name}: {t.size} sample(s); need at least 2")
        if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise CalibrationInputError(f"{self.name}: stamps not finite and strictly increasing")
        for field in ("q", "dq", "tau"):
            a = getattr(self, field)
            if a is None:
                if field != "dq":
                    raise CalibrationInputError(f"{self.name}: {field} missing")
                continue
            a = np.asarray(a, float)
            if a.ndim != 2 or a.shape[0] != t.size:
                raise CalibrationInputError(f"{self.name}: {field} has shape {a.shape}, "
                                            f"expected ({t.size}, nj)")
            if not np.all(np.isfinite(a)):
                raise CalibrationInputError(f"{self.name}: {field} has non-finite values")
            object.__setattr__(self, field, a)
        object.__setattr__(self, "t", t)

    def __len__(self) -> int:
        return int(self.t.size)

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    @property
    def rate_hz(self) -> float:
        return 1.0 / float(np.median(np.diff(self.t)))

    def with_velocity(self, dq: np.ndarray, source: str) -> Recording:
        """The same log with velocities ``dq`` from ``source`` (a state estimator)."""
        return replace(self, dq=np.asarray(dq, float), velocity_source=source)

    def check_robot(self, robot: Robot) -> None:
        if self.q.shape[1] != robot.nj:
            raise CalibrationInputError(f"{self.name}: {self.q.shape[1]} joints, robot "
                                        f"{robot.name} has {robot.nj}")


def read_recording(path: str | Path, robot: Robot, topic: str = "/joint_states",
                   skip: SkipLog | None = None,
                   progress: Callable[[int, int], None] | None = None) -> Recording:
    """Read a rosbag2 JointState topic (position + effort required; velocity optional) in
    ``robot.joint_names`` order. Bag problems raise :class:`CalibrationInputError` naming the bag;
    with ``skip``, bad messages are left out and counted there instead (:mod:`sysid_ros._src.sample_screen`).
    ``progress(done, total)`` is called with message counts as the bag is read."""
    from sysid_ros._src.bagio import BagError, read_joint_states

    try:
        s = read_joint_states(path, topic, robot.joint_names, require=("position", "effort"),
                              skip=skip, progress=progress)
    except BagError as err:
        raise CalibrationInputError(f"{path}: {err}") from err
    assert s.position is not None and s.effort is not None  # required above
    return Recording(s.t, s.position, s.velocity, s.effort, str(path))
