"""The demo's own motions and their sound check: the return to the task's start after
identification and the move-and-place task (S3's experiment (b)), both rest-to-rest
minimum-jerk segments, certified with the planner's reachability (``planning.Reachability``)
for every θ_e in the controller's box before they are sent. No ROS here: ``sysid-demo`` and the
in-process pipeline use the same objects.

A rest-to-rest segment q_a → q_b over T is q_a + (q_b − q_a)·H₅(t/T), the planner's trajectory
family with q̇₀ = q̈₀ = 0 and k = q_b − q_a, so its check is the planner's, with the same
assumptions (docs/theory/planner.md#sound-reachability): the tracking error starts inside the controller's bound, θ_e
lies in the box and the obstacles are the configured ones.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sysid_ros._src.model.box import ParameterBox
    from sysid_ros._src.planning.reachability import Verification
    from sysid_ros._src.planning.trajectory import QuinticTrajectory
    from sysid_ros._src.model.robots import Robot
    from sysid_ros._src.planning.obstacles import BoxObstacle

__all__ = ["ReturnPath", "TaskCertifier", "TaskTiming", "retrace_poses", "return_vias",
           "task_points",
           "RETURN_MIN_SEGMENT", "RETURN_SLOWDOWNS", "RETRACE_SPACING", "TASK_SLOWDOWNS"]

#: s: shortest hop of a return through via poses (a hop's duration otherwise scales with the
#: square root of its length, and a tiny hop would be over in a few hundredths of a second)
RETURN_MIN_SEGMENT = 1.0
#: how many times slower than asked the return is tried when it does not certify as asked
RETURN_SLOWDOWNS = (1.0, 2.0, 4.0)
#: how many times slower than asked the task's segments are tried when they do not certify
TASK_SLOWDOWNS = (1.0, 1.5, 2.0)
#: s of executed motion between the poses a retraced return goes through
RETRACE_SPACING = 0.5
#: rad: via poses closer than this to the previous point are skipped (no zero-length segments)
_SAME_POSE = 1e-6


def retrace_poses(executed: Sequence[tuple[QuinticTrajectory, np.ndarray, float]],
                  spacing: float = RETRACE_SPACING) -> list[np.ndarray]:
    """Poses along the executed exciting motion, most recent first: each plan (its trajectory,
    k and how long it ran before the next took over) sampled every ``spacing`` s from the end
    of its run back to its start. A return through them follows the certified motion back
    with straight joint-space hops of ``spacing`` s of motion each, so it cuts its corners by
    little where the direct move and the plans' start poses alone cut into an obstacle."""
    poses: list[np.ndarray] = []
    for traj, k, ran in reversed(executed):
        times = np.arange(float(ran), -1e-9, -float(spacing))
        if times.size == 0 or times[-1] > 1e-9:
            times = np.append(times, 0.0)
        q, _, _ = traj.sample(np.clip(times, 0.0, traj.t_f), np.asarray(k, float))
        poses += [np.asarray(x, float) for x in q]
    return poses


def return_vias(executed: Sequence[tuple[QuinticTrajectory, np.ndarray, float]]
                ) -> list[list[np.ndarray]]:
    """The via poses ``TaskCertifier.return_path`` tries after the direct move, for the executed
    plans (trajectory, k, seconds it ran): their start poses, most recent first, then the
    executed motion retraced (``retrace_poses``)."""
    return [[traj.q0 for traj, _k, _ran in reversed(executed)], retrace_poses(executed)]


def task_points(return_times: np.ndarray, return_positions: np.ndarray,
                waypoints: Sequence[np.ndarray], segment: float, pause: float = 0.5
                ) -> tuple[np.ndarray, np.ndarray, float]:
    """(times, positions, task_start_offset) of the return-then-task path (in-process pipeline).

    Rest-to-rest everywhere: the return (``ReturnPath.times``/``positions``, ending at the
    task's start), hold ``pause``, then start → waypoints over ``segment`` each. ``sysid-demo``
    sends the same path as two messages (return, then the task once it is certified).
    """
    times = [float(x) for x in return_times]
    pts = [np.asarray(p, float) for p in return_positions]
    t_start = times[-1] + pause
    times.append(t_start)
    pts.append(pts[-1])
    for k, w in enumerate(waypoints, start=1):
        pts.append(np.asarray(w, float))
        times.append(t_start + k * segment)
    return np.asarray(times), np.stack(pts), t_start


