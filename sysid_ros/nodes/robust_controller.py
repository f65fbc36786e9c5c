"""``robust_controller``: managed (lifecycle) node running the robust passivity controller.

Turns the identifier's sound θ_e box into torque commands that track the planner's trajectory
for every parameter value in the box (law and guarantee: ``sysid_ros.control.controller``).

Lifecycle (standard ``lifecycle_msgs`` services ``~/change_state``, ``~/get_state``):
configure loads the robot model, limits, gains and the prior box and creates the interfaces;
activate arms torque output; deactivate stops commanding (no further messages — the torque
interface's own watchdog takes over); cleanup releases everything. ``autostart:=true``
configures and activates at start-up (simulation), default false (hardware: an operator
activates explicitly).

Topics (docs/design.md §7; names are parameters and remappable):
- sub ``joint_states`` (sensor_msgs/JointState, sensor QoS), ``/sysid/payload_bounds``
  (Float64MultiArray, latched; before the first message the configured prior box is used, i.e.
  conservative), ``/sysid/desired_trajectory`` (trajectory_msgs/JointTrajectory; validated, a
  malformed one is rejected with a diagnostic and the current one continues).
- pub ``/effort_controller/commands`` (Float64MultiArray in the robot's joint order) at every
  joint_states arrival (``publish_on: joint_states``) or at ``timer_rate`` (``timer``);
  ``/diagnostics``; ``~/tracking_error`` (Float64MultiArray [e (nj), ė (nj)]) and ``~/state``
  (Float64MultiArray with labels ``STATE_LABELS``), every ``debug_decimation``-th command.
- With no trajectory the node holds the first measured pose; after the last point it holds the
  final point. If joint states are older than ``stale_timeout`` (wall clock since arrival) it
  stops commanding and reports ERROR — sending torques computed from stale states is worse than
  letting the drive's watchdog stop the robot.

Parameters (defaults in config/robust_controller.yaml):

=====================  ========  ==================  ===========================================
name                   type      default             meaning
=====================  ========  ==================  ===========================================
robot                  string    gen3                registry name or facts-file path
robot_config           string    ""                  override facts file
mode                   string    robust              robust | conservative | wrong | pid
Kr, alpha, V_max       double    0.0 (= robot file)  gains; ≤ 0 means "robot's controller: section"
r_norm_threshold       double    -1.0 (= robot)      ‖r‖ below which v = 0
torque_limit_scale     double    1.0                 (0, 1]: fraction of the torque limits
theta_r_uncertainty    bool      true                carry the θ_r / friction boxes (sound: true)
publish_on             string    joint_states        joint_states | timer
timer_rate             double    1000.0              Hz, for publish_on = timer (> 0)
stale_timeout          double    0.02                s (> 0)
pid_kp/ki/kd/i_clamp   double    100/20/20/0.2       PID baseline gains (all joints)
debug_decimation       int       10                  publish debug topics every n-th command
diagnostics_period     double    1.0                 s
autostart              bool      false               configure + activate on start
joint_states_topic …   string    (§7 names)          joint_states_topic, bounds_topic,
                                                     trajectory_topic, command_topic
=====================  ========  ==================  ===========================================
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory

from sysid_ros.control.bounds import tracking_error_bound
from sysid_ros.control.controller import (MODES, PidGains, RobustController, ThetaBox,
                                          gains_from_config)
from sysid_ros.control.errors import ControlError, TrajectoryError
from sysid_ros.control.prior import prior_box
from sysid_ros.control.trajectory import JointTrajectoryArrays, TrajectoryQueue
from sysid_ros.model.errors import ModelError
from sysid_ros.model.robots import load_robot
from sysid_ros.nodes._common import (COMMAND_QOS, DIAGNOSTICS_QOS, LATCHED_QOS, SENSOR_QOS,
                                     TRAJECTORY_QOS, run_node, stamp_to_ns)
from sysid_ros.nodes.messages import JointStateError, bounds_from_msg, joint_state_arrays

__all__ = ["RobustControllerNode", "STATE_LABELS", "trajectory_from_msg", "main"]

STATE_LABELS = ("r_norm", "V_sup", "V_max", "rho", "lambda", "bound_norm", "clipped", "compute_s")

_OK, _WARN, _ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


def trajectory_from_msg(msg: JointTrajectory, robot_joint_names) -> JointTrajectoryArrays:
    """JointTrajectory → validated arrays in the robot's joint order (raises TrajectoryError)."""
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
    start = stamp_to_ns(msg.header.stamp) * 1e-9
    return JointTrajectoryArrays.from_arrays(times, cols["positions"], cols["velocities"],
                                             cols["accelerations"], names, robot_joint_names,
                                             start)


