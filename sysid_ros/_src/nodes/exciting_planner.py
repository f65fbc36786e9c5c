"""``exciting_planner``: receding-horizon safe exciting-trajectory planner node "
"(docs/theory/planner.md, docs/theory/planner.md#receding-horizon).

Every ``t_p`` it plans the most exciting degree-5 trajectory it can CERTIFY safe for every θ_e in
the current bounds and publishes it; an unverified plan is never published, so the robot keeps
following the current trajectory, which ends at rest. The cycle — start state, continuity,
lateness, stop conditions — is :class:`sysid_ros._src.planning.receding.RecedingHorizon` (read its
docstring); this node only translates messages, parameters and the timer.

Topics (docs/theory/ros-interfaces.md#ros-2-interfaces; remap with ``-r``): sub ``joint_states``
(sensor QoS; raw bytes, the
newest decoded at each cycle, a bad one reported then),
``/sysid/payload_bounds`` (latched; the robot's payload prior until the first message); pub
``/sysid/desired_trajectory`` (two points: t = 0 with q₀, q̇₀, q̈₀ and t = t_f with q₀ + k, 0, 0;
``header.stamp`` = its start; ``header.frame_id`` = the certificate naming the θ_e box it was
verified for, see ``sysid_ros._src.control.admission``) and ``/diagnostics`` (one status per cycle:
solve_time, iterations, verified, objective (cond), stage (what the NLP minimised), status,
reason). The process exits when the
cycle reports it is finished.

Parameters: ``PARAMETERS`` below (docs/reference/parameters.md).
"""
from __future__ import annotations

import threading
from collections.abc import Sequence

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from sysid_ros._src.control.arm_view import arm_view
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.nodes._common import run_node
from sysid_ros._src.nodes.qos import DIAGNOSTICS_QOS, LATCHED_QOS, SENSOR_QOS, TRAJECTORY_QOS
from sysid_ros._src.cdr import JointStateDecoder, MessageError
from sysid_ros._src.nodes.messages import bounds_from_msg, diagnostics_msg, trajectory_msg
from sysid_ros._src.nodes.params import declare
from sysid_ros._src.nodes.exciting_planner_params import PARAMETERS
from sysid_ros._src.planning import ExcitingPlanner, PlannerConfig, PlanningError
from sysid_ros._src.planning.receding import RecedingHorizon
from sysid_ros._src.visualization.live import obstacle_items

__all__ = ["ExcitingPlannerNode", "main", "trajectory_msg"]




