"""``exciting_planner``: receding-horizon safe exciting-trajectory planner node (docs/design.md
§6, §6.5).

Every ``t_p`` it plans the most exciting degree-5 trajectory it can CERTIFY safe for every θ_e in
the current bounds (``sysid_ros.planning.ExcitingPlanner``) and publishes it; an unverified plan
is never published, so the robot keeps following the current trajectory, which ends at rest.

Receding horizon: the first plan starts at rest from the measured joint state, one solve budget
(``max_solve_time``) after the cycle began;
each next plan starts at ``start + t_p`` of the current one, from the current desired state at
that instant (continuity), and is published ahead of time with ``header.stamp`` = its start.
If planning overran that instant, the plan is discarded (reason ``missed start``).

Topics (docs/design.md §7): sub ``joint_states`` (sensor QoS), ``/sysid/payload_bounds``
(latched; the robot's ``identification.prior`` box until the first message); pub
``/sysid/desired_trajectory`` (two points: t = 0 with q₀, q̇₀, q̈₀ and t = t_f with q₀ + k, 0, 0;
``header.frame_id`` = the certificate naming the θ_e box it was verified for, see
``sysid_ros.control.admission``) and ``/diagnostics`` (one status per cycle: solve_time,
iterations, verified, objective (cond), status, reason).

Stops (``finished``; the process exits) after ``max_trajectories`` published plans (0 = no
limit) or when the bounds' total relative width shrank by less than ``shrink_tolerance`` over
``stall_cycles`` consecutive cycles (0 = never).

Parameters (config/exciting_planner.yaml): robot, robot_config, obstacles ("" = the robot
file's ``planner.obstacles``, "none" = no obstacles, or a YAML file with a list of boxes),
t_f/t_p/max_solve_time (≤ 0 = robot file), max_trajectories, shrink_tolerance, stall_cycles,
joint_states_topic, bounds_topic, trajectory_topic.
"""
from __future__ import annotations


import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import yaml
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from sysid_ros.control.admission import KNOWN_CHECKS, Certificate, box_digest
from sysid_ros.model.robots import load_robot
from sysid_ros.nodes._common import (DIAGNOSTICS_QOS, LATCHED_QOS, SENSOR_QOS, TRAJECTORY_QOS,
                                     ns_to_stamp_fields, run_node)
from sysid_ros.nodes.messages import JointStateError, bounds_from_msg, joint_state_arrays
from sysid_ros.planning import ExcitingPlanner, PlannerConfig, PlanningError, QuinticTrajectory

__all__ = ["ExcitingPlannerNode", "main", "trajectory_msg"]

_OK, _WARN, _ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


def trajectory_msg(traj: QuinticTrajectory, k: np.ndarray, joint_names: Sequence[str],
                   start_ns: int,
                   box: tuple[np.ndarray, np.ndarray] | None = None) -> JointTrajectory:
    """The plan as a two-point JointTrajectory (quintic interpolation reproduces it exactly).
    ``box`` = the θ_e box (lower, upper) it was verified for: written as the certificate in
    ``header.frame_id`` (``sysid_ros.control.admission``)."""
    msg = JointTrajectory()
    msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp_fields(start_ns)
    if box is not None:
        msg.header.frame_id = Certificate(box_digest(*box), KNOWN_CHECKS[0]).to_frame_id()
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