def _labelled(values: np.ndarray, label: str) -> Float64MultiArray:
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label=label, size=len(values), stride=len(values))]
    msg.data = values.tolist()
    return msg


class RobustControllerNode(LifecycleNode):
    """Lifecycle node wrapping ``RobustController`` (module doc)."""

    def __init__(self, argv: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__("robust_controller", **kwargs)
        d = self.declare_parameter
        d("robot", "gen3")
        d("robot_config", "")
        d("calibration", "")          # sysid-calibrate result (calib.yaml); "" = none
        d("mode", "robust")
        for name in ("Kr", "alpha", "V_max"):
            d(name, 0.0)
        d("r_norm_threshold", -1.0)
        d("torque_limit_scale", 1.0)
        d("theta_r_uncertainty", True)
        d("publish_on", "joint_states")
        d("timer_rate", 1000.0)
        d("stale_timeout", 0.02)
        d("pid_kp", 100.0)
        d("pid_ki", 20.0)
        d("pid_kd", 20.0)
        d("pid_i_clamp", 0.2)
        d("debug_decimation", 10)
        d("diagnostics_period", 1.0)
        d("autostart", False)
        d("joint_states_topic", "joint_states")
        d("bounds_topic", "/sysid/payload_bounds")
        d("trajectory_topic", "/sysid/desired_trajectory")
        d("command_topic", "/effort_controller/commands")
        self._armed = False
        self._subs: list = []
        self._pubs: list = []
        self._timers: list = []
        self.ctl: RobustController | None = None
        self._status = (_WARN, "unconfigured")
        self._last_js_wall: float | None = None
        self._last_state: tuple[float, np.ndarray, np.ndarray] | None = None
        self._stale = False
        self._n_cmd = 0
        self._n_clipped = 0
        self._bounds_source = "none"
        if self.get_parameter("autostart").value:
            if self.trigger_configure() == TransitionCallbackReturn.SUCCESS:
                self.trigger_activate()

    # -- lifecycle --------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        p = lambda n: self.get_parameter(n).value  # noqa: E731
        try:
            robot = load_robot(p("robot"), p("robot_config") or None,
                                   p("calibration") or None)
            defaults = robot.config.get("controller", {}) or {}

            def override(name: str, floor: float = 0.0) -> float | None:
                v = float(p(name))
                return v if v > floor else None

            mode = str(p("mode"))
            if mode not in MODES:
                raise ControlError(f"mode {mode!r} not one of {MODES}")
            if p("publish_on") not in ("joint_states", "timer"):
                raise ControlError(f"publish_on must be joint_states or timer, got "
                                   f"{p('publish_on')!r}")
            if not (p("stale_timeout") > 0 and p("timer_rate") > 0 and p("debug_decimation") >= 1):
                raise ControlError("need stale_timeout > 0, timer_rate > 0, debug_decimation >= 1")
            # the robot file's controller: section (gains, metric, Coulomb band), with the
            # node's parameters overriding where set
            gains = gains_from_config(robot, {
                "Kr": override("Kr"), "alpha": override("alpha"), "V_max": override("V_max"),
                "r_norm_threshold": override("r_norm_threshold", -1e-300),
                "torque_limit_scale": float(p("torque_limit_scale"))})
            nj = robot.nj
            pid = PidGains(*(np.full(nj, float(p(n)))
                             for n in ("pid_kp", "pid_ki", "pid_kd", "pid_i_clamp")))
            self.prior = prior_box(robot)
            # τ₀'s θ_e nominal (box centre by default): shared with the planner through the
            # robot file, because the planner's certificate assumes the same choice
            self.ctl = RobustController(robot, gains, mode=mode, prior=self.prior, pid=pid,
                                        theta_r_uncertainty=bool(p("theta_r_uncertainty")),
                                        nominal=str(defaults.get("nominal", "centre")))
            self.bound = tracking_error_bound(robot, gains.Kr, gains.V_max)
        except (ModelError, ControlError, KeyError, ValueError) as exc:
            self._status = (_ERROR, f"configure failed: {exc}")
            self.get_logger().error(self._status[1])
            self._publish_diagnostics_once()
            return TransitionCallbackReturn.FAILURE
        self.robot = robot
        self.queue = TrajectoryQueue(nj)
        self._bounds_source = "prior"
        self.stale_timeout = float(p("stale_timeout"))
        self.decimation = int(p("debug_decimation"))
        self.cmd_pub = self.create_publisher(Float64MultiArray, p("command_topic"), COMMAND_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DIAGNOSTICS_QOS)
        self.err_pub = self.create_publisher(Float64MultiArray, "~/tracking_error", 10)
        self.state_pub = self.create_publisher(Float64MultiArray, "~/state", 10)
        self._pubs = [self.cmd_pub, self.diag_pub, self.err_pub, self.state_pub]
        on_js = p("publish_on") == "joint_states"
        self._subs = [
            self.create_subscription(JointState, p("joint_states_topic"),
                                     self._on_joint_states, SENSOR_QOS),
            self.create_subscription(Float64MultiArray, p("bounds_topic"), self._on_bounds,
                                     LATCHED_QOS),
            self.create_subscription(JointTrajectory, p("trajectory_topic"),
                                     self._on_trajectory, TRAJECTORY_QOS),
        ]
        self._publish_on_js = on_js
        watch = min(self.stale_timeout / 2.0, 0.01)
        self._timers = [self.create_timer(watch, self._watchdog),
                        self.create_timer(float(p("diagnostics_period")),
                                          self._publish_diagnostics_once)]
        if not on_js:
            self._timers.append(self.create_timer(1.0 / float(p("timer_rate")), self._on_timer))
        self._status = (_OK, f"configured ({mode}); waiting for activation")
        self.get_logger().info(f"configured: robot {robot.name}, mode {mode}, Kr {self.ctl.gains.Kr[0]}, "
                               f"V_max {gains.V_max}, rho {self.bound.rho:.4g}")
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.ctl.reset()
        if self._last_state is not None and not self.queue.has_trajectory:
            self.queue.hold(self._last_state[1])
        self._armed = True
        self._status = (_OK, "active: commanding torques")
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._armed = False
        self._status = (_WARN, "inactive: not commanding")
        self._publish_diagnostics_once()
        return super().on_deactivate(state)

    def _release(self) -> None:
        self._armed = False
        for t in self._timers:
            self.destroy_timer(t)
        for s in self._subs:
            self.destroy_subscription(s)
        for pub in self._pubs:
            self.destroy_publisher(pub)
        self._timers, self._subs, self._pubs = [], [], []
        self.ctl = None
        self._last_state = None

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        self._status = (_WARN, "unconfigured")
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState | None = None) -> TransitionCallbackReturn:
        if self._pubs:
            self._release()
        return TransitionCallbackReturn.SUCCESS

    # -- inputs -----------------------------------------------------------------------
    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_joint_states(self, msg: JointState) -> None:
        try:
            q, dq, _ = joint_state_arrays(msg, self.robot.joint_names, need_effort=False)
        except JointStateError as exc:
            self._report(_ERROR, f"joint_states rejected: {exc}")
            return
        self._last_js_wall = time.monotonic()
        stamp = stamp_to_ns(msg.header.stamp) * 1e-9
        self._last_state = (stamp if stamp > 0 else self._now(), q, dq)
        if self._stale:
            self._stale = False
            self._report(_OK, "joint_states fresh again; commanding")
        if not self.queue.has_reference:
            self.queue.hold(q)
        if self._publish_on_js:
            self._command()

    def _on_timer(self) -> None:
        self._command()

    def _on_bounds(self, msg: Float64MultiArray) -> None:
        try:
            b = bounds_from_msg(msg)
            self.ctl.set_bounds(ThetaBox(b.lower, b.nominal, b.upper))
        except (ValueError, ControlError) as exc:
            self._report(_WARN, f"payload bounds rejected, keeping the previous box: {exc}")
            return
        self._bounds_source = "identifier"

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            traj = trajectory_from_msg(msg, self.robot.joint_names)
            self.queue.push(traj, self._now())
        except TrajectoryError as exc:
            self._report(_WARN, f"trajectory rejected, current one continues: {exc}")

    # -- output -------------------------------------------------------------------------
    def _watchdog(self) -> None:
        if self._last_js_wall is None or self._stale:
            return
        age = time.monotonic() - self._last_js_wall
        if age > self.stale_timeout:
            self._stale = True
            self._report(_ERROR, f"joint_states stale ({age * 1e3:.1f} ms > "
                                 f"{self.stale_timeout * 1e3:.1f} ms): commands stopped")

    def _command(self) -> None:
        if not self._armed or self._last_state is None or self.ctl is None:
            return
        if time.monotonic() - self._last_js_wall > self.stale_timeout:
            self._watchdog()
            return
        t0 = time.perf_counter()
        t, q, dq = self._last_state
        ref = self.queue.sample(t)
        out = self.ctl.compute(t, q, dq, ref.q, ref.dq, ref.ddq)
        cmd = Float64MultiArray()
        cmd.data = out.tau.tolist()
        self.cmd_pub.publish(cmd)
        self._n_cmd += 1
        self._n_clipped += int(out.clipped)
        if self._n_cmd % self.decimation == 0 or out.clipped:
            dt = time.perf_counter() - t0
            self.err_pub.publish(_labelled(np.concatenate([out.e, out.de]), "e,de"))
            self.state_pub.publish(_labelled(
                np.array([out.r_norm, out.V_sup, out.V_max, self.bound.rho, out.lam,
                          out.bound_norm, float(out.clipped), dt]), ",".join(STATE_LABELS)))

    def _report(self, level: bytes, message: str) -> None:
        if (level, message) != self._status:
            # rclpy binds one severity per call site, hence three calls
            if level == _ERROR:
                self.get_logger().error(message)
            elif level == _WARN:
                self.get_logger().warning(message)
            else:
                self.get_logger().info(message)
        self._status = (level, message)
        self._publish_diagnostics_once()

    def _publish_diagnostics_once(self) -> None:
        pub = getattr(self, "diag_pub", None)
        if pub is None or pub not in self._pubs:
            return
        st = DiagnosticStatus(level=self._status[0], name=f"{self.get_name()}: robust controller",
                              message=self._status[1], hardware_id=getattr(self.robot, "name", ""))
        st.values = [KeyValue(key="armed", value=str(self._armed)),
                     KeyValue(key="mode", value=self.ctl.mode if self.ctl else ""),
                     KeyValue(key="bounds", value=self._bounds_source),
                     KeyValue(key="commands", value=str(self._n_cmd)),
                     KeyValue(key="clipped_commands", value=str(self._n_clipped)),
                     KeyValue(key="rho", value=f"{self.bound.rho:.6g}")]
        arr = DiagnosticArray(status=[st])
        arr.header.stamp = self.get_clock().now().to_msg()
        pub.publish(arr)


def main(args: list[str] | None = None) -> int:
    return run_node(lambda _argv: RobustControllerNode(), args)


if __name__ == "__main__":
    raise SystemExit(main())
