"""``markers``: live view of the identification graph as ``visualization_msgs/MarkerArray``
(docs/theory/ros-interfaces.md#ros-2-interfaces; the geometry is :mod:`sysid_ros._src.visualization`,
this node only wires it).

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
- pub ``/sysid/markers/plan`` (latched, on change): the plan executing at the latest joint state
  (header stamp = start; 0 = on arrival): collision spheres at ``plan_samples`` instants, radii
  enlarged by the chain-length bound of the tracking-error margin e_max, and the tool path;
- pub ``/sysid/markers/payload``: equivalent ellipsoid of the box centre, CoM, CoM box, mass
  glyph and label, at the end-effector pose of the latest joint state (latched).

Robot and payload arrays are rate-limited to ``rate_hz`` (wall clock, so the view keeps its pace
in lock-step simulation and without ``/clock``).

Parameters: the table ``PARAMETERS`` below (type, default, range, description; rendered in
docs/reference/parameters.md, visible with ``ros2 param describe``); config/markers.yaml may override them.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from sysid_ros._src.control.errors import TrajectoryError
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.nodes._common import ns_to_stamp_fields, run_node, stamp_to_ns
from sysid_ros._src.cdr import JointStateDecoder
from sysid_ros._src.nodes.qos import LATCHED_QOS, SENSOR_QOS, TRAJECTORY_QOS
from sysid_ros._src.nodes.messages import MessageError, bounds_from_msg, trajectory_from_msg
from sysid_ros._src.nodes.params import Param, declare
from sysid_ros._src.visualization.frames import make_tf2_lookup, resolve_obstacles
from sysid_ros._src.visualization.geometry import RobotGeometry, sample_trajectory
from sysid_ros._src.visualization.live import PlanHistory, obstacle_items, plan_margins
from sysid_ros._src.visualization.markers import (obstacle_markers, payload_markers, plan_markers,
                                             robot_markers)

__all__ = ["MarkersNode", "main"]

#: robot spheres: only the newest state matters.
_STATE_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)


PARAMETERS = (
    Param("robot", "string", "registry name (gen3, z1, b1_z1) or robot-facts file path", "gen3"),
    Param("robot_config", "string", "robot-facts file overriding the named robot's"),
    Param("obstacles", "string", "absent: the robot file's planner.obstacles; 'none'; or a YAML "
          "file of boxes {name, center, half_extents, rpy, frame} (frames other than the base "
          "frame need tf2_ros)"),
    Param("base_frame", "string", "frame_id of every marker (absent: the URDF root link); only "
          "a name, the geometry is in the URDF root frame either way"),
    Param("rate_hz", "double", "maximum rate of the robot and payload arrays (wall clock)", 10.0,
          (1e-3, 100.0), unit="Hz"),
    Param("plan_samples", "int", "instants per plan drawn as collision spheres", 12, (2, 200)),
    Param("path_samples", "int", "instants of the plan's tool-frame path line", 60, (2, 1000)),
    Param("plan_margin", "bool", "enlarge plan spheres by the sound chain-length bound of the "
          "tracking-error margin e_max (nominal spheres where the robot has none)", True),
    Param("tf_retry_period", "double", "retry period for obstacles whose transform is missing "
          "(wall clock)", 1.0, (1e-3, 3600.0), unit="s"),
)


class MarkersNode(Node):
    """See the module docstring."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("markers")
        p = declare(self, PARAMETERS)
        self.robot = load_robot(p["robot"], p["robot_config"])
        self.geom = RobotGeometry(self.robot)
        if p["base_frame"]:
            self.geom.frame = p["base_frame"]
        self.period = 1.0 / p["rate_hz"]
        self.plan_samples, self.path_samples = p["plan_samples"], p["path_samples"]
        self.margins, margin_note = plan_margins(self.robot, p["plan_margin"])
        log = self.get_logger()

        self.obstacle_items = obstacle_items(self.robot, p["obstacles"])
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
        # raw bytes: the states between two frames are dropped without being deserialised
        self._decoder = JointStateDecoder(self.robot.joint_names, need_effort=False)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, SENSOR_QOS,
                                 raw=True)
        self.create_subscription(Float64MultiArray, "/sysid/payload_bounds", self._on_bounds,
                                 LATCHED_QOS)
        self.create_subscription(JointTrajectory, "/sysid/desired_trajectory",
                                 self._on_trajectory, TRAJECTORY_QOS)

        self._bounds: Any = None
        self._plans: PlanHistory[MarkerArray] = PlanHistory()
        self._last_tick = -np.inf
        self._warned: set[str] = set()
        self._obstacle_count = -1
        self._publish_obstacles()
        if self._pending:
            self._retry = self.create_timer(
                p["tf_retry_period"], self._publish_obstacles, clock=Clock(clock_type=ClockType.STEADY_TIME))
        log.info(f"markers for {self.robot.name} in frame {self.geom.frame!r}: "
                 f"{len(self.robot.spheres)} spheres, {len(self.obstacle_items)} obstacles, "
                 f"plan spheres {margin_note}")

    # -- set-up ----------------------------------------------------------------------------
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
        try:
            traj = trajectory_from_msg(msg, self.robot.joint_names)
        except TrajectoryError as exc:
            self.get_logger().warning(f"desired trajectory not drawn: {exc}")
            return
        _, q = sample_trajectory(traj.times, traj.positions, traj.velocities,
                                 traj.accelerations, self.plan_samples)
        _, q_path = sample_trajectory(traj.times, traj.positions, traj.velocities,
                                      traj.accelerations, self.path_samples)
        self._plans.add(stamp_to_ns(msg.header.stamp),
                        plan_markers(self.geom, q, self.margins, q_path))

    def _on_joint_states(self, data: bytes) -> None:
        now = time.monotonic()
        if now - self._last_tick < self.period:
            return
        try:
            js = self._decoder.decode(data)
        except MessageError as exc:
            if "joint_states" not in self._warned:
                self._warned.add("joint_states")
                self.get_logger().warning(f"joint_states not drawn: {exc}")
            return
        self._last_tick = now
        q, t_ns = js.q, js.stamp_ns
        stamp = ns_to_stamp_fields(t_ns)
        self.pub_robot.publish(robot_markers(self.geom, q, stamp))
        if self._bounds is not None:
            b = self._bounds
            self.pub_payload.publish(payload_markers(self.geom, q, b.lower, b.upper, b.nominal,
                                                     stamp))
        plan = self._plans.current(t_ns)
        if plan is not None:
            self.pub_plan.publish(plan)


def main(args: Sequence[str] | None = None) -> int:
    return run_node(lambda argv: MarkersNode(argv), args)


if __name__ == "__main__":
    raise SystemExit(main())