class ExcitingPlannerNode(Node):
    """See the module docstring."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("exciting_planner")
        d = self.declare_parameter
        d("robot", "gen3")
        d("robot_config", "")
        d("calibration", "")          # sysid-calibrate result (calib.yaml); "" = none
        d("obstacles", "")
        d("t_f", 0.0)
        d("t_p", 0.0)
        d("max_solve_time", 0.0)
        d("max_trajectories", 0)
        d("shrink_tolerance", 0.01)
        d("stall_cycles", 0)
        d("joint_states_topic", "joint_states")
        d("bounds_topic", "/sysid/payload_bounds")
        d("trajectory_topic", "/sysid/desired_trajectory")
        p = lambda name: self.get_parameter(name).value  # noqa: E731

        self.robot = load_robot(p("robot"), p("robot_config") or None,
                                   p("calibration") or None)
        overrides: dict = {}
        for key in ("t_f", "t_p", "max_solve_time"):
            if float(p(key)) > 0:
                overrides[key] = float(p(key))
        obstacles = str(p("obstacles"))
        if obstacles == "none":
            overrides["obstacles"] = []
        elif obstacles:
            data = yaml.safe_load(Path(obstacles).read_text())
            overrides["obstacles"] = data.get("obstacles", []) if isinstance(data, dict) else data
        self.planner = ExcitingPlanner(self.robot, PlannerConfig.from_robot(self.robot, overrides))
        cfg = self.planner.config
        # the identifier's prior B₀ (same reading as the controller's) until bounds arrive
        from sysid_ros.control.errors import BoundsError
        from sysid_ros.control.prior import prior_box
        try:
            prior = prior_box(self.robot)
        except BoundsError as exc:
            raise PlanningError(f"{exc} (the θ_e prior box is needed until the first payload "
                                "bounds arrive)") from exc
        self.bounds = (prior.lower.copy(), prior.upper.copy())
        self.bounds_source = "prior"
        self.max_trajectories = int(p("max_trajectories"))
        self.shrink_tolerance = float(p("shrink_tolerance"))
        self.stall_cycles = int(p("stall_cycles"))

        self.finished = threading.Event()
        self.published = 0
        self.cycles = 0
        self._stalled = 0
        self._last_width: float | None = None
        self._state: tuple[np.ndarray, np.ndarray] | None = None
        self.current: tuple[int, QuinticTrajectory, np.ndarray] | None = None

        self.traj_pub = self.create_publisher(JointTrajectory, p("trajectory_topic"),
                                              TRAJECTORY_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DIAGNOSTICS_QOS)
        self.create_subscription(JointState, p("joint_states_topic"), self._on_joint_states,
                                 SENSOR_QOS)
        self.create_subscription(Float64MultiArray, p("bounds_topic"), self._on_bounds,
                                 LATCHED_QOS)
        # Planning blocks its callback for up to max_solve_time: it gets a group of its own so
        # that joint_states, bounds and the /clock time source keep being served meanwhile
        # (main() runs a two-thread executor) and ROS time is current when the plan is stamped.
        self.timer = self.create_timer(cfg.t_p, self._cycle,
                                       callback_group=MutuallyExclusiveCallbackGroup())
        self.get_logger().info(
            f"planning for {self.robot.name}: t_f={cfg.t_f} s, t_p={cfg.t_p} s, "
            f"{len(cfg.obstacles)} obstacles, {cfg.n_intervals} sub-intervals")

    # -- inputs ----------------------------------------------------------------------------------
    def _on_joint_states(self, msg: JointState) -> None:
        try:
            q, dq, _ = joint_state_arrays(msg, self.robot.joint_names, need_effort=False)
        except JointStateError as exc:
            self._report(_WARN, f"joint_states rejected: {exc}", {})
            return
        self._state = (q, dq)

    def _on_bounds(self, msg: Float64MultiArray) -> None:
        try:
            b = bounds_from_msg(msg)
        except ValueError as exc:
            self._report(_WARN, f"payload bounds rejected, keeping the previous box: {exc}", {})
            return
        self.bounds = (b.lower, b.upper)
        self.bounds_source = "identifier"

    # -- one cycle -------------------------------------------------------------------------------
    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _initial_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
        cfg = self.planner.config
        lead = int(cfg.max_solve_time * 1e9)
        if self.current is None:
            if self._state is None:
                return None
            # The controller holds its start pose (zero desired velocity): start from rest at the
            # measured pose, one solve budget ahead, like every later plan.
            q, _ = self._state
            return q, np.zeros_like(q), np.zeros_like(q), self._now_ns() + lead
        start, traj, k = self.current
        t_next = max(start + int(cfg.t_p * 1e9), self._now_ns() + lead)
        q, dq, ddq = traj.state_at((t_next - start) * 1e-9, k)
        return q, dq, ddq, t_next

    def _cycle(self) -> None:
        if self.finished.is_set():
            return
        init = self._initial_state()
        if init is None:
            self._report(_WARN, "waiting for joint_states", {"verified": "false"})
            return
        q0, dq0, ddq0, start = init
        lo, hi = self.bounds
        self.cycles += 1
        try:
            res = self.planner.plan(q0, dq0, ddq0, lo, hi)
        except PlanningError as exc:
            self._report(_ERROR, f"planning failed: {exc}", {"verified": "false",
                                                            "reason": str(exc)})
            return
        values = {"solve_time": f"{res.solve_time:.4f}", "iterations": str(res.iterations),
                  "solves": str(res.solves), "verified": str(res.verified).lower(),
                  "objective": f"{res.cond:.6g}", "status": res.status,
                  "bounds_source": self.bounds_source, "reason": "; ".join(res.reasons)}
        if not res.verified:
            self._report(_WARN, "no certified plan: following the current trajectory to rest",
                         values)
            return
        if self._now_ns() >= start:
            values["reason"] = "missed start: plan certified after its start time"
            self._report(_WARN, "plan discarded (late): current trajectory continues", values)
            return
        self.traj_pub.publish(trajectory_msg(res.trajectory, res.k, self.robot.joint_names, start,
                                             (lo, hi)))
        self.current = (start, res.trajectory, res.k)
        self.published += 1
        values["published"] = str(self.published)
        self._report(_OK, f"plan {self.published} published (cond {res.cond:.1f})", values)
        self._check_done()

    def _check_done(self) -> None:
        if self.max_trajectories > 0 and self.published >= self.max_trajectories:
            self._finish(f"published {self.published} trajectories (max_trajectories)")
            return
        lo, hi = self.bounds
        width = float(np.sum((hi - lo) / (np.abs(hi) + np.abs(lo) + 1e-9)))
        if self._last_width is not None and self.stall_cycles > 0:
            shrink = (self._last_width - width) / max(self._last_width, 1e-12)
            self._stalled = self._stalled + 1 if shrink < self.shrink_tolerance else 0
            if self._stalled >= self.stall_cycles:
                self._finish(f"bounds stopped shrinking for {self._stalled} cycles")
        self._last_width = width

    def _finish(self, why: str) -> None:
        self._report(_OK, f"done: {why}", {"published": str(self.published)})
        self.get_logger().info(f"done: {why}")
        self.finished.set()

    def _report(self, level: int, message: str, values: dict[str, str]) -> None:
        status = DiagnosticStatus(level=level, name="exciting_planner", message=message,
                                  hardware_id=self.robot.name)
        status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
        arr = DiagnosticArray(status=[status])
        arr.header.stamp = self.get_clock().now().to_msg()
        self.diag_pub.publish(arr)


def main(args: Sequence[str] | None = None) -> int:
    return run_node(lambda argv: ExcitingPlannerNode(argv), args, threads=2)


if __name__ == "__main__":
    raise SystemExit(main())
