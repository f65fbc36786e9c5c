"""``markers``: live view of the identification graph as ``visualization_msgs/MarkerArray``
(docs/design.md §7; the geometry is :mod:`sysid_ros.visualization`, this node only wires it).

Everything is drawn in the robot's base frame (the URDF root link, or ``base_frame``): set it
as RViz2's fixed frame / Foxglove's display frame and no ``/tf`` is needed; with
``robot_state_publisher`` running (full ROS install) the frames line up with its ``/tf``.

Topics (remap with ``-r old:=new``):

- sub ``joint_states`` (sensor_msgs/JointState, sensor QoS): drives the robot and payload layers;
  its header stamp is the time the plan layer is judged by;
- sub ``/sysid/payload_bounds`` (std_msgs/Float64MultiArray, latched): the θ_e box;
- sub ``/sysid/desired_trajectory`` (trajectory_msgs/JointTrajectory, reliable depth 10);
- pub ``/sysid/markers/obstacles``: obstacle boxes + names; reliable, transient local (latched),
  republished when a box in another frame becomes resolvable;
- pub ``/sysid/markers/robot``: collision spheres at the latest joint state (reliable, depth 1);
- pub ``/sysid/markers/plan``: the plan being executed — the newest trajectory whose header
  stamp (its start; 0 = on arrival) is not after the latest joint state: every collision sphere at
  ``plan_samples`` instants of its quintic interpolation, each radius enlarged by the sound
  chain-length bound of the planner's tracking-error margin e_max (``plan_margin``), and the
  tool-frame path; latched, published when the executed plan changes;
- pub ``/sysid/markers/payload``: equivalent ellipsoid of the box centre, CoM, CoM box, mass
  glyph and label, at the end-effector pose of the latest joint state (latched).

Robot and payload arrays are rate-limited to ``rate_hz`` (wall clock, so the view keeps its pace
in lock-step simulation and without ``/clock``).

Parameters (config/markers.yaml):

- ``robot`` (string, default ``gen3``): registry name (gen3, z1, b1_z1) or facts-file path.
- ``robot_config`` (string, default ``""``): facts-file override for a named robot.
- ``obstacles`` (string, default ``""``): ``""`` = the robot file's ``planner.obstacles``,
  ``none``, or a YAML file with a list of boxes ``{name, center, half_extents, rpy, frame}``
  (``frame`` optional, default the base frame; other frames need ``tf2_ros``).
- ``base_frame`` (string, default ``""``): frame_id of every marker; ``""`` = the URDF root link.
  Only a name: the geometry is computed in the URDF root frame either way.
- ``rate_hz`` (double, (0, 100], default 10.0): maximum rate of the robot and payload arrays.
- ``plan_samples`` (int, [2, 200], default 12): instants per plan drawn as spheres.
- ``path_samples`` (int, [2, 1000], default 60): instants of the tool path line.
- ``plan_margin`` (bool, default true): enlarge plan spheres by the tracking-error margin
  (``planning.planner.controller_model``'s e_max); where the robot has none (B1 + Z1) the
  nominal spheres are drawn and the log says so.
- ``tf_retry_period`` (double, s, > 0, default 1.0): retry period for obstacles whose frame
  has no transform yet (wall clock).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from sysid_ros.control.errors import TrajectoryError
from sysid_ros.control.trajectory import JointTrajectoryArrays
from sysid_ros.errors import SysidError
from sysid_ros.model.robots import load_robot
from sysid_ros.nodes._common import LATCHED_QOS, SENSOR_QOS, TRAJECTORY_QOS, run_node, stamp_to_ns
from sysid_ros.nodes.messages import MessageError, bounds_from_msg, joint_state_arrays
from sysid_ros.visualization.frames import make_tf2_lookup, resolve_obstacles
from sysid_ros.visualization.geometry import RobotGeometry, sample_trajectory, sphere_margins
from sysid_ros.visualization.markers import (obstacle_markers, payload_markers, plan_markers,
                                             robot_markers)

__all__ = ["MarkersNode", "main"]

#: robot spheres: only the newest state matters.
_STATE_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)


def _in_range(name: str, value: float, lo: float, hi: float) -> float:
    if not lo <= value <= hi:
        raise ValueError(f"parameter {name} = {value} is outside [{lo}, {hi}]")
    return value


class MarkersNode(Node):
    """See the module docstring."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("markers")
        d = self.declare_parameter
        d("robot", "gen3")
        d("robot_config", "")
        d("obstacles", "")
        d("base_frame", "")
        d("rate_hz", 10.0)
        d("plan_samples", 12)
        d("path_samples", 60)
        d("plan_margin", True)
        d("tf_retry_period", 1.0)
        p = lambda name: self.get_parameter(name).value  # noqa: E731

        self.robot = load_robot(p("robot"), p("robot_config") or None)
        self.geom = RobotGeometry(self.robot)
        if p("base_frame"):
            self.geom.frame = str(p("base_frame"))
        self.period = 1.0 / _in_range("rate_hz", float(p("rate_hz")), 1e-3, 100.0)
        self.plan_samples = int(_in_range("plan_samples", int(p("plan_samples")), 2, 200))
        self.path_samples = int(_in_range("path_samples", int(p("path_samples")), 2, 1000))
        self.margins, margin_note = self._margins(bool(p("plan_margin")))
        log = self.get_logger()

        self.obstacle_items = self._obstacle_items(str(p("obstacles")))
        # tf2 only matters for boxes outside the base frame; without it they are reported, once.
        needs_tf = any(str(i.get("frame", "") or self.geom.frame).lstrip("/") != self.geom.frame
                       for i in self.obstacle_items)
        self.lookup = make_tf2_lookup(self) if needs_tf else None
        if needs_tf and self.lookup is None:
            log.warning("tf2_ros is not importable: obstacles are drawn in the base frame "
                        f"{self.geom.frame!r} only")

        self.pub_obstacles = self.create_publisher(MarkerArray, "/sysid/markers/obstacles",
                                                   LATCHED_QOS)
        self.pub_robot = self.create_publisher(MarkerArray, "/sysid/markers/robot", _STATE_QOS)
        self.pub_plan = self.create_publisher(MarkerArray, "/sysid/markers/plan", LATCHED_QOS)
        self.pub_payload = self.create_publisher(MarkerArray, "/sysid/markers/payload",
                                                 LATCHED_QOS)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, SENSOR_QOS)
        self.create_subscription(Float64MultiArray, "/sysid/payload_bounds", self._on_bounds,
                                 LATCHED_QOS)
        self.create_subscription(JointTrajectory, "/sysid/desired_trajectory",
                                 self._on_trajectory, TRAJECTORY_QOS)

        self._bounds: Any = None
        self._plans: list[tuple[int, int, MarkerArray]] = []   # (serial, start ns | -1, markers)
        self._plan_serial = 0
        self._shown_plan = -1
        self._last_tick = -np.inf
        self._warned: set[str] = set()
        self._obstacle_count = -1
        self._publish_obstacles()
        if self._pending:
            self._retry = self.create_timer(
                _in_range("tf_retry_period", float(p("tf_retry_period")), 1e-3, 3600.0),
                self._publish_obstacles, clock=Clock(clock_type=ClockType.STEADY_TIME))
        log.info(f"markers for {self.robot.name} in frame {self.geom.frame!r}: "
                 f"{len(self.robot.spheres)} spheres, {len(self.obstacle_items)} obstacles, "
                 f"plan spheres {margin_note}")

    # -- set-up ----------------------------------------------------------------------------
    def _margins(self, wanted: bool) -> tuple[np.ndarray, str]:
        if not wanted:
            return sphere_margins(self.robot, None), "without margin (plan_margin false)"
        try:
            from sysid_ros.planning.planner import controller_model

            e_max = controller_model(self.robot).e_max
        except (SysidError, ValueError) as exc:
            self.get_logger().warning(f"no tracking-error bound for {self.robot.name} ({exc}): "
                                      "plan spheres drawn without margin")
            return sphere_margins(self.robot, None), "without margin (no e_max)"
        m = sphere_margins(self.robot, e_max)
        return m, (f"enlarged by the e_max chain bound ({1e3 * m.min():.0f}-"
                   f"{1e3 * m.max():.0f} mm)")

    def _obstacle_items(self, spec: str) -> list[dict]:
        if spec == "none":
            return []
        if spec:
            data = yaml.safe_load(Path(spec).read_text())
            items = data.get("obstacles", []) if isinstance(data, dict) else data
        else:
            items = (self.robot.config.get("planner") or {}).get("obstacles") or []
        if not isinstance(items, list):
            raise ValueError(f"obstacles: expected a list of boxes, got {type(items).__name__}")
        return [dict(i) for i in items]

    def _publish_obstacles(self) -> None:
        res = resolve_obstacles(self.obstacle_items, self.geom.frame, self.lookup)
        self._pending = res.pending
        for name, why in res.pending:
            if name not in self._warned:
                self._warned.add(name)
                self.get_logger().warning(f"obstacle {name!r} not drawn yet: {why}")
        if len(res.boxes) != self._obstacle_count:
            self._obstacle_count = len(res.boxes)
            self.pub_obstacles.publish(obstacle_markers(res.boxes, self.geom.frame))
        if not res.pending and getattr(self, "_retry", None) is not None:
            self._retry.cancel()

    # -- inputs ----------------------------------------------------------------------------
    def _on_bounds(self, msg: Float64MultiArray) -> None:
        try:
            self._bounds = bounds_from_msg(msg)
        except MessageError as exc:
            self.get_logger().warning(f"payload bounds ignored: {exc}")

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        pts = msg.points
        try:
            traj = JointTrajectoryArrays.from_arrays(
                [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in pts],
                [list(p.positions) for p in pts], [list(p.velocities) for p in pts],
                [list(p.accelerations) for p in pts], msg.joint_names, self.robot.joint_names,
                0.0)
        except TrajectoryError as exc:
            self.get_logger().warning(f"desired trajectory not drawn: {exc}")
            return
        _, q = sample_trajectory(traj.times, traj.positions, traj.velocities,
                                 traj.accelerations, self.plan_samples)
        _, q_path = sample_trajectory(traj.times, traj.positions, traj.velocities,
                                      traj.accelerations, self.path_samples)
        start = stamp_to_ns(msg.header.stamp)
        self._plan_serial += 1
        self._plans.append((self._plan_serial, start if start > 0 else -1,
                            plan_markers(self.geom, q, self.margins, q_path)))
        del self._plans[:-4]   # the receding horizon overlaps two plans at most; keep a few

    def _on_joint_states(self, msg: JointState) -> None:
        now = time.monotonic()
        if now - self._last_tick < self.period:
            return
        try:
            q, _, _ = joint_state_arrays(msg, self.robot.joint_names, need_effort=False)
        except MessageError as exc:
            if "joint_states" not in self._warned:
                self._warned.add("joint_states")
                self.get_logger().warning(f"joint_states not drawn: {exc}")
            return
        self._last_tick = now
        stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        t_ns = stamp_to_ns(msg.header.stamp)
        self.pub_robot.publish(robot_markers(self.geom, q, stamp))
        if self._bounds is not None:
            b = self._bounds
            self.pub_payload.publish(payload_markers(self.geom, q, b.lower, b.upper, b.nominal,
                                                     stamp))
        running = [pl for pl in self._plans if pl[1] <= t_ns]
        if running and running[-1][0] != self._shown_plan:
            self._shown_plan = running[-1][0]
            self.pub_plan.publish(running[-1][2])


def main(args: Sequence[str] | None = None) -> int:
    return run_node(lambda argv: MarkersNode(argv), args)


if __name__ == "__main__":
    raise SystemExit(main())