@dataclass
class TaskTiming:
    """The task's segment duration (s) as certified; ``reasons`` empty when it is (else the
    slowest attempt's), ``asked_reasons`` why the asked duration was refused (empty if not)."""

    segment: float
    reasons: list[str]
    asked_reasons: list[str]


@dataclass
class ReturnPath:
    """A rest-to-rest return: ``positions`` (K, nj) reached at ``times`` (K,) from 0 (the first
    is where the arm is). ``reasons`` is empty when every segment is certified; ``via`` tells
    whether it goes through via poses; ``direct_reasons`` why the direct move at the asked
    duration was refused (empty if it was not)."""

    times: np.ndarray
    positions: np.ndarray
    reasons: list[str]
    via: bool = False
    direct_reasons: list[str] = field(default_factory=list)

    @property
    def certified(self) -> bool:
        return not self.reasons

    @classmethod
    def direct(cls, q_from: np.ndarray, q_to: np.ndarray, duration: float,
               reasons: Sequence[str] = (), direct_reasons: Sequence[str] = ()) -> ReturnPath:
        """The one-segment return q_from → q_to over ``duration``."""
        return cls(np.array([0.0, float(duration)]), np.stack([np.asarray(q_from, float),
                                                               np.asarray(q_to, float)]),
                   list(reasons), direct_reasons=list(direct_reasons))


