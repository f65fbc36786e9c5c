"""Desired trajectories for the controller: validation, quintic interpolation and a take-over queue.

A trajectory is what a ``trajectory_msgs/JointTrajectory`` carries, as arrays (no rclpy here):
``times`` (K,) = time_from_start of each point (s), ``positions``/``velocities``/
``accelerations`` (K, nj), ``joint_names`` and ``start_time`` (header.stamp, s). Between two
points each joint follows the unique degree-5 polynomial matching position, velocity and
acceleration at both ends — so a degree-5 (Bézier) segment sent as its two end points is
reproduced exactly (ros2_control's joint_trajectory_controller interpolates the same way).

``TrajectoryQueue`` holds the active trajectory and the ones waiting for their start time. A new
trajectory takes over at its ``start_time`` (``start_time <= 0`` means "on arrival"); if its first
point is later than the take-over instant, the current reference state at that instant is
prepended so the reference stays continuous. Before any trajectory the queue holds a given pose;
after the last point it holds the final position with zero velocity and acceleration.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from sysid_ros._src.control.errors import TrajectoryError

__all__ = ["Reference", "JointTrajectoryArrays", "ActiveTrajectory", "TrajectoryQueue",
           "quintic_coefficients"]


@dataclass(frozen=True)
class Reference:
    """Desired position, velocity, acceleration (each (nj,)) at one instant."""

    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray


def quintic_coefficients(T: ArrayLike, p0: np.ndarray, v0: np.ndarray, a0: np.ndarray,
                         p1: np.ndarray, v1: np.ndarray, a1: np.ndarray) -> np.ndarray:
    """Coefficients c (6, …) of p(s) = Σ c_k s^k on s ∈ [0, T] matching both ends' p, v, a."""
    T = np.asarray(T, float)
    d = p1 - p0 - v0 * T - 0.5 * a0 * T**2
    dv = v1 - v0 - a0 * T
    da = a1 - a0
    c3 = (10 * d - 4 * dv * T + 0.5 * da * T**2) / T**3
    c4 = (-15 * d + 7 * dv * T - da * T**2) / T**4
    c5 = (6 * d - 3 * dv * T + 0.5 * da * T**2) / T**5
    return np.stack([p0, v0, 0.5 * a0, c3, c4, c5])


@dataclass(frozen=True)
class JointTrajectoryArrays:
    """A validated trajectory with columns in the robot's joint order (see module doc)."""

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    start_time: float

    @classmethod
    def from_arrays(cls, times: Sequence[float], positions: ArrayLike | None,
                    velocities: ArrayLike | None, accelerations: ArrayLike | None,
                    joint_names: Sequence[str], robot_joint_names: Sequence[str],
                    start_time: float) -> JointTrajectoryArrays:
        """Validate and reorder by name; raises ``TrajectoryError`` saying what is wrong."""
        names = list(joint_names)
        wanted = list(robot_joint_names)
        if sorted(names) != sorted(wanted) or len(set(names)) != len(names):
            raise TrajectoryError(f"joint names {names} are not a permutation of the robot's "
                                  f"{wanted}")
        t = np.asarray(times, float)
        if t.ndim != 1 or t.size == 0:
            raise TrajectoryError("trajectory has no points")
        arrays = {}
        for label, raw in (("positions", positions), ("velocities", velocities),
                           ("accelerations", accelerations)):
            arr = np.asarray(raw, float) if raw is not None else np.empty((0,))
            if arr.size == 0:
                raise TrajectoryError(f"points carry no {label} (positions, velocities and "
                                      "accelerations are all required for quintic interpolation)")
            if arr.shape != (t.size, len(names)):
                raise TrajectoryError(f"{label}: shape {arr.shape}, expected "
                                      f"({t.size}, {len(names)}) (every point needs one value "
                                      "per joint)")
            if not np.all(np.isfinite(arr)):
                raise TrajectoryError(f"{label} contain NaN or inf")
            arrays[label] = arr[:, [names.index(n) for n in wanted]]
        if not np.all(np.isfinite(t)) or not np.isfinite(start_time):
            raise TrajectoryError("time_from_start or header stamp is not finite")
        if t[0] < 0:
            raise TrajectoryError(f"first time_from_start is negative ({t[0]})")
        if np.any(np.diff(t) <= 0):
            k = int(np.argmax(np.diff(t) <= 0))
            raise TrajectoryError(f"time_from_start is not strictly increasing at point {k + 1} "
                                  f"({t[k]} -> {t[k + 1]})")
        return cls(t, arrays["positions"], arrays["velocities"], arrays["accelerations"],
                   float(start_time))