class ExcitingPlannerNode(Node):
    """See the module docstring."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("exciting_planner")
        p = declare(self, PARAMETERS)
        # a floating-base robot (B1 + Z1) is planned as its arm with the trunk as base
        self.robot = arm_view(load_robot(p["robot"], p["robot_config"], p["calibration"]))
        overrides = {key: p[key] for key in ("t_f", "t_p", "max_solve_time", "objective",
                                             "stage_com_width") if p[key] is not None}
        if p["obstacles"] is not None:
            overrides["obstacles"] = obstacle_items(self.robot, p["obstacles"])
        planner = ExcitingPlanner(self.robot, PlannerConfig.from_robot(self.robot, overrides))
        cfg = planner.config
        # the identifier's prior B₀ (same reading as the controller's) until bounds arrive
        from sysid_ros._src.control.errors import BoundsError
        from sysid_ros._src.control.prior import prior_box
        try:
            prior = prior_box(self.robot)
        except BoundsError as exc:
            raise PlanningError(f"{exc} (the θ_e prior box is needed until the first payload "
                                "bounds arrive)") from exc
        self.horizon = RecedingHorizon(planner, prior,
                                       p["max_trajectories"], p["shrink_tolerance"],
                                       p["stall_cycles"])
        self.finished = threading.Event()

        self.traj_pub = self.create_publisher(JointTrajectory, "/sysid/desired_trajectory",
                                              TRAJECTORY_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DIAGNOSTICS_QOS)
        # only the state at planning time matters: keep the newest bytes, decode when planning
        self._decoder = JointStateDecoder(self.robot.joint_names, need_effort=False)
        self._latest: bytes | None = None
        self._taken: bytes | None = None
        self.create_subscription(JointState, "joint_states", self._on_joint_states, SENSOR_QOS,
                                 raw=True)
        self.create_subscription(Float64MultiArray, "/sysid/payload_bounds", self._on_bounds,
                                 LATCHED_QOS)
        # A cycle takes up to max_solve_time: a worker thread runs it, woken by the timer, so
        # the single-threaded executor keeps serving joint_states, bounds and the /clock time
        # source meanwhile and ROS time is current when the plan is checked and stamped (a
        # MultiThreadedExecutor spent ~0.5 core dispatching 1 kHz joint_states).
        self._wake, self._stop, self.exit_code = threading.Event(), threading.Event(), 0
        self.timer = self.create_timer(cfg.t_p, self._wake.set)
        self._worker = threading.Thread(target=self._work, name="planning", daemon=True)
        self._worker.start()
        self.get_logger().info(
            f"planning for {self.robot.name}: t_f={cfg.t_f} s, t_p={cfg.t_p} s, "
            f"{len(cfg.obstacles)} obstacles, {cfg.n_intervals} sub-intervals")

    # -- inputs ----------------------------------------------------------------------------------
    def _on_joint_states(self, data: bytes) -> None:
        self._latest = data       # one reference store: the planning thread reads it atomically

    def _take_state(self) -> None:
        """Decode the newest joint state into the horizon; a bad one is reported and the
        previous state kept."""
        data = self._latest
        if data is None or data is self._taken:   # nothing new since the last cycle
            return
        self._taken = data
        try:
            js = self._decoder.decode(data)
        except MessageError as exc:
            self._report("warn", f"joint_states rejected: {exc}", {})
            return
        self.horizon.on_state(js.q, js.dq)

    def _on_bounds(self, msg: Float64MultiArray) -> None:
        try:
            box = bounds_from_msg(msg, self.robot.ee_joint)
        except ValueError as exc:
            self._report("warn", f"payload bounds rejected, keeping the previous box: {exc}", {})
            return
        self.horizon.on_bounds(box)

    # -- one cycle -------------------------------------------------------------------------------
    def _now_ns(self) -> int:
        return int(self.get_clock().now().nanoseconds)

    def _work(self) -> None:
        while self._wake.wait() and not self._stop.is_set():
            self._wake.clear()        # a tick during a cycle runs the next one right after it
            try:
                self._cycle()
            except Exception as err:  # as a failing callback did: the node exits with 1
                self.get_logger().error(f"planning cycle failed: {type(err).__name__}: {err}")
                self.exit_code = 1
                self.finished.set()
                return

    def on_shutdown(self) -> None:
        self._stop.set()
        self._wake.set()
        self._worker.join(timeout=self.horizon.planner.config.max_solve_time + 5.0)

    def _cycle(self) -> None:
        if self.finished.is_set():
            return
        self._take_state()
        out = self.horizon.cycle(self._now_ns(), self._now_ns)
        if out.plan is not None:
            plan = out.plan
            self.traj_pub.publish(trajectory_msg(plan.trajectory, plan.k, self.robot.joint_names,
                                                 plan.start_ns, plan.box))
        self._report(out.level, out.message, out.values)
        if out.finished:
            self._report("ok", f"done: {out.finished}", {"published": str(self.horizon.published)})
            self.get_logger().info(f"done: {out.finished}")
            self.finished.set()

    def _report(self, level: str, message: str, values: dict[str, str]) -> None:
        self.diag_pub.publish(diagnostics_msg("exciting_planner", self.robot.name, level, message,
                                              values, self.get_clock().now().to_msg()))

def main(args: Sequence[str] | None = None) -> int:
    return run_node(lambda argv: ExcitingPlannerNode(argv), args)


if __name__ == "__main__":
    raise SystemExit(main())