class TaskCertifier:
    """Sound check of the demo's motions before they run: every rest-to-rest segment against
    joint, velocity and torque limits and the obstacles, for every θ_e in the box the controller
    is using and every tracking error the controller allows — the planner's verify-before-commit
    applied to the precomputed task (the paper's method executes only certified motions).
    Built once, before the run: constructing it imports the planning stack (seconds).

    ``obstacles``: default the robot file's ``planner.obstacles``."""

    def __init__(self, robot: Robot, start: np.ndarray, waypoints: Sequence[np.ndarray],
                 segment: float, obstacles: Sequence[BoxObstacle] | None = None) -> None:
        from sysid_ros._src.param_table import defaults_of
        from sysid_ros._src.planning import PlannerConfig, controller_model
        from sysid_ros._src.planning.obstacles import obstacles_from_config
        from sysid_ros._src.planning.reachability import Reachability

        cfg = robot.config.get("planner", {})
        obs = obstacles_from_config(cfg.get("obstacles")) if obstacles is None else obstacles
        self.reach = Reachability(robot, controller_model(robot), tuple(obs),
                                  int(cfg.get("n_intervals",
                                              defaults_of(PlannerConfig)["n_intervals"])))
        self.points = [np.asarray(start, float)] + [np.asarray(w, float) for w in waypoints]
        self.segment = float(segment)

    def __call__(self, box: ParameterBox, segment: float | None = None) -> list[str]:
        """Failure reasons of the task with segments of ``segment`` s (default the one it was
        built with); empty: certified for every θ_e in the box."""
        seg = self.segment if segment is None else float(segment)
        return [why for i, (a, b) in enumerate(zip(self.points[:-1], self.points[1:]), start=1)
                for why in self.move(box, a, b, seg, label=f"segment {i}")]

    def task(self, box: ParameterBox) -> TaskTiming:
        """The task at its segment duration if it certifies, else ``TASK_SLOWDOWNS`` times
        slower: the same path, less acceleration (the torque limit is what refuses it; on
        hardware-like data a calibrated Gen3 missed joint 2's limit by 0.1 N·m at 1 s and
        certified at 1.5 s)."""
        asked = self(box)
        if not asked:
            return TaskTiming(self.segment, [], [])
        reasons = asked
        for slow in TASK_SLOWDOWNS[1:]:
            reasons = self(box, slow * self.segment)
            if not reasons:
                return TaskTiming(slow * self.segment, [], asked)
        return TaskTiming(self.segment, reasons, asked)

    def move(self, box: ParameterBox, q_from: np.ndarray, q_to: np.ndarray,
             duration: float, label: str = "return") -> list[str]:
        """Failure reasons of the rest-to-rest move q_from → q_to over ``duration`` for every
        θ_e in the box; empty: certified. Unchecked, such a return can hit an obstacle: in
        a closed-loop episode (3.18 kg, experiment (b)) the direct one reached 5 mm into the
        platform."""
        return [f"{label}: {why}" for why in self._check(box, q_from, q_to, duration).reasons]

    def _check(self, box: ParameterBox, q_from: np.ndarray, q_to: np.ndarray,
               duration: float) -> Verification:
        """The planner's sound check of the rest-to-rest move q_from → q_to over ``duration``."""
        return self.reach.verify_move(q_from, q_to, duration, box.lower, box.upper)

    def return_path(self, box: ParameterBox, q_from: np.ndarray, q_to: np.ndarray,
                    duration: float, vias: Sequence[Sequence[np.ndarray]] = ()) -> ReturnPath:
        """The return q_from → q_to certified for every θ_e in the box: the direct move over
        ``duration`` if it certifies; else the same move through each list of ``vias`` poses in
        turn; else those again ``RETURN_SLOWDOWNS`` times slower whose refusal slowing down
        can lift (not a possible collision or a position limit: ``_geometric``). A via segment of
        joint-space length Δ takes duration·√(Δ/Δ_direct) (at least ``RETURN_MIN_SEGMENT``):
        a rest-to-rest segment's peak acceleration is 5.77·Δ/T², so each hop accelerates no
        harder than the direct move would (the torque limit is what refuses fast returns).

        The demo passes the certified exciting plans' start poses, most recent first, then the
        executed motion retraced (``return_vias``): the arm has been near each of them, while
        a direct joint-space move may cut a corner into an obstacle (3.18 kg,
        experiment (b), the direct return could reach the platform by 14 mm, the one through
        the start poses by 6 mm). Whether a path certifies is decided by the check alone;
        ``reasons`` says why the last attempt did not."""
        q_from, q_to = np.asarray(q_from, float), np.asarray(q_to, float)
        reach = max(float(np.max(np.abs(q_to - q_from))), 0.1)
        # candidates: None = the direct move, else the poses of a path through via poses
        candidates: list[list[np.ndarray] | None] = [None] + [
            p for p in (_through(q_from, q_to, via) for via in vias) if len(p) > 2]
        live = list(range(len(candidates)))       # those slowing down may still certify
        first: list[str] = []
        reasons: list[str] = []
        for slow in RETURN_SLOWDOWNS:
            t_direct = slow * float(duration)
            for c in list(live):
                pts = candidates[c]
                legs = [(q_from, q_to)] if pts is None else list(zip(pts[:-1], pts[1:]))
                times = np.concatenate([[0.0], np.cumsum(
                    [t_direct if pts is None else max(RETURN_MIN_SEGMENT, t_direct * np.sqrt(
                        float(np.max(np.abs(b - a))) / reach)) for a, b in legs])])
                reasons = []
                for i, (a, b) in enumerate(legs, start=1):
                    check = self._check(box, a, b, times[i] - times[i - 1])
                    if check.ok:
                        continue
                    label = "return" if pts is None else f"return via {i}"
                    reasons = [f"{label}: {why}" for why in check.reasons]
                    if _geometric(check):
                        live.remove(c)     # the same path slower sweeps the same poses
                    break                  # one refused leg refuses the path
                if pts is None:
                    first = first or reasons
                if not reasons:
                    return (ReturnPath.direct(q_from, q_to, t_direct, direct_reasons=first)
                            if pts is None else
                            ReturnPath(times, np.stack(pts), [], via=True, direct_reasons=first))
            if not live:
                break
        refused = ReturnPath.direct(q_from, q_to, duration, reasons, first)
        refused.via = len(candidates) > 1
        return refused


def _geometric(check: Verification) -> bool:
    """A refusal that going slower cannot lift: a position limit, the k box or a possible
    collision (the desired path and the controller's tracking-error bound, hence the swept
    poses, do not depend on the speed; velocity, torque and the tracking certificate do)."""
    return any(check.slack.get(name, 0.0) < 0.0 for name in ("collision", "position", "k_box"))


def _through(q_from: np.ndarray, q_to: np.ndarray, via: Sequence[np.ndarray]
             ) -> list[np.ndarray]:
    """q_from, the via poses, q_to: each pose closer than ``_SAME_POSE`` to the previous
    one skipped (no zero-length segments)."""
    pts = [q_from]
    for p in [*(np.asarray(v, float) for v in via), q_to]:
        if np.max(np.abs(p - pts[-1])) > _SAME_POSE:
            pts.append(p)
    return pts