class ActiveTrajectory:
    """Interpolator of one trajectory (times ``t`` relative to its start; ``coef`` (segments,
    6, nj) ascending in the time since each segment's first point; ``prefixed`` when the
    reference state at take-over was prepended, module doc)."""

    def __init__(self, traj: JointTrajectoryArrays, prefix: tuple[float, Reference] | None):
        self.prefixed = prefix is not None
        t, p, v, a = traj.times, traj.positions, traj.velocities, traj.accelerations
        if prefix is not None:
            t = np.concatenate([[prefix[0]], t])
            p = np.vstack([prefix[1].q, p])
            v = np.vstack([prefix[1].dq, v])
            a = np.vstack([prefix[1].ddq, a])
        self.start = traj.start_time
        self.t = t
        self.final = Reference(p[-1].copy(), np.zeros(p.shape[1]), np.zeros(p.shape[1]))
        self.first = Reference(p[0].copy(), v[0].copy(), a[0].copy())
        self.last = Reference(p[-1].copy(), v[-1].copy(), a[-1].copy())
        T = np.diff(t)[:, None]
        self.coef = quintic_coefficients(T, p[:-1], v[:-1], a[:-1], p[1:], v[1:], a[1:])
        self.coef = np.moveaxis(self.coef, 0, 1)          # (segments, 6, nj)

    @property
    def end_time(self) -> float:
        return self.start + float(self.t[-1])

    def sample(self, now: float) -> Reference:
        s = now - self.start
        if s >= self.t[-1]:
            return self.final
        if s <= self.t[0]:
            return self.first
        k = int(np.searchsorted(self.t, s, side="right")) - 1
        x = s - self.t[k]
        c = self.coef[k]
        pw = x ** np.arange(6)
        q = pw @ c
        dq = (np.arange(1, 6) * pw[:5]) @ c[1:]
        ddq = (np.array([2.0, 6.0, 12.0, 20.0]) * pw[:4]) @ c[2:]
        return Reference(q, dq, ddq)


class TrajectoryQueue:
    """Active trajectory plus pending ones; ``sample(now)`` gives the reference (module doc)."""

    def __init__(self, nj: int) -> None:
        self.nj = nj
        self._hold: Reference | None = None
        self._active: ActiveTrajectory | None = None
        # waiting trajectories, each with the interpolation it will run (fixed at push: a later
        # push that starts earlier discards it, so the reference it joins cannot change)
        self._pending: list[tuple[JointTrajectoryArrays, ActiveTrajectory]] = []

    @property
    def has_reference(self) -> bool:
        return self._active is not None or self._hold is not None

    @property
    def has_trajectory(self) -> bool:
        return self._active is not None or bool(self._pending)

    def hold(self, q: np.ndarray) -> None:
        """Hold pose ``q`` until a trajectory starts (the node passes the measured start pose)."""
        q = np.asarray(q, float).copy()
        self._hold = Reference(q, np.zeros(self.nj), np.zeros(self.nj))

    def clear(self) -> None:
        self._active, self._pending, self._hold = None, [], None

    def resolve(self, traj: JointTrajectoryArrays, now: float) -> JointTrajectoryArrays:
        """``traj`` with a start time ≤ 0 replaced by ``now`` ("on arrival")."""
        if traj.positions.shape[1] != self.nj:
            raise TrajectoryError(f"trajectory has {traj.positions.shape[1]} joints, "
                                  f"controller has {self.nj}")
        if traj.start_time <= 0.0:
            traj = JointTrajectoryArrays(traj.times, traj.positions, traj.velocities,
                                         traj.accelerations, now)
        return traj

    def reference_at(self, t: float) -> Reference | None:
        """The reference the queue will give at ``t`` if nothing starting before ``t`` is
        pushed in between (None before any hold pose)."""
        earlier = [a for p, a in self._pending if p.start_time <= t]
        if earlier:
            return earlier[-1].sample(t)
        return self._current(t)

    def plan(self, traj: JointTrajectoryArrays, now: float) -> ActiveTrajectory:
        """The interpolation ``traj`` will run once it takes over (with the reference state at
        its take-over prepended if its first point is later): what admission checks."""
        traj = self.resolve(traj, now)
        prefix = None
        if traj.times[0] > 0.0:
            ref = self.reference_at(traj.start_time)
            if ref is not None:
                prefix = (0.0, ref)
        return ActiveTrajectory(traj, prefix)

    def push(self, traj: JointTrajectoryArrays, now: float,
             planned: ActiveTrajectory | None = None) -> None:
        """Queue ``traj``; a start time ≤ 0 means now. Later-queued trajectories replace pending
        ones that would start after them (the newest plan wins from its start on). ``planned``
        is ``plan(traj, now)`` if the caller already has it."""
        traj = self.resolve(traj, now)
        self._pending = [(p, a) for p, a in self._pending if p.start_time < traj.start_time]
        self._pending.append((traj, planned if planned is not None else self.plan(traj, now)))

    def _current(self, now: float) -> Reference | None:
        if self._active is not None:
            return self._active.sample(now)
        return self._hold

    def sample(self, now: float) -> Reference | None:
        """Reference at ``now`` (None before any hold pose or trajectory)."""
        due = [a for p, a in self._pending if p.start_time <= now]
        if due:
            self._pending = [(p, a) for p, a in self._pending if p.start_time > now]
            self._active = due[-1]
        return self._current(now)
